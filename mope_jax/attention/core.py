"""Masked dot-product attention with the plug points of the registry.

    s_ij = q_i . k_j / sqrt(D) + bias_ij          (j <= i)
    A    = dropout(softmax(s))
    A_ij <- A_ij g_ij / max(sum_j' A_ij' g_ij', 1e-8)    (only if a key gate is present)
    out  = A V
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from mope_jax.attention import registry
from mope_jax.attention.registry import AttnBias
from mope_jax.typing import Array

NEG_INF = -1e30  # finite, so fully masked rows cannot produce NaN


def causal_mask(t: int, s: int | None = None) -> Array:
    """(T, S) bool, True where key j may be seen by query i: j <= i + (S - T)."""
    s = t if s is None else s
    return jnp.arange(s)[None, :] <= jnp.arange(t)[:, None] + (s - t)


def dot_product_scores(q: Array, k: Array, head_dim: int) -> Array:
    """q (B,T,H,D'), k (B,S,H,D') -> scores (B,H,T,S), divided by sqrt(head_dim)."""
    return jnp.einsum("BTHD,BSHD->BHTS", q, k) / math.sqrt(head_dim)


def attend(
    scores: Array,
    v: Array,
    *,
    mask: Array,
    bias: AttnBias | None = None,
    dropout_rate: float = 0.0,
    dropout_rng: Array | None = None,
    deterministic: bool = True,
) -> Array:
    """scores (B,H,T,S), v (B,S,H,D), mask (T,S) -> out (B,T,H,D)."""
    if bias is not None and bias.add is not None:
        scores = scores + bias.add
    scores = jnp.where(mask, scores, NEG_INF)
    probs = jax.nn.softmax(scores.astype(jnp.float32), axis=-1)
    if not deterministic and dropout_rate > 0.0:
        keep = jax.random.bernoulli(dropout_rng, 1.0 - dropout_rate, probs.shape)
        probs = jnp.where(keep, probs / (1.0 - dropout_rate), 0.0)
    if bias is not None and bias.log_gate is not None:
        gated = probs * jnp.exp(bias.log_gate)
        probs = gated / jnp.maximum(gated.sum(-1, keepdims=True), 1e-8)
    return jnp.einsum("BHTS,BSHD->BTHD", probs.astype(v.dtype), v)


class SelfAttention(nn.Module):
    """Causal multi-head self-attention with the registry's plug points."""

    cfg: "object"  # ModelConfig (kept untyped to keep imports one-way)

    @nn.compact
    def __call__(self, xn: Array, positions: Array, *, deterministic: bool) -> Array:
        """xn (B,T,E) = LN(x), positions (T,) -> (B,T,E)."""
        cfg = self.cfg
        b, t, e = xn.shape
        h, d = cfg.n_head, cfg.head_dim
        dense = lambda n, name: nn.Dense(  # noqa: E731
            n, use_bias=cfg.use_bias, kernel_init=nn.initializers.normal(cfg.init_std), name=name
        )
        qkv = dense(3 * e, "c_attn")(xn)  # (B,T,3E)
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q, k, v = (a.reshape(b, t, h, d) for a in (q, k, v))  # (B,T,H,D)

        qk_filter = registry.get("qk_filter", cfg.qk_filter).build(cfg)
        if qk_filter is not None:
            q, k = qk_filter(q, k)
        # q, k before the position transform, for analyses (analysis/freq_energy.py); a no-op
        # unless apply() is called with mutable=["intermediates"].
        self.sow("intermediates", "q", q)
        self.sow("intermediates", "k", k)
        qk_position = registry.get("qk_position", cfg.qk_position).build(cfg)
        scores = None
        if qk_position is not None:
            out = qk_position(q, k, positions)
            if isinstance(out, tuple):
                q, k = out
            else:
                scores = out  # the variant computed (B,H,T,S) scores itself
        if scores is None:
            scores = dot_product_scores(q, k, d)
        attn_bias = registry.get("attn_bias", cfg.attn_bias).build(cfg)
        bias = attn_bias(xn, positions, deterministic) if attn_bias is not None else None

        needs_rng = not deterministic and cfg.dropout > 0.0
        y = attend(
            scores,
            v,
            mask=causal_mask(t),
            bias=bias,
            dropout_rate=cfg.dropout,
            dropout_rng=self.make_rng("dropout") if needs_rng else None,
            deterministic=deterministic,
        )
        y = y.reshape(b, t, e)  # (B,T,H,D) -> (B,T,E)
        y = dense(e, "c_proj")(y)
        return nn.Dropout(cfg.dropout)(y, deterministic=deterministic)
