"""The per-seed measurement (the Experiment's ``analyze``, stored in each record): the cell, the
decay-only factor, how far the learned log-parameters are from where weight decay alone takes
them, and the learned (omega, sigma) beside their init."""

from __future__ import annotations

import dataclasses

import numpy as np

from mope_jax.analysis import spectra
from mope_jax.config import Config
from mope_jax.optim import decay_mask

from .rows import PREFIX


def analyze(cfg: Config, state, corpus) -> dict:
    """Per seed: the cell, the decay-only factor and how far the learned raw log-parameters are
    from where weight decay ALONE takes them (no data gradient), and the learned (constrained)
    omega, sigma beside their init (for a plot)."""
    params = state.params
    model = "mope" if "mope" in params else "ega-m"
    pre = PREFIX[model]
    init = getattr(cfg.model, f"{pre}_init")
    constraint = getattr(cfg.model, f"{pre}_constraint")
    masks = spectra.learned_logs(decay_mask(cfg, params), model)  # is each pair decayed?
    decayed = bool(np.all(np.concatenate([np.ravel(x) for x in masks])))
    decay_cfg = (
        cfg
        if decayed
        else dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, weight_decay=0.0))
    )
    lo0, ls0 = spectra.initial_logs(cfg, model, init)
    lo_pred = spectra.decay_only_prediction(decay_cfg, lo0)
    ls_pred = spectra.decay_only_prediction(decay_cfg, ls0)
    lo, ls = spectra.learned_logs(params, model)
    values = (spectra.mope_values if model == "mope" else spectra.ega_m_values)(cfg.model, params)
    return {
        "model": model,
        "weight_decay_on_spectral": decayed,
        "init": init,
        "constraint": constraint,
        "decay_factor": float(spectra.decay_only_prediction(decay_cfg, np.ones(1))[0]),
        "median_abs_data_shift_log_omega": float(np.median(np.abs(lo - lo_pred))),
        "median_abs_data_shift_log_sigma": float(np.median(np.abs(ls - ls_pred))),
        "max_abs_data_shift_log_omega": float(np.max(np.abs(lo - lo_pred))),
        "max_abs_data_shift_log_sigma": float(np.max(np.abs(ls - ls_pred))),
        "median_abs_decay_shift_log_sigma": float(np.median(np.abs(ls_pred - ls0))),
        "omega": np.ravel(values[f"{pre}_omega"]).tolist(),
        "sigma": np.ravel(values[f"{pre}_sigma"]).tolist(),
        "init_omega": np.exp(lo0).tolist(),
        "init_sigma": np.exp(ls0).tolist(),
    }
