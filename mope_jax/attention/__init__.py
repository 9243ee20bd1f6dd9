"""Attention: the masked core, the variant registry and every registered variant.

Importing this package registers all variants (each module registers its own).
"""

from mope_jax.attention import (  # noqa: F401  (paper A variants)
    baseline,  # noqa: F401  (registers the baseline variants)
    ega_m,
    energy_gate,
    morlet_rope,
    spectral,  # noqa: F401  (paper C variants)
)
from mope_jax.attention.core import SelfAttention, attend, causal_mask, dot_product_scores
from mope_jax.attention.registry import AttnBias, Variant, declared_causal, register, variants

__all__ = [
    "AttnBias",
    "SelfAttention",
    "Variant",
    "attend",
    "causal_mask",
    "declared_causal",
    "dot_product_scores",
    "register",
    "variants",
]
