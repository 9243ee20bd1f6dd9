"""Attention: the masked core, the variant registry and every registered variant.

Importing this package registers all built-in variants (each module registers its own, with
everything it is: :mod:`mope_jax.attention.registry`). ``mope_jax.config`` imports it when it
validates a Config, so unknown variant names and options fail when the config is built.
"""

from mope_jax.attention import (  # noqa: F401  (each module registers its variants)
    baseline,
    ega_m,
    energy_gate,
    morlet_rope,
    registry,
    spectral,
)
from mope_jax.attention.core import (
    COMPUTE_DTYPES,
    SelfAttention,
    attend,
    causal_mask,
    dot_product_scores,
)
from mope_jax.attention.registry import (
    AttnBias,
    Variant,
    check_model,
    declared_causal,
    register,
    variants,
)

# the old name of the ModelConfig check (the table of options is now the registry's)
check_model_options = check_model

__all__ = [
    "COMPUTE_DTYPES",
    "AttnBias",
    "check_model",
    "check_model_options",
    "SelfAttention",
    "Variant",
    "attend",
    "causal_mask",
    "declared_causal",
    "dot_product_scores",
    "register",
    "variants",
]
