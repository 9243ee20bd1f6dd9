"""Scaling study: loss and cost against model width, depth and context length.

Command:  python experiments/scaling.py --scale smoke            (~2 min on 2 CPU cores; a pipeline
          check: 60 steps do not learn the block task, so only the cost columns say anything)
          python experiments/scaling.py --scale cpu --data input.txt       (~10 min, TinyShakespeare)
Writes:   experiments/results/scaling/scaling_<scale>.{json,md,png}

Each grid point trains ``--seeds`` seeds as one program (``mope_jax.sweep``, strategy auto) and
records: final val loss (mean, std, 95% CI over seeds), parameters, training FLOPs per step as
counted by XLA's cost analysis of the compiled train step, peak temporary memory of that
program (XLA memory analysis), and the measured wall time per step (steady state, the first
chunk, which compiles, excluded). Grids: width x depth at fixed T; context length T at fixed
width/depth. Data: the built-in block-copy task (default) or a text file (--data).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp

from mope_jax.analysis.report import provenance
from mope_jax.analysis.stats import summarize
from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig
from mope_jax.sweep import sweep
from mope_jax.train import make_train, prepare

OUT = Path(__file__).parent / "results" / "scaling"

SCALES = {
    "smoke": dict(widths=(16, 32, 64), depths=(1, 2), contexts=(16, 32, 64), steps=60, batch=8, T=32),
    "cpu": dict(widths=(32, 64, 128), depths=(1, 2), contexts=(32, 64, 128), steps=200, batch=16, T=64),
}


def get_config(scale: str, *, width: int, depth: int, T: int, data: str | None) -> Config:
    s = SCALES[scale]
    steps = s["steps"]
    data_cfg = DataConfig(source="text", path=data) if data else DataConfig(block_len=16, num_tokens=100_000)
    return Config(
        name=f"E{width}-L{depth}-T{T}",
        model=ModelConfig(block_size=T, n_layer=depth, n_head=max(1, width // 16), n_embd=width, dropout=0.0),
        data=data_cfg,
        train=TrainConfig(batch_size=s["batch"], max_steps=steps, lr=3e-3, warmup_steps=steps // 10,
                          eval_interval=steps, eval_batches=10, log_interval=steps // 4, checkpoint_interval=steps),
    )


def xla_cost(cfg: Config) -> dict[str, float]:
    """FLOPs and temporary bytes of one compiled train step, from XLA's own analyses."""
    cfg, corpus = prepare(cfg)
    tr = make_train(cfg)
    state = jax.eval_shape(tr.init, jax.random.PRNGKey(0))
    data = jax.ShapeDtypeStruct(corpus.train.shape, jnp.int32)
    compiled = jax.jit(tr.train_steps, static_argnums=2).lower(state, data, 1).compile()
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    mem = compiled.memory_analysis()
    return {"flops_per_step": float(cost.get("flops", float("nan"))),
            "temp_bytes": float(getattr(mem, "temp_size_in_bytes", float("nan")))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", choices=sorted(SCALES), default="smoke")
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--data", default=None)
    args = p.parse_args(argv)
    s = SCALES[args.scale]
    grid = [(w, d, s["T"]) for w in s["widths"] for d in s["depths"]]
    grid += [(s["widths"][1], s["depths"][-1], T) for T in s["contexts"] if T != s["T"]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for w, d, T in grid:
            cfg = get_config(args.scale, width=w, depth=d, T=T, data=args.data)
            res = sweep(cfg, list(range(args.seeds)), Path(tmp) / cfg.name, progress=False, log=lambda m: None)
            vals = [r["final_val_loss"] for r in res.records]
            st = summarize(vals)
            secs = [rec["seconds"] for rec in _metrics(Path(tmp) / cfg.name / "seed0")][1:]
            step_s = sum(secs) / len(secs) / cfg.train.log_interval if secs else float("nan")
            rows.append({"name": cfg.name, "width": w, "depth": d, "T": T, "params": res.records[0]["num_params"],
                         "val_mean": st.mean, "val_std": st.std, "ci": [st.ci_low, st.ci_high], "n": st.n,
                         "seconds_per_step_all_seeds": step_s, "strategy": res.strategy, **xla_cost(cfg)})
            print(f"{cfg.name}: val {st.mean:.4f} +- {st.std:.4f}  params {rows[-1]['params']}  "
                  f"{rows[-1]['flops_per_step'] / 1e9:.3f} GFLOP/step", flush=True)
    command = "python experiments/scaling.py " + " ".join(map(shlex.quote, argv if argv is not None else sys.argv[1:]))
    OUT.mkdir(parents=True, exist_ok=True)
    stem = OUT / f"scaling_{args.scale}"
    meta = {"command": command, "date": dt.datetime.now(dt.timezone.utc).isoformat(), "rows": rows}
    stem.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    lines = [f"# Scaling study ({args.scale})", "", provenance(command), "",
             f"{args.seeds} seeds per point; val loss in nats/token on "
             f"{'the text at ' + args.data if args.data else 'the built-in block-copy task'}; "
             "FLOPs and temp memory from XLA's analyses of one compiled train step (batch of one seed); "
             "wall time per step for all seeds together (steady state).", "",
             "| config | params | val loss (mean +- std) | 95% CI | GFLOP/step | temp MiB | s/step (all seeds) |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        ci = "n/a" if r["n"] < 2 else f"[{r['ci'][0]:.4f}, {r['ci'][1]:.4f}]"
        lines.append(f"| {r['name']} | {r['params']:,} | {r['val_mean']:.4f} +- {r['val_std']:.4f} | {ci} | "
                     f"{r['flops_per_step'] / 1e9:.3f} | {r['temp_bytes'] / 2**20:.1f} | "
                     f"{r['seconds_per_step_all_seeds']:.4f} |")
    lines += ["", f"![scaling]({stem.name}.png)", ""]
    _plot(rows, stem.with_suffix(".png"))
    stem.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


def _metrics(d: Path):
    return [json.loads(x) for x in (d / "metrics.jsonl").read_text().splitlines() if x.strip()]


def _plot(rows, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for r in rows:
        axes[0].errorbar(r["flops_per_step"], r["val_mean"], yerr=r["val_std"], fmt="o")
        axes[0].annotate(r["name"], (r["flops_per_step"], r["val_mean"]), fontsize=6)
    axes[0].set_xscale("log")
    axes[0].set_xlabel("train FLOPs per step (XLA)")
    axes[0].set_ylabel("val loss (nats/token)")
    w, d = rows[-1]["width"], rows[-1]["depth"]  # the context grid's width and depth
    by_t = sorted((r for r in rows if (r["width"], r["depth"]) == (w, d)), key=lambda r: r["T"])
    ctx = [r["T"] for r in by_t]
    axes[1].plot(ctx, [r["seconds_per_step_all_seeds"] for r in by_t], "o-")
    axes[1].set_xlabel("context length T")
    axes[1].set_ylabel("s / step (all seeds)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
