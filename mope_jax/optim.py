"""The optimiser and its learning-rate schedule (one definition, read by training and analysis).

Linear warmup 0 -> 1 over ``warmup_steps``, then cosine to ``min_lr / lr`` at ``max_steps``
(:func:`unit_schedule`); the step multiplies it by the state's traced ``lr`` so that one
compiled program can train several learning rates (``mope_jax.sweep`` grids).
"""

from __future__ import annotations

from typing import Callable

import jax
import optax

from mope_jax.config import Config
from mope_jax.errors import TrainingError
from mope_jax.typing import Array, Params

# train fields held as traced f32 scalars in the train state (``TrainState.hparams``)
GRID_FIELDS = ("lr", "weight_decay", "grad_clip")


def unit_schedule(cfg: Config) -> optax.Schedule:
    """The lr schedule divided by train.lr (peak 1): warmup, then cosine to min_lr / lr."""
    t = cfg.train
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=1.0,
        warmup_steps=t.warmup_steps,
        decay_steps=max(t.max_steps, t.warmup_steps + 1),
        end_value=t.min_lr / t.lr if t.lr else 0.0,
    )


def lr_schedule(cfg: Config) -> Callable[[Array], Array]:
    """The learning rate at step ``count``: train.lr times :func:`unit_schedule` (what the
    training step applies with the config's own lr)."""
    unit, lr = unit_schedule(cfg), cfg.train.lr
    return lambda count: lr * unit(count)


def decay_mask(cfg: Config, params: Params) -> Params:
    """True for parameters that get weight decay (train.decay_group, train.no_decay)."""
    group, excluded = cfg.train.decay_group, cfg.train.no_decay
    if group not in ("all", "2d"):
        raise TrainingError(f"train.decay_group={group!r}; use 'all' or '2d'")

    def rule(path, leaf) -> bool:
        name = "/".join(str(getattr(p, "key", p)) for p in path)
        if any(ex in name for ex in excluded):
            return False
        return group == "all" or leaf.ndim >= 2

    return jax.tree_util.tree_map_with_path(rule, params)


def make_optimizer(
    cfg: Config, params: Params, hparams: dict[str, Array] | None = None
) -> optax.GradientTransformation:
    """Clip + AdamW. With ``hparams`` (traced scalars from the train state), lr, weight decay
    and the clip norm come from there instead of the config."""
    t = cfg.train
    if hparams is None:
        hparams = {f: getattr(t, f) for f in GRID_FIELDS}
    unit = unit_schedule(cfg)
    return optax.chain(
        optax.clip_by_global_norm(hparams["grad_clip"]),
        optax.adamw(
            lambda count: hparams["lr"] * unit(count),
            b1=t.beta1,
            b2=t.beta2,
            weight_decay=hparams["weight_decay"],
            mask=decay_mask(cfg, params),
        ),
    )
