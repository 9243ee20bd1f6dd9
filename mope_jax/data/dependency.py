"""Dependency kernel K(r) of a token stream and its width W (paper B, DESIGN.md section 3).

K(r) is the strength of the statistical dependency between tokens r apart, measured from
data. Two estimators:

  * ``"mi"``: K(r) = I(x_t; x_{t+r}) (Miller-Madow corrected, nats; mutual_info.py);
  * ``"match"``: K(r) = P(x_t = x_{t+r}) - sum_v P(x_t = v) P(x_{t+r} = v), the excess of
    exact matches over independence (the signature of copying).

Width: W = the smallest r with K(r) >= ``frac`` x max_r K(r) (frac = 1/2): the distance of
the first strong dependency. The first peak, not the largest, because periodic structure
repeats the dependency at multiples of the period (in the block task every marker 0 is
followed by a marker at r = B, a dependency of period B that is as strong as the copy at
r = B - 2; see tests/test_mutual_info.py).

For the block-copy task of :mod:`mope_jax.data.synthetic` ([0, a_1, .., a_{B-2}, a_1]) the
built-in dependency is the copy at distance B - 2, so W = B - 2; :func:`block_copy_width`
states it.
"""

from __future__ import annotations

import numpy as np

from mope_jax.data.mutual_info import mutual_information
from mope_jax.data.synthetic import block_copy_stream


def excess_match(x: np.ndarray, y: np.ndarray) -> float:
    """P(x = y) - sum_v P(x = v) P(y = v) over paired samples (N,)."""
    x = np.asarray(x, np.int64)
    y = np.asarray(y, np.int64)
    v = int(max(x.max(), y.max())) + 1
    px = np.bincount(x, minlength=v) / len(x)
    py = np.bincount(y, minlength=v) / len(y)
    return float(np.mean(x == y) - (px * py).sum())


def dependency_kernel(tokens: np.ndarray, max_distance: int, *, kind: str = "mi") -> np.ndarray:
    """K(r) for r = 1..max_distance, shape (max_distance,); index r-1 holds K(r)."""
    tokens = np.asarray(tokens, np.int64)
    if not 0 < max_distance < len(tokens):
        raise ValueError(f"max_distance={max_distance} must be in 1..{len(tokens) - 1}")
    if kind == "mi":
        fn = mutual_information
    elif kind == "match":
        fn = excess_match
    else:
        raise ValueError(f"unknown kernel kind {kind!r}; use 'mi' or 'match'")
    return np.asarray([fn(tokens[:-r], tokens[r:]) for r in range(1, max_distance + 1)])


def kernel_width(kernel: np.ndarray, *, frac: float = 0.5) -> int:
    """W = smallest r >= 1 with K(r) >= frac * max K (kernel[r-1] = K(r))."""
    k = np.asarray(kernel, np.float64)
    peak = k.max()
    if not peak > 0:
        raise ValueError("the kernel has no positive dependency; W is undefined")
    return int(np.flatnonzero(k >= frac * peak)[0]) + 1


def block_copy_width(block_len: int) -> int:
    """The dependency distance built into block-copy data: the copy of a_1 at offset B - 2."""
    return block_len - 2


def measured_block_width(
    block_len: int,
    *,
    num_symbols: int = 16,
    num_tokens: int = 100_000,
    seed: int = 0,
    kind: str = "match",
    frac: float = 0.5,
) -> int:
    """W measured from a generated block-copy stream (max distance 2B)."""
    stream = block_copy_stream(num_tokens, block_len=block_len, num_symbols=num_symbols, seed=seed)
    return kernel_width(dependency_kernel(stream, 2 * block_len, kind=kind), frac=frac)


def block_repeat_stream(
    num_tokens: int, *, width: int, num_symbols: int, seed: int | tuple[int, ...]
) -> np.ndarray:
    """A block task whose every second-half token is a copy at distance exactly W = ``width``.

    Blocks [0, a_1..a_W, a_1..a_W] (length B = 2W + 1, a_j i.i.d. uniform on 1..K): W of
    every 2W + 1 targets are copies from W tokens back, against one in B for
    :func:`mope_jax.data.synthetic.block_copy_stream`; a stronger training signal for the
    same kind of dependency, so that tiny models learn it within a CPU budget.
    (num_tokens,) int32, deterministic in ``seed``.
    """
    if width < 1 or num_symbols < 1 or num_tokens < 1:
        raise ValueError("width, num_symbols and num_tokens must be positive")
    rng = np.random.default_rng(seed)
    b = 2 * width + 1
    n_blocks = -(-num_tokens // b)
    sym = rng.integers(1, num_symbols + 1, size=(n_blocks, width))  # (n, W)
    blocks = np.concatenate([np.zeros((n_blocks, 1), sym.dtype), sym, sym], axis=1)  # (n, 2W+1)
    return blocks.reshape(-1)[:num_tokens].astype(np.int32)


def stream_to_text(stream: np.ndarray) -> str:
    """Token ids 0..K as characters ('.' for 0, then 'a', 'b', ...) for a character corpus."""
    alphabet = "." + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if int(np.max(stream)) >= len(alphabet):
        raise ValueError(f"at most {len(alphabet) - 1} symbols can be written as characters")
    return "".join(alphabet[int(i)] for i in stream)
