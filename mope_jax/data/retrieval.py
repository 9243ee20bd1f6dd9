"""Key-value retrieval text (paper B's third context-extension setting): pairs spread over the
context, the query at the end.

An example of ``length`` characters is a run of records ``ab:3 `` (a two-letter key, a colon,
a one-digit value, a space; 5 characters each, keys distinct within the example) followed by
the query ``?ab=`` and the answer digit, then a newline::

    qd:7 ka:0 mz:4 ... rt:9 ?ka=0\\n

The queried key is drawn uniformly from the example's records, so the distance from the
answer back to its record is uniform over the context: at a length s L beyond the training
length L, most answers sit farther back than any distance seen in training. Answering is an
exact lookup at a data-dependent distance, neither self-similar language nor a fixed offset.
A training stream concatenates examples of one length; evaluation examples end exactly at the
answer, so the answer accuracy of a model is one forward pass per batch (no decoding).
numpy only.
"""

from __future__ import annotations

import functools

import string

import numpy as np

KEYS = [a + b for a in string.ascii_lowercase for b in string.ascii_lowercase]  # 676
RECORD = 5  # "ab:3 "
TAIL = 6  # "?ab=3\n"
VOCAB = tuple(sorted(set(string.ascii_lowercase + string.digits + ": ?=\n")))


def num_records(length: int) -> int:
    """Records in an example of ``length`` characters (the query and answer take TAIL)."""
    n = (length - TAIL) // RECORD
    if n < 1 or n > len(KEYS):
        raise ValueError(f"an example of {length} characters holds {n} records; use 11..3386")
    return n


def example(rng: np.random.Generator, length: int) -> tuple[str, int]:
    """(text of exactly ``length`` characters, the answer's position in it): records, then
    spaces if ``length`` is not filled, then ``?key=`` + value + newline."""
    n = num_records(length)
    keys = [KEYS[i] for i in rng.choice(len(KEYS), n, replace=False)]
    values = rng.integers(0, 10, n)
    q = int(rng.integers(0, n))
    body = "".join(f"{k}:{v} " for k, v in zip(keys, values))
    body += " " * (length - TAIL - len(body))
    text = f"{body}?{keys[q]}={values[q]}\n"
    return text, len(text) - 2


@functools.lru_cache(maxsize=16)
def stream(num_chars: int, length: int, *, seed: int) -> str:
    """Concatenated examples of ``length`` characters, cut to ``num_chars`` (cached per process:
    the experiments write their training files from it whenever they are imported)."""
    rng = np.random.default_rng(seed)
    parts = [example(rng, length)[0] for _ in range(-(-num_chars // length))]
    return "".join(parts)[:num_chars]


def examples(
    n: int, length: int, *, seed: int, vocab: tuple[str, ...] = VOCAB
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` evaluation examples as (inputs (n, length - 2) int32: every character before the
    answer, ending with ``?key=``; answers (n,) int32: the answer digits' ids; distances (n,):
    characters from the answer back to the queried record's value). A model applied at
    C tokens takes examples of length C + 2. ``vocab`` maps characters to ids (a model trained
    on a text file has that file's sorted character set)."""
    rng = np.random.default_rng(seed)
    index = {c: i for i, c in enumerate(vocab)}
    x = np.zeros((n, length - 2), np.int32)
    answers = np.zeros(n, np.int32)
    dist = np.zeros(n, np.int32)
    for i in range(n):
        text, pos = example(rng, length)
        x[i] = [index[c] for c in text[:pos]]
        answers[i] = index[text[pos]]
        key = text[pos - 3 : pos - 1]
        dist[i] = pos - (text.index(f"{key}:") + 3)
    return x, answers, dist


def accuracy(logits_fn, x: np.ndarray, answers: np.ndarray, *, batch: int = 64) -> float:
    """Share of examples whose argmax prediction after ``?key=`` is the answer digit.
    logits_fn(tokens (B, C)) -> (B, C, V) logits of a causal model."""
    hits = 0
    for i in range(0, len(x), batch):
        logits = np.asarray(logits_fn(x[i : i + batch]))  # (B, C, V)
        hits += int((logits[:, -1].argmax(-1) == answers[i : i + batch]).sum())
    return hits / len(x)
