"""Sinusoidal absolute encoding (Vaswani et al. 2017, section 3.5)."""

from __future__ import annotations

import jax.numpy as jnp

from mope_jax.errors import ConfigError
from mope_jax.typing import Array


def sinusoidal_frequencies(dim: int, base: float = 10000.0) -> Array:
    """omega_i = base^(-2i/dim), i = 0..dim/2-1, in rad/token. Shape (dim/2,)."""
    if dim % 2:
        raise ConfigError(f"sinusoidal encoding needs an even width, got {dim}")
    return base ** (-jnp.arange(0, dim, 2, dtype=jnp.float32) / dim)


def sinusoidal_encoding(positions: Array, dim: int, *, base: float = 10000.0) -> Array:
    """PE[b, 2i] = sin(omega_i b), PE[b, 2i+1] = cos(omega_i b).

    Args:
      positions: (T,) positions in tokens.
      dim: model width E (even).
    Returns:
      (T, E) float32 table, added to token embeddings.
    """
    omega = sinusoidal_frequencies(dim, base)  # (E/2,)
    angle = positions.astype(jnp.float32)[:, None] * omega[None, :]  # (T, E/2)
    # interleave: (T, E/2, 2) -> (T, E)
    return jnp.stack([jnp.sin(angle), jnp.cos(angle)], axis=-1).reshape(positions.shape[0], dim)
