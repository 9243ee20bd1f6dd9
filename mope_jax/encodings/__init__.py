"""Positional encodings, one family per file.

Absolute encodings return a (T, E) table that is added to token embeddings; relative ones
(RoPE) transform q/k; ALiBi is an additive logit bias. Every family lives in the registry of
:mod:`mope_jax.attention.registry` together with its causality declaration.
"""

from mope_jax.encodings.alibi import alibi_bias, alibi_slopes
from mope_jax.encodings.learned import LearnedPositionalEmbedding
from mope_jax.encodings.morlet import MorletPositionalEncoding, morlet_encoding
from mope_jax.encodings.rope import apply_rope, rope_frequencies
from mope_jax.encodings.sinusoidal import sinusoidal_encoding

__all__ = [
    "alibi_bias",
    "alibi_slopes",
    "LearnedPositionalEmbedding",
    "MorletPositionalEncoding",
    "apply_rope",
    "morlet_encoding",
    "rope_frequencies",
    "sinusoidal_encoding",
]
