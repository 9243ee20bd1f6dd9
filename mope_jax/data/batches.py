"""Random training windows from a token stream on the device (jit-able; no flax)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from mope_jax.data.text import DataError
from mope_jax.typing import Array, PRNGKey


def sample_batch(
    key: PRNGKey, data: Array, batch_size: int, block_size: int
) -> tuple[Array, Array]:
    """B random windows of T + 1 consecutive tokens, split into inputs and next-token targets.

    Args:
      key: PRNG key.
      data: (N,) integer token ids; pass it as an argument of the jitted caller (not a
        closed-over constant) so that one compilation serves every corpus of length N.
      batch_size: B (static under jit).
      block_size: T (static under jit).

    Returns:
      x, y: (B, T) int32 with y[:, t] = x[:, t + 1] for t < T - 1; window starts are uniform
      on 0..N-T-1, so every window, its target included, lies inside ``data``.
    """
    n, t = data.shape[0], block_size
    if n < t + 1:
        raise DataError(
            f"a stream of {n} tokens has no window of model.block_size + 1 = {t + 1} tokens; "
            f"use model.block_size={max(n - 1, 1)} or less, or a longer corpus"
        )
    starts = jax.random.randint(key, (batch_size,), 0, n - t)  # (B,), maxval exclusive
    windows = jax.vmap(lambda s: jax.lax.dynamic_slice(data, (s,), (t + 1,)))(starts)  # (B, T+1)
    windows = windows.astype(jnp.int32)
    return windows[:, :-1], windows[:, 1:]
