"""Is omega sigma = 5 learned from the data, or produced by the setup? (paper A, MOPE)

Command:  nice -n 5 python experiments/omega_sigma_control.py --scale cpu   (smoke: ~1 min,
          cpu: ~8 min on a shared 2-core CPU)
Writes:   experiments/results/paper_a/omega_sigma_control_<scale>.{json,md,png}
Claim (paper A): all 128 (omega, sigma) pairs converge to omega sigma = 5.000, sigma in
[1.49, 4.50], omega in [1.11, 3.35].
Suspicion (DESIGN.md section 1): the setup produces it -- init ON the boundary, weight decay 0.1
on log_omega/log_sigma (pulls both logs towards 0, so omega sigma falls below 5), and the
``where`` clamp, which pins such pairs to omega = 5/sigma and gives log_omega no gradient.

Grid (12 cells, one MOPE-only model each, ``a-mope``): weight decay on the spectral parameters
on / off (``train.no_decay=log_omega,log_sigma``) x init on the boundary (sigma = 5/omega) /
off it (sigma = 10/omega) x constraint clamp (the paper's) / soft penalty (weight 1, on
log(omega sigma) < log 5) / none.

Scale: T=64, E=64 (32 pairs), 2 layers x 4 heads, batch 16, no dropout, TinyShakespeare.
The schedule is chosen so that the integrated learning rate sum_t lr_t equals the paper's
reference schedule (5000 steps, lr 3e-4, warmup 300, cosine): then decoupled weight decay 0.1
shrinks every log-parameter by the same factor prod_t (1 - lr_t wd) as in the paper, and
Adam's largest possible drift of a parameter (~ sum_t lr_t) is the same too.
EGA-M rows (``--models mope,ega-m``; DESIGN.md section 5, paper 1's Morlet energy gate, the
"separate energy-gate experiment" of seed A): the same cells on ``a-ega-m`` (learned table +
EGA-M with the paper's full z-norm, NON-CAUSAL, trained with ``train.allow_noncausal``), whose
(omega, sigma) are 4 filters per layer, init omega = pi / l (l = 3, 7, 15, 31) and sigma = 5 / omega
(on) or 10 / omega (off), under ``model.ega_m_constraint`` and ``ega_m_init``.

Reported per cell: fraction of pairs with |omega sigma - 5| < 1e-3, below the bound, clamp
active; omega/sigma/product ranges; and how far the learned raw log-parameters are from
where weight decay ALONE would have taken them (``spectra.decay_only_prediction``).
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
import time
from pathlib import Path

import jax
import numpy as np

# Run as a file (``python experiments/omega_sigma_control.py``), sys.path[0] is experiments/, not
# the repository root, so ``experiments.paper_a`` would not import: put the root first, as
# ``python -m experiments.omega_sigma_control`` (run from the root) already has it.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments.paper_a import (  # noqa: E402 (needs the repository root on sys.path, above)
    CORPUS,
    RESULTS,
    t_interval,
    train_seeds,
    write_rendered,
)
from mope_jax.analysis import spectra  # noqa: E402
from mope_jax.analysis.report import rendered_note  # noqa: E402
from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig  # noqa: E402
from mope_jax.attention.ega_m import ega_m_init  # noqa: E402
from mope_jax.encodings.morlet import clamp_paper, morlet_init  # noqa: E402
from mope_jax.presets import apply_variant  # noqa: E402
from mope_jax.train import lr_schedule  # noqa: E402

SCALES = {
    "smoke": dict(
        model=dict(block_size=32, n_layer=1, n_head=2, n_embd=16, dropout=0.0),
        train=dict(batch_size=8, max_steps=40, warmup_steps=4, eval_batches=4),
        seeds=1,
    ),
    "cpu": dict(
        model=dict(block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
        train=dict(batch_size=16, max_steps=400, warmup_steps=20, eval_batches=20),
        seeds=1,
    ),
}


def integrated_lr(cfg: Config) -> float:
    return float(
        np.sum(np.asarray(jax.vmap(lr_schedule(cfg))(np.arange(cfg.train.max_steps)), np.float64))
    )


def base_config(scale: str) -> tuple[Config, dict]:
    """The scale's config with lr set so that sum_t lr_t equals the reference schedule's."""
    s = SCALES[scale]
    ref = Config()
    target = integrated_lr(ref)
    t = TrainConfig(**s["train"], lr=1.0)
    t = dataclasses.replace(
        t, eval_interval=t.max_steps, checkpoint_interval=t.max_steps, log_interval=t.max_steps
    )
    cfg = Config(
        model=ModelConfig(**s["model"]),
        data=DataConfig(source="text", path=str(CORPUS.resolve())),
        train=t,
        name=f"omega_sigma-{scale}",
    )
    lr = target / integrated_lr(cfg)  # the schedule is linear in its peak
    cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, lr=lr))
    return cfg, {"reference_integrated_lr": target, "integrated_lr": integrated_lr(cfg), "lr": lr}


CELLS = list(itertools.product(("on", "off"), ("boundary", "off"), ("clamp", "penalty", "none")))
MODELS = ("mope", "ega-m")  # whose (omega, sigma) a row learns: MOPE's table or EGA-M's filters
PREFIX = {"mope": "mope", "ega-m": "ega_m"}  # spectra / summary name prefix of each model


def cell_config(base: Config, wd: str, init: str, constraint: str, model: str = "mope") -> Config:
    if model == "mope":
        cfg = apply_variant(base, "a-mope")
        fields = dict(mope_init=init, mope_constraint=constraint)
    elif model == "ega-m":
        cfg = apply_variant(base, "a-ega-m")
        fields = dict(ega_m_init=init, ega_m_constraint=constraint)
        cfg = dataclasses.replace(
            cfg, train=dataclasses.replace(cfg.train, allow_noncausal=True)
        )  # paper's z-norm
    else:
        raise ValueError(f"unknown omega*sigma control model {model!r}; choose one of {MODELS}")
    cfg = dataclasses.replace(
        cfg,
        name=f"{cfg.name}/wd-{wd}/init-{init}/{constraint}",
        model=dataclasses.replace(cfg.model, **fields),
    )
    if wd == "off":
        cfg = dataclasses.replace(
            cfg, train=dataclasses.replace(cfg.train, no_decay=("log_omega", "log_sigma"))
        )
    return cfg


def initial_logs(cfg: Config, model: str, init: str) -> tuple[np.ndarray, np.ndarray]:
    """Initial (log_omega, log_sigma) of every learned pair, flattened.

    MOPE: shape (E/2,); EGA-M: shape (L*4,).
    """
    if model == "mope":
        return morlet_init(cfg.model.n_embd // 2, init=init, bound=cfg.model.mope_bound)
    lo, ls = ega_m_init(init=init, bound=cfg.model.mope_bound)
    return np.tile(lo, cfg.model.n_layer), np.tile(ls, cfg.model.n_layer)


def learned_logs(params, model: str) -> tuple[np.ndarray, np.ndarray]:
    """Learned raw (log_omega, log_sigma), flattened in the order of :func:`initial_logs`."""
    if model == "mope":
        p = params["mope"]
        return np.asarray(p["log_omega"], np.float64), np.asarray(p["log_sigma"], np.float64)
    layers = sorted((k for k in params if k.startswith("h_")), key=lambda k: int(k[2:]))

    def get(name: str) -> np.ndarray:
        return np.concatenate(
            [np.asarray(params[k]["attn"]["ega_m"][name], np.float64) for k in layers]
        )

    return get("log_omega"), get("log_sigma")


def reference_decay_prediction() -> dict:
    """The paper's own run, weight decay alone (no data gradient), through the clamp."""
    ref = Config()
    lo, ls = morlet_init(ref.model.n_embd // 2)
    lo_t = spectra.decay_only_prediction(ref, lo)
    ls_t = spectra.decay_only_prediction(ref, ls)
    om, sg = clamp_paper(lo_t.astype(np.float32), ls_t.astype(np.float32))
    om, sg = np.asarray(om), np.asarray(sg)
    return {
        "decay_factor": float(lo_t[-1] / lo[-1]),
        "omega_range": [float(om.min()), float(om.max())],
        "sigma_range": [float(sg.min()), float(sg.max())],
        "on_boundary_frac": float(np.mean(np.abs(om * sg - 5.0) < spectra.BOUNDARY_TOL)),
        "claimed": {
            "omega_range": [1.11, 3.35],
            "sigma_range": [1.49, 4.50],
            "on_boundary_frac": 1.0,
        },
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument(
        "--models",
        default="mope",
        help=f"comma-separated, from {','.join(MODELS)}: "
        "whose (omega, sigma) the rows learn (default mope)",
    )
    args = ap.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    bad = [m for m in models if m not in MODELS]
    if bad or not models:
        ap.error(f"unknown --models {bad or args.models!r}; choose from {','.join(MODELS)}")
    command = "python experiments/omega_sigma_control.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    seeds = list(range(args.seeds or SCALES[args.scale]["seeds"]))
    base, sched = base_config(args.scale)
    print(
        f"lr {sched['lr']:.3e}: sum lr = {sched['integrated_lr']:.4f} "
        f"(reference {sched['reference_integrated_lr']:.4f})"
    )
    t_start = time.perf_counter()
    cells, panels = [], {}
    for model, (wd, init, constraint) in itertools.product(models, CELLS):
        cfg = cell_config(base, wd, init, constraint, model)
        recs, states = train_seeds(cfg, seeds)
        pre = PREFIX[model]
        lo0, ls0 = initial_logs(cfg, model, init)
        decay_cfg = (
            cfg
            if wd == "on"
            else dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, weight_decay=0.0))
        )
        lo_pred, ls_pred = (
            spectra.decay_only_prediction(decay_cfg, lo0),
            spectra.decay_only_prediction(decay_cfg, ls0),
        )
        per_seed = []
        for rec, st in zip(recs, states):
            lo, ls = learned_logs(st.params, model)
            per_seed.append(
                {
                    **rec,
                    "median_abs_data_shift_log_omega": float(np.median(np.abs(lo - lo_pred))),
                    "median_abs_data_shift_log_sigma": float(np.median(np.abs(ls - ls_pred))),
                    "max_abs_data_shift_log_omega": float(np.max(np.abs(lo - lo_pred))),
                    "max_abs_data_shift_log_sigma": float(np.max(np.abs(ls - ls_pred))),
                    "median_abs_decay_shift_log_sigma": float(np.median(np.abs(ls_pred - ls0))),
                }
            )
        sp = spectra.extract_spectra(cfg, states[0])
        title = ("" if models == ["mope"] else f"{model}: ") + f"wd {wd}, init {init}, {constraint}"
        panels[title] = {
            "omega": np.ravel(sp[f"{pre}_omega"]),
            "sigma": np.ravel(sp[f"{pre}_sigma"]),
            "init_omega": np.exp(lo0),
            "init_sigma": np.exp(ls0),
        }
        cells.append(
            {
                "model": model,
                "weight_decay_on_spectral": wd == "on",
                "init": init,
                "constraint": constraint,
                "seeds": per_seed,
                "spectra_seed0": {
                    k: sp[f"{pre}_{k}"] for k in ("omega", "sigma", "raw_omega", "raw_sigma")
                },
                "init_omega": np.exp(lo0),
                "init_sigma": np.exp(ls0),
            }
        )
        s = per_seed[0]
        print(
            f"  {title}: on boundary {s[f'{pre}_on_boundary_frac']:.3f}, "
            f"below {s[f'{pre}_below_bound_frac']:.3f}, "
            f"sigma [{s[f'{pre}_sigma_min']:.2f}, {s[f'{pre}_sigma_max']:.2f}], "
            f"val {s['val_loss']:.4f}"
        )
    suffix = "" if models == ["mope"] else "_" + "_".join(m.replace("-", "") for m in models)
    plot = RESULTS / f"omega_sigma_control_{args.scale}{suffix}.png"
    spectra.plot_sigma_omega(plot, panels)
    payload = {
        "renderer": "experiments/omega_sigma_control.py:render",
        "scale": args.scale,
        "seeds": seeds,
        "schedule": sched,
        "config": base.to_dict(),
        "reference_decay_only": reference_decay_prediction(),
        "cells": cells,
        "total_seconds": time.perf_counter() - t_start,
        "plot": plot.name,
    }
    stem = RESULTS / f"omega_sigma_control_{args.scale}{suffix}"
    spectra.write_json(stem.with_suffix(".json"), payload, command=command)
    write_rendered(stem.with_suffix(".json"), render)
    print(f"wrote {stem}.json, .md, .png ({payload['total_seconds']:.0f}s)")


def render(p: dict, json_path: Path) -> dict[str, str]:
    """``omega_sigma_control_<scale>.md`` from its JSON alone (``mope-jax report --regenerate``)."""
    return {Path(json_path).with_suffix(".md").name: render_markdown(p, json_path)}


def render_markdown(p: dict, json_path: Path) -> str:
    env, m, t = p["env"], p["config"]["model"], p["config"]["train"]
    r = p["reference_decay_only"]
    date = (
        p["date_utc"][:16].replace("T", " ") + " UTC"
    )  # 2026-11-29T13:22:41+00:00 -> 2026-11-29 13:22 UTC
    models = [
        c.get("model", "mope") for c in p["cells"]
    ]  # JSON written before EGA-M rows: all MOPE
    with_ega_m = "ega-m" in models
    model_line = "MOPE-only model (`a-mope`):"
    if with_ega_m:
        model_line = (
            "Rows `mope`: MOPE-only model (`a-mope`, E/2 pairs); "
            "rows `ega-m`: learned table + EGA-M "
            "(`a-ega-m`, the paper's full z-norm, NON-CAUSAL; 4 (omega, sigma) filters per layer, "
            "init omega = pi/l, l = 3/7/15/31; bound `mope_bound`). Model:"
        )
    col = "| model " if with_ega_m else ""
    lines = [
        f"# omega sigma = 5: data or setup? Scale `{p['scale']}`",
        "",
        f"Made by `{p['command'].strip()}` on {date}, {env['platform']} "
        f"({env['cpu_count']} CPUs, backend {env['backend']}), git {env['git_commit']}; "
        f"{p['total_seconds']:.0f} s in all.",
        "",
        rendered_note(p, json_path),
        "",
        f"{model_line} T={m['block_size']}, E={m['n_embd']} ({m['n_embd'] // 2} pairs), "
        f"{m['n_layer']} layers x {m['n_head']} heads, no dropout; "
        f"{t['max_steps']} steps x {t['batch_size']} "
        f"windows, peak lr {p['schedule']['lr']:.2e} (warmup {t['warmup_steps']}, cosine) "
        "so that sum lr = "
        f"{p['schedule']['integrated_lr']:.4f} = the reference schedule's "
        f"{p['schedule']['reference_integrated_lr']:.4f}; "
        f"weight decay {t['weight_decay']}; seeds {p['seeds']}. "
        "On the boundary: |omega sigma - 5| < 1e-3.",
        "",
        col + "| wd on spectral | init | constraint | on boundary | below 5 "
        "| raw product < 5 (clamp acts) | omega sigma [min, median, max] "
        "| omega range | sigma range | data shift of log sigma (median, max) | val loss |",
        ("|---" if with_ega_m else "") + "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c, model in zip(p["cells"], models):
        s = c["seeds"]
        pre = PREFIX[model]

        def f(k: str) -> float:
            return np.mean([x[k.replace("mope_", pre + "_", 1)] for x in s])

        val = t_interval([x["val_loss"] for x in s])
        lines.append(
            (f"| {model} " if with_ega_m else "")
            + f"| {'on' if c['weight_decay_on_spectral'] else 'off'} "
            f"| {c['init']} | {c['constraint']} | "
            f"{f('mope_on_boundary_frac'):.3f} | {f('mope_below_bound_frac'):.3f} "
            f"| {f('mope_clamp_active_frac'):.3f} | "
            f"[{f('mope_product_min'):.3f}, {f('mope_product_median'):.3f}, "
            f"{f('mope_product_max'):.3f}] | "
            f"[{f('mope_omega_min'):.2f}, {f('mope_omega_max'):.2f}] "
            f"| [{f('mope_sigma_min'):.2f}, {f('mope_sigma_max'):.2f}] | "
            f"{f('median_abs_data_shift_log_sigma'):.3f}, "
            f"{f('max_abs_data_shift_log_sigma'):.3f} | {val[0]:.4f} |"
        )
    lines += [
        "",
        "Weight decay alone in the paper's reference run "
        "(no data gradient at all; init on the boundary, "
        f"5000 steps, through the clamp): log-parameters x {r['decay_factor']:.4f}, omega in "
        f"[{r['omega_range'][0]:.2f}, {r['omega_range'][1]:.2f}], "
        f"sigma in [{r['sigma_range'][0]:.2f}, "
        f"{r['sigma_range'][1]:.2f}], on boundary {r['on_boundary_frac']:.3f}; "
        "the paper reports omega in "
        f"[1.11, 3.35], sigma in [1.49, 4.50], all pairs on the boundary.",
        "",
        f"Plot: `{p['plot']}` "
        "(sigma vs omega per cell, the hyperbola omega sigma = 5, init in grey).",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
