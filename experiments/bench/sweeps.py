"""Seeds/hour of multi-seed sweeps: R = 1, 2, 4, 8 seeds at the ``cpu``
preset with every ``mope_jax.sweep`` strategy, against training the seeds one after another.

Command:  python -m experiments.bench.sweeps            (~6 min on a 2-core CPU)
Writes:   experiments/results/bench/sweeps.{json,md}   (the .md is rendered from the .json;
          ``mope-jax report --regenerate experiments/results/bench`` re-renders it)
Target:   the best strategy at R = 4 reaches >= 1.5x the seeds/hour of sequential runs.

Protocol (the workers of ``experiments/bench/measure.py``, one process per group, one after
another): every timed call is ``steps`` optimiser steps of all R seeds in one program, best of
``reps`` calls after a first (compiling) call; seeds/hour = R * 3600 / (step seconds *
max_steps), so compile and evaluation time are not in it (the first call is recorded). The
baseline ``run/R=1`` is one seed as ``train.run`` trains it. Two references bound what any
sweep can gain on this machine: the same single seed in a worker pinned to ONE core, and two
such workers pinned to different cores running at the same time (two independent jobs).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
import threading
import time
from pathlib import Path

from experiments.bench.run import load_average, worker
from experiments.bench.spec import DP2, RESULTS, ROOT

TARGET = 1.5


def plan(
    seed_counts: list[int], steps: int, reps: int, preset: str, overrides: list[str]
) -> list[tuple]:
    """(section, xla_flags, cpus, tasks); cpus None = unpinned."""
    args = dict(preset=preset, overrides=overrides, steps=steps, reps=reps)
    return [
        (
            "1 device: sequential, map, vmap",
            "",
            None,
            [
                dict(
                    id="1dev",
                    task="sweep",
                    args=dict(
                        seed_counts=seed_counts, strategies=["sequential", "map", "vmap"], **args
                    ),
                )
            ],
        ),
        (
            "2 host devices: shard",
            DP2,
            None,
            [
                dict(
                    id="2dev",
                    task="sweep",
                    args=dict(
                        seed_counts=[r for r in seed_counts if r % 2 == 0],
                        strategies=["shard"],
                        **args,
                    ),
                )
            ],
        ),
        (
            "one seed, worker pinned to one core",
            "",
            "0",
            [dict(id="1core", task="sweep", args=dict(seed_counts=[], strategies=[], **args))],
        ),
    ]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1,2,4,8", help="seed counts R (default 1,2,4,8)")
    ap.add_argument(
        "--steps", type=int, default=10, help="optimiser steps per timed call (default 10)"
    )
    ap.add_argument(
        "--reps", type=int, default=2, help="timed calls per measurement, best taken (default 2)"
    )
    ap.add_argument("--preset", default="cpu")
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument(
        "overrides", nargs="*", help="key=value config overrides (tests use smaller models)"
    )
    args = ap.parse_args(argv)
    seed_counts = [int(r) for r in args.seeds.split(",")]
    sys.path.insert(0, str(ROOT))
    from mope_jax.analysis.report import publish
    from mope_jax.train import environment

    t_start, deadline = time.time(), time.time() + 3600
    load_before = load_average()
    log = lambda m: print(m, flush=True)  # noqa: E731
    records: dict = {}
    for name, flags, cpus, tasks in plan(
        seed_counts, args.steps, args.reps, args.preset, args.overrides
    ):
        log(f"[{time.time() - t_start:6.1f} s] {name}")
        records.update(
            worker(tasks, flags, deadline, log, {"MOPE_BENCH_CPUS": cpus} if cpus else None)
        )
    # two independent one-core jobs at the same time (what a user gets from two processes)
    log(f"[{time.time() - t_start:6.1f} s] two workers, one core each, at the same time")
    pair: dict = {}
    task = plan(seed_counts, args.steps, args.reps, args.preset, args.overrides)[2][3][0]
    threads = [
        threading.Thread(
            target=lambda c=c: pair.update(
                {
                    f"pair/core{c}": worker(
                        [dict(task, id=f"pair/core{c}")],
                        "",
                        deadline,
                        log,
                        {"MOPE_BENCH_CPUS": str(c)},
                    )[f"pair/core{c}"]
                }
            )
        )
        for c in (0, 1)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records.update(pair)
    doc = {
        "renderer": "experiments/bench/sweeps.py:render",
        "command": "python -m experiments.bench.sweeps "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "env": environment(),
        "load_before": load_before,
        "load_after": load_average(),
        "wall_s": time.time() - t_start,
        "preset": args.preset,
        "overrides": args.overrides,
        "steps": args.steps,
        "reps": args.reps,
        "seed_counts": seed_counts,
        "records": records,
    }
    for text in publish(Path(args.out) / "sweeps.json", doc, render).values():
        log(text)
    return doc


def rows(doc: dict) -> tuple[dict, dict]:
    """{label: {seeds_per_hour, vs_sequential, first_call_s}} and the references, from the
    records."""
    res = lambda k: (doc["records"].get(k) or {}).get("result") or {}  # noqa: E731
    base = res("1dev").get("results", {}).get("run/R=1")
    if base is None:
        return {}, {}
    seq = base["seeds_per_hour"]
    out = {}
    for group in ("1dev", "2dev"):
        for k, v in res(group).get("results", {}).items():
            label = k if group == "1dev" else f"{k} (2 host devices)"
            if group == "2dev" and k.startswith("run/"):
                label = "run/R=1 (under the 2-device flag)"
            out[label] = {
                "seeds_per_hour": v["seeds_per_hour"],
                "vs_sequential": v["seeds_per_hour"] / seq,
                "first_call_s": v["first_call_s"],
                "seeds": v["seeds"],
            }
    refs = {}
    one = res("1core").get("results", {}).get("run/R=1")
    if one:
        refs["one seed on one core"] = one["seeds_per_hour"]
        refs["2 x one seed on one core (ideal split of 2 cores)"] = 2 * one["seeds_per_hour"]
    pair = [res(f"pair/core{c}").get("results", {}).get("run/R=1") for c in (0, 1)]
    if all(pair):
        refs["two one-core workers at the same time (measured)"] = sum(
            p["seeds_per_hour"] for p in pair
        )
    return out, {k: {"seeds_per_hour": v, "vs_sequential": v / seq} for k, v in refs.items()}


def render(doc: dict, json_path) -> dict[str, str]:
    from mope_jax.analysis.report import rendered_note

    env = doc["env"]
    table, refs = rows(doc)
    L = [
        "# Seed sweeps: seeds/hour (issue 6 benchmark)",
        "",
        f"Made by `{doc['command']}` on {doc['date']} ({env['processor']}, "
        f"{env['cpu_count']} CPUs; jax {env['jax']}; commit {env['git_commit']}; "
        f"load average before {doc['load_before']}, after {doc['load_after']}). "
        f"{rendered_note(doc, json_path)}",
        "",
        f"`{doc['preset']}` preset"
        f"{', overrides ' + str(doc['overrides']) if doc['overrides'] else ''}; "
        f"seeds/hour extrapolated from the best of {doc['reps']} calls of {doc['steps']} steps "
        "to the preset's "
        "max_steps (compile and evaluation excluded; the first call, which compiles, is listed). "
        "'vs sequential' divides by `run/R=1`: one seed after another as `train.run` trains it.",
        "",
        "| strategy / seeds | seeds/hour | vs sequential | first call (s) |",
        "|---|---:|---:|---:|",
    ]
    for k, v in table.items():
        L.append(
            f"| {k} | {v['seeds_per_hour']:.1f} | {v['vs_sequential']:.2f} | "
            f"{v['first_call_s']:.1f} |"
        )
    if refs:
        L += [
            "",
            "What two cores can give (single seed, no sweep):",
            "",
            "| reference | seeds/hour | vs sequential |",
            "|---|---:|---:|",
        ]
        L += [
            f"| {k} | {v['seeds_per_hour']:.1f} | {v['vs_sequential']:.2f} |"
            for k, v in refs.items()
        ]
    four = {k: v for k, v in table.items() if v["seeds"] == 4 and not k.startswith("run")}
    errors = {k: r["error"] for k, r in doc["records"].items() if r.get("error")}
    if four:
        best = max(four, key=lambda k: four[k]["vs_sequential"])
        val = four[best]["vs_sequential"]
        L += [
            "",
            f"**Target (R = 4 >= {TARGET}x sequential): "
            f"{'met' if val >= TARGET else 'missed'}**: best is "
            f"`{best}` at {val:.2f}x.",
        ]
    if errors:
        L += ["", "Errors: " + "; ".join(f"{k}: {e}" for k, e in errors.items())]
    return {"sweeps.md": "\n".join(L) + "\n"}


if __name__ == "__main__":
    main()
