"""Rotary position embedding (Su et al. 2021), in both pair layouts.

theta_i = base^(-2i/D), i = 0..D/2-1 (rad/token). A pair (x_a, x_b) at position m is rotated
by theta_i m, so that <R(m) q, R(n) k> depends on m - n only.

Layouts:
  * ``"interleaved"``: pairs (x[2i], x[2i+1]) -- the papers' code (and the original RoFormer).
  * ``"half"``: pairs (x[i], x[i + D/2]) -- GPT-NeoX / Hugging Face ``rotate_half``.

Context extension (DESIGN.md section 3), s = L'/L the extension factor, L the training length:
  * ``"none"``:        theta_i
  * ``"pi"``:          theta_i / s                                   (position interpolation)
  * ``"ntk"``:         base' = base s^(D/(D-2)), i.e. theta_i s^(-2i/(D-2)): the highest
                       frequency (i = 0) is kept and the lowest (i = D/2-1) divided by exactly s
  * ``"dynamic_ntk"``: "ntk" with s_eff = max(1, T/L) for the current length T; equals
                       "none" for T <= L
  * ``"yarn"``:        r_i = L theta_i / (2 pi) rotations over the training window,
                       gamma_i = clip((r_i - alpha) / (beta - alpha), 0, 1) (alpha=1, beta=32),
                       theta'_i = (1 - gamma_i) theta_i / s + gamma_i theta_i, and the logits
                       are multiplied by m^2 with m = 0.1 ln s + 1 (q and k each by m, as in
                       the YaRN paper, sqrt(1/t) = 0.1 ln s + 1, and Hugging Face's
                       ``attention_factor``); see :func:`yarn_logit_scale`.
"""

from __future__ import annotations

import math
from typing import Literal

import jax.numpy as jnp

from mope_jax.errors import ConfigError
from mope_jax.typing import Array

Layout = Literal["interleaved", "half"]
LAYOUTS = ("interleaved", "half")  # model.rope_layout
SCALINGS = ("none", "pi", "ntk", "dynamic_ntk", "yarn")


def rope_frequencies(
    head_dim: int,
    base: float = 10000.0,
    *,
    scaling: str = "none",
    factor: float = 1.0,
    original_length: int | None = None,
    seq_len: int | None = None,
    yarn_alpha: float = 1.0,
    yarn_beta: float = 32.0,
) -> Array:
    """theta_i = base^(-2i/D) under a context-extension rule, shape (D/2,), rad/token.

    Args:
      head_dim: D (even).
      base: RoPE base.
      scaling: one of SCALINGS (module docstring gives each formula).
      factor: s = L'/L >= 1 for "pi", "ntk", "yarn" (ignored by "none" and "dynamic_ntk").
      original_length: L, the training length in tokens (needed by "dynamic_ntk" and "yarn").
      seq_len: the current sequence length T (needed by "dynamic_ntk": s_eff = max(1, T/L)).
      yarn_alpha, yarn_beta: YaRN ramp endpoints, in rotations over L.
    """
    if head_dim % 2:
        raise ConfigError(f"RoPE needs an even head dim, got {head_dim}")
    if scaling not in SCALINGS:
        raise ConfigError(f"unknown RoPE scaling {scaling!r}; choose one of {SCALINGS}")
    theta = base ** (-jnp.arange(0, head_dim, 2, dtype=jnp.float32) / head_dim)  # (D/2,)
    if scaling == "none":
        return theta
    if scaling == "dynamic_ntk":
        if not original_length or seq_len is None:
            raise ConfigError(
                "dynamic_ntk needs original_length (model.rope_original_length) and seq_len"
            )
        factor = max(1.0, seq_len / original_length)
        if factor == 1.0:
            return theta
        scaling = "ntk"
    if factor < 1.0:
        raise ConfigError(
            f"rope factor s={factor} < 1; s = L'/L is an extension factor, use s >= 1"
        )
    if scaling == "pi":
        return theta / factor
    if scaling == "ntk":
        # base' = base s^(D/(D-2)); written as theta_i s^(-2i/(D-2)) so that i = D/2-1 gives
        # exactly theta / s in float32 too (for D = 2 there is only i = 0, which NTK keeps).
        if head_dim == 2:
            return theta
        expo = jnp.arange(0, head_dim, 2, dtype=jnp.float32) / (head_dim - 2)  # (D/2,), 0..1
        return theta * jnp.asarray(factor, jnp.float32) ** (-expo)
    # yarn
    if not original_length:
        raise ConfigError(
            "yarn needs original_length (model.rope_original_length), the training length L"
        )
    if not yarn_beta > yarn_alpha:
        raise ConfigError(f"yarn needs beta > alpha, got alpha={yarn_alpha}, beta={yarn_beta}")
    gamma = yarn_ramp(theta, original_length, yarn_alpha, yarn_beta)
    return (1.0 - gamma) * theta / factor + gamma * theta


def yarn_ramp(theta: Array, original_length: int, alpha: float = 1.0, beta: float = 32.0) -> Array:
    """gamma_i = clip((r_i - alpha) / (beta - alpha), 0, 1), r_i = L theta_i / (2 pi); (D/2,).

    gamma = 1 keeps a frequency (it turns >= beta times over the training window), gamma = 0
    interpolates it fully (< alpha turns)."""
    r = original_length * theta / (2.0 * math.pi)
    return jnp.clip((r - alpha) / (beta - alpha), 0.0, 1.0)


def yarn_logit_scale(factor: float) -> float:
    """YaRN's multiplier of the attention logits, (0.1 ln s + 1)^2 (1 for s <= 1).

    The YaRN paper writes softmax(q.k / (t sqrt(D))) with sqrt(1/t) = 0.1 ln s + 1 and applies
    sqrt(1/t) to both q and k; so the logits grow by (0.1 ln s + 1)^2."""
    m = 0.1 * math.log(factor) + 1.0 if factor > 1.0 else 1.0
    return m * m


def scaled_frequencies(model_cfg, seq_len: int) -> tuple[Array, float]:
    """(theta' (D/2,), logit multiplier) for a ModelConfig's rope_* fields at length seq_len."""
    c = model_cfg
    freqs = rope_frequencies(
        c.head_dim,
        c.rope_base,
        scaling=c.rope_scaling,
        factor=c.rope_factor,
        original_length=c.rope_original_length or None,
        seq_len=seq_len,
        yarn_alpha=c.rope_yarn_alpha,
        yarn_beta=c.rope_yarn_beta,
    )
    scale = yarn_logit_scale(c.rope_factor) if c.rope_scaling == "yarn" else 1.0
    return freqs, scale


def rope_angles(positions: Array, freqs: Array) -> Array:
    """positions (..., T) in tokens, freqs (D/2,) -> angles (..., T, D/2)."""
    freqs = jnp.asarray(freqs, jnp.float32).reshape((1,) * positions.ndim + (-1,))  # (1.., D/2)
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
    angle = angle.reshape((1,) * (x.ndim - angle.ndim) + angle.shape)  # explicit leading batch axes
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
        raise ConfigError(f"unknown RoPE layout {layout!r}; use 'interleaved' or 'half'")
    return out.astype(x.dtype)


def extend_context(
    model_cfg,
    scaling: str,
    factor: float = 1.0,
    *,
    original_length: int | None = None,
    seq_len: int | None = None,
):
    """A copy of ``model_cfg`` evaluated with a RoPE context-extension rule (eval-time override).

    The parameters of a RoPE model do not depend on the length, so a checkpoint trained at
    L = ``model_cfg.block_size`` can be applied with ``GPT(extend_context(cfg, "pi", 4.0))``
    at up to ``seq_len`` (default s L) tokens. ``original_length`` defaults to the training
    block size. Absolute position tables (``pos_encoding="learned"``) are sized by block_size
    and cannot be extended this way.
    """
    import dataclasses

    if model_cfg.pos_encoding == "learned":
        raise ConfigError(
            "a learned position table cannot be extended; use a RoPE model (pos_encoding='none')"
        )
    L = original_length or model_cfg.rope_original_length or model_cfg.block_size
    new_len = seq_len or int(math.ceil(max(factor, 1.0) * L))
    return dataclasses.replace(
        model_cfg,
        rope_scaling=scaling,
        rope_factor=float(factor),
        rope_original_length=int(L),
        block_size=max(model_cfg.block_size, new_len),
    )
