"""Clean-room iGSM-style arithmetic problems (data/igsm.py)."""

import re

import numpy as np
import pytest

from mope_jax.data import igsm


@pytest.mark.parametrize("num_ops", [1, 2, 4, 8])
def test_every_problem_evaluates_to_its_stated_answer(num_ops):
    rng = np.random.default_rng(num_ops)
    for _ in range(200):
        p = igsm.make_problem(rng, num_ops=num_ops)
        # an independent evaluation of the prompt's statements (the generator's values unused)
        assert igsm.evaluate_solution(p.prompt) == p.answer
        assert igsm.parse_answer(p.solution) == p.answer
        assert 0 <= p.answer < igsm.MODULUS and p.solution.endswith(f"#{p.answer}\n")


def test_solution_steps_are_correct_and_in_dependency_order():
    ops = {
        "+": lambda a, b: (a + b) % 23,
        "-": lambda a, b: (a - b) % 23,
        "*": lambda a, b: (a * b) % 23,
    }
    rng = np.random.default_rng(0)
    for _ in range(200):
        p = igsm.make_problem(rng, num_ops=int(rng.integers(1, 6)))
        known = {}
        steps = re.findall(r"Define ([A-Z]) as ([a-z]); so ([^ ]+)\.", p.solution)
        assert steps, p.solution
        for name, lo, body in steps:
            assert lo == name.lower()
            parts = body.split("=")
            assert parts[0] == lo
            if len(parts) == 2:  # leaf: the value stated in the problem
                assert f"{name}={parts[1]}." in p.prompt
            else:  # x=a+b=va+vb=r with a, b already defined and r correct
                a, op, b = parts[1][0], parts[1][1], parts[1][2]
                assert a in known and b in known, "used before defined"
                assert parts[2] == f"{known[a]}{op}{known[b]}"
                assert int(parts[3]) == ops[op](known[a], known[b])
            known[lo] = int(parts[-1])
        assert known[steps[-1][1]] == p.answer


def test_deterministic_and_num_ops_sets_length():
    a = igsm.problems(50, seed=3)
    b = igsm.problems(50, seed=3)
    c = igsm.problems(50, seed=4)
    assert [p.text for p in a] == [p.text for p in b] and [p.text for p in a] != [p.text for p in c]
    lengths = [
        np.mean([len(p.solution) for p in igsm.problems(100, seed=k, ops_range=(k, k))])
        for k in (1, 2, 4)
    ]
    assert lengths[0] < lengths[1] < lengths[2]


def test_stream_round_trip_and_vocabulary():
    s = igsm.igsm_stream(3000, seed=0)
    assert s.shape == (3000,) and s.dtype == np.int32 and s.max() < len(igsm.VOCAB)
    text = igsm.decode(s)
    assert np.array_equal(igsm.encode(text), s)
    np.testing.assert_array_equal(igsm.igsm_stream(3000, seed=0), s)


def test_answer_accuracy_harness_places_prompts_and_parses():
    probs = igsm.problems(40, seed=5, ops_range=(1, 1))
    filler = igsm.encode("".join(p.text for p in igsm.problems(10, seed=6)))
    context, max_new = 96, 8
    out = igsm.encode(" #5\n    ")

    def fake_model(
        buf,
    ):  # emits " #5\n" after every prompt; checks the prompt sits right before the answer
        start = context - max_new
        for row in buf:
            assert "?" in igsm.decode(row[start - 3 : start])
        logits = np.zeros((*buf.shape, len(igsm.VOCAB)), np.float32)  # (B, C, V)
        for j in range(max_new):
            logits[:, start - 1 + j, out[j]] = 1.0
        return logits

    res = igsm.answer_accuracy(
        fake_model, probs, context=context, filler=filler, max_new=max_new, batch=16
    )
    assert res["n"] == 40 and res["parsed"] == 1.0
    assert res["accuracy"] == pytest.approx(np.mean([p.answer == 5 for p in probs]))
    assert igsm.parse_answer(" so b=1. #") is None and igsm.parse_answer("#12\n") == 12
    assert res["leaf_accuracy"] == 0.0  # " #5" copies no leaf


def test_leaf_copies_counts_lookups():
    p = igsm.problems(1, seed=9, ops_range=(1, 1))[0]
    assert igsm.leaf_copies(p.prompt, p.solution) == (2, 2)
    wrong = re.sub(
        r"so ([a-z])=(\d+)\.",
        lambda m: f"so {m.group(1)}={(int(m.group(2)) + 1) % 23}.",
        p.solution,
        count=1,
    )
    assert igsm.leaf_copies(p.prompt, wrong) == (1, 2)


def _oracle(vocab_size, corrupt=None):
    """logits_fn that predicts the true next token of its own input window, except at the
    positions ``corrupt(x)`` marks (there it predicts token 0)."""

    def fn(x):
        x = np.asarray(x)
        nxt = np.concatenate([x[:, 1:], x[:, -1:]], 1)  # the window's own next tokens
        if corrupt is not None:
            nxt = np.where(corrupt(x), 0, nxt)
        out = np.zeros(x.shape + (vocab_size,), np.float32)
        np.put_along_axis(out, nxt[..., None], 1.0, axis=-1)
        return out

    return fn


def test_forced_accuracy_scores_results_operands_and_answers_separately():
    from mope_jax.data import igsm

    probs = igsm.problems(20, seed=3, ops_range=(1, 2), ops=("+", "-"))
    filler = igsm.encode("".join(p.text for p in igsm.problems(50, seed=4)))
    C = 200
    # the oracle's last position has no next token in the window: score one beyond it
    res = igsm.forced_accuracy(_oracle(len(igsm.VOCAB)), probs, context=C, filler=filler)
    assert res["forced_n"] == 20
    assert res["forced_operand"] == 1.0 and res["forced_result"] == 1.0
    assert res["forced_answer"] < 1.0  # the last answer digit is past the oracle's window

    eq = igsm.VOCAB.index("=")
    digits = [igsm.VOCAB.index(d) for d in "0123456789"]

    def before_a_result(x):
        # "=21+13=11.": only the '=' after a digit precedes a result; its prediction is broken
        return (x == eq) & np.isin(np.roll(x, 1, axis=1), digits)

    res = igsm.forced_accuracy(
        _oracle(len(igsm.VOCAB), before_a_result), probs, context=C, filler=filler
    )
    assert res["forced_result"] == 0.0 and res["forced_operand"] == 1.0


def test_forced_accuracy_refuses_a_problem_longer_than_the_window():
    from mope_jax.data import igsm

    probs = igsm.problems(2, seed=3, ops_range=(2, 2))
    with pytest.raises(ValueError, match="does not fit"):
        igsm.forced_accuracy(_oracle(len(igsm.VOCAB)), probs, context=20, filler=np.zeros(5))
