"""Learned absolute position table (GPT-2 style)."""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from mope_jax.typing import Array


class LearnedPositionalEmbedding(nn.Module):
    """A (max_len, E) table initialised N(0, 0.02); returns rows for the given positions."""

    max_len: int
    dim: int
    init_std: float = 0.02

    @nn.compact
    def __call__(self, positions: Array) -> Array:
        """positions (T,) int -> (T, E)."""
        table = self.param("table", nn.initializers.normal(self.init_std), (self.max_len, self.dim))
        return jnp.take(table, positions, axis=0)
