"""Scaling study as a campaign: loss and cost against model width, depth and context length.

Command:  mope-jax campaign run scaling --scale smoke|cpu [--corpus input.txt]
          (status: mope-jax campaign status scaling; ``python experiments/scaling.py --scale S``
          is an alias of the run command)
Writes:   experiments/results/scaling/<scale>/records/<row>/seed<s>.json and table.md
Rows:     the grid points of each scale (``Scale.rows``): width x depth at the scale's T, then
          the context length T at the middle width and the larger depth; a row ``E<w>-L<d>-T<T>``
          is the ``learned`` variant with model.n_embd=w, model.n_layer=d, model.n_head=max(1,
          w // 16), model.block_size=T. Baseline ``E32-L2-T64``: the one point both grids share.
Data:     the built-in block-copy task (block_len 16, 100k tokens) at both scales; ``--corpus
          PATH`` trains on a text file instead (the committed single-script cpu table used
          TinyShakespeare).
Runtime per run: smoke (60 steps x 8 windows, 2 seeds per row) ~20 s: a row's 2 seeds in 33-68
s (median 41 s) with compilation, evaluation and the cost analysis, the 8 rows 6.1 min with
`nice -n 5` on a 2-core CPU shared with a training campaign and tests (its val losses equal the
single-script smoke table's to the printed digits, its FLOPs and memory agree); cpu (200 steps
x 16 windows, 2 seeds) ~10 min for the whole grid as measured by the single-script version,
whose tables are kept (``results/scaling/scaling_{smoke,cpu}.{json,md,png}``; renderer
``render`` below): on TinyShakespeare at cpu, val 2.61 (E32-L1) to 2.38 (E128-L2) at T=64, 0.12
to 2.73 GFLOP/step; smoke's 60 steps do not learn the block task (val ~2.835 everywhere), so
only its cost columns say anything. The cpu campaign itself has not been run yet.

Each seed's record carries, besides the campaign's final val loss, ``analysis`` (``analyze``):
parameters, training FLOPs per step counted by XLA's cost analysis of the compiled one-step
train program (one seed's batch), the peak temporary memory of that program (XLA memory
analysis), and the measured wall time of one step (median of REPEATS calls of that compiled
program on the trained state, one seed, after one warm call; the single-script version
measured the steady-state step of all seeds together instead). ``cost_section`` tables them.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.analysis.report import rendered_note
from mope_jax.analysis.stats import summarize
from mope_jax.campaign import Experiment, Row, Scale, by_row
from mope_jax.config import Config
from mope_jax.train import make_train

GRIDS = {  # the single-script version's SCALES
    "smoke": dict(
        widths=(16, 32, 64), depths=(1, 2), contexts=(16, 32, 64), steps=60, batch=8, T=32
    ),
    "cpu": dict(
        widths=(32, 64, 128), depths=(1, 2), contexts=(32, 64, 128), steps=200, batch=16, T=64
    ),
}
DATA = dict(source="blocks", block_len=16, num_tokens=100_000)
SEEDS = 2
REPEATS = 20


def grid(scale: str) -> list[tuple[int, int, int]]:
    """(width, depth, T) of the scale: width x depth at T, then T at the middle width and the
    larger depth."""
    s = GRIDS[scale]
    points = [(w, d, s["T"]) for w in s["widths"] for d in s["depths"]]
    return points + [(s["widths"][1], s["depths"][-1], T) for T in s["contexts"] if T != s["T"]]


def row_name(w: int, d: int, t: int) -> str:
    return f"E{w}-L{d}-T{t}"


def _row(w: int, d: int, t: int) -> Row:
    overrides = (
        f"model.n_embd={w}",
        f"model.n_layer={d}",
        f"model.n_head={max(1, w // 16)}",
        f"model.block_size={t}",
    )
    return Row(row_name(w, d, t), "learned", overrides, label=f"E={w}, {d} layers, T={t}")


def _scale(name: str) -> Scale:
    s = GRIDS[name]
    steps = s["steps"]
    w, d = s["widths"][1], s["depths"][-1]
    return Scale(
        name,
        model=dict(block_size=s["T"], n_layer=d, n_head=max(1, w // 16), n_embd=w, dropout=0.0),
        train=dict(
            batch_size=s["batch"],
            max_steps=steps,
            lr=3e-3,
            warmup_steps=steps // 10,
            eval_interval=steps,
            eval_batches=10,
            log_interval=steps // 4,
            checkpoint_interval=steps,
        ),
        seeds=SEEDS,
        rows=tuple(row_name(*p) for p in grid(name)),
    )


def analyze(cfg: Config, state, corpus) -> dict:
    """Parameters, XLA's FLOPs and temporary bytes of the compiled one-step train program, and
    its measured wall time per call (median of REPEATS, after one warm call) on this seed's
    trained state."""
    tr = make_train(cfg)
    data = jnp.asarray(corpus.train, jnp.int32)
    shapes = jax.eval_shape(tr.init, jax.random.PRNGKey(0))
    compiled = (
        jax.jit(tr.train_steps, static_argnums=2)
        .lower(shapes, jax.ShapeDtypeStruct(data.shape, jnp.int32), 1)
        .compile()
    )
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    mem = compiled.memory_analysis()
    st = jax.tree_util.tree_map(jnp.asarray, state)
    jax.block_until_ready(compiled(st, data))
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(st, data))
        times.append(time.perf_counter() - t0)
    return {
        "params": int(sum(np.size(x) for x in jax.tree_util.tree_leaves(state.params))),
        "flops_per_step": float(cost.get("flops", float("nan"))),
        "temp_bytes": float(getattr(mem, "temp_size_in_bytes", float("nan"))),
        "step_s": float(np.median(times)),
        "step_s_repeats": REPEATS,
    }


def cost_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Cost per grid point from the records' ``analysis`` (FLOPs and memory are the same for
    every seed; the step time is the median over seeds)."""
    recs = by_row(records)
    lines = [
        "## Cost",
        "",
        "Per grid point: parameters; GFLOP per training step and peak temporary memory from XLA's "
        "cost and memory analyses of the compiled one-step train program (one seed's batch); "
        "measured ms per step (one seed; median over calls, then over seeds: the machine's "
        "load moves it, the FLOPs do not); final val loss mean over seeds.",
        "",
        "| row | T | E | layers | params | GFLOP/step | temp MiB | ms/step | val loss | n |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in experiment.rows_at(scale):
        rs = [r for r in recs.get(row.name, []) if r.get("analysis")]
        if not rs:
            continue
        a = rs[0]["analysis"]
        m = rs[0]["config"]["model"]
        step = float(np.median([r["analysis"]["step_s"] for r in rs]))
        val = float(np.mean([r["final_val_loss"] for r in rs]))
        lines.append(
            f"| `{row.name}` | {m['block_size']} | {m['n_embd']} | {m['n_layer']} | "
            f"{a['params']:,} | {a['flops_per_step'] / 1e9:.3f} | {a['temp_bytes'] / 2**20:.1f} | "
            f"{step * 1e3:.2f} | {val:.4f} | {len(rs)} |"
        )
    return "\n".join(lines)


_POINTS = list(dict.fromkeys(p for name in GRIDS for p in grid(name)))

EXPERIMENT = Experiment(
    name="scaling",
    title="Scaling study: loss and cost against width, depth and context length",
    rows=tuple(_row(*p) for p in _POINTS),
    scales=tuple(_scale(n) for n in GRIDS),
    baseline="E32-L2-T64",
    data=DATA,
    analyze=analyze,
    sections=(cost_section,),
)


def main(argv=None) -> int:
    """Alias: ``python experiments/scaling.py --scale S [...]`` runs
    ``mope-jax campaign run scaling --scale S [...]`` in this repository."""
    from mope_jax.cli import campaign_script

    return campaign_script(__file__, argv)


# --------------------------------------------------------------------------- the earlier script
# ``results/scaling/scaling_{smoke,cpu}.json`` (made by the single-script version of this
# experiment) name ``render`` below as their renderer.


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


if __name__ == "__main__":
    sys.exit(main())
