"""Mutual information between tokens at distance r, for several tokenisation granularities.

Paper B (DESIGN.md section 3) calls a corpus self-similar when the profiles
I_g(r) / I_g(1) of different granularities g collapse once r is measured in characters,
r x (chars per token of g). This module has

  * :func:`mutual_information`: plug-in MI of paired samples with the Miller-Madow bias
    correction (each entropy gets + (m - 1) / (2N), m = occupied bins, N = pairs);
  * :func:`mi_profile`: I(r) = I(x_t; x_{t+r}) of a token stream for r in a list of distances;
  * tokenisers: characters, words (``\\w+`` runs and single punctuation marks), and a small
    merge-based subword tokeniser (:func:`train_merges` / :func:`apply_merges`, BPE-like:
    repeatedly merge the most frequent adjacent pair of non-whitespace tokens);
  * :func:`cap_vocab`: map all but the most frequent tokens to one OTHER id, which keeps the
    joint histogram small enough for N pairs (the plug-in bias grows like V^2 / N);
  * a block bootstrap of the profile (:func:`char_blocks`, :func:`block_pair_counts`,
    :func:`bootstrap_mi_profile`): MI of a stream is not a mean of iid terms, so resample
    contiguous chunks of the text (much longer than the distances of interest) with
    replacement, as whole histograms of the pairs inside each chunk.

numpy only (no flax): everything is deterministic given the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np


# --------------------------------------------------------------------------- estimators


def entropy_counts(counts: np.ndarray, *, correction: str = "miller_madow") -> float:
    """Entropy (nats) of a histogram; ``correction`` "none" (plug-in) or "miller_madow"."""
    c = np.asarray(counts, np.float64).ravel()
    c = c[c > 0]
    n = c.sum()
    if n == 0:
        return 0.0
    p = c / n
    h = float(-(p * np.log(p)).sum())
    if correction == "miller_madow":
        h += (len(c) - 1) / (2.0 * n)
    elif correction != "none":
        raise ValueError(f"unknown correction {correction!r}; use 'miller_madow' or 'none'")
    return h


def mutual_information(x: np.ndarray, y: np.ndarray, *, correction: str = "miller_madow") -> float:
    """I(X; Y) = H(X) + H(Y) - H(X, Y) in nats from paired non-negative integer samples (N,).

    With the Miller-Madow correction the bias O(1/N) of each plug-in entropy is removed to
    first order, so independent samples give ~0 (either sign), not the plug-in's
    (m_x - 1)(m_y - 1) / (2N) excess."""
    x = np.asarray(x, np.int64)
    y = np.asarray(y, np.int64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of equal length, got {x.shape} and {y.shape}")
    if len(x) == 0:
        raise ValueError("no samples")
    vx, vy = int(x.max()) + 1, int(y.max()) + 1
    if x.min() >= 0 and y.min() >= 0 and vx * vy <= _BINCOUNT_MAX_BINS:
        count = np.bincount  # the same histograms as np.unique's, ~15x faster for small vocabs
    else:
        count = _unique_counts
    hx = entropy_counts(count(x), correction=correction)
    hy = entropy_counts(count(y), correction=correction)
    return hx + hy - entropy_counts(count(x * vy + y), correction=correction)


# Joint tables up to this many bins are counted with np.bincount (dense, 8 bytes a bin);
# larger ones with np.unique (sort), whose memory does not grow with the vocabulary.
_BINCOUNT_MAX_BINS = 1 << 22


def _unique_counts(a: np.ndarray) -> np.ndarray:
    return np.unique(a, return_counts=True)[1]


def _entropy_rows(counts: np.ndarray, correction: str) -> np.ndarray:
    """Entropies (nats) of histograms (..., K) along the last axis; 0 for an empty one."""
    c = np.asarray(counts, np.float64)
    n = c.sum(-1)
    safe_n = np.where(n > 0, n, 1.0)
    clogc = (c * np.log(np.where(c > 0, c, 1.0))).sum(-1)
    h = np.log(safe_n) - clogc / safe_n  # -sum p log p with p = c / n
    if correction == "miller_madow":
        h = h + (np.count_nonzero(c, axis=-1) - 1) / (2.0 * safe_n)
    elif correction != "none":
        raise ValueError(f"unknown correction {correction!r}; use 'miller_madow' or 'none'")
    return np.where(n > 0, h, 0.0)


def mi_from_counts(joint: np.ndarray, *, correction: str = "miller_madow") -> np.ndarray:
    """I(X; Y) in nats from joint histograms of pair counts (..., Vx, Vy), one value per
    leading index: the value :func:`mutual_information` gives for the pairs they tally
    (counts may be non-integer weights, e.g. bootstrap multiplicities times counts)."""
    c = np.asarray(joint, np.float64)
    if c.ndim < 2:
        raise ValueError(f"joint must be (..., Vx, Vy), got shape {c.shape}")
    hx = _entropy_rows(c.sum(-1), correction)
    hy = _entropy_rows(c.sum(-2), correction)
    hxy = _entropy_rows(c.reshape(c.shape[:-2] + (-1,)), correction)
    return hx + hy - hxy


def mi_profile(tokens: np.ndarray, distances, *, correction: str = "miller_madow") -> np.ndarray:
    """I(r) = I(x_t; x_{t+r}) over all t of a stream (N,), for each r in ``distances``."""
    tokens = np.asarray(tokens, np.int64)
    out = []
    for r in distances:
        r = int(r)
        if not 0 < r < len(tokens):
            raise ValueError(f"distance {r} is outside 1..{len(tokens) - 1}")
        out.append(mutual_information(tokens[:-r], tokens[r:], correction=correction))
    return np.asarray(out)


def markov_mi(transition: np.ndarray, r: int) -> float:
    """Exact I(x_t; x_{t+r}) of a stationary Markov chain with transition matrix P (V, V)."""
    P = np.asarray(transition, np.float64)
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1.0))])
    pi = pi / pi.sum()
    Pr = np.linalg.matrix_power(P, r)
    joint = pi[:, None] * Pr  # (V, V): P(x_t = a, x_{t+r} = b)
    marg = joint.sum(0)
    mask = joint > 0
    return float((joint[mask] * np.log(joint[mask] / (pi[:, None] * marg[None, :])[mask])).sum())


def sample_markov(transition: np.ndarray, n: int, *, seed: int) -> np.ndarray:
    """(n,) states of a Markov chain started from its stationary distribution."""
    P = np.asarray(transition, np.float64)
    rng = np.random.default_rng(seed)
    w, v = np.linalg.eig(P.T)
    pi = np.real(v[:, np.argmin(np.abs(w - 1.0))])
    pi = pi / pi.sum()
    cum = np.cumsum(P, axis=1)
    u = rng.random(n)
    out = np.empty(n, np.int64)
    s = int(np.searchsorted(np.cumsum(pi), u[0]))
    for t in range(n):  # sequential by nature; n is small in the tests
        out[t] = s
        if t + 1 < n:
            s = int(np.searchsorted(cum[s], u[t + 1]))
    return out


# --------------------------------------------------------------------------- tokenisers


@dataclass(frozen=True)
class Tokenized:
    """ids (N,) int64, vocab (V,) token strings, chars_per_token = len(text) / N; starts (N,)
    int64: the character offset in the text where each token begins (None if unknown)."""

    name: str
    ids: np.ndarray
    vocab: tuple[str, ...]
    chars_per_token: float
    starts: np.ndarray | None = None


def char_tokenize(text: str) -> Tokenized:
    vocab = tuple(sorted(set(text)))
    index = {c: i for i, c in enumerate(vocab)}
    ids = np.fromiter((index[c] for c in text), np.int64, len(text))
    return Tokenized("chars", ids, vocab, 1.0, np.arange(len(text), dtype=np.int64))


_WORD = re.compile(r"\w+|[^\w\s]")


def word_tokenize(text: str, *, lowercase: bool = True) -> Tokenized:
    """Words = runs of \\w and single punctuation marks; whitespace is dropped."""
    matches = list(_WORD.finditer(text))  # the pattern is case-blind; offsets in ``text``
    words = [m.group().lower() if lowercase else m.group() for m in matches]
    starts = np.fromiter((m.start() for m in matches), np.int64, len(matches))
    vocab, ids = np.unique(np.asarray(words, dtype=object).astype(str), return_inverse=True)
    return Tokenized(
        "words",
        ids.astype(np.int64),
        tuple(vocab.tolist()),
        len(text) / max(len(words), 1),
        starts,
    )


def _merge_pair(seq: np.ndarray, a: int, b: int, new: int) -> np.ndarray:
    """Replace non-overlapping occurrences of (a, b), left to right, by ``new``."""
    hits = np.flatnonzero((seq[:-1] == a) & (seq[1:] == b))
    if a == b and len(hits):
        # in a run of matches at p, p+1, p+2, ... the left-to-right scan merges p, p+2, ...
        brk = np.r_[True, np.diff(hits) != 1]
        run_start = hits[brk][np.cumsum(brk) - 1]
        hits = hits[(hits - run_start) % 2 == 0]
    if not len(hits):
        return seq
    out = seq.copy()
    out[hits] = new
    return np.delete(out, hits + 1)


def train_merges(
    text: str, num_merges: int, *, alphabet: str | None = None
) -> tuple[tuple[str, ...], list[tuple[int, int]]]:
    """Learn ``num_merges`` merges (BPE-like) from ``text``.

    Returns (vocab, merges): vocab lists the characters (of ``alphabet`` if given, so that
    text outside the training sample can be encoded, else of ``text``) then one string per
    merge; merge j joins ids (a, b) into id len(chars) + j. Tokens containing whitespace
    never merge, so no token spans a word boundary. Ties go to the smallest pair code."""
    vocab = sorted(set(text) | set(alphabet or ""))
    index = {c: i for i, c in enumerate(vocab)}
    ws = np.array([c.isspace() for c in vocab] + [False] * num_merges)
    seq = np.fromiter((index[c] for c in text), np.int64, len(text))
    merges = []
    for _ in range(num_merges):
        v = len(vocab)
        ok = ~ws[seq[:-1]] & ~ws[seq[1:]]
        codes = seq[:-1][ok] * v + seq[1:][ok]
        if not len(codes):
            break
        counts = np.bincount(codes, minlength=v * v)
        best = int(np.argmax(counts))
        if counts[best] < 2:
            break
        a, b = divmod(best, v)
        merges.append((a, b))
        vocab.append(vocab[a] + vocab[b])
        seq = _merge_pair(seq, a, b, v)
    return tuple(vocab), merges


def apply_merges(text: str, vocab: tuple[str, ...], merges: list[tuple[int, int]]) -> Tokenized:
    """Encode ``text`` with merges from :func:`train_merges` (applied in training order)."""
    n_chars = len(vocab) - len(merges)
    index = {c: i for i, c in enumerate(vocab[:n_chars])}
    unknown = set(text) - set(index)
    if unknown:
        raise ValueError(f"characters {sorted(unknown)[:5]} are not in the merge vocabulary")
    seq = np.fromiter((index[c] for c in text), np.int64, len(text))
    for j, (a, b) in enumerate(merges):
        seq = _merge_pair(seq, a, b, n_chars + j)
    lengths = np.array([len(v) for v in vocab], np.int64)[seq]
    starts = np.cumsum(lengths) - lengths
    return Tokenized(f"merges{len(merges)}", seq, vocab, len(text) / len(seq), starts)


def decode_ids(tok: Tokenized) -> str:
    return "".join(tok.vocab[i] for i in tok.ids)


def cap_vocab(ids: np.ndarray, max_vocab: int) -> np.ndarray:
    """Keep the ``max_vocab - 1`` most frequent ids (ranked 0..), map the rest to one OTHER id."""
    ids = np.asarray(ids, np.int64)
    counts = np.bincount(ids)
    if np.count_nonzero(counts) <= max_vocab:
        return ids
    order = np.argsort(-counts, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return np.minimum(rank[ids], max_vocab - 1)


# --------------------------------------------------------------------------- self-similarity


def collapse_spread(
    profiles: dict[str, tuple[np.ndarray, np.ndarray]], *, floor: float = 1e-4, num_points: int = 24
) -> float:
    """Spread of normalised MI profiles after putting them on a common distance axis.

    profiles: name -> (d, f) with d (R,) distances (e.g. r x chars-per-token) and f (R,) the
    normalised profile I(r) / I(1). On ``num_points`` log-spaced distances inside the range
    that every profile covers, interpolate log max(f, floor) in log d and return the mean over
    points of the standard deviation across profiles (0 = perfect collapse)."""
    lo = max(float(np.min(d)) for d, _ in profiles.values())
    hi = min(float(np.max(d)) for d, _ in profiles.values())
    if not hi > lo:
        raise ValueError("the profiles share no distance range")
    grid = np.geomspace(lo, hi, num_points)
    curves = []
    for d, f in profiles.values():
        order = np.argsort(d)
        logf = np.log(np.maximum(np.asarray(f, np.float64)[order], floor))
        curves.append(np.interp(np.log(grid), np.log(np.asarray(d, np.float64)[order]), logf))
    return float(np.std(np.stack(curves), axis=0).mean())


# --------------------------------------------------------------------------- block bootstrap


def char_blocks(tok: Tokenized, block_chars: int) -> np.ndarray:
    """(N,) index of the block of ``block_chars`` characters (0, 1, ...) each token starts in.

    Blocks are cut in the text, not in the token stream, so the same block index means the
    same stretch of text in every tokenisation (one bootstrap draw then resamples the same
    chunks for all granularities, keeping their estimates' correlation)."""
    if tok.starts is None:
        raise ValueError(f"tokenisation {tok.name!r} has no character offsets (starts)")
    if block_chars < 1:
        raise ValueError(f"block_chars must be >= 1, got {block_chars}")
    return np.asarray(tok.starts, np.int64) // int(block_chars)


def block_pair_counts(
    tokens: np.ndarray, blocks: np.ndarray, distance: int, *, num_ids: int, num_blocks: int
) -> np.ndarray:
    """(K, V, V) counts of the pairs (x_t, x_{t+r}) whose two tokens lie in the same block.

    tokens (N,) ids in [0, V), blocks (N,) non-decreasing block index in [0, K), r = distance.
    Pairs that straddle a block boundary (a fraction ~ r / block length) are left out, so
    that a block's histogram depends on that block's text alone."""
    tokens, blocks, r = np.asarray(tokens, np.int64), np.asarray(blocks, np.int64), int(distance)
    if not 0 < r < len(tokens):
        raise ValueError(f"distance {r} is outside 1..{len(tokens) - 1}")
    same = blocks[:-r] == blocks[r:]
    x, y, b = tokens[:-r][same], tokens[r:][same], blocks[:-r][same]
    V, K = int(num_ids), int(num_blocks)
    counts = np.bincount((b * V + x) * V + y, minlength=K * V * V)
    return counts.reshape(K, V, V)


def bootstrap_mi_profile(
    tokens: np.ndarray,
    blocks: np.ndarray,
    distances,
    weights: np.ndarray,
    *,
    num_shuffles: int = 2,
    seed: int = 0,
    chunk: int = 50,
    correction: str = "miller_madow",
) -> tuple[np.ndarray, np.ndarray]:
    """Block-bootstrap replicates of I(r) and of the estimator's floor.

    tokens (N,) ids, blocks (N,) block index per token (:func:`char_blocks`), weights (B, K)
    how often each block is drawn in each of B resamples (``stats.bootstrap_weights``).
    Resample b's joint histogram at distance r is sum_k weights[b, k] x (pairs inside block
    k), i.e. the histogram of the concatenated drawn blocks without the pairs across joins.

    Returns (mi (B, R), floor (B,)): ``floor`` is the same estimator on the same resample of a
    shuffled copy of the stream (r = 1, mean over ``num_shuffles`` permutations drawn from
    ``seed``), i.e. what it returns for independent tokens with this resample's duplication
    pattern. A block drawn twice tallies every one of its pairs twice, which inflates the
    plug-in MI of a resample above that of the sample (by about the estimator's own floor:
    the Miller-Madow term counts the pairs, not the independent ones); subtracting each
    resample's own floor removes that, where subtracting the sample's would not."""
    tokens, blocks = np.asarray(tokens, np.int64), np.asarray(blocks, np.int64)
    weights = np.asarray(weights, np.float64)
    if tokens.shape != blocks.shape or tokens.ndim != 1:
        raise ValueError(
            f"tokens and blocks must be 1-D of equal length: {tokens.shape}, {blocks.shape}"
        )
    if np.any(np.diff(blocks) < 0) or blocks.min() < 0:
        raise ValueError("blocks must be non-negative and non-decreasing along the stream")
    V, K = int(tokens.max()) + 1, int(weights.shape[1])
    if blocks.max() >= K:
        raise ValueError(f"block index {int(blocks.max())} but weights has only {K} columns")

    def replicates(stream, r):
        m = block_pair_counts(stream, blocks, r, num_ids=V, num_blocks=K).reshape(K, V * V)
        m = m.astype(np.float64)
        out = []
        for lo in range(0, len(weights), chunk):  # bounds memory at chunk x V^2 floats
            joint = (weights[lo : lo + chunk] @ m).reshape(-1, V, V)  # (b, V, V)
            out.append(mi_from_counts(joint, correction=correction))
        return np.concatenate(out)

    mi = np.stack([replicates(tokens, r) for r in distances], axis=1)  # (B, R)
    rng = np.random.default_rng(seed)
    floor = np.mean([replicates(rng.permutation(tokens), 1) for _ in range(num_shuffles)], 0)
    return mi, floor
