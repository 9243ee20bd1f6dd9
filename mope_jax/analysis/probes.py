"""Position-targeted probes of a trained causal model: does it predict the tokens at chosen
positions, and does the query that predicts each look at the token it should copy?

A probe takes windows x (N, T) and target positions j (1 <= j < T, the same in every window):
the model predicts x[:, j] from the prefix ending at j - 1. Used by paper B's frequency-matching
study (copy targets of block data); any task whose answers sit at known positions can use them.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from mope_jax.analysis.freq_energy import attention_probs
from mope_jax.model import GPT
from mope_jax.typing import Params


def _positions(x: np.ndarray, j) -> tuple[np.ndarray, np.ndarray]:
    x, j = np.asarray(x), np.asarray(j, np.int64)
    if x.ndim != 2 or j.ndim != 1 or len(j) == 0:
        raise ValueError(f"want windows (N, T) and positions (P,); got {x.shape} and {j.shape}")
    if j.min() < 1 or j.max() >= x.shape[1]:
        raise ValueError(
            f"target positions must lie in [1, {x.shape[1]}); got {j.min()}..{j.max()}"
        )
    return x, j


def target_accuracy(model_cfg, params: Params, x: np.ndarray, j) -> float:
    """Share of (window, position) pairs whose greedy (argmax) prediction at j - 1 is x[:, j]."""
    x, j = _positions(x, j)
    logits = GPT(model_cfg).apply({"params": params}, jnp.asarray(x), deterministic=True)
    pred = np.asarray(jnp.argmax(logits, -1))  # (N, T)
    return float(np.mean(pred[:, j - 1] == x[:, j]))


def source_attention(model_cfg, params: Params, x: np.ndarray, j, distance: int) -> np.ndarray:
    """(L, H): mean attention probability from each query that predicts a target (position
    j - 1) to the key ``distance`` tokens before the target (position j - distance), over the
    windows and positions; for the models :func:`~mope_jax.analysis.freq_energy.attention_probs`
    accepts. ``distance`` 1 is the query's own position."""
    x, j = _positions(x, j)
    if not 1 <= distance <= j.min():
        raise ValueError(f"distance {distance} must be in [1, {j.min()}] (the earliest target)")
    probs = attention_probs(model_cfg, params, x)  # (L, N, H, T, S)
    return probs[:, :, :, j - 1, j - distance].mean(axis=(1, 3))
