"""Learned spectral parameters: extraction, eval summaries, read-back, JSON and plots.

``train.run`` calls two hooks of this module:
  * ``extract_spectra(cfg, state) -> {name: np.ndarray}``, stored as named arrays in every
    checkpoint (read back with :func:`read_spectra` without rebuilding the model);
  * ``eval_summary(cfg, state) -> {name: float}``, merged into the metrics line of each eval.

Both dispatch on the variants the config selects (``registry.model_variants``): each variant
declares its extractor and summary where it is registered, next to its module
(:mod:`mope_jax.attention.registry`). Names are flat strings ``family_quantity``:
  * ``mope_*`` (pos_encoding=morlet, attention/morlet_rope.py): omega (rad/token), sigma
    (tokens) after the configured constraint, the raw exp(log .) values, clamp mask, centres b0;
  * ``morlet_rope_sigma`` (qk_position=morlet-rope): sigma per layer, head and group (L, H, G);
  * ``ega_*`` (attn_bias=ega*, attention/energy_gate.py): gate slope alpha and threshold tau per
    layer and head (L, H), (L, H, n) for the mixed gates, and the mix weights softmax(scale_w);
  * ``ega_m_*`` (attn_bias=ega-m*, attention/ega_m.py): EGA-M's omega, sigma per layer, head
    and filter (L, H, 4) (``ega-m*``) or per layer and filter (L, 4) (``ega-m-shared*``) after
    the constraint (bound ``mope_bound``), raw values, clamp mask, alpha, tau, mix weights; its
    eval summary has MOPE's boundary statistics over all pairs, prefixed ``ega_m_``;
  * ``qk_*`` (the learned Q/K filters, attention/spectral.py): centres and periods, kernel
    scales, MexHat-K4 scales, causal learned frequencies, stacked (L, ...);
  * a variant declaring ``spectral_params`` and no extractor: those parameters as stored
    (``registry.default_spectra``).
Paper B's RoPE frequency energy needs the run's corpus, hence the whole Config; it is computed
here (:mod:`mope_jax.analysis.freq_energy`), for RoPE models only.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import jax
import numpy as np

from mope_jax.attention import registry
from mope_jax.attention.ega_m import ega_m_filter_sets, ega_m_init
from mope_jax.attention.ega_m import ega_m_values  # noqa: F401 (re-exported)
from mope_jax.attention.morlet_rope import mope_values  # noqa: F401 (re-exported)
from mope_jax.encodings.morlet import BOUNDARY_TOL, boundary_stats  # noqa: F401 (re-exported)
from mope_jax.encodings.morlet import morlet_init
from mope_jax.provenance import write_json  # noqa: F401 (re-exported)
from mope_jax.typing import Params


def _split(cfg, state) -> tuple[Any, Params]:
    model_cfg = getattr(cfg, "model", cfg)  # a Config or a ModelConfig
    params = getattr(state, "params", state)  # a TrainState or a params tree
    return model_cfg, params


def _selected(model_cfg, attr: str) -> list:
    """The ``attr`` functions of the variants the config selects, each once (variants of one
    family share theirs), in slot order."""
    out = []
    for v in registry.model_variants(model_cfg):
        fn = getattr(v, attr)
        if fn is not None and fn not in out:
            out.append(fn)
    return out


def extract_spectra(cfg, state) -> dict[str, np.ndarray]:
    """The selected variants' named arrays ({} for a model without spectral parameters)."""
    model_cfg, params = _split(cfg, state)
    out: dict[str, np.ndarray] = {}
    for fn in _selected(model_cfg, "extractor"):
        out.update({k: np.asarray(v) for k, v in fn(model_cfg, params).items()})
    out.update(_data_aware("rope_energy_spectra", cfg, params))
    return out


def eval_summary(cfg, state) -> dict[str, Any]:
    """The selected variants' JSON scalars ({} for a model without spectral parameters)."""
    model_cfg, params = _split(cfg, state)
    out: dict[str, Any] = {}
    for fn in _selected(model_cfg, "summary"):
        out.update(fn(model_cfg, params))
    out.update(_data_aware("rope_energy_summary", cfg, params))
    return out


def _data_aware(name: str, cfg, params: Params) -> dict[str, Any]:
    """Families that need input tokens (probe windows of the run's corpus), hence the whole
    Config: paper B's RoPE frequency energy (analysis/freq_energy.py). {} given a ModelConfig."""
    if not hasattr(cfg, "data"):
        return {}
    from mope_jax.analysis import freq_energy

    return getattr(freq_energy, name)(cfg, params)


def read_spectra(run_dir: str | Path, step: int | None = None) -> dict[str, np.ndarray]:
    """The spectra stored in a run's checkpoint (latest step by default)."""
    from mope_jax.checkpoint import Checkpointer

    with Checkpointer(Path(run_dir) / "checkpoints", read_only=True) as ckpt:
        return ckpt.read_spectra(step)


# --------------------------------------------------------------------------- predictions


def initial_logs(cfg, model: str, init: str) -> tuple[np.ndarray, np.ndarray]:
    """Initial raw (log_omega, log_sigma) of every learned Morlet pair of ``model`` ("mope": the
    position table, "ega-m": EGA-M's filters) under ``init`` ("boundary" / "off"), flattened.

    MOPE: shape (E/2,); EGA-M: shape (L*H*4,) per head (``ega-m``), (L*4,) shared
    (``ega-m-shared``, and the cells committed before the authors' definition was adopted).
    """
    if model == "mope":
        return morlet_init(cfg.model.n_embd // 2, init=init, bound=cfg.model.mope_bound)
    lo, ls = ega_m_init(init=init, bound=cfg.model.mope_bound)
    sets = cfg.model.n_layer * ega_m_filter_sets(cfg.model)  # every head starts at the same init
    return np.tile(lo, sets), np.tile(ls, sets)


def learned_logs(params, model: str) -> tuple[np.ndarray, np.ndarray]:
    """Learned raw (log_omega, log_sigma), flattened in the order of :func:`initial_logs`."""
    if model == "mope":
        p = params["mope"]
        return np.asarray(p["log_omega"], np.float64), np.asarray(p["log_sigma"], np.float64)
    layers = sorted((k for k in params if k.startswith("h_")), key=lambda k: int(k[2:]))

    def get(name: str) -> np.ndarray:
        return np.concatenate(
            [np.ravel(np.asarray(params[k]["attn"]["ega_m"][name], np.float64)) for k in layers]
        )

    return get("log_omega"), get("log_sigma")


def decay_only_prediction(cfg, log_values: np.ndarray) -> np.ndarray:
    """Where decoupled AdamW weight decay ALONE takes parameters after ``max_steps`` steps.

    optax.adamw applies p <- p - lr_t (adam_t + wd p); without a gradient (adam_t = 0, e.g.
    log_omega while the paper's clamp is active) p_T = p_0 prod_t (1 - lr_t wd).
    ``cfg`` is a Config; ``log_values`` any array of initial parameter values.
    """
    from mope_jax.optim import lr_schedule

    t = cfg.train
    lrs = np.asarray(jax.vmap(lr_schedule(cfg))(np.arange(t.max_steps)), np.float64)
    factor = float(np.prod(1.0 - lrs * t.weight_decay))
    return np.asarray(log_values, np.float64) * factor


# --------------------------------------------------------------------------- output


def summarize_spectra(arrays: dict[str, np.ndarray], *, bound: float = 5.0) -> dict[str, Any]:
    """JSON-able summary of stored spectra (e.g. from :func:`read_spectra`): the MOPE boundary
    statistics when omega/sigma are present, and min/median/max of every other array."""
    out: dict[str, Any] = {}
    for fam in ("mope", "ega_m"):  # the learned (omega, sigma) families
        if f"{fam}_omega" in arrays and f"{fam}_sigma" in arrays:
            out.update(
                boundary_stats(
                    np.ravel(arrays[f"{fam}_omega"]),
                    np.ravel(arrays[f"{fam}_sigma"]),
                    bound,
                    prefix=fam,
                )
            )
    for name, a in arrays.items():
        a = np.asarray(a, np.float64)
        if a.size and name not in ("mope_clamp_active", "ega_m_clamp_active"):
            out[f"{name}_min"], out[f"{name}_median"], out[f"{name}_max"] = (
                float(a.min()),
                float(np.median(a)),
                float(a.max()),
            )
    return out


def write_spectra_summary(
    run_dir: str | Path, path: str | Path | None = None, step: int | None = None
) -> Path:
    """Summarise a run's stored spectra into ``run_dir/spectra_summary.json`` (or ``path``)."""
    from mope_jax.checkpoint import Checkpointer

    run_dir = Path(run_dir)
    with Checkpointer(run_dir / "checkpoints", read_only=True) as ckpt:
        step = ckpt.latest_step() if step is None else step
        arrays = ckpt.read_spectra(step)
        meta = ckpt.read_meta(step)
    bound = meta["config"]["model"].get("mope_bound", 5.0)
    payload = {
        "run_dir": str(run_dir),
        "step": step,
        "summary": summarize_spectra(arrays, bound=bound),
        "arrays": arrays,
    }
    return write_json(
        path or run_dir / "spectra_summary.json",
        payload,
        command=f"mope_jax.analysis.spectra.write_spectra_summary({str(run_dir)!r})",
    )


# write_json: provenance.write_json (re-exported here for existing callers)


def plot_sigma_omega(
    path: str | Path,
    panels: dict[str, dict[str, np.ndarray]],
    *,
    bound: float = 5.0,
    init: dict[str, np.ndarray] | None = None,
    ncols: int = 4,
) -> Path:
    """Scatter sigma (tokens) against omega (rad/token) per panel, with the hyperbola
    omega sigma = bound. ``panels``: title -> {"omega": (n,), "sigma": (n,)} and optionally
    that panel's initial "init_omega", "init_sigma"; ``init``: a default initial
    {"omega", "sigma"} for panels without their own. Initial values are drawn as grey rings."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    n = len(panels)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig = Figure(figsize=(3.2 * ncols, 2.9 * nrows))
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    w = np.linspace(0.05, 3.3, 200)
    for ax, (title, v) in zip(axes.flat, panels.items()):
        ax.plot(w, bound / w, "k--", lw=0.8, label=f"omega sigma = {bound:g}")
        i_om, i_sg = v.get("init_omega"), v.get("init_sigma")
        if i_om is None and init is not None:
            i_om, i_sg = init["omega"], init["sigma"]
        if i_om is not None:
            ax.scatter(i_om, i_sg, s=14, facecolors="none", edgecolors="0.6", lw=0.6, label="init")
        prod = np.asarray(v["omega"]) * np.asarray(v["sigma"])
        on = np.abs(prod - bound) < BOUNDARY_TOL
        ax.scatter(v["omega"][on], v["sigma"][on], s=8, c="C3", label="on boundary")
        ax.scatter(v["omega"][~on], v["sigma"][~on], s=8, c="C0", label="off boundary")
        ax.set_title(title, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylim(0.3, 40)
    for ax in axes.flat[n:]:
        ax.axis("off")
    for ax in axes[-1]:
        ax.set_xlabel("omega (rad/token)")
    for ax in axes[:, 0]:
        ax.set_ylabel("sigma (tokens)")
    axes.flat[0].legend(fontsize=6)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130)
    return path
