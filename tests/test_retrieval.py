"""Key-value retrieval text (mope_jax/data/retrieval.py): exact lengths, the answer is the
queried key's value, the recorded distance points at it, and the accuracy helper."""

from __future__ import annotations

import numpy as np
import pytest

from mope_jax.data import retrieval as rt


@pytest.mark.parametrize("length", [11, 64, 129, 512])
def test_examples_have_their_length_and_answer_the_query(length):
    rng = np.random.default_rng(length)
    for _ in range(20):
        text, pos = rt.example(rng, length)
        assert len(text) == length and text.endswith("\n") and pos == length - 2
        key = text[pos - 3 : pos - 1]
        records = dict(r.split(":") for r in text[: text.index("?")].split())
        assert len(records) == rt.num_records(length)  # keys are distinct
        assert records[key] == text[pos]


def test_eval_examples_distances_and_vocab():
    x, answers, dist = rt.examples(50, 130, seed=3)
    assert x.shape == (50, 128) and answers.shape == dist.shape == (50,)
    vocab = rt.VOCAB
    for row, a, d in zip(x, answers, dist):
        text = "".join(vocab[i] for i in row)
        assert text.endswith("=") and text[len(text) - d] == vocab[a]  # answer at len(text)
    assert dist.min() >= 4 and dist.max() <= 128
    again = rt.examples(50, 130, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip((x, answers, dist), again))


def test_stream_is_deterministic_and_cut():
    s = rt.stream(1000, 64, seed=1)
    assert len(s) == 1000 and s == rt.stream(1000, 64, seed=1) and s != rt.stream(1000, 64, seed=2)
    assert s.count("\n") == 15 and set(s) <= set(rt.VOCAB)
    with pytest.raises(ValueError, match="records"):
        rt.num_records(10)


def test_accuracy_of_an_oracle_and_of_a_constant_guess():
    x, answers, _ = rt.examples(200, 65, seed=0)
    V = len(rt.VOCAB)

    def oracle(batch):
        out = np.zeros((*batch.shape, V))
        for i, row in enumerate(batch):
            text = "".join(rt.VOCAB[t] for t in row)
            key = text[-3:-1]  # "...?ab="
            value = text[text.index(key + ":") + 3]
            out[i, -1, rt.VOCAB.index(value)] = 1.0
        return out

    assert rt.accuracy(oracle, x, answers, batch=32) == 1.0
    zero = lambda b: np.eye(V)[np.full(b.shape, rt.VOCAB.index("0"))]  # noqa: E731
    assert 0.03 < rt.accuracy(zero, x, answers) < 0.2
