"""mope-jax: spectral structure in transformer attention (MOPE/EGA, RoPE frequency usage,
FourierQK), with a causality audit for every variant.

Public API (imported lazily, so ``import mope_jax.data`` stays free of flax/optax):

    Config, ModelConfig, DataConfig, TrainConfig, apply_overrides   configuration
    get_preset, apply_variant                                       named configurations
    GPT, init_params                                                the model
    make_train, run, load_run, generate                             training
    sweep, load_seed                                                multi-seed programs
    audit, audit_model                                              causality audit
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "Config": "mope_jax.config",
    "ModelConfig": "mope_jax.config",
    "DataConfig": "mope_jax.config",
    "TrainConfig": "mope_jax.config",
    "apply_overrides": "mope_jax.config",
    "get_preset": "mope_jax.presets",
    "apply_variant": "mope_jax.presets",
    "GPT": "mope_jax.model",
    "init_params": "mope_jax.model",
    "make_train": "mope_jax.train",
    "run": "mope_jax.train",
    "load_run": "mope_jax.train",
    "generate": "mope_jax.train",
    "sweep": "mope_jax.sweep",
    "load_seed": "mope_jax.sweep",
    "audit": "mope_jax.analysis.causality",
    "audit_model": "mope_jax.analysis.causality",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'mope_jax' has no attribute {name!r}")
