"""Performance benchmarks: JAX training throughput and MFU next to a PyTorch reference,
variants, seed sweeps and the spectral filters' cost vs T, in one command.

Command:  nice -n 5 python -m experiments.bench.run --quick    (~4 min on a 2-core CPU)
          python -m experiments.bench.run                      (full sizes, ~15 min)
Writes:   experiments/results/bench/bench_<quick|full>.{json,md} and README.md
Targets:  reference model (6 x 256, T=256) at batch 16: JAX tokens/s >= 1.0x the
PyTorch reference and MFU >= 50%; causal spectral filter at T=256: step <= 1.3x baseline;
a 4-seed sweep at the ``cpu`` preset >= 1.5x the seeds/hour of sequential runs.

Every measurement runs in a worker process (experiments/bench/measure.py) started with its
own XLA flags, so the host device count, flags and peak memory (ru_maxrss) belong to it;
workers run one after another (never two at once: they would share the two cores). MFU =
model FLOPs/s / the f32 matmul rate of a large ``jnp.dot`` measured at the start of the same
run (measure.py documents the FLOP count). Timings are the best of ``reps`` calls, each of
``steps`` optimiser steps in one ``lax.scan`` (as ``train.run`` calls them). The load average
before and after is recorded: a run on a busy machine is not a benchmark.

Sections run in priority order under a wall-clock budget (``--budget``); a section that
does not fit is recorded as skipped, never silently dropped.

The sections and their tasks are in run_plan.py, the worker's tasks in measure.py.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from experiments.bench.report import markdown, render, summarize
from experiments.bench.run_plan import (
    config_1core_tasks,
    config_dp2_tasks,
    config_tasks,
    plan,
    tiny_plan,
)
from experiments.bench.spec import RESULTS, ROOT, SIZES, VARIANT_PRIORITY

__all__ = [
    "config_1core_tasks",
    "config_dp2_tasks",
    "config_tasks",
    "load_average",
    "main",
    "plan",
    "tiny_plan",
    "worker",
]


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def worker(
    tasks: list[dict], xla_flags: str, deadline: float, log, extra_env: dict | None = None
) -> dict[str, dict]:
    """Run tasks in one worker process; return {id: record}. Stops it at the deadline."""
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        XLA_FLAGS=xla_flags,
        PYTHONPATH=str(ROOT),
        **(extra_env or {}),
    )
    cmd = [sys.executable, "-m", "experiments.bench.measure", json.dumps(tasks)]
    out: dict[str, dict] = {}
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=max(deadline - time.time(), 1.0))
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        log(f"  worker stopped at the time budget ({xla_flags or 'default flags'})")
    for line in stdout.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            rec["xla_flags"] = xla_flags
            rec["env"] = extra_env or {}
            out[rec["id"]] = rec
            log(
                f"  {rec['id']}: {rec['wall_s']:.1f} s"
                + (f"  ERROR {rec['error']}" if rec["error"] else "")
            )
    for t in tasks:
        if t["id"] not in out:
            out[t["id"]] = {
                "id": t["id"],
                "task": t["task"],
                "result": None,
                "xla_flags": xla_flags,
                "error": "not run: time budget"
                if proc.returncode
                else "no output: " + stderr[-300:],
            }
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes (~4 min on 2 cores)")
    ap.add_argument(
        "--budget",
        type=float,
        default=None,
        help="wall-clock budget in seconds "
        "(default 295 quick, 1200 full); sections past it are recorded as skipped",
    )
    ap.add_argument(
        "--only", default="", help="comma-separated section numbers to run (1-based), for testing"
    )
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument(
        "--tiny", action="store_true", help=argparse.SUPPRESS
    )  # tests: smoke-sized everything
    args = ap.parse_args(argv)
    size_name = "quick" if args.quick else "full"
    size = dict(SIZES[size_name])
    budget = args.budget or (295.0 if args.quick else 1200.0)
    sys.path.insert(0, str(ROOT))
    from mope_jax.analysis.report import publish
    from mope_jax.presets import model_variants
    from mope_jax.train import environment

    variants = sorted(
        model_variants(),
        key=lambda v: (
            VARIANT_PRIORITY.index(v) if v in VARIANT_PRIORITY else len(VARIANT_PRIORITY),
            v,
        ),
    )
    sections = plan(size, variants)
    if args.tiny:
        size_name = "tiny"
        sections = tiny_plan(variants)
    if args.only:
        keep = {int(i) for i in args.only.split(",")}
        sections = [s for i, s in enumerate(sections, 1) if i in keep]
    t_start = time.time()
    deadline = t_start + budget
    load_before = load_average()
    records: dict[str, dict] = {}
    for name, flags, tasks in sections:
        extra_env = {}
        if flags == "ROLLED":
            flags, extra_env = "", {"MOPE_JAX_ROLLED_THREEFRY": "1"}
        elif flags == "ONE_CORE":  # the worker and XLA's threads on core 0 (measure.main)
            flags, extra_env = "", {"MOPE_BENCH_CPUS": "0"}
        left = deadline - time.time()
        print(f"[{time.time() - t_start:6.1f} s] {name} ({left:.0f} s left)", flush=True)
        if left < 5:
            for t in tasks:
                records[t["id"]] = {
                    "id": t["id"],
                    "task": t["task"],
                    "result": None,
                    "error": "not run: time budget",
                }
            continue
        records.update(worker(tasks, flags, deadline, lambda m: print(m, flush=True), extra_env))
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    doc = {
        "renderer": "experiments/bench/report.py:render",
        "size": size_name,
        "sizes": size,
        "budget_s": budget,
        "command": "python -m experiments.bench.run "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "env": environment(),
        "torch_version": torch_version,
        "load_before": load_before,
        "load_after": load_average(),
        "wall_s": time.time() - t_start,
        "records": records,
    }
    from mope_jax.attention import registry
    from mope_jax.presets import apply_variant, get_preset

    doc["variant_causal"] = {
        v: registry.declared_causal(apply_variant(get_preset("reference"), v).model)
        for v in variants
    }
    doc["summary"] = summarize(records)
    publish(Path(args.out) / f"bench_{size_name}.json", doc, render)
    print(markdown(doc))
    return doc


if __name__ == "__main__":
    main()
