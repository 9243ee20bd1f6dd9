"""Performance benchmarks: JAX training throughput and MFU next to a PyTorch reference,
variants, seed sweeps and the spectral filters' cost vs T, in one command.

Command:  nice -n 5 python -m experiments.bench.run --quick    (~4 min on a 2-core CPU)
          python -m experiments.bench.run                      (full sizes, ~15 min)
Writes:   experiments/results/bench/bench_<quick|full>.{json,md} and README.md
Targets (issue 8): reference model (6 x 256, T=256) at batch 16: JAX tokens/s >= 1.0x the
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
from experiments.bench.spec import (
    CAUSAL_FILTER,
    CONFIGS,
    DP2,
    FAST_OPT_INS,
    NANOGPT_CHAR,
    PROFILE,
    PROFILE_SECTION,
    REF,
    RESULTS,
    ROOT,
    SIZES,
    VARIANT_PRIORITY,
)


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


def plan(size: dict, variants: list[str]) -> list[tuple[str, str, list[dict]]]:
    """(section, xla_flags, tasks) in priority order."""
    s = size

    def ref(extra, **kw):
        return dict(
            task="train",
            args=dict(overrides=REF + extra, steps=s["ref_steps"], reps=s["ref_reps"], **kw),
        )

    return [
        (
            "reference, 1 device; causal spectral filter at T=256",
            "",
            [
                dict(id="peak", task="peak"),
                dict(id="jax/1dev", **ref([])),
                dict(
                    id=f"jax/1dev/{CAUSAL_FILTER}/fft",
                    **ref(["model.conv_impl=fft"], variant=CAUSAL_FILTER),
                ),
                dict(
                    id=f"jax/1dev/{CAUSAL_FILTER}/toeplitz",
                    **ref(["model.conv_impl=toeplitz"], variant=CAUSAL_FILTER),
                ),
            ],
        ),
        ("the sizes we train: JAX f32 and bf16 next to PyTorch", "", config_tasks(s)),
        ("the sizes we train: JAX f32 on 2 host devices", DP2, config_dp2_tasks(s)),
        ("the sizes we train: JAX f32 pinned to one core", "ONE_CORE", config_1core_tasks(s)),
        (
            "reference, 1 device, JAX's rolled threefry (as before issue 8)",
            "ROLLED",
            [
                dict(id="jax/1dev/rolled", **ref([])),
            ],
        ),
        (
            "reference, 2 host devices (data parallel)",
            DP2,
            [
                dict(id="jax/dp2", **ref([], devices=2)),
            ],
        ),
        (
            "pytorch reference",
            "",
            [
                dict(
                    id="torch",
                    task="torch",
                    args=dict(
                        overrides=REF,
                        steps=s["torch_steps"],
                        reps=s["torch_reps"],
                        threads=os.cpu_count() or 1,
                    ),
                ),
                dict(
                    id="torch/1t",
                    task="torch",
                    args=dict(
                        overrides=REF, steps=s["torch_steps"], reps=s["torch_reps"], threads=1
                    ),
                ),
            ],
        ),
        (
            "seed sweeps, 1 device",
            "",
            [
                dict(
                    id="sweep/1dev",
                    task="sweep",
                    args=dict(
                        seed_counts=[1, 2, 4],
                        strategies=s["sweep_strategies"],
                        preset="cpu",
                        overrides=s["sweep_overrides"],
                        steps=s["sweep_steps"],
                        reps=s["sweep_reps"],
                    ),
                ),
            ],
        ),
        (
            "seed sweeps, 2 host devices",
            DP2,
            [
                dict(
                    id="sweep/dp2",
                    task="sweep",
                    args=dict(
                        seed_counts=[2, 4],
                        strategies=["shard"],
                        preset="cpu",
                        overrides=s["sweep_overrides"],
                        steps=s["sweep_steps"],
                        reps=s["sweep_reps"],
                    ),
                ),
            ],
        ),
        (
            "where the time goes: MLP, attention, spectral filters vs T",
            "",
            [
                dict(
                    id="layout",
                    task="layout",
                    args=dict(overrides=NANOGPT_CHAR, steps=s["cfg_steps"], reps=s["cfg_reps"]),
                ),
                dict(
                    id="mlp",
                    task="mlp",
                    args=dict(n_tokens=s["mlp_tokens"], n_embd=256, reps=s["mlp_reps"]),
                ),
                dict(
                    id="attention",
                    task="attention",
                    args=dict(batch=4, heads=8, t=256, head_dim=32, reps=s["mlp_reps"]),
                ),
                dict(
                    id="spectral",
                    task="spectral",
                    args=dict(
                        lengths=s["spec_lengths"],
                        batch=s["spec_batch"],
                        heads=8,
                        head_dim=32,
                        reps=s["spec_reps"],
                        toeplitz_max_t=s["spec_toeplitz_max"],
                    ),
                ),
            ],
        ),
        PROFILE_SECTION,
        (
            "variants",
            "",
            [
                dict(
                    id=f"variant/{name}",
                    task="variant",
                    args=dict(
                        name=name,
                        preset="reference",
                        overrides=s["var_overrides"],
                        steps=s["var_steps"],
                        reps=s["var_reps"],
                    ),
                )
                for name in variants
            ],
        ),
    ]


def config_tasks(s: dict) -> list[dict]:
    """Per CONFIGS entry: JAX 1 device (f32 unless reused, bf16) and PyTorch at 2 and 1 threads.

    ``s["cfg_rounds"]`` rounds of the whole list, one after the other (ids of round r > 1 end
    in ``#r``): JAX and PyTorch then alternate, and each row keeps its best round, so a burst
    of load from a neighbour on this shared machine does not decide the ratio."""
    steps = lambda name: s["ref_steps"] if name == "reference-b16" else s["cfg_steps"]  # noqa: E731
    reps = lambda name: s["ref_reps"] if name == "reference-b16" else s["cfg_reps"]  # noqa: E731
    tasks = []
    for r in range(1, s.get("cfg_rounds", 1) + 1):
        tag = "" if r == 1 else f"#{r}"
        for name, (_, ov) in CONFIGS.items():
            jax_args = dict(steps=steps(name), reps=reps(name))
            # reference-b16's first round is the reference section's jax/1dev and torch rows
            first_reused = name == "reference-b16" and r == 1
            if not first_reused:
                tasks.append(
                    dict(
                        id=f"cfg/{name}/jax{tag}", task="train", args=dict(overrides=ov, **jax_args)
                    )
                )
            tasks.append(
                dict(
                    id=f"cfg/{name}/jax-bhtd{tag}",
                    task="train",
                    args=dict(overrides=ov + ["model.attn_layout=bhtd"], **jax_args),
                )
            )
            tasks.append(
                dict(
                    id=f"cfg/{name}/jax-blocks{tag}",
                    task="train",
                    args=dict(overrides=ov + FAST_OPT_INS, **jax_args),
                )
            )
            tasks.append(
                dict(
                    id=f"cfg/{name}/jax-bf16{tag}",
                    task="train",
                    args=dict(overrides=ov + ["model.compute_dtype=bfloat16"], **jax_args),
                )
            )
            if not first_reused:
                pytorch = (("torch", os.cpu_count() or 1), ("torch/1t", 1))
                if name == "reference-b16":  # later rounds: the 2-thread one (the faster)
                    pytorch = pytorch[:1]
                for tid, threads in pytorch:
                    tasks.append(
                        dict(
                            id=f"cfg/{name}/{tid}{tag}",
                            task="torch",
                            args=dict(
                                overrides=ov, steps=steps(name), reps=reps(name), threads=threads
                            ),
                        )
                    )
    return tasks


def config_dp2_tasks(s: dict) -> list[dict]:
    """Per CONFIGS entry but the reference (its dp2 row is the reference section's): JAX f32 with
    the batch sharded over 2 host devices, with the defaults and with FAST_OPT_INS,
    ``s["cfg_rounds"]`` rounds."""
    return [
        dict(
            id=f"cfg/{name}/{key}" + ("" if r == 1 else f"#{r}"),
            task="train",
            args=dict(overrides=ov + extra, steps=s["cfg_steps"], reps=s["cfg_reps"], devices=2),
        )
        for r in range(1, s.get("cfg_rounds", 1) + 1)
        for name, (_, ov) in CONFIGS.items()
        if name != "reference-b16"
        for key, extra in (("jax-dp2", []), ("jax-dp2-blocks", FAST_OPT_INS))
    ]


def config_1core_tasks(s: dict) -> list[dict]:
    """Per CONFIGS entry but the reference: JAX f32 defaults in a worker pinned to one core, to
    set beside PyTorch at 1 thread (per-core speed, apart from how each uses the second core),
    ``s["cfg_rounds"]`` rounds."""
    return [
        dict(
            id=f"cfg/{name}/jax-1core" + ("" if r == 1 else f"#{r}"),
            task="train",
            args=dict(overrides=ov, steps=s["cfg_steps"], reps=s["cfg_reps"]),
        )
        for r in range(1, s.get("cfg_rounds", 1) + 1)
        for name, (_, ov) in CONFIGS.items()
        if name != "reference-b16"
    ]


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
        sections = _tiny_plan(variants)
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


def _tiny_plan(variants: list[str]) -> list[tuple[str, str, list[dict]]]:
    """Every section at toy sizes (seconds each), for tests/test_bench.py."""
    small = [
        "model.n_layer=1",
        "model.n_embd=32",
        "model.n_head=2",
        "model.block_size=32",
        "train.batch_size=4",
    ]

    def tr(extra, **kw):
        return dict(task="train", args=dict(overrides=small + extra, steps=1, reps=1, **kw))

    sw = dict(preset="smoke", overrides=[], steps=1, reps=1)
    return [
        (
            "reference, 1 device",
            "",
            [dict(id="peak", task="peak", args=dict(n=256, reps=1)), dict(id="jax/1dev", **tr([]))],
        ),
        (
            "reference, 2 host devices",
            DP2,
            [
                dict(id="jax/dp2", **tr([], devices=2)),
                dict(id=f"jax/1dev/{CAUSAL_FILTER}/fft", **tr([], variant=CAUSAL_FILTER)),
                dict(
                    id=f"jax/1dev/{CAUSAL_FILTER}/toeplitz",
                    **tr(["model.conv_impl=toeplitz"], variant=CAUSAL_FILTER),
                ),
            ],
        ),
        (
            "pytorch reference",
            "",
            [
                dict(
                    id="torch", task="torch", args=dict(overrides=small, steps=1, reps=1, threads=1)
                )
            ],
        ),
        (
            "the sizes we train",
            "",
            [
                dict(
                    id="cfg/nanogpt-char/jax",
                    task="train",
                    args=dict(overrides=small + ["model.use_bias=false"], steps=1, reps=1),
                ),
                dict(
                    id="cfg/nanogpt-char/jax-bf16",
                    task="train",
                    args=dict(
                        overrides=small + ["model.use_bias=false", "model.compute_dtype=bfloat16"],
                        steps=1,
                        reps=1,
                    ),
                ),
                dict(
                    id="cfg/nanogpt-char/torch/1t",
                    task="torch",
                    args=dict(
                        overrides=small + ["model.use_bias=false"], steps=1, reps=1, threads=1
                    ),
                ),
            ],
        ),
        (
            "seed sweeps, 1 device",
            "",
            [
                dict(
                    id="sweep/1dev",
                    task="sweep",
                    args=dict(seed_counts=[1, 2], strategies=["sequential", "map"], **sw),
                )
            ],
        ),
        (
            "seed sweeps, 2 host devices",
            DP2,
            [
                dict(
                    id="sweep/dp2",
                    task="sweep",
                    args=dict(seed_counts=[2], strategies=["shard"], **sw),
                )
            ],
        ),
        (
            "where the time goes",
            "",
            [
                dict(id="layout", task="layout", args=dict(overrides=small, steps=1, reps=1)),
                dict(id="mlp", task="mlp", args=dict(n_tokens=64, n_embd=16, reps=1)),
                dict(
                    id="attention",
                    task="attention",
                    args=dict(batch=1, heads=2, t=16, head_dim=4, reps=1),
                ),
                dict(
                    id="spectral",
                    task="spectral",
                    args=dict(lengths=[16, 32], batch=1, heads=2, head_dim=4, reps=1),
                ),
            ],
        ),
        ("profile", PROFILE, [dict(id="profile", task="profile", args=dict(overrides=small))]),
        (
            "variants",
            "",
            [
                dict(
                    id=f"variant/{v}",
                    task="variant",
                    args=dict(name=v, preset="smoke", overrides=[], steps=1, reps=1),
                )
                for v in ("learned", "rope", "fourier-qk")
            ],
        ),
    ]


if __name__ == "__main__":
    main()
