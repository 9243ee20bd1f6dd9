"""Rotary position embedding (Su et al. 2021), in both pair layouts.

theta_i = base^(-2i/D), i = 0..D/2-1 (rad/token). A pair (x_a, x_b) at position m is rotated
by theta_i m, so that <R(m) q, R(n) k> depends on m - n only.

Layouts:
  * ``"interleaved"``: pairs (x[2i], x[2i+1]) -- the papers' code (and the original RoFormer).
  * ``"half"``: pairs (x[i], x[i + D/2]) -- GPT-NeoX / Hugging Face ``rotate_half``.
"""

from __future__ import annotations

from typing import Literal

import jax.numpy as jnp

from mope_jax.typing import Array

Layout = Literal["interleaved", "half"]
SCALINGS = ("none",)


def rope_frequencies(
    head_dim: int,
    base: float = 10000.0,
    *,
    scaling: str = "none",
    factor: float = 1.0,
    original_length: int | None = None,
) -> Array:
    """theta_i = base^(-2i/D), shape (D/2,), rad/token.

    ``scaling`` selects a context-extension rule (``"none"`` here; see SCALINGS for the rules
    this version implements). ``factor`` is s = L'/L and ``original_length`` is L.
    """
    if head_dim % 2:
        raise ValueError(f"RoPE needs an even head dim, got {head_dim}")
    if scaling not in SCALINGS:
        raise ValueError(f"unknown RoPE scaling {scaling!r}; choose one of {SCALINGS}")
    return base ** (-jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim)


def rope_angles(positions: Array, freqs: Array) -> Array:
    """positions (..., T) in tokens, freqs (D/2,) -> angles (..., T, D/2)."""
    return positions.astype(jnp.float32)[..., None] * freqs


def apply_rope(
    x: Array,
    positions: Array,
    *,
    base: float = 10000.0,
    layout: Layout = "interleaved",
    freqs: Array | None = None,
) -> Array:
    """Rotate x by RoPE.

    Args:
      x: (..., T, H, D).
      positions: (T,) or (..., T) positions in tokens.
      base: theta base (ignored if ``freqs`` is given).
      layout: ``"interleaved"`` or ``"half"`` (see module docstring).
      freqs: optional precomputed (D/2,) frequencies, e.g. from a scaled ``rope_frequencies``.
    Returns:
      array of x's shape and dtype.
    """
    d = x.shape[-1]
    if freqs is None:
        freqs = rope_frequencies(d, base)
    angle = rope_angles(positions, freqs)[..., :, None, :]  # (..., T, 1, D/2)
    cos, sin = jnp.cos(angle), jnp.sin(angle)
    xf = x.astype(jnp.float32)
    if layout == "interleaved":
        pairs = xf.reshape(*x.shape[:-1], d // 2, 2)  # (..., T, H, D/2, 2)
        a, b = pairs[..., 0], pairs[..., 1]
        out = jnp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1).reshape(x.shape)
    elif layout == "half":
        a, b = xf[..., : d // 2], xf[..., d // 2 :]
        out = jnp.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)
    else:
        raise ValueError(f"unknown RoPE layout {layout!r}; use 'interleaved' or 'half'")
    return out.astype(x.dtype)
