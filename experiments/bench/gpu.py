"""GPU benchmark (issue 14): tokens/s, MFU and seeds/hour of the reference model, one script.

Command:  python -m experiments.bench.gpu            (on a machine with a CUDA GPU and a CUDA
          build of jax: pip install -U "jax[cuda12]"; ~5-10 min on one H100/H200)
          python -m experiments.bench.gpu --tiny     (seconds, any backend: what the tests run)
Writes:   experiments/results/bench/gpu.{json,md}   (commit both)

Measures, in one process, on the default JAX backend:
  * the matmul peak of this device: a large jnp.dot in float32 (JAX's default precision on the
    device) and in bfloat16, the rate MFU is divided by;
  * training tokens/s of the reference model (DESIGN.md section 0: 6 x 256, T=256, batch 64,
    dropout 0.1) as ``train.run`` trains it (``train_steps`` scanned, state donated), in float32
    and with ``model.compute_dtype=bfloat16``; MFU = model FLOPs/s / the peak of the same dtype
    (FLOP count: experiments/bench/measure.py);
  * seeds/hour of 1 and 8 seeds trained as one vmapped program (``mope_jax.sweep`` strategy
    ``vmap``) against one seed at a time, extrapolated from the step time to the reference
    schedule's 5000 steps.
Nothing here is a target; the file records what the device did, with its versions.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
import time
from pathlib import Path

from experiments.bench import measure

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "experiments" / "results" / "bench"

FULL = dict(
    peak_n=8192,
    peak_reps=5,
    preset="reference",
    overrides=[],
    steps=20,
    reps=3,
    seed_counts=[1, 8],
    sweep_steps=10,
    sweep_reps=3,
)
TINY = dict(
    peak_n=256,
    peak_reps=1,
    preset="smoke",
    overrides=[],
    steps=2,
    reps=1,
    seed_counts=[1, 2],
    sweep_steps=1,
    sweep_reps=1,
)


def peak(n: int, reps: int, dtype: str) -> dict:
    """Rate of an (n x n) @ (n x n) product in ``dtype`` on the default device."""
    import jax
    import jax.numpy as jnp

    a = jax.random.normal(jax.random.PRNGKey(0), (n, n)).astype(dtype)
    b = jax.random.normal(jax.random.PRNGKey(1), (n, n)).astype(dtype)
    dot = jax.jit(jnp.dot)
    jax.block_until_ready(dot(a, b))
    s, times = measure.best_time(lambda: jax.block_until_ready(dot(a, b)), reps)
    return {
        "n": n,
        "dtype": dtype,
        "seconds": s,
        "tflops": 2 * n**3 / s / 1e12,
        "all_seconds": times,
    }


def run(size: dict) -> dict:
    import jax

    recs: dict = {
        "peak": {d: peak(size["peak_n"], size["peak_reps"], d) for d in ("float32", "bfloat16")}
    }
    for dtype in ("float32", "bfloat16"):
        ov = size["overrides"] + ([] if dtype == "float32" else ["model.compute_dtype=bfloat16"])
        r = measure.task_train(ov, size["steps"], size["reps"], preset=size["preset"])
        r["mfu"] = r["tokens_per_s"] * r["flops_per_token"] / (recs["peak"][dtype]["tflops"] * 1e12)
        recs[f"train/{dtype}"] = r
    recs["sweep"] = measure.task_sweep(
        size["seed_counts"],
        ["vmap"],
        size["preset"],
        size["overrides"],
        size["sweep_steps"],
        size["sweep_reps"],
    )
    dev = jax.devices()[0]
    recs["device"] = {
        "platform": dev.platform,
        "kind": getattr(dev, "device_kind", str(dev)),
        "count": jax.device_count(),
    }
    return recs


def markdown(doc: dict) -> str:
    r = doc["records"]
    L = [
        "# GPU benchmark",
        "",
        f"Command: `{doc['command']}`  ",
        f"Date: {doc['date']}  ",
        f"Device: {r['device']['kind']} ({r['device']['platform']}, "
        f"{r['device']['count']} device(s))  ",
        f"Versions: jax {doc['env']['jax']}, flax {doc['env']['flax']}, "
        f"python {doc['env']['python']}, "
        f"commit {doc['env']['git_commit']}",
        "",
        "| measurement | float32 | bf16 matmuls |",
        "|---|---:|---:|",
        f"| matmul peak ({r['peak']['float32']['n']}^3 jnp.dot), TFLOP/s | "
        f"{r['peak']['float32']['tflops']:.1f} | "
        f"{r['peak']['bfloat16']['tflops']:.1f} |",
    ]
    f32, bf = r["train/float32"], r["train/bfloat16"]
    L += [
        f"| training tokens/s ({f32['config']}: {f32['n_layer']} x {f32['n_embd']}, "
        f"T={f32['block_size']}, batch {f32['batch_size']}) | {f32['tokens_per_s']:,.0f} | "
        f"{bf['tokens_per_s']:,.0f} |",
        f"| MFU (model FLOPs/s / the peak of the same dtype) | {100 * f32['mfu']:.1f}% | "
        f"{100 * bf['mfu']:.1f}% |",
        "",
        f"Seeds per hour ({r['sweep']['max_steps']} steps per seed, float32):",
        "",
        "| program | seeds/hour | tokens/s |",
        "|---|---:|---:|",
    ]
    for k, v in r["sweep"]["results"].items():
        L.append(f"| {k} | {v['seeds_per_hour']:.2f} | {v['tokens_per_s']:,.0f} |")
    return "\n".join(L) + "\n"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiny", action="store_true", help="toy sizes on any backend (tests)")
    ap.add_argument("--out", default=str(RESULTS))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from mope_jax.analysis.report import publish
    from mope_jax.train import environment

    t0 = time.time()
    doc = {
        "renderer": "experiments/bench/gpu.py:render",
        "command": "python -m experiments.bench.gpu "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "env": environment(),
        "records": run(TINY if args.tiny else FULL),
    }
    doc["wall_s"] = time.time() - t0
    name = "gpu_tiny" if args.tiny else "gpu"
    publish(Path(args.out) / f"{name}.json", doc, render)
    print(markdown(doc))
    return doc


def render(doc: dict, json_path) -> dict[str, str]:
    """``<name>.md`` from ``<name>.json`` alone (``mope-jax report --regenerate``)."""
    return {Path(json_path).with_suffix(".md").name: markdown(doc)}


if __name__ == "__main__":
    main()
