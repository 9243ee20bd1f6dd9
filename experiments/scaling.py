"""Scaling study: loss and cost against model width, depth and context length.

Command:  python experiments/scaling.py --scale smoke            (~2 min on 2 CPU cores; a pipeline
          check: 60 steps do not learn the block task, so only the cost columns say anything)
          python experiments/scaling.py --scale cpu --data input.txt      (~10 min, TinyShakespeare)
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

from mope_jax.analysis.report import provenance, rendered_note
from mope_jax.analysis.stats import summarize
from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig
from mope_jax.sweep import sweep
from mope_jax.train import make_train, prepare

OUT = Path(__file__).parent / "results" / "scaling"

SCALES = {
    "smoke": dict(
        widths=(16, 32, 64), depths=(1, 2), contexts=(16, 32, 64), steps=60, batch=8, T=32
    ),
    "cpu": dict(
        widths=(32, 64, 128), depths=(1, 2), contexts=(32, 64, 128), steps=200, batch=16, T=64
    ),
}


def get_config(scale: str, *, width: int, depth: int, T: int, data: str | None) -> Config:
    s = SCALES[scale]
    steps = s["steps"]
    data_cfg = (
        DataConfig(source="text", path=data)
        if data
        else DataConfig(block_len=16, num_tokens=100_000)
    )
    return Config(
        name=f"E{width}-L{depth}-T{T}",
        model=ModelConfig(
            block_size=T, n_layer=depth, n_head=max(1, width // 16), n_embd=width, dropout=0.0
        ),
        data=data_cfg,
        train=TrainConfig(
            batch_size=s["batch"],
            max_steps=steps,
            lr=3e-3,
            warmup_steps=steps // 10,
            eval_interval=steps,
            eval_batches=10,
            log_interval=steps // 4,
            checkpoint_interval=steps,
        ),
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
    return {
        "flops_per_step": float(cost.get("flops", float("nan"))),
        "temp_bytes": float(getattr(mem, "temp_size_in_bytes", float("nan"))),
    }


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
            res = sweep(
                cfg,
                list(range(args.seeds)),
                Path(tmp) / cfg.name,
                progress=False,
                log=lambda m: None,
            )
            vals = [r["final_val_loss"] for r in res.records]
            st = summarize(vals)
            secs = [rec["seconds"] for rec in _metrics(Path(tmp) / cfg.name / "seed0")][1:]
            step_s = sum(secs) / len(secs) / cfg.train.log_interval if secs else float("nan")
            rows.append(
                {
                    "name": cfg.name,
                    "width": w,
                    "depth": d,
                    "T": T,
                    "params": res.records[0]["num_params"],
                    "values": vals,
                    "val_mean": st.mean,
                    "val_std": st.std,
                    "ci": [st.ci_low, st.ci_high],
                    "n": st.n,
                    "seconds_per_step_all_seeds": step_s,
                    "strategy": res.strategy,
                    **xla_cost(cfg),
                }
            )
            print(
                f"{cfg.name}: val {st.mean:.4f} +- {st.std:.4f}  params {rows[-1]['params']}  "
                f"{rows[-1]['flops_per_step'] / 1e9:.3f} GFLOP/step",
                flush=True,
            )
    command = "python experiments/scaling.py " + " ".join(
        map(shlex.quote, argv if argv is not None else sys.argv[1:])
    )
    OUT.mkdir(parents=True, exist_ok=True)
    stem = OUT / f"scaling_{args.scale}"
    meta = {
        "renderer": "experiments/scaling.py:render",
        "command": command,
        "date": dt.datetime.now(dt.timezone.utc).isoformat(),
        "provenance": provenance(command),
        "scale": args.scale,
        "seeds": args.seeds,
        "data": args.data,
        "rows": rows,
    }
    stem.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
    _plot(rows, stem.with_suffix(".png"))
    (text,) = render(
        json.loads(stem.with_suffix(".json").read_text()), stem.with_suffix(".json")
    ).values()
    stem.with_suffix(".md").write_text(text)
    print(text)
    return 0


def _data_arg(command: str) -> str | None:
    """--data of the recorded command (JSONs written before "data" was stored)."""
    args = shlex.split(command)
    for i, a in enumerate(args):
        if a == "--data" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--data="):
            return a.split("=", 1)[1]
    return None


def render(p: dict, json_path: Path) -> dict[str, str]:
    """``scaling_<scale>.md`` from its JSON alone (``mope-jax report --regenerate``). Rows with
    per-seed ``values`` get their statistics computed here; older rows carry only the summary."""
    json_path = Path(json_path)
    rows = p["rows"]
    data = p["data"] if "data" in p else _data_arg(p["command"])
    seeds = p.get("seeds", rows[0]["n"])
    scale = p.get("scale", json_path.stem.removeprefix("scaling_"))
    lines = [
        f"# Scaling study ({scale})",
        "",
        p["provenance"],
        "",
        rendered_note(p, json_path),
        "",
        f"{seeds} seeds per point; val loss in nats/token on "
        f"{'the text at ' + data if data else 'the built-in block-copy task'}; "
        "FLOPs and temp memory from XLA's analyses of one compiled train step (batch of one seed); "
        "wall time per step for all seeds together (steady state).",
        "",
        "| config | params | val loss (mean +- std) | 95% CI | GFLOP/step | temp MiB | "
        "s/step (all seeds) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "values" in r:
            st = summarize(r["values"])
            n, mean, std, ci_lo, ci_hi = st.n, st.mean, st.std, st.ci_low, st.ci_high
        else:
            n, mean, std, (ci_lo, ci_hi) = r["n"], r["val_mean"], r["val_std"], r["ci"]
        ci = "n/a" if n < 2 else f"[{ci_lo:.4f}, {ci_hi:.4f}]"
        lines.append(
            f"| {r['name']} | {r['params']:,} | {mean:.4f} +- {std:.4f} | {ci} | "
            f"{r['flops_per_step'] / 1e9:.3f} | {r['temp_bytes'] / 2**20:.1f} | "
            f"{r['seconds_per_step_all_seeds']:.4f} |"
        )
    lines += ["", f"![scaling]({json_path.stem}.png)", ""]
    return {json_path.with_suffix(".md").name: "\n".join(lines)}


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
