"""The baseline variants of every slot: none, learned, sinusoidal, RoPE, ALiBi."""

from __future__ import annotations

import math

import flax.linen as nn

from mope_jax.attention.registry import AttnBias, register
from mope_jax.encodings.alibi import alibi_bias, alibi_slopes
from mope_jax.encodings.learned import LearnedPositionalEmbedding
from mope_jax.encodings.rope import LAYOUTS, SCALINGS, apply_rope, scaled_frequencies
from mope_jax.encodings.sinusoidal import sinusoidal_encoding
from mope_jax.typing import Array

for _slot in ("pos_encoding", "qk_position", "attn_bias", "qk_filter"):
    register(_slot, "none", causal=True, doc="identity")(lambda cfg: None)
register("mixer", "attention", causal=True, doc="masked self-attention (the default sublayer)")(
    lambda cfg: None
)


@register("pos_encoding", "learned", causal=True, doc="learned absolute table, N(0, 0.02)")
def _learned(cfg):
    return LearnedPositionalEmbedding(cfg.block_size, cfg.n_embd, cfg.init_std, name="wpe")


class Sinusoidal(nn.Module):
    dim: int

    def __call__(self, positions: Array) -> Array:
        return sinusoidal_encoding(positions, self.dim)


@register("pos_encoding", "sinusoidal", causal=True, doc="fixed sin/cos (Vaswani)")
def _sinusoidal(cfg):
    return Sinusoidal(cfg.n_embd)


class Rope(nn.Module):
    """RoPE on q and k; ``model_cfg`` (optional) supplies the context-extension fields
    (rope_scaling, rope_factor, rope_original_length, rope_yarn_*). YaRN's logit multiplier
    m^2 is applied by scaling q and k by m each."""

    base: float
    layout: str
    model_cfg: object = None

    def __call__(self, q: Array, k: Array, positions: Array):
        freqs, scale = None, 1.0
        if self.model_cfg is not None:
            freqs, scale = scaled_frequencies(self.model_cfg, positions.shape[-1])
        q = apply_rope(q, positions, base=self.base, layout=self.layout, freqs=freqs)
        k = apply_rope(k, positions, base=self.base, layout=self.layout, freqs=freqs)
        if scale != 1.0:
            m = math.sqrt(scale)
            q, k = q * m, k * m
        return q, k


@register(
    "qk_position",
    "rope",
    causal=True,
    doc="rotary q/k (layout from model.rope_layout)",
    options={
        "rope_base": None,
        "rope_layout": LAYOUTS,
        "rope_scaling": SCALINGS,
        "rope_factor": None,
        "rope_original_length": None,
        "rope_yarn_alpha": None,
        "rope_yarn_beta": None,
    },
)
def _rope(cfg):
    return Rope(cfg.rope_base, cfg.rope_layout, cfg)


class Alibi(nn.Module):
    n_head: int

    def __call__(self, xn: Array, positions: Array, deterministic: bool) -> AttnBias:
        return AttnBias(add=alibi_bias(alibi_slopes(self.n_head), positions, positions)[None])


@register("attn_bias", "alibi", causal=True, doc="-slope_h (i - j), geometric slopes")
def _alibi(cfg):
    return Alibi(cfg.n_head)
