"""Measurements run inside one worker process (``python -m experiments.bench.measure TASK.json``).

Each task prints one JSON line ``{"task": ..., "result": ...}`` on stdout. The driver
(``experiments/bench/run.py``) starts one process per task group, so that XLA flags, the
host device count and ``ru_maxrss`` (peak resident memory) belong to that group alone.

Model FLOPs (what MFU counts): ``mope_jax.device.train_flops_per_token`` (its docstring has
the count; the campaigns' records use the same), re-exported here.

The tasks live beside it (measure_kernels.py, measure_train.py, measure_step.py; their timer
in measure_timing.py); this module maps task names to them (``TASKS``) and re-exports them.
"""

from __future__ import annotations

import json
import os
import sys
import time

from experiments.bench.measure_kernels import task_attention, task_mlp, task_peak, task_spectral
from experiments.bench.measure_step import (
    attention_flop_share,
    copy_elements,
    task_layout,
    task_profile,
)
from experiments.bench.measure_timing import best_time, maxrss_mb
from experiments.bench.measure_train import (
    random_tokens,
    task_sweep,
    task_torch,
    task_train,
    task_variant,
)
from mope_jax.device import train_flops_per_token

__all__ = [
    "TASKS",
    "attention_flop_share",
    "best_time",
    "copy_elements",
    "main",
    "maxrss_mb",
    "random_tokens",
    "task_attention",
    "task_layout",
    "task_mlp",
    "task_peak",
    "task_profile",
    "task_spectral",
    "task_sweep",
    "task_torch",
    "task_train",
    "task_variant",
    "train_flops_per_token",
]

TASKS = {
    "peak": task_peak,
    "train": task_train,
    "variant": task_variant,
    "mlp": task_mlp,
    "attention": task_attention,
    "profile": task_profile,
    "layout": task_layout,
    "spectral": task_spectral,
    "sweep": task_sweep,
    "torch": task_torch,
}


def main(argv: list[str]) -> None:
    tasks = json.loads(argv[0])
    if os.environ.get(
        "MOPE_BENCH_CPUS"
    ):  # pin this worker (and the threads XLA starts) to these cores
        os.sched_setaffinity(0, {int(c) for c in os.environ["MOPE_BENCH_CPUS"].split(",")})
    if os.environ.get("JAX_PLATFORMS", "cpu") == "cpu":
        os.environ["JAX_PLATFORMS"] = "cpu"
    for t in tasks:
        t0 = time.perf_counter()
        try:
            result = TASKS[t["task"]](**t.get("args", {}))
            err = None
        except Exception as e:  # reported, so one failing measurement does not lose the rest
            result, err = None, f"{type(e).__name__}: {e}"[:500]
        print(
            json.dumps(
                {
                    "id": t["id"],
                    "task": t["task"],
                    "result": result,
                    "error": err,
                    "wall_s": time.perf_counter() - t0,
                    "maxrss_mb": maxrss_mb(),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1:])
