"""Learned spectral parameters: extraction, eval summaries, read-back, JSON and plots.

``train.run`` calls two hooks of this module:
  * ``extract_spectra(cfg, state) -> {name: np.ndarray}``, stored as named arrays in every
    checkpoint (read back with :func:`read_spectra` without rebuilding the model);
  * ``eval_summary(cfg, state) -> {name: float}``, merged into the metrics line of each eval.

Both are small dispatchers over per-family functions registered with
:func:`register_extractor` / :func:`register_summary`; a family looks at the params tree and
returns ``{}`` when its parameters are absent. Names are flat strings ``family_quantity``.

Paper A families here:
  * ``mope``: omega (rad/token), sigma (tokens) after the configured constraint, the raw
    exp(log .) values, and centres b0 if learned;
  * ``morlet_rope``: sigma per layer, head and frequency group (L, H, G), tokens;
  * ``ega``: gate slope alpha and threshold tau per layer and head (L, H), (L, H, n) for the
    mixed paper-1 gates, and their mix weights softmax(scale_w);
  * ``ega_m``: EGA-M's omega, sigma per layer and filter (L, 4), after the configured
    constraint (bound ``mope_bound``), raw values, clamp mask, alpha, tau, mix weights; its
    eval summary has the same boundary statistics as MOPE's, prefixed ``ega_m_``.

Paper C family here:
  * ``qk_filter``: the learned Q/K filter quantities of every layer, stacked (L, ...), named
    and converted by ``attention.spectral.learned_filter_spectra`` (centres and periods,
    kernel scales, MexHat-K4 scales, causal learned frequencies).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import jax
import numpy as np

from mope_jax.encodings.morlet import clamp_active, constrain
from mope_jax.provenance import write_json  # noqa: F401 (re-exported)
from mope_jax.typing import Params

BOUNDARY_TOL = 1e-3  # |omega sigma - bound| below this counts as "on the boundary"

Extractor = Callable[[Any, Params], dict[str, np.ndarray]]
Summary = Callable[[Any, Params], dict[str, Any]]
_EXTRACTORS: dict[str, Extractor] = {}
_SUMMARIES: dict[str, Summary] = {}


def register_extractor(name: str):
    """Decorator: ``fn(model_cfg, params) -> {name: array}`` joins :func:`extract_spectra`."""

    def deco(fn: Extractor) -> Extractor:
        _EXTRACTORS[name] = fn
        return fn

    return deco


def register_summary(name: str):
    """Decorator: ``fn(model_cfg, params) -> {name: scalar}`` joins :func:`eval_summary`."""

    def deco(fn: Summary) -> Summary:
        _SUMMARIES[name] = fn
        return fn

    return deco


def _split(cfg, state) -> tuple[Any, Params]:
    model_cfg = getattr(cfg, "model", cfg)  # a Config or a ModelConfig
    params = getattr(state, "params", state)  # a TrainState or a params tree
    return model_cfg, params


def extract_spectra(cfg, state) -> dict[str, np.ndarray]:
    """Every registered family's named arrays ({} for a model without spectral parameters)."""
    model_cfg, params = _split(cfg, state)
    out: dict[str, np.ndarray] = {}
    for fn in _EXTRACTORS.values():
        out.update({k: np.asarray(v) for k, v in fn(model_cfg, params).items()})
    out.update(_data_aware("rope_energy_spectra", cfg, params))
    return out


def eval_summary(cfg, state) -> dict[str, Any]:
    """Every registered family's JSON scalars ({} for a model without spectral parameters)."""
    model_cfg, params = _split(cfg, state)
    out: dict[str, Any] = {}
    for fn in _SUMMARIES.values():
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


# --------------------------------------------------------------------------- MOPE


def mope_values(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """omega, sigma (constrained as configured), raw exp(log .) values, clamp mask, centres."""
    if "mope" not in params:
        return {}
    p = params["mope"]
    lo, ls = np.asarray(p["log_omega"]), np.asarray(p["log_sigma"])
    omega, sigma = constrain(
        lo, ls, constraint=model_cfg.mope_constraint, bound=model_cfg.mope_bound
    )
    out = {
        "mope_omega": np.asarray(omega),
        "mope_sigma": np.asarray(sigma),
        "mope_raw_omega": np.exp(lo),
        "mope_raw_sigma": np.exp(ls),
        "mope_clamp_active": np.asarray(clamp_active(lo, ls, bound=model_cfg.mope_bound)),
    }
    if "center" in p:
        out["mope_center"] = np.asarray(p["center"])
    return out


@register_extractor("mope")
def _mope_extract(model_cfg, params):
    return mope_values(model_cfg, params)


def boundary_stats(
    omega: np.ndarray, sigma: np.ndarray, bound: float, prefix: str = "mope"
) -> dict[str, float]:
    """Fraction of pairs on omega sigma = bound (|. - bound| < 1e-3), below it, and ranges."""
    prod = np.asarray(omega, np.float64) * np.asarray(sigma, np.float64)
    return {
        f"{prefix}_on_boundary_frac": float(np.mean(np.abs(prod - bound) < BOUNDARY_TOL)),
        f"{prefix}_below_bound_frac": float(np.mean(prod < bound - BOUNDARY_TOL)),
        f"{prefix}_product_min": float(prod.min()),
        f"{prefix}_product_median": float(np.median(prod)),
        f"{prefix}_product_max": float(prod.max()),
        f"{prefix}_omega_min": float(np.min(omega)),
        f"{prefix}_omega_max": float(np.max(omega)),
        f"{prefix}_sigma_min": float(np.min(sigma)),
        f"{prefix}_sigma_max": float(np.max(sigma)),
        f"{prefix}_aliased_frac": float(np.mean(np.asarray(omega) > math.pi)),
    }


@register_summary("mope")
def _mope_summary(model_cfg, params):
    v = mope_values(model_cfg, params)
    if not v:
        return {}
    out = boundary_stats(v["mope_omega"], v["mope_sigma"], model_cfg.mope_bound)
    out["mope_clamp_active_frac"] = float(np.mean(v["mope_clamp_active"]))
    return out


# --------------------------------------------------------------------------- Morlet-RoPE, EGA


def _per_layer(params: Params, module: str, name: str) -> np.ndarray | None:
    layers = sorted((k for k in params if k.startswith("h_")), key=lambda k: int(k[2:]))
    found = [  # a module may lack the parameter (EGA-1 has no mix weights scale_w)
        np.asarray(params[k]["attn"][module][name])
        for k in layers
        if name in params[k].get("attn", {}).get(module, {})
    ]
    return np.stack(found) if found else None


@register_extractor("morlet_rope")
def _morlet_rope_extract(model_cfg, params):
    log_sigma = _per_layer(params, "morlet_rope", "log_sigma")  # (L, H, G)
    return {} if log_sigma is None else {"morlet_rope_sigma": np.exp(log_sigma)}


@register_summary("morlet_rope")
def _morlet_rope_summary(model_cfg, params):
    log_sigma = _per_layer(params, "morlet_rope", "log_sigma")
    if log_sigma is None:
        return {}
    sigma = np.exp(log_sigma)
    return {
        "morlet_rope_sigma_min": float(sigma.min()),
        "morlet_rope_sigma_median": float(np.median(sigma)),
        "morlet_rope_sigma_max": float(sigma.max()),
    }


@register_extractor("ega")
def _ega_extract(model_cfg, params):
    """alpha, tau (L, H) for EGA-1, (L, H, n) for the mixed gates, and the mix weights
    softmax(scale_w) (L, H, n) where present."""
    alpha = _per_layer(params, "ega", "alpha")
    if alpha is None:
        return {}
    out = {"ega_alpha": alpha, "ega_tau": _per_layer(params, "ega", "tau")}
    scale_w = _per_layer(params, "ega", "scale_w")
    if scale_w is not None:
        out["ega_mix"] = np.asarray(jax.nn.softmax(scale_w, axis=-1))
    return out


# --------------------------------------------------------------------------- EGA-M


def ega_m_values(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """EGA-M's learned spectra per layer and filter (L, 4): omega (rad/token) and sigma (tokens)
    after the configured constraint, raw exp(log .), clamp mask, gate alpha/tau, mix weights."""
    lo, ls = _per_layer(params, "ega_m", "log_omega"), _per_layer(params, "ega_m", "log_sigma")
    if lo is None:
        return {}
    omega, sigma = constrain(
        lo, ls, constraint=model_cfg.ega_m_constraint, bound=model_cfg.mope_bound
    )
    return {
        "ega_m_omega": np.asarray(omega),
        "ega_m_sigma": np.asarray(sigma),
        "ega_m_raw_omega": np.exp(lo),
        "ega_m_raw_sigma": np.exp(ls),
        "ega_m_clamp_active": np.asarray(clamp_active(lo, ls, bound=model_cfg.mope_bound)),
        "ega_m_alpha": _per_layer(params, "ega_m", "alpha"),
        "ega_m_tau": _per_layer(params, "ega_m", "tau"),
        "ega_m_mix": np.asarray(jax.nn.softmax(_per_layer(params, "ega_m", "scale_w"), axis=-1)),
    }


@register_extractor("ega_m")
def _ega_m_extract(model_cfg, params):
    return ega_m_values(model_cfg, params)


@register_summary("ega_m")
def _ega_m_summary(model_cfg, params):
    v = ega_m_values(model_cfg, params)
    if not v:
        return {}
    out = boundary_stats(
        v["ega_m_omega"].ravel(), v["ega_m_sigma"].ravel(), model_cfg.mope_bound, prefix="ega_m"
    )
    out["ega_m_clamp_active_frac"] = float(np.mean(v["ega_m_clamp_active"]))
    return out


@register_extractor("qk_filter")
def _qk_filter_extract(model_cfg, params):
    from mope_jax.attention.spectral import learned_filter_spectra

    layers = sorted((k for k in params if k.startswith("h_")), key=lambda k: int(k[2:]))
    per_layer: dict[str, list[np.ndarray]] = {}
    for name in layers:
        for module in params[name].get("attn", {}).values():
            if isinstance(module, dict):
                for q, v in learned_filter_spectra(model_cfg.block_size, module).items():
                    per_layer.setdefault(q, []).append(v)
    return {q: np.stack(v) for q, v in per_layer.items() if len(v) == len(layers)}


# --------------------------------------------------------------------------- predictions


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
