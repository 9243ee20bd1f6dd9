"""Clean-room iGSM-style arithmetic word problems (paper B, DESIGN.md section 3), char level.

Written from the description only (the public generator needs a hub tokenizer at import
time). A problem is a random DAG of named variables over Z_23:

  * ``num_leaves`` leaves get values, ``X=v.``;
  * ``num_ops`` operation nodes, each ``Z=X+Y.`` (op in ``ops``) over two distinct earlier
    nodes; the last one is the question;
  * statements are listed in a random order (a definition may come after its use), so
    finding a value is a lookup at a data-dependent distance;
  * the solution defines, in topological order, only the variables the question needs:
    ``Define X as x; so x=7.`` for a leaf and ``Define Z as z; so z=x+y=7+5=12.`` for an
    operation, then ``#12`` and a newline. The number of operations sets the reasoning
    length, and with it the dependency distance between a value and its use.

One sample (seeded; deterministic), a single line shown here in two::

    B=A+C. A=5. C=12. ?B Define A as a; so a=5. Define C as c; so c=12.
    Define B as b; so b=a+c=5+12=17. #17

The prompt is everything up to and including ``?B``; the answer is the number after ``#``.
numpy only; the answer metric (greedy decoding with a model) is :func:`answer_accuracy`.
"""

from __future__ import annotations

import functools

import re
import string
from dataclasses import dataclass

import numpy as np

MODULUS = 23
NAMES = string.ascii_uppercase
OPS = {
    "+": lambda a, b, m: (a + b) % m,
    "-": lambda a, b, m: (a - b) % m,
    "*": lambda a, b, m: (a * b) % m,
}
# Every character a problem can contain; a fixed vocabulary, so every seed and size shares it.
ALPHABET = (
    "\n #.;=?" + "".join(OPS) + string.digits + string.ascii_uppercase + string.ascii_lowercase
)
VOCAB = tuple(sorted(set(ALPHABET)))


@dataclass(frozen=True)
class Problem:
    prompt: str  # statements + " ?X"
    solution: str  # " Define ... #v\n"
    answer: int
    num_ops: int

    @property
    def text(self) -> str:
        return self.prompt + self.solution


def make_problem(
    rng: np.random.Generator,
    *,
    num_ops: int,
    num_leaves: int | None = None,
    modulus: int = MODULUS,
    ops: tuple[str, ...] = ("+", "-", "*"),
) -> Problem:
    """One problem from a random DAG (see module docstring)."""
    if num_ops < 1:
        raise ValueError(f"num_ops={num_ops} must be >= 1")
    num_leaves = num_leaves or 2
    if num_leaves < 2 or num_leaves + num_ops > len(NAMES):
        raise ValueError(f"need 2 <= num_leaves and num_leaves + num_ops <= {len(NAMES)}")
    unknown = set(ops) - set(OPS)
    if unknown:
        raise ValueError(f"unknown ops {sorted(unknown)}; choose from {sorted(OPS)}")
    names = [NAMES[i] for i in rng.permutation(len(NAMES))[: num_leaves + num_ops]]
    value: dict[str, int] = {}
    node: dict[str, tuple] = {}
    for nm in names[:num_leaves]:
        value[nm] = int(rng.integers(0, modulus))
        node[nm] = ("leaf",)
    for j, nm in enumerate(names[num_leaves:]):
        defined = names[: num_leaves + j]
        # the newest node is always an operand, so the question depends on every operation
        a = defined[-1]
        b = defined[int(rng.integers(0, len(defined) - 1))]
        if rng.random() < 0.5:
            a, b = b, a
        op = ops[int(rng.integers(0, len(ops)))]
        value[nm] = OPS[op](value[a], value[b], modulus)
        node[nm] = (op, a, b)
    target = names[-1]

    def stmt(nm: str) -> str:
        n = node[nm]
        return f"{nm}={value[nm]}." if n[0] == "leaf" else f"{nm}={n[1]}{n[0]}{n[2]}."

    order = rng.permutation(len(names))
    prompt = " ".join(stmt(names[i]) for i in order) + f" ?{target}"

    needed: list[str] = []

    def visit(nm: str) -> None:  # post-order DFS = a topological order of the ancestors
        if nm in needed:
            return
        if node[nm][0] != "leaf":
            visit(node[nm][1])
            visit(node[nm][2])
        needed.append(nm)

    visit(target)
    steps = []
    for nm in needed:
        lo, n = nm.lower(), node[nm]
        if n[0] == "leaf":
            steps.append(f"Define {nm} as {lo}; so {lo}={value[nm]}.")
        else:
            op, a, b = n
            steps.append(
                f"Define {nm} as {lo}; so {lo}={a.lower()}{op}{b.lower()}="
                f"{value[a]}{op}{value[b]}={value[nm]}."
            )
    solution = " " + " ".join(steps) + f" #{value[target]}\n"
    return Problem(prompt, solution, value[target], num_ops)


def evaluate_solution(problem_text: str, modulus: int = MODULUS) -> int:
    """Independent check: parse the statements of a prompt and evaluate the question.

    Only the prompt (up to ``?X``) is read, so this verifies the stated answer."""
    head, _, rest = problem_text.partition("?")
    target = rest[0]
    defs = {}
    for st in head.split("."):
        st = st.strip()
        if st:
            lhs, rhs = st.split("=")
            defs[lhs] = rhs

    def ev(nm: str) -> int:
        rhs = defs[nm]
        if rhs.isdigit():
            return int(rhs) % modulus
        a, op, b = rhs[0], rhs[1], rhs[2]
        return OPS[op](ev(a), ev(b), modulus)

    return ev(target)


def parse_answer(generated: str) -> int | None:
    """The integer after the last '#' in a generated solution (None if there is none)."""
    if "#" not in generated:
        return None
    tail = generated.rsplit("#", 1)[1]
    digits = ""
    for ch in tail:
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else None


def problems(
    num: int,
    *,
    seed: int | tuple[int, ...],
    ops_range: tuple[int, int] = (1, 2),
    ops: tuple[str, ...] = ("+", "-", "*"),
    modulus: int = MODULUS,
) -> list[Problem]:
    """``num`` problems, num_ops uniform on ops_range (inclusive), deterministic in seed."""
    rng = np.random.default_rng(seed)
    lo, hi = ops_range
    return [
        make_problem(rng, num_ops=int(rng.integers(lo, hi + 1)), ops=ops, modulus=modulus)
        for _ in range(num)
    ]


def encode(text: str, vocab: tuple[str, ...] = VOCAB) -> np.ndarray:
    index = {c: i for i, c in enumerate(vocab)}
    return np.fromiter((index[c] for c in text), np.int32, len(text))


def decode(ids, vocab: tuple[str, ...] = VOCAB) -> str:
    return "".join(vocab[int(i)] for i in ids)


def igsm_stream(
    num_chars: int,
    *,
    seed: int | tuple[int, ...],
    ops_range: tuple[int, int] = (1, 2),
    ops: tuple[str, ...] = ("+", "-", "*"),
    modulus: int = MODULUS,
) -> np.ndarray:
    """(num_chars,) int32 ids of concatenated problems (text + solution), vocabulary VOCAB."""
    return encode(igsm_text(num_chars, seed=seed, ops_range=ops_range, ops=ops, modulus=modulus))


@functools.lru_cache(maxsize=16)
def igsm_text(
    num_chars: int,
    *,
    seed: int | tuple[int, ...],
    ops_range: tuple[int, int] = (1, 2),
    ops: tuple[str, ...] = ("+", "-", "*"),
    modulus: int = MODULUS,
) -> str:
    """The text of :func:`igsm_stream` (``decode(igsm_stream(...))``), cached per process: the
    experiments write their training files from it whenever they are imported."""
    rng = np.random.default_rng(seed)
    lo, hi = ops_range
    parts, total = [], 0
    while total < num_chars:
        p = make_problem(rng, num_ops=int(rng.integers(lo, hi + 1)), ops=ops, modulus=modulus)
        parts.append(p.text)
        total += len(p.text)
    return "".join(parts)[:num_chars]


def answer_accuracy(
    logits_fn,
    probs: list[Problem],
    *,
    context: int,
    filler: np.ndarray,
    max_new: int = 120,
    batch: int = 64,
    vocab: tuple[str, ...] = VOCAB,
) -> dict[str, float]:
    """Exact-match accuracy of greedy answers.

    logits_fn(tokens (B, C) int32) -> logits (B, C, V), a causal model applied at length C =
    ``context``. Each prompt is right-aligned to end at position C - max_new, preceded by
    the tail of ``filler`` (ids of other problems) so the solution is generated at the far
    end of a C-token window; then max_new tokens are decoded greedily (argmax, one forward
    pass per token over the whole window, which causality makes exact). Returns accuracy,
    the fraction of outputs with a parsable answer, and the count. ``vocab`` maps ids to
    characters (a model trained on a text file has that file's sorted character set).
    """
    start = context - max_new
    if start < max(len(p.prompt) for p in probs):
        raise ValueError(f"context {context} leaves {start} tokens for a prompt; lower max_new")
    correct = parsed = leaves_ok = leaves = 0
    newline = vocab.index("\n")
    for i in range(0, len(probs), batch):
        chunk = probs[i : i + batch]
        buf = np.zeros((len(chunk), context), np.int32)
        for j, p in enumerate(chunk):
            ids = encode(p.prompt, vocab)
            pad = start - len(ids)
            buf[j, :pad] = filler[len(filler) - pad :] if pad else filler[:0]
            buf[j, pad:start] = ids
        for pos in range(start, context):
            logits = np.asarray(logits_fn(buf))  # (B, C, V)
            buf[:, pos] = logits[:, pos - 1].argmax(-1)
        for j, p in enumerate(chunk):
            out = buf[j, start:]
            end = np.flatnonzero(out == newline)
            text = decode(out[: end[0]] if len(end) else out, vocab)
            ans = parse_answer(text)
            parsed += ans is not None
            correct += ans == p.answer
            ok, total = leaf_copies(p.prompt, text)
            leaves_ok += ok
            leaves += total
    n = len(probs)
    return {
        "accuracy": correct / n,
        "parsed": parsed / n,
        "leaf_accuracy": leaves_ok / max(leaves, 1),
        "n": n,
    }


_STEP_RE = re.compile(r"=(\d+)([+\-*])(\d+)=(\d+)\.")


def forced_accuracy(
    logits_fn,
    probs: list[Problem],
    *,
    context: int,
    filler: np.ndarray,
    batch: int = 64,
    vocab: tuple[str, ...] = VOCAB,
) -> dict[str, float]:
    """Teacher-forced accuracies of whole problems, one forward pass per batch.

    Each problem's full text (prompt and solution) is right-aligned to end at position
    ``context`` of a window, preceded by the tail of ``filler``; the model reads it with the
    correct text before every position (teacher forcing) and its argmax next token is scored:
      * result: every digit of every operation's result ("...=21+13=11.": the 11), the
        arithmetic itself given correct operands, is predicted right;
      * operand: every digit of the operands copied from earlier in the text (the 21 and 13);
      * answer: every digit after '#' (a copy of the last result).
    Each is the share of problems with all such digits right. Cheaper than greedy decoding
    (:func:`answer_accuracy`) by ~the answer length, so hundreds of problems resolve a few
    points; it scores each step given a correct prefix, not a generated solution.
    ``logits_fn`` and ``vocab`` as in :func:`answer_accuracy`.
    """
    kinds = ("result", "operand", "answer")
    ok = {k: 0 for k in kinds}
    for i in range(0, len(probs), batch):
        chunk = probs[i : i + batch]
        buf = np.zeros((len(chunk), context + 1), np.int32)
        spans = []
        for j, p in enumerate(chunk):
            text = p.prompt + p.solution.rstrip("\n")
            if len(text) > context + 1:
                raise ValueError(f"a problem of {len(text)} characters does not fit {context}")
            pad = context + 1 - len(text)
            buf[j, :pad] = filler[len(filler) - pad :] if pad else filler[:0]
            buf[j, pad:] = encode(text, vocab)
            where: dict[str, list[int]] = {k: [] for k in kinds}
            for m in _STEP_RE.finditer(text):
                for g, kind in ((1, "operand"), (3, "operand"), (4, "result")):
                    where[kind] += list(range(m.start(g), m.end(g)))
            hash_at = text.rindex("#")
            where["answer"] = list(range(hash_at + 1, len(text)))
            spans.append({k: np.asarray(v, np.int64) + pad for k, v in where.items()})
        pred = np.asarray(logits_fn(buf[:, :-1])).argmax(-1)  # (B, C): prediction of t + 1
        for j, sp in enumerate(spans):
            for k in kinds:
                pos = sp[k]
                ok[k] += bool(len(pos)) and bool(np.all(pred[j, pos - 1] == buf[j, pos]))
    n = len(probs)
    return {f"forced_{k}": ok[k] / n for k in kinds} | {"forced_n": n}


def leaf_copies(prompt: str, generated: str) -> tuple[int, int]:
    """(correct, total) leaf values copied into a generated solution.

    A leaf ``X=v.`` of the prompt counts as correct when the solution says
    ``Define X as x; so x=v.`` -- a pure lookup at a data-dependent distance, no arithmetic."""
    stated = dict(re.findall(r"([A-Z])=(\d+)\.", prompt))
    said = dict(re.findall(r"Define ([A-Z]) as [a-z]; so [a-z]=(\d+)\.", generated))
    return sum(said.get(k) == v for k, v in stated.items()), len(stated)


_PROMPT_LEAF = re.compile(r"([A-Z])=(\d+)\.")
_SOLUTION_STEP = re.compile(
    r"Define ([A-Z]) as ([a-z]); so \2=(?:(\d+)|([a-z])([-+*])([a-z])=(\d+)[-+*](\d+)=(\d+))\."
)


def lookup_distances(problem_text: str) -> list[int]:
    """The distances (in characters) over which a problem's solution copies values: for each
    value the solution writes down that was stated before (a leaf's value from the prompt, an
    operand's value from the step that computed or defined it), the position of the copy minus
    the position of its source (both at the first digit). The dependency a model must resolve
    to write the solution; its median over a stream is the task's width W."""
    where: dict[str, int] = {}  # upper-case name -> position of its value's first digit
    for m in _PROMPT_LEAF.finditer(problem_text):
        if m.start() < problem_text.find("?"):  # statements only (the prompt ends at '?X')
            where.setdefault(m.group(1), m.start(2))
    out = []
    lower = {}
    for m in _SOLUTION_STEP.finditer(problem_text):
        name, low = m.group(1), m.group(2)
        lower[low] = name
        if m.group(3) is not None:  # a leaf: "so a=5." copies A's value from the prompt
            out.append(m.start(3) - where[name])
            where[name] = m.start(3)
        else:  # "so z=x+y=7+5=12." copies x's and y's values
            for var, grp in ((m.group(4), 7), (m.group(6), 8)):
                out.append(m.start(grp) - where[lower[var]])
            where[name] = m.start(9)
    return out
