"""ALiBi (Press et al. 2022): a per-head linear distance penalty on the attention logits."""

from __future__ import annotations

import math

import jax.numpy as jnp

from mope_jax.typing import Array


def alibi_slopes(num_heads: int) -> Array:
    """Geometric slopes 2^(-8 i / H), i = 1..H, with the paper's rule for non-powers of 2. (H,)"""

    def power_of_2(n: int) -> list[float]:
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(num_heads).is_integer():
        slopes = power_of_2(num_heads)
    else:
        closest = 2 ** math.floor(math.log2(num_heads))
        slopes = power_of_2(closest) + power_of_2(2 * closest)[0::2][: num_heads - closest]
    return jnp.asarray(slopes, dtype=jnp.float32)


def alibi_bias(slopes: Array, q_positions: Array, k_positions: Array) -> Array:
    """bias[h, i, j] = -slope_h * (i - j). Shapes: slopes (H,), positions (T,), (S,) -> (H, T, S).

    Entries with j > i are positive here; the causal mask removes them.
    """
    dist = (q_positions[:, None] - k_positions[None, :]).astype(jnp.float32)  # (T, S)
    return -slopes[:, None, None] * dist[None, :, :]
