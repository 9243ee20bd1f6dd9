"""The measurement of one trained seed (the campaign's ``analyze`` hook, stored as the record's
``analysis``): the frequency energy p per layer and head on fixed validation windows (trained,
at init, on other windows, on random tokens), theta_eff, the greedy copy accuracy, the
copy-attention share of every head and the task's W (nominal and measured)."""

from __future__ import annotations

import math

import jax
import numpy as np

from .rows import task_of, width_of
from mope_jax.analysis.freq_energy import energy_report, energy_tv, probe_tokens
from mope_jax.analysis.probes import source_attention, target_accuracy
from mope_jax.config import Config
from mope_jax.data.dependency import (
    block_repeat_stream,
    dependency_kernel,
    kernel_width,
    measured_block_width,
)


def copy_windows(
    cfg: Config, val: np.ndarray, task: str, v: int, num_windows: int = 16
) -> tuple[np.ndarray, np.ndarray]:
    """(x (N, T) validation windows that start at a block marker, j: the positions of the copy
    targets in them). copy: the target at offset B-1 of a block (source B-2 back); repeat:
    offsets W+1..2W (source W back). Every source lies inside the window."""
    T = cfg.model.block_size
    period = v if task == "copy" else 2 * v + 1
    offsets = np.array([v - 1]) if task == "copy" else np.arange(v + 1, 2 * v + 1)
    first = int(np.flatnonzero(val == 0)[0])  # marker id 0 ('.' sorts first in the repeat files)
    starts = first + np.arange(num_windows) * period * max(1, T // period)
    starts = starts[starts + T <= len(val)]
    x = np.stack([val[s : s + T] for s in starts]).astype(np.int32)  # (N, T), phase = i % period
    j = (np.arange(0, T, period)[:, None] + offsets[None, :]).ravel()  # copy positions
    return x, j[j < T]


def copy_accuracy(
    cfg: Config, params, val: np.ndarray, task: str, v: int, num_windows: int = 16
) -> float:
    """Greedy accuracy on the copy targets of :func:`copy_windows`."""
    return target_accuracy(cfg.model, params, *copy_windows(cfg, val, task, v, num_windows))


# A head "attends at the copy offset" when at least this share of the attention of the queries
# that predict a copy target goes to the key holding its source (fixed before the learned-scale
# runs; the per-head shares are in every record, so another threshold can be applied later).
COPY_HEAD_SHARE = 0.5


def copy_attention(cfg: Config, params, val: np.ndarray, task: str, v: int) -> np.ndarray:
    """(L, H): mean attention from each query that predicts a copy target (position j - 1) to
    the key holding the target's source (position j - W, i.e. offset W - 1), on the windows
    of :func:`copy_windows`."""
    x, j = copy_windows(cfg, val, task, v)
    return source_attention(cfg.model, params, x, j, width_of(task, v))


def analyze(cfg: Config, state, corpus) -> dict:
    """One trained seed: frequency energy (trained, init, other windows, random tokens), the
    copy accuracy and the task's W (the record's ``analysis``)."""
    from mope_jax.model import init_params

    task, v = task_of(cfg)
    params = state.params
    p0 = init_params(cfg.model, jax.random.split(jax.random.PRNGKey(cfg.train.seed))[0])
    val = np.asarray(corpus.val)
    out = _measure(cfg, params, p0, val, task, v)
    if task == "copy":
        w_meas = measured_block_width(v, kind="match")
        optimum = (v - 2) / v * math.log(16)
    else:
        stream = block_repeat_stream(100_000, width=v, num_symbols=16, seed=0)
        w_meas = kernel_width(dependency_kernel(stream, 3 * v, kind="match"))
        optimum = v / (2 * v + 1) * math.log(16)
    B = v if task == "copy" else 2 * v + 1
    return out | dict(
        task=task,
        value=v,
        block_len=B,
        W=width_of(task, v),
        W_measured=w_meas,
        optimal_loss=optimum,
    )


def _measure(cfg: Config, params, init_params, val: np.ndarray, task: str, v: int) -> dict:
    T = cfg.model.block_size
    probe_a = probe_tokens(val, T)
    probe_b = probe_tokens(val[len(val) // 2 + 7 :], T)  # other windows, other phases
    rng = np.random.default_rng(123)
    probe_rand = rng.integers(0, cfg.model.vocab_size, size=(8, T)).astype(np.int32)
    rep = energy_report(cfg.model, params, probe_a)
    rep_b = energy_report(cfg.model, params, probe_b)
    rep_r = energy_report(cfg.model, params, probe_rand)
    rep_0 = energy_report(cfg.model, init_params, probe_a)
    p = np.asarray(rep["p"])  # (L, H, F)
    ent = np.asarray(rep["entropy"])
    sharp = np.unravel_index(np.argmin(ent), ent.shape)
    return {
        "log_theta_eff": rep["log_theta_eff_mean"],
        "theta_eff": rep["theta_eff_mean"],
        "log_theta_eff_layer": np.asarray(rep["log_theta_eff"]).mean(1).tolist(),
        "log_theta_eff_sharpest_head": float(np.asarray(rep["log_theta_eff"])[sharp]),
        "sharpest_head": [int(i) for i in sharp],
        "entropy_mean": rep["entropy_mean"],
        "entropy_init": rep_0["entropy_mean"],
        "log_theta_eff_init": rep_0["log_theta_eff_mean"],
        "dominant_theta": rep["dominant_theta"],
        "theta": rep["theta"],
        "p": p.tolist(),
        "stability_tv": {
            "other_windows": energy_tv(p, rep_b["p"]),
            "random_tokens": energy_tv(p, rep_r["p"]),
            "vs_init": energy_tv(p, rep_0["p"]),
        },
        "copy_accuracy": copy_accuracy(cfg, params, val, task, v),
        **_copy_heads(cfg, params, val, task, v, np.asarray(rep["log_theta_eff"])),
    }


def _copy_heads(cfg: Config, params, val, task: str, v: int, log_theta_eff: np.ndarray) -> dict:
    """The copy-attention share of every head, the heads at or above COPY_HEAD_SHARE, and
    log theta_eff averaged over those heads (None if there is none)."""
    share = copy_attention(cfg, params, val, task, v)  # (L, H)
    heads = [[int(a), int(b)] for a, b in zip(*np.nonzero(share >= COPY_HEAD_SHARE))]
    return {
        "copy_attention": share.tolist(),
        "copy_heads": heads,
        "log_theta_eff_copy_heads": (
            float(np.mean([log_theta_eff[a, b] for a, b in heads])) if heads else None
        ),
    }
