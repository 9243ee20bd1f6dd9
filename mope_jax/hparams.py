"""The ``hparams`` variable collection: model fields a training step supplies as traced scalars.

A module that reads a ModelConfig field this way (e.g. MOPE's and EGA-M's ``mope_bound``, the
omega*sigma bound of their clamp) declares it in its registration (``hparams=("mope_bound",)``,
:mod:`mope_jax.attention.registry`) and reads it with :func:`read`. The training step applies
the model with ``{"params": ..., "hparams": {name: value}}`` built from ``TrainState.hparams``,
so one compiled program (a sweep) can train runs with different values. The collection is
flat and lives at the model's root scope; without it (evaluation of a loaded run, the audit,
generation) the module's own configured value is used, which equals the train state's value for
a run of that config.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn

COLLECTION = "hparams"


def read(module: nn.Module, name: str, default: Any) -> Any:
    """``hparams[name]`` of the root module's variables when supplied, else ``default``."""
    root = module
    while isinstance(root.parent, nn.Module):
        root = root.parent
    return root.get_variable(COLLECTION, name, default)


def collection(values: dict[str, Any], names) -> dict[str, dict[str, Any]]:
    """The variables entry ``{"hparams": {name: values[name]}}`` for the names present."""
    return {COLLECTION: {n: values[n] for n in names if n in values}}
