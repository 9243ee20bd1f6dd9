"""Synthetic block-copy data: the built-in task that needs no download (DESIGN.md section 3).

A stream is a concatenation of blocks of length B = ``block_len``::

    [0, a_1, a_2, ..., a_{B-2}, a_1]

Token 0 marks the start of a block; a_1..a_{B-2} are i.i.d. uniform on 1..K (K =
``num_symbols``); the last position copies a_1, a dependency at distance B - 2 that sits at
the same place inside every block (paper B: the dependency width W ~ B sets the RoPE
frequencies a model uses). The vocabulary is {0, 1, ..., K}, V = K + 1.
"""

from __future__ import annotations

import math

import numpy as np

from mope_jax.config import DataConfig
from mope_jax.data.text import Corpus, DataError

# Blocks in the val stream at the least, so its loss is not an average over a handful of blocks.
_MIN_VAL_BLOCKS = 64


def _check_block_args(block_len: int, num_symbols: int) -> None:
    if block_len < 3:
        raise DataError(
            f"data.block_len={block_len} leaves no symbol to copy (a block is a marker, "
            "block_len - 2 symbols and the copy); use data.block_len=3 or more"
        )
    if num_symbols < 1:
        raise DataError(
            f"data.num_symbols={num_symbols} must be at least 1; use e.g. data.num_symbols=16"
        )


def block_copy_stream(
    num_tokens: int, *, block_len: int, num_symbols: int, seed: int | tuple[int, ...]
) -> np.ndarray:
    """(num_tokens,) int32 stream of block-copy blocks, starting at a block boundary.

    Deterministic in ``seed`` (``np.random.default_rng(seed)``); the last block is cut off
    when ``num_tokens`` is not a multiple of ``block_len``.
    """
    _check_block_args(block_len, num_symbols)
    if num_tokens < 1:
        raise DataError(
            f"data.num_tokens={num_tokens} must be positive; use e.g. data.num_tokens=200000"
        )
    rng = np.random.default_rng(seed)
    n_blocks = -(-num_tokens // block_len)
    symbols = rng.integers(1, num_symbols + 1, size=(n_blocks, block_len - 2))  # (n, B-2)
    markers = np.zeros((n_blocks, 1), dtype=symbols.dtype)
    blocks = np.concatenate([markers, symbols, symbols[:, :1]], axis=1)  # (n, B)
    return blocks.reshape(-1)[:num_tokens].astype(np.int32)


def block_copy_optimal_loss(block_len: int, num_symbols: int) -> float:
    """Bayes-optimal mean next-token loss, nats/token, of a block-copy stream.

    L* = (B - 2) / B * ln K.

    Derivation: predict token t+1 from all tokens <= t of a stream that starts at a block
    boundary, so the position inside the current block (the phase) is always known (it is
    the distance to the last 0). One block period holds B targets:

      * offset 0, the marker after a full block: certain, 0 nats;
      * offset 1, a_1: uniform on K symbols and independent of the past, ln K;
      * offsets 2..B-2, a_2..a_{B-2} (B - 3 of them): ln K each;
      * offset B-1, the copy of a_1 (seen B - 2 tokens earlier): certain, 0 nats.

    So B - 2 of every B targets cost ln K (a_1 is unpredictable when it first appears; only
    its copy is predictable), and the others are free. The mean over a stream of whole blocks
    is exact, not an estimate.

    This is the floor for unlimited context. A model that sees windows of T tokens starting
    at a random offset pays more inside the first block of each window (the phase is unknown
    until the first 0, and the copy is unpredictable when a_1 fell before the window), an
    excess of order B / T per token.
    """
    _check_block_args(block_len, num_symbols)
    return (block_len - 2) / block_len * math.log(num_symbols)


def block_copy_corpus(data_cfg: DataConfig) -> Corpus:
    """Train stream of ``data.num_tokens`` tokens from seed ``data.data_seed``; val stream of
    max(num_tokens // 10, 64 blocks) tokens from the derived seed (data_seed, 1).

    Tokens are named "0" (marker), "1".."K"; ``decode`` joins the names with spaces.
    """
    b, k = data_cfg.block_len, data_cfg.num_symbols
    if b > data_cfg.num_tokens:  # no whole block: the copy the task is about never occurs
        raise DataError(
            f"data.block_len={b} is longer than the corpus (data.num_tokens="
            f"{data_cfg.num_tokens}), so it holds no whole block to copy from; use "
            f"data.block_len={data_cfg.num_tokens} or less, or data.num_tokens={b} or more"
        )
    rules = {"block_len": b, "num_symbols": k}
    n_val = max(data_cfg.num_tokens // 10, _MIN_VAL_BLOCKS * b)
    train = block_copy_stream(data_cfg.num_tokens, **rules, seed=data_cfg.data_seed)
    val = block_copy_stream(n_val, **rules, seed=(data_cfg.data_seed, 1))
    meta = {
        "source": "blocks",
        "split": "paper",
        **rules,
        "num_tokens": data_cfg.num_tokens,
        "data_seed": data_cfg.data_seed,
        "optimal_loss": block_copy_optimal_loss(b, k),
    }
    vocab = tuple(str(i) for i in range(k + 1))
    return Corpus(name="blocks", train=train, val=val, vocab=vocab, meta=meta, separator=" ")
