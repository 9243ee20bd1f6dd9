"""Frequency matching (paper B): does the energy-weighted RoPE frequency follow theta* = c / W?

Command:  python experiments/freq_matching.py --scale cpu      (smoke: seconds, cpu: minutes)
Writes:   experiments/results/paper_b/freq_matching.{json,md}, freq_matching_fit.png,
          freq_matching_heatmap.png, freq_matching_spectra.png
Claim (paper B): on block data the log-mean effective frequency falls linearly in log W, with
theta* = c / W, c ~ 3.02 fitted (theory: pi).

Setup (our choices; the paper's are not public):
  * data: block-copy streams (mope_jax.data.synthetic), blocks [0, a_1..a_{B-2}, a_1], K = 16
    symbols; the dependency width is W = B - 2, the distance of the copy (which the measured
    "match" kernel K(r) of mope_jax.data.dependency recovers exactly; checked here per B);
  * model: 2 layers, width 64, 2 heads (D = 32, F = 16 rotary frequencies, base 10^4), RoPE
    only (no position table), no dropout, T = 128, batch 16, AdamW lr 3e-3; steps per scale
    below. Tiny and short on purpose: the whole study must fit ~5 min of a shared 2-core CPU;
  * measurement: frequency energy p_i per layer and head (mope_jax.analysis.freq_energy) on 8
    fixed validation windows; log theta_eff = sum_i p_i log theta_i averaged over layers and
    heads (all heads, no selection); also reported per layer and for the lowest-entropy head;
  * fit: slope-free estimate c = exp(mean over runs of log theta_eff + log W) with a 95%
    t-interval over runs, and the free slope of log theta_eff on log(1/W) (1 = the 1/W law).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time
import types
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.analysis.freq_energy import energy_report, probe_tokens
from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig
from mope_jax.data import load_corpus
from mope_jax.data.dependency import (
    block_copy_width,
    block_repeat_stream,
    dependency_kernel,
    kernel_width,
    measured_block_width,
    stream_to_text,
)
from mope_jax.encodings.rope import rope_frequencies
from mope_jax.model import GPT

try:
    from experiments import _paper_b as pb
except ImportError:  # run as a script
    import _paper_b as pb

SCALES = {
    "smoke": dict(
        blocks=(4, 6, 10, 18, 34), widths=(2, 4, 8, 16, 32), seeds=(0,), steps=20, eval_every=10
    ),
    "cpu": dict(
        blocks=(4, 6, 10, 18, 34),
        widths=(2, 4, 8, 16, 32),
        seeds=(0, 1, 2),
        steps=400,
        eval_every=50,
        steps_repeat=300,
    ),
}
TASKS = ("copy", "repeat")


def width_of(task: str, v: int) -> int:
    """W for a sweep value: copy -> v = B and W = B - 2; repeat -> v = W (blocks of 2W + 1)."""
    return block_copy_width(v) if task == "copy" else v


def repeat_file(scale: str, width: int) -> Path:
    """The repeat-variant stream as a character file under runs/ (deterministic, not committed)."""
    path = pb.RUNS / scale / f"repeat_W{width}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        stream_to_text(block_repeat_stream(100_000, width=width, num_symbols=16, seed=0))
    )
    return path


def get_config(scale: str, v: int, task: str = "copy") -> Config:
    s = SCALES[scale]
    steps = s.get("steps_repeat", s["steps"]) if task == "repeat" else s["steps"]
    if task == "copy":
        data = DataConfig(source="blocks", block_len=v, num_symbols=16, num_tokens=100_000)
    else:
        data = DataConfig(source="text", path=str(repeat_file(scale, v)))
    return Config(
        name=f"freq_matching/{task}{v}",
        model=ModelConfig(
            block_size=128,
            n_layer=2,
            n_head=2,
            n_embd=64,
            dropout=0.0,
            pos_encoding="none",
            qk_position="rope",
        ),
        data=data,
        train=TrainConfig(
            batch_size=16,
            max_steps=steps,
            lr=3e-3,
            warmup_steps=min(50, steps // 4),
            eval_interval=s["eval_every"],
            eval_batches=4,
            log_interval=s["eval_every"],
            checkpoint_interval=steps,
            keep_checkpoints=1,
        ),
    )


def copy_accuracy(
    cfg: Config, params, val: np.ndarray, task: str, v: int, num_windows: int = 16
) -> float:
    """Greedy accuracy on the copy targets of validation windows that start at a block marker.

    copy: the target at offset B-1 of a block (source B-2 back); repeat: offsets W+1..2W
    (source W back). Every source lies inside the window."""
    T = cfg.model.block_size
    period = v if task == "copy" else 2 * v + 1
    offsets = np.array([v - 1]) if task == "copy" else np.arange(v + 1, 2 * v + 1)
    first = int(np.flatnonzero(val == 0)[0])  # marker id 0 ('.' sorts first in the repeat files)
    starts = first + np.arange(num_windows) * period * max(1, T // period)
    starts = starts[starts + T <= len(val)]
    x = np.stack([val[s : s + T] for s in starts]).astype(
        np.int32
    )  # (N, T), phase = index % period
    logits = GPT(cfg.model).apply(
        {"params": params}, jnp.asarray(x), deterministic=True
    )  # (N, T, V)
    pred = np.asarray(jnp.argmax(logits, -1))
    j = (np.arange(0, T, period)[:, None] + offsets[None, :]).ravel()  # copy positions
    j = j[j < T]
    return float(np.mean(pred[:, j - 1] == x[:, j]))


def tv(p: np.ndarray, q: np.ndarray) -> float:
    """Mean over (layer, head) of the total-variation distance between energy distributions."""
    return float(0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum(-1).mean())


def analyse_run(cfg: Config, params, init_params, task: str, v: int) -> dict:
    val = np.asarray(load_corpus(cfg.data, cfg.model.block_size).val)
    T = cfg.model.block_size
    probe_a = probe_tokens(val, T)
    probe_b = probe_tokens(val[len(val) // 2 + 7 :], T)  # other windows, other phases
    rng = np.random.default_rng(123)
    probe_rand = rng.integers(0, cfg.model.vocab_size, size=(8, T)).astype(
        np.int32
    )  # another "domain"
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
        "p": p.tolist(),
        "stability_tv": {
            "other_windows": tv(p, rep_b["p"]),
            "random_tokens": tv(p, rep_r["p"]),
            "vs_init": tv(p, rep_0["p"]),
        },
        "copy_accuracy": copy_accuracy(cfg, params, val, task, v),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    ap.add_argument(
        "--task",
        choices=TASKS,
        default="copy",
        help="copy: synthetic.block_copy_stream (W = B - 2); "
        "repeat: dependency.block_repeat_stream",
    )
    ap.add_argument("--strategy", default="map", help="mope_jax.sweep strategy for the seeds")
    ap.add_argument(
        "--values",
        type=int,
        nargs="*",
        default=None,
        help="only these B (copy) or W (repeat) values, e.g. when the CPU budget ran out",
    )
    ap.add_argument(
        "--reuse",
        action="store_true",
        help="analyse finished sweeps in runs/paper_b/ with the same config instead of retraining",
    )
    args = ap.parse_args(argv)
    from mope_jax.model import init_params as init_fn
    from mope_jax.sweep import sweep

    s = SCALES[args.scale]
    values = s["blocks"] if args.task == "copy" else s["widths"]
    if args.values:
        values = tuple(args.values)
    t0 = time.perf_counter()
    runs = []
    for v in values:
        cfg = get_config(args.scale, v, args.task)
        run_dir = pb.RUNS / args.scale / f"freq_matching_{args.task}{v}"
        res = None
        if args.reuse:
            res = load_sweep(cfg, run_dir, s["seeds"])
        if res is None:
            if run_dir.exists() and not args.reuse:
                import shutil

                shutil.rmtree(
                    run_dir
                )  # results are regenerated from scratch (--reuse: resume instead)
            res = sweep(
                cfg,
                list(s["seeds"]),
                run_dir,
                strategy=args.strategy,
                progress=False,
                log=lambda m: None,
            )
            if res.interrupted:
                raise SystemExit(
                    f"interrupted; {run_dir} is saved: "
                    "rerun the same command with --reuse to resume"
                )
        W = width_of(args.task, v)
        if args.task == "copy":
            W_meas = measured_block_width(v, kind="match")
        else:
            stream = block_repeat_stream(100_000, width=v, num_symbols=16, seed=0)
            W_meas = kernel_width(dependency_kernel(stream, 3 * v, kind="match"))
        B = v if args.task == "copy" else 2 * v + 1
        for r, seed in enumerate(s["seeds"]):
            params = jax.tree_util.tree_map(lambda x, r=r: x[r], res.states.params)
            p0 = init_fn(
                res.cfg.model, jax.random.split(jax.random.PRNGKey(seed))[0]
            )  # trainer.init's split
            rec = analyse_run(res.cfg, params, p0, args.task, v)
            final = res.records[r]
            optimum = (B - 2) / B * math.log(16) if args.task == "copy" else (v / B) * math.log(16)
            rec.update(
                value=v,
                block_len=B,
                W=W,
                W_measured=W_meas,
                seed=seed,
                final_val_loss=final["final_val_loss"],
                optimal_loss=optimum,
                run_dir=str(run_dir / f"seed{seed}"),
            )
            runs.append(rec)
            print(
                f"{args.task} v={v:3d} seed={seed} W={W} theta_eff={rec['theta_eff']:.4f} "
                f"c={rec['theta_eff'] * W:.3f} copy_acc={rec['copy_accuracy']:.3f} "
                f"val={rec['final_val_loss']:.3f}",
                flush=True,
            )
    wall = time.perf_counter() - t0
    fit = fit_law(runs)
    mc = get_config(args.scale, values[0], args.task).model
    theta = np.asarray(rope_frequencies(mc.head_dim, mc.rope_base), np.float64).tolist()
    learned = [r for r in runs if r["copy_accuracy"] >= 0.9]
    payload = pb.header(
        f"Paper B: frequency matching on block data ({args.task} task; theta* = c / W)", wall
    ) | {
        "renderer": "experiments/freq_matching.py:render",
        "scale": args.scale,
        "task": args.task,
        "config": get_config(args.scale, values[0], args.task).to_dict(),
        "theta": theta,
        "W_definition": W_DEF[args.task],
        "fit": fit,
        "fit_learned_only": fit_law(learned) if len(learned) >= 2 else None,
        "runs": runs,
        "paper": {"c": 3.02, "theory": math.pi},
    }
    base = "freq_matching" if args.task == "copy" else "freq_matching_repeat"
    name = base if args.scale == "cpu" else f"{base}_{args.scale}"  # smoke: not committed
    plots(runs, theta, args.scale, values, s["seeds"][0], args.task, name)
    pb.write(name, payload, render)
    print(json.dumps(fit, indent=2))


def load_sweep(cfg: Config, run_dir: Path, seeds) -> types.SimpleNamespace | None:
    """A finished sweep of exactly ``cfg`` (states stacked over seeds, records), or None."""
    from mope_jax.train import prepare

    finals = [run_dir / f"seed{seed}" / "final.json" for seed in seeds]
    if not all(f.exists() for f in finals):
        return None
    full, _ = prepare(cfg)
    records = [json.loads(f.read_text()) for f in finals]

    def same(rec, seed):  # the run name is a label; everything else must match
        want = dataclasses.replace(full, train=dataclasses.replace(full.train, seed=seed))
        return dataclasses.replace(pb.config_from_record(rec["config"]), name=want.name) == want

    if not all(same(r, sd) for r, sd in zip(records, seeds)):
        print(f"{run_dir} holds another config; retraining", flush=True)
        return None
    _, stacked = pb.load_sweep_seeds(run_dir, list(seeds))
    print(f"reusing {run_dir}", flush=True)
    return types.SimpleNamespace(cfg=full, states=stacked, records=records)


W_DEF = {
    "copy": "W = B - 2, the copy distance of [0, a_1..a_{B-2}, a_1]; "
    "W_measured = first r with excess-match K(r) >= max/2",
    "repeat": "W = the copy distance of [0, a_1..a_W, a_1..a_W] (blocks of 2W + 1); "
    "W_measured as for copy",
}


def fit_law(runs: list[dict]) -> dict:
    """c from log theta_eff + log W per run; free slope of log theta_eff on log(1/W)."""
    W = np.array([r["W"] for r in runs], np.float64)
    out = {}
    for key in ("log_theta_eff", "log_theta_eff_sharpest_head"):
        y = np.array([r[key] for r in runs])
        logc = pb.t_interval(y + np.log(W))
        out[key] = {
            "c": math.exp(logc["mean"]),
            "c_lo": math.exp(logc["lo"]) if math.isfinite(logc["lo"]) else None,
            "c_hi": math.exp(logc["hi"]) if math.isfinite(logc["hi"]) else None,
            "log_c": logc,
        }
        x = np.log(1.0 / W)
        if len(set(W)) > 2:
            A = np.stack([x, np.ones_like(x)], 1)
            coef, *_ = np.linalg.lstsq(A, y, rcond=None)
            resid = y - A @ coef
            n = len(y)
            s2 = float(resid @ resid) / max(n - 2, 1)
            cov = s2 * np.linalg.inv(A.T @ A)
            from mope_jax.analysis.stats import t_quantile

            half = t_quantile(0.975, max(n - 2, 1)) * math.sqrt(cov[0, 0])
            out[key].update(
                slope=float(coef[0]),
                slope_lo=float(coef[0] - half),
                slope_hi=float(coef[0] + half),
                intercept=float(coef[1]),
                c_free=float(math.exp(coef[1])),
                r2=float(1 - (resid @ resid) / max(((y - y.mean()) ** 2).sum(), 1e-30)),
            )
        per_B = {}
        for w in sorted({r["W"] for r in runs}):
            vals = [r[key] + math.log(r["W"]) for r in runs if r["W"] == w]
            per_B[str(w)] = pb.t_interval(vals)
        out[key]["log_c_per_W"] = per_B
    return out


def plots(runs, theta, scale, values, seed0, task, name):
    plt = pb.plt()
    pb.RESULTS.mkdir(parents=True, exist_ok=True)
    theta = np.asarray(theta)
    # 1. the law
    fig, ax = plt.subplots(figsize=(4.6, 3.6))
    W = np.array([r["W"] for r in runs])
    ok = np.array([r["copy_accuracy"] >= 0.9 for r in runs])
    te = np.array([r["theta_eff"] for r in runs])
    ax.scatter(W[ok], te[ok], c="C0", s=16, label="trained, copy learned (acc >= 0.9)")
    ax.scatter(
        W[~ok], te[~ok], facecolors="none", edgecolors="C0", s=16, label="trained, copy not learned"
    )
    ax.scatter(
        W,
        [math.exp(r["log_theta_eff_sharpest_head"]) for r in runs],
        c="C1",
        s=10,
        marker="x",
        label="lowest-entropy head",
    )
    ax.scatter(W, [math.exp(r["log_theta_eff_init"]) for r in runs], c="0.6", s=8, label="init")
    w = np.geomspace(W.min() * 0.8, W.max() * 1.25, 50)
    ax.plot(w, math.pi / w, "k--", lw=1, label="pi / W (theory)")
    ax.plot(w, 3.02 / w, "r:", lw=1, label="3.02 / W (paper fit)")
    ax.set_xscale("log"), ax.set_yscale("log")
    ws = sorted(set(W.tolist()))
    ax.set_xticks(ws, [str(x) for x in ws]), ax.set_xticks([], minor=True)
    ax.set_xlabel("dependency width W (tokens)"), ax.set_ylabel("theta_eff (rad/token)")
    ax.legend(fontsize=5.5), ax.set_title(f"frequency matching, {task} task ({scale})", fontsize=8)
    fig.tight_layout(), fig.savefig(pb.RESULTS / f"{name}_fit.png", dpi=130), plt.close(fig)
    # 2. heatmap frequency x step (metrics.jsonl eval records, seed 0, mean over layers)
    fig, axes = plt.subplots(1, len(values), figsize=(2.6 * len(values), 2.8), squeeze=False)
    for ax, v in zip(axes[0], values):
        Wv = width_of(task, v)
        path = pb.RUNS / scale / f"freq_matching_{task}{v}" / f"seed{seed0}" / "metrics.jsonl"
        recs = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
        recs = [r for r in recs if "rope_energy_p" in r]
        steps = [r["step"] for r in recs]
        P = np.array([np.asarray(r["rope_energy_p"]).mean(0) for r in recs])  # (steps, F)
        ax.imshow(
            P.T,
            aspect="auto",
            origin="lower",
            cmap="viridis",
            extent=(steps[0] - 0.5, steps[-1] + 0.5, -0.5, len(theta) - 0.5),
        )
        ax.axhline(
            np.interp(math.log(math.pi / Wv), np.log(theta[::-1]), np.arange(len(theta))[::-1]),
            color="w",
            ls="--",
            lw=0.8,
        )
        ax.set_title(f"W={Wv}; dashed: pi/W", fontsize=7)
        (
            ax.set_xlabel("step", fontsize=7),
            ax.set_ylabel("freq index i (theta = 1e4^(-2i/D))", fontsize=6),
        )
    fig.tight_layout(), fig.savefig(pb.RESULTS / f"{name}_heatmap.png", dpi=130), plt.close(fig)
    # 3. final spectrum per layer
    L = len(runs[0]["p"])
    fig, axes = plt.subplots(1, L, figsize=(3.6 * L, 3.0), squeeze=False, sharey=True)
    for layer, ax in enumerate(axes[0]):
        for k, v in enumerate(values):
            Wv = width_of(task, v)
            ps = np.mean([np.asarray(r["p"])[layer].mean(0) for r in runs if r["W"] == Wv], 0)
            ax.plot(theta, ps, marker="o", ms=2.5, color=f"C{k}", label=f"W={Wv}")
            ax.axvline(math.pi / Wv, color=f"C{k}", ls=":", lw=0.8)
        (
            ax.set_xscale("log"),
            ax.set_xlabel("theta (rad/token)"),
            ax.set_title(f"layer {layer}", fontsize=8),
        )
    axes[0][0].set_ylabel("p_i (mean over heads, seeds)"), axes[0][0].legend(fontsize=6)
    fig.tight_layout(), fig.savefig(pb.RESULTS / f"{name}_spectra.png", dpi=130), plt.close(fig)


def render(payload: dict, json_path: Path) -> dict[str, str]:
    """``<name>.md`` from ``<name>.json`` alone (``mope-jax report --regenerate``)."""
    name = Path(json_path).stem
    return {f"{name}.md": pb.top(payload, json_path) + markdown(payload, name)}


def markdown(payload: dict, name: str) -> str:
    """The fits are recomputed from the per-run values (``fit_law``), as ``main`` computed them."""
    runs = payload["runs"]
    fit = fit_law(runs)
    learned = [r for r in runs if r["copy_accuracy"] >= 0.9]
    fit_learned = fit_law(learned) if len(learned) >= 2 else None
    steps = payload["config"]["train"]["max_steps"]
    lines = [
        f"Task: **{payload['task']}**. {payload['W_definition']}.\n",
        "Model: 2 layers, width 64, 2 heads (D = 32, 16 RoPE frequencies, base 1e4), "
        f"{steps} steps of 16 x 128 tokens, lr 3e-3; tiny and short to fit a shared 2-core CPU. "
        "theta_eff = exp(sum_i p_i log theta_i), p from 8 fixed validation windows, "
        "averaged (in log) over both layers and both heads. "
        "'copy acc' = greedy accuracy on the copy targets; a run whose copy "
        "accuracy is below 0.9 has not learned the dependency the law is about.\n",
        "| B | W | W measured | seeds | val loss (optimum) | copy acc per seed | "
        "theta_eff per seed | c = theta_eff W, mean (95% CI) | entropy (init; uniform = 2.77) | "
        "TV other windows / random tokens / vs init |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in sorted({r["W"] for r in runs}):
        rs = [r for r in runs if r["W"] == w]
        ci = fit["log_theta_eff"]["log_c_per_W"][str(w)]
        c_ci = (
            f"{math.exp(ci['mean']):.3f} ({math.exp(ci['lo']):.3f}, {math.exp(ci['hi']):.3f})"
            if ci["n"] > 1
            else f"{math.exp(ci['mean']):.3f}"
        )
        accs = ", ".join(f"{r['copy_accuracy']:.2f}" for r in rs)
        thetas = ", ".join(f"{r['theta_eff']:.3f}" for r in rs)
        lines.append(
            f"| {rs[0]['block_len']} | {w} | {rs[0]['W_measured']} | {len(rs)} | "
            f"{np.mean([r['final_val_loss'] for r in rs]):.3f} ({rs[0]['optimal_loss']:.3f}) | "
            f"{accs} | {thetas} | "
            f"{c_ci} | {np.mean([r['entropy_mean'] for r in rs]):.2f} "
            f"({rs[0]['entropy_init']:.2f}) | "
            f"{np.mean([r['stability_tv']['other_windows'] for r in rs]):.3f} / "
            f"{np.mean([r['stability_tv']['random_tokens'] for r in rs]):.3f} / "
            f"{np.mean([r['stability_tv']['vs_init'] for r in rs]):.3f} |"
        )
    lines.append("")
    fits = [
        ("all runs, all heads (primary)", fit, "log_theta_eff"),
        ("all runs, lowest-entropy head", fit, "log_theta_eff_sharpest_head"),
    ]
    if fit_learned:
        fits.append(("runs that learned the copy only, all heads", fit_learned, "log_theta_eff"))
    for label, fd, key in fits:
        f = fd[key]
        ci = f"({f['c_lo']:.3f}, {f['c_hi']:.3f})" if f.get("c_lo") is not None else "(n/a)"
        slope = (
            f" Free fit: slope of log theta_eff on log(1/W) = {f['slope']:.3f} "
            f"(95% CI {f['slope_lo']:.3f}, {f['slope_hi']:.3f}; 1 = the 1/W law), "
            f"R^2 = {f['r2']:.3f}."
            if "slope" in f
            else " (too few distinct W for a free slope.)"
        )
        n = f["log_c"]["n"]
        lines.append(
            f"- {label}: c = {f['c']:.3f}, 95% CI {ci} over {n} runs "
            f"(paper 3.02, theory pi = 3.142).{slope}"
        )
    lines += [
        "",
        f"Figures: `{name}_fit.png` (theta_eff against W), `{name}_heatmap.png` "
        "(p_i against training step from the runs' metrics.jsonl, seed 0, "
        "mean over layers and heads), "
        f"`{name}_spectra.png` (final p_i per layer).",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
