"""The integrated-lr rule: every scale's peak lr is chosen so that sum_t lr_t equals the paper's
reference schedule (5000 steps, lr 3e-4, warmup 300, cosine), so that decoupled weight decay
shrinks the log-parameters by the same factor as in the paper."""

from __future__ import annotations

import jax
import numpy as np

from mope_jax.config import Config, ModelConfig, TrainConfig
from mope_jax.optim import lr_schedule


def integrated_lr(model: dict, train: dict) -> float:
    """sum_t lr_t of the schedule of ``Config(model, train)`` over its max_steps (computed on
    the CPU backend, so the rule gives the same lr, hence the same config, on every machine)."""
    cfg = Config(model=ModelConfig(**model), train=TrainConfig(**train))
    with jax.default_device(jax.devices("cpu")[0]):
        lrs = jax.vmap(lr_schedule(cfg))(np.arange(cfg.train.max_steps))
    return float(np.sum(np.asarray(lrs, np.float64)))


REFERENCE_INTEGRATED_LR = integrated_lr({}, {})  # Config(): the paper's 5000-step schedule


def matched_lr(train: dict, model: dict | None = None) -> float:
    """The peak lr whose schedule (the other fields of ``train``) integrates to the reference
    schedule's sum_t lr_t (the schedule is linear in its peak)."""
    return REFERENCE_INTEGRATED_LR / integrated_lr(model or {}, train | {"lr": 1.0})
