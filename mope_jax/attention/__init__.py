"""Attention: the masked core, the variant registry and every registered variant.

Importing this package registers all variants (each module registers its own).
"""

from mope_jax.attention import (  # noqa: F401  (paper A variants)
    baseline,  # noqa: F401  (registers the baseline variants)
    ega_m,
    energy_gate,
    morlet_rope,
    registry,
    spectral,  # noqa: F401  (paper C variants)
)
from mope_jax.attention.core import (
    COMPUTE_DTYPES,
    SelfAttention,
    attend,
    causal_mask,
    dot_product_scores,
)
from mope_jax.attention.registry import AttnBias, Variant, declared_causal, register, variants
from mope_jax.attention.spectral import (
    CONV_IMPLS,
    FILTER_NORMS,
    KERNEL_NORMS,
    PHASE_MODES,
    TRANSFORMS,
)
from mope_jax.config import register_model_check
from mope_jax.encodings.morlet import CONSTRAINTS, INITS
from mope_jax.encodings.rope import SCALINGS
from mope_jax.errors import ConfigError


def check_model_options(m) -> None:
    """ModelConfig check run by ``config.validate`` (registered below): every slot names a
    registered variant, and every variant option is one its module defines. ConfigError else."""
    for slot in registry.SLOTS:
        name = getattr(m, slot, None)
        known = sorted(v.name for v in registry.variants(slot))
        if known and name not in known:
            raise ConfigError(f"model.{slot}={name!r} is unknown; choose one of {', '.join(known)}")
    # options of the variants, from the modules that define them (read, never copied here)
    options = {
        "rope_scaling": SCALINGS,
        "rope_layout": ("interleaved", "half"),
        "mope_constraint": CONSTRAINTS,
        "mope_init": INITS,
        "filter_transform": TRANSFORMS,
        "filter_phase": PHASE_MODES,
        "conv_impl": CONV_IMPLS,
        "filter_norm": FILTER_NORMS,
        "kernel_norm": KERNEL_NORMS,
        "ega_m_init": INITS,
        "ega_m_constraint": CONSTRAINTS,
        "compute_dtype": tuple(COMPUTE_DTYPES),
    }
    for key, allowed in options.items():
        value = getattr(m, key, None)
        if value is not None and value not in allowed:
            raise ConfigError(
                f"model.{key}={value!r} is unknown; choose one of {', '.join(allowed)}"
            )


register_model_check(check_model_options)

__all__ = [
    "AttnBias",
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
