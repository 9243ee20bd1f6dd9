"""The measurement of each trained seed (``Experiment.analyze``, the record's ``analysis``):
shuffled validation gap, learned periods and kernel scales, EMD periods of the layer-0 filtered
queries, and, for the learned bilateral rows, the phase surrogates and metric-distortion
controls."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from experiments.fourierqk.rows import SURROGATE_ROWS
from mope_jax.analysis import diagnostics as dg
from mope_jax.config import Config
from mope_jax.presets import apply_variant


def num_windows(block_size: int) -> int:
    """Fixed val windows of the diagnostics: 8 at smoke's T=32, 128 at cpu's T=64, else 256."""
    return 8 if block_size <= 32 else 128 if block_size <= 64 else 256


def is_surrogate_row(cfg: Config) -> bool:
    """The learned bilateral rows (SURROGATE_ROWS): applying the variant changes nothing."""
    return any(apply_variant(cfg, v).model == cfg.model for v in SURROGATE_ROWS)


def analyze(cfg: Config, state, corpus) -> dict:
    """Each seed's diagnostics (the record's ``analysis``): best val over evals is in the
    record's curve; here the shuffled gap, learned periods/scales, EMD periods of the layer-0
    filtered queries and, for the learned bilateral rows, the phase surrogates and the
    metric-distortion controls. (The audit of the trained parameters is the campaign's.)"""
    m, params = cfg.model, state.params
    val = np.asarray(corpus.val)
    n = num_windows(m.block_size)
    out = {"shuffled": dg.shuffled_gap(m, params, val, num_windows=n)}
    out["periods"] = dg.summarize_periods(dg.learned_periods(m, params))
    out["scales"] = dg.summarize_periods(dg.learned_scales(params))
    if m.mixer == "attention":
        try:
            x, _ = dg.eval_windows(val, m.block_size, 1)
            out["emd_query_periods_layer0"] = [
                [round(p, 2) for p in ps[:6]]
                for ps in dg.query_emd_periods(m, params, jnp.asarray(x))
            ]
        except ImportError as e:  # EMD-signal not installed
            out["emd_query_periods_layer0"] = str(e)
    if is_surrogate_row(cfg):
        out["phase"] = dg.phase_surrogate_losses(m, params, val, num_windows=n)
        out["phase_shift_def"] = dg.PHASE_SHIFT_DEF
        out["metric"] = dg.metric_distortion_losses(
            m, params, val, num_windows=n, transforms=("rotation", "projection")
        )
    return out
