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

from experiments._scales import FAST_ATTENTION
from mope_jax.provenance import cpu_text

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "experiments" / "results" / "bench"
DP2 = "--xla_force_host_platform_device_count=2"
PROFILE = "--xla_cpu_enable_xprof_traceme=true"

# Sizes. quick fits in ~4 minutes on 2 cores; full is the same protocol, longer.
SIZES = {
    "quick": dict(
        ref_steps=1,
        ref_reps=2,
        torch_steps=1,
        torch_reps=2,
        cfg_steps=8,
        cfg_reps=3,
        cfg_rounds=2,
        var_overrides=[
            "model.n_layer=1",
            "model.n_embd=32",
            "model.n_head=2",
            "model.block_size=32",
            "train.batch_size=8",
        ],
        var_steps=2,
        var_reps=2,
        sweep_overrides=["model.n_layer=2"],
        sweep_steps=3,
        sweep_reps=2,
        sweep_strategies=["map", "vmap"],
        spec_lengths=[128, 256, 512, 1024, 2048, 4096],
        spec_batch=1,
        spec_reps=2,
        spec_toeplitz_max=2048,
        mlp_tokens=4096,
        mlp_reps=3,
    ),
    "full": dict(
        ref_steps=5,
        ref_reps=3,
        torch_steps=5,
        torch_reps=3,
        cfg_steps=10,
        cfg_reps=3,
        cfg_rounds=3,
        var_overrides=["train.batch_size=8"],
        var_steps=5,
        var_reps=3,
        sweep_overrides=[],
        sweep_steps=10,
        sweep_reps=3,
        sweep_strategies=["sequential", "map", "vmap"],
        spec_lengths=[128, 256, 512, 1024, 2048, 4096],
        spec_batch=4,
        spec_reps=5,
        spec_toeplitz_max=4096,
        mlp_tokens=4096,
        mlp_reps=5,
    ),
}
REF = ["train.batch_size=16"]  # the reference model at batch 16 (issue 8)
# The sizes we train (issue 14), each timed in JAX (float32, and the opt-in bf16 matmuls) next
# to the PyTorch reference of the same architecture and optimiser. "reference-b16" reuses the
# reference section's rows ("jax/1dev", "torch", "torch/1t").
NANOGPT_CHAR = [
    "model.block_size=128",
    "model.n_layer=4",
    "model.n_head=4",
    "model.n_embd=128",
    "model.dropout=0",
    "model.use_bias=false",
    "train.batch_size=32",
    "train.max_steps=1000",
    "train.lr=1e-3",
    "train.min_lr=1e-4",
    "train.warmup_steps=100",
    "train.decay_group=2d",
    "train.beta2=0.99",
]
MID = [
    "model.block_size=256",
    "model.n_layer=4",
    "model.n_head=4",
    "model.n_embd=128",
    "model.dropout=0.1",
    "train.batch_size=16",
]
CONFIGS = {
    "reference-b16": ("reference size: 6 x 256, T=256, 8 heads, batch 16, dropout 0.1", REF),
    "nanogpt-char": (
        "nanoGPT's character config: 4 x 128, T=128, 4 heads, batch 32, dropout 0, no biases",
        NANOGPT_CHAR,
    ),
    "mid": ("mid scale: 4 x 128, T=256, 4 heads, batch 16, dropout 0.1", MID),
}
CAUSAL_FILTER = "causal-gauss"
# the fastest f32 opt-ins together (issue 14), as the mid campaigns use them
# (experiments/_scales.py FAST_ATTENTION: bhtd layout, 4 causal query blocks)
FAST_OPT_INS = [f"model.{k}={v}" for k, v in FAST_ATTENTION.items()]
PROFILE_SECTION = (
    "where the time goes: profiles of one reference step (batch 2) and one nanoGPT-char step",
    PROFILE,
    [
        {"id": "profile", "task": "profile", "args": {"overrides": ["train.batch_size=2"]}},
        {"id": "profile/nanogpt-char", "task": "profile", "args": {"overrides": NANOGPT_CHAR}},
    ],
)
PROFILES = {"profile": "the reference model", "profile/nanogpt-char": "nanoGPT's character config"}


def _attention_note(prof: dict) -> str:
    """The attention matmuls' share of op time next to their share of the model FLOPs."""
    t = sum(v for k, v in prof["share"].items() if k.startswith("attention matmuls"))
    return (
        f"The attention's batched matmuls took {100 * t:.0f}% of the op time for "
        f"{100 * prof['attention_flop_share']:.0f}% of the model FLOPs."
    )


# reference-model rows: id -> label; "same numerics" rows compute what the defaults compute
REF_ROWS = {
    "jax/1dev/rolled": "JAX, 1 device, JAX's own CPU threefry lowering (as before issue 8)",
    "jax/1dev": "JAX, 1 device, defaults (unrolled threefry, fused GELU)",
    "jax/dp2": "JAX, 2 host devices, batch sharded (same numerics)",
    "torch": "PyTorch eager, F.scaled_dot_product_attention, 2 threads",
    "torch/1t": "PyTorch eager, F.scaled_dot_product_attention, 1 thread",
}
# in quick mode the variants run in this order until the time budget ends: one of each family first
VARIANT_PRIORITY = (
    "learned",
    "rope",
    "alibi",
    "a-mope",
    "a-morlet-rope",
    "a-ega1-causal",
    "a-ega1",
    "causal-gauss",
    "fourier-qk",
    "fnet",
    "xcorr-qk",
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


def best_round(recs: dict[str, dict], *rids: str) -> dict | None:
    """The result of tasks ``rids`` or of their later rounds (``rid#2``, ...), the one with the
    most tokens/s; None if none has a result."""
    found = [_r(v) for k, v in recs.items() for rid in rids if k == rid or k.startswith(rid + "#")]
    found = [f for f in found if f is not None]
    return max(found, key=lambda f: f.get("tokens_per_s", 0.0)) if found else None


def config_rows(recs: dict[str, dict], name: str) -> dict[str, dict | None]:
    """The records of one CONFIGS entry: jax, jax-bf16, torch, torch/1t (reference-b16 reuses
    the reference section's)."""
    keys = (
        "jax",
        "jax-bf16",
        "jax-bhtd",
        "jax-blocks",
        "jax-dp2",
        "jax-dp2-blocks",
        "jax-1core",
        "torch",
        "torch/1t",
    )
    ids = {k: [f"cfg/{name}/{k}"] for k in keys}
    if name == "reference-b16":  # its round 1 of these is the reference section's
        for k, ref in (("jax", "jax/1dev"), ("jax-dp2", "jax/dp2"), ("torch", "torch")):
            ids[k].append(ref)
        ids["torch/1t"] = ["torch/1t"]
    return {k: best_round(recs, *v) for k, v in ids.items()}


# --------------------------------------------------------------------------- report


def _r(rec):
    return None if rec is None or rec.get("result") is None else rec["result"]


def summarize(recs: dict[str, dict]) -> dict:
    """Headline numbers and target verdicts, computed from the records."""
    peak = _r(recs.get("peak"))
    peak_gflops = peak["gflops"] if peak else None
    s: dict = {"peak_gflops": peak_gflops, "reference": {}, "targets": {}}
    # the faster PyTorch thread setting is the reference (a PyTorch user would pick it)
    torch_tps = (
        max([(_r(recs.get(k)) or {}).get("tokens_per_s") or 0.0 for k in ("torch", "torch/1t")])
        or None
    )
    for key in REF_ROWS:
        r = _r(recs.get(key))
        if r is None:
            continue
        fpt = _r(recs.get("jax/1dev") or {}) or _r(recs.get("jax/dp2") or {}) or {}
        flops = r.get("flops_per_token", fpt.get("flops_per_token"))
        row = {"tokens_per_s": r["tokens_per_s"], "step_s": r["step_s"]}
        if flops and peak_gflops:
            row["mfu"] = r["tokens_per_s"] * flops / (peak_gflops * 1e9)
        if torch_tps:
            row["vs_torch"] = r["tokens_per_s"] / torch_tps
        for k in ("compile_s", "maxrss_mb", "xla_temp_mb"):
            if k in r:
                row[k] = r[k]
        s["reference"][key] = row
    jax_rows = {k: v for k, v in s["reference"].items() if k.startswith("jax/")}
    if jax_rows:
        best = max(jax_rows, key=lambda k: jax_rows[k]["tokens_per_s"])
        if torch_tps:
            s["targets"]["jax_vs_torch>=1.0"] = {
                "best": best,
                "value": jax_rows[best]["vs_torch"],
                "met": jax_rows[best]["vs_torch"] >= 1.0,
            }
        if "mfu" in jax_rows[best]:
            s["targets"]["mfu>=0.5"] = {
                "best": best,
                "value": jax_rows[best]["mfu"],
                "met": jax_rows[best]["mfu"] >= 0.5,
            }
    s["configs"] = {}
    for name in CONFIGS:
        rows = config_rows(recs, name)
        torch_best = (
            max([(rows[k] or {}).get("tokens_per_s") or 0.0 for k in ("torch", "torch/1t")]) or None
        )
        row = {k: (v or {}).get("tokens_per_s") for k, v in rows.items()}
        row["torch_best"] = torch_best
        row["jax_vs_torch"] = row["jax"] / torch_best if row["jax"] and torch_best else None
        row["bhtd_vs_torch"] = (
            row["jax-bhtd"] / torch_best if row.get("jax-bhtd") and torch_best else None
        )
        row["blocks_vs_torch"] = (
            row["jax-blocks"] / torch_best if row.get("jax-blocks") and torch_best else None
        )
        row["dp2_vs_torch"] = (
            row["jax-dp2"] / torch_best if row.get("jax-dp2") and torch_best else None
        )
        row["dp2_blocks_vs_torch"] = (
            row["jax-dp2-blocks"] / torch_best if row.get("jax-dp2-blocks") and torch_best else None
        )
        row["1core_vs_torch_1t"] = (
            row["jax-1core"] / row["torch/1t"] if row.get("jax-1core") and row["torch/1t"] else None
        )
        row["bf16_vs_f32"] = (
            row["jax-bf16"] / row["jax"] if row["jax-bf16"] and row["jax"] else None
        )
        s["configs"][name] = row
        if row["jax_vs_torch"] is not None:
            s["targets"][f"f32_vs_torch>=1.0 @{name}"] = {
                "value": row["jax_vs_torch"],
                "met": row["jax_vs_torch"] >= 1.0,
            }
    base = _r(recs.get("jax/1dev"))
    ratios = {}
    for impl in ("fft", "toeplitz"):
        r = _r(recs.get(f"jax/1dev/{CAUSAL_FILTER}/{impl}"))
        if base and r:
            ratios[impl] = r["step_s"] / base["step_s"]
    if ratios:  # the target asks for either implementation
        best = min(ratios, key=ratios.get)
        s["targets"]["causal_filter<=1.3x"] = {
            "best": f"{CAUSAL_FILTER}, conv_impl={best}",
            "value": ratios[best],
            "met": ratios[best] <= 1.3,
            "all": ratios,
        }
    sweeps = {}
    for key in ("sweep/1dev", "sweep/dp2"):
        r = _r(recs.get(key))
        if r:
            sweeps.update(r["results"])
    if "run/R=1" in sweeps:
        seq = sweeps["run/R=1"]["seeds_per_hour"]
        s["sweep"] = {
            k: {"seeds_per_hour": v["seeds_per_hour"], "vs_sequential": v["seeds_per_hour"] / seq}
            for k, v in sweeps.items()
        }
        four = {
            k: v
            for k, v in s["sweep"].items()
            if k.endswith("R=4") and not k.startswith(("sequential", "run"))
        }
        if four:
            best = max(four, key=lambda k: four[k]["vs_sequential"])
            s["targets"]["sweep4>=1.5x"] = {
                "best": best,
                "value": four[best]["vs_sequential"],
                "met": four[best]["vs_sequential"] >= 1.5,
            }
    return s


def _fmt(x, nd=1):
    return "n/a" if x is None else f"{x:,.{nd}f}"


def markdown(doc: dict, note: str = "") -> str:
    """bench_<size>.md from the doc (``note``: the rendered-from line ``render`` adds)."""
    recs, summ = doc["records"], doc["summary"]
    L = [
        f"# Benchmarks ({doc['size']})",
        "",
        f"Command: `{doc['command']}`  ",
        f"Date: {doc['date']}  ",
        f"Machine: {cpu_text(doc['env'])}, {doc['env']['cpu_count']} CPUs, "
        f"{doc['env']['platform']}  ",
        f"Versions: jax {doc['env']['jax']}, flax {doc['env']['flax']}, torch "
        f"{doc.get('torch_version', 'n/a')}, python {doc['env']['python']}, commit "
        f"{doc['env']['git_commit']}  ",
        f"Load average (1/5/15 min) before: {doc['load_before']}, after: {doc['load_after']}  ",
        f"Wall time: {doc['wall_s']:.0f} s. f32 matmul peak (2048^3 jnp.dot, this run): "
        f"{_fmt(summ['peak_gflops'])} GFLOP/s",
        "",
    ] + ([note, ""] if note else [])
    L += [
        "## Reference model (6 x 256, T=256, 8 heads), batch 16",
        "",
        "| implementation | tokens/s | step (s) | MFU | vs PyTorch | compile (s) "
        "| peak RSS (MiB) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for k, row in summ["reference"].items():
        L.append(
            f"| {REF_ROWS[k]} | {_fmt(row['tokens_per_s'], 0)} | {_fmt(row['step_s'], 3)} | "
            f"{_fmt(100 * row['mfu'], 1) + '%' if 'mfu' in row else 'n/a'} | "
            f"{_fmt(row.get('vs_torch'), 2)} | {_fmt(row.get('compile_s'))} | "
            f"{_fmt(row.get('maxrss_mb'), 0)} |"
        )
    if summ.get("configs"):
        L += [
            "",
            "## The sizes we train: tokens/s, JAX (1 device) and PyTorch eager, side by side",
            "",
            "| config | JAX f32 | JAX f32, attn_layout=bhtd | JAX f32, bhtd + 4 query blocks | "
            "JAX bf16 matmuls | JAX f32, 2 host devices | PyTorch 2 threads | PyTorch 1 thread | "
            "JAX f32 / best PyTorch | bhtd / best PyTorch | bhtd + blocks / best PyTorch | "
            "2 host devices / best PyTorch | 2 host devices, bhtd + blocks / best PyTorch | "
            "JAX f32 on 1 core | JAX 1 core / PyTorch 1 thread | bf16 / f32 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, row in summ["configs"].items():
            L.append(
                f"| {CONFIGS[name][0]} | {_fmt(row['jax'], 0)} | {_fmt(row.get('jax-bhtd'), 0)} | "
                f"{_fmt(row.get('jax-blocks'), 0)} | "
                f"{_fmt(row['jax-bf16'], 0)} | {_fmt(row.get('jax-dp2'), 0)} | "
                f"{_fmt(row['torch'], 0)} | {_fmt(row['torch/1t'], 0)} | "
                f"{_fmt(row['jax_vs_torch'], 2)} | {_fmt(row.get('bhtd_vs_torch'), 2)} | "
                f"{_fmt(row.get('blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('dp2_vs_torch'), 2)} | "
                f"{_fmt(row.get('dp2_blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('jax-1core'), 0)} | {_fmt(row.get('1core_vs_torch_1t'), 2)} | "
                f"{_fmt(row['bf16_vs_f32'], 2)} |"
            )
    L += ["", "## Targets", "", "| target | value | met |", "|---|---:|---|"]
    for k, v in summ["targets"].items():
        L.append(
            f"| {k} {('(' + v['best'] + ')') if 'best' in v else ''} | {_fmt(v['value'], 2)} | "
            f"{'yes' if v['met'] else '**no**'} |"
        )
    base = _r(recs.get("jax/1dev"))
    L += [
        "",
        f"## Causal spectral filter ({CAUSAL_FILTER}) at T=256, reference model, batch 16, 1 "
        "device (vs JAX, 1 device, defaults)",
        "",
        "| conv_impl | step (s) | vs baseline | compile (s) |",
        "|---|---:|---:|---:|",
    ]
    for impl in ("fft", "toeplitz"):
        r = _r(recs.get(f"jax/1dev/{CAUSAL_FILTER}/{impl}"))
        if r and base:
            L.append(
                f"| {impl} | {_fmt(r['step_s'], 3)} | {_fmt(r['step_s'] / base['step_s'], 2)} | "
                f"{_fmt(r.get('compile_s'))} |"
            )
    if "sweep" in summ:
        sw = _r(recs.get("sweep/1dev")) or {}
        L += [
            "",
            f"## Seed sweeps (`cpu` preset, overrides {sw.get('overrides')}; seeds/hour "
            f"extrapolated from the step time to {sw.get('max_steps')} steps)",
            "",
            "| strategy / seeds | seeds/hour | vs sequential (run/R=1: one seed after another as "
            "train.run trains it) |",
            "|---|---:|---:|",
        ]
        for k, v in summ["sweep"].items():
            L.append(f"| {k} | {_fmt(v['seeds_per_hour'], 1)} | {_fmt(v['vs_sequential'], 2)} |")
    lay = _r(recs.get("layout"))
    if lay:
        L += [
            "",
            "## Dense layers on 2-D inputs vs flax nn.Dense on (B,T,E), nanoGPT's character config "
            "(timed alternately in one process)",
            "",
            "| Dense | copy/transpose elements per step | tokens/s |",
            "|---|---:|---:|",
        ]
        for k, v in lay["results"].items():
            L.append(f"| {k} | {v['copy_elements_per_step']:,} | {_fmt(v['tokens_per_s'], 0)} |")
        L.append(
            f"\nSpeed-up {_fmt(lay['speedup'], 2)}x; first losses bitwise equal: "
            f"{'yes' if lay['bitwise_equal_losses'] else '**no**'}."
        )
    mlp = _r(recs.get("mlp"))
    if mlp:
        L += [
            "",
            f"## One MLP (E={mlp['n_embd']} -> 4E -> E) forward + backward, {mlp['n_tokens']} "
            "tokens",
            "",
            "| activation | ms | GFLOP/s (matmuls) |",
            "|---|---:|---:|",
        ]
        for k, v in mlp["results"].items():
            L.append(f"| {k} | {_fmt(v['ms'], 1)} | {_fmt(v['gflops'], 1)} |")
    att = _r(recs.get("attention"))
    if att:
        L += [
            "",
            f"## One causal attention forward + backward (B={att['batch']}, H={att['heads']}, "
            f"T={att['t']}, D={att['head_dim']})",
            "",
            "| formulation | ms |",
            "|---|---:|",
        ]
        for k, v in att["results"].items():
            L.append(f"| {k} | {_fmt(v['ms'], 2)} |")
    for pid, what in PROFILES.items():
        prof = _r(recs.get(pid))
        if not prof:
            continue
        L += [
            "",
            f"## Profile of one training step: {what} ({prof['overrides']}, jax.profiler, "
            "1 device)",
            "",
            "| group | share of op time |",
            "|---|---:|",
        ]
        for k, v in prof["share"].items():
            L.append(f"| {k} | {100 * v:.1f}% |")
        if "attention_flop_share" in prof:
            L += ["", _attention_note(prof)]
    spec = _r(recs.get("spectral"))
    if spec:
        L += [
            "",
            f"## Spectral filters vs T: forward + backward seconds of one (B={spec['batch']}, T, "
            f"H={spec['heads']}, D={spec['head_dim']}) tensor (kernel taps min(128, T))",
            "",
            "| T | FFT conv | Toeplitz conv | attention scores q k^T |",
            "|---:|---:|---:|---:|",
        ]
        for t, row in spec["seconds"].items():
            L.append(
                f"| {t} | {_fmt(row['fft_conv'], 4)} | {_fmt(row['toeplitz_conv'], 4)} | "
                f"{_fmt(row['attention_scores'], 4)} |"
            )
    var = {
        k.split("/", 1)[1]: (_r(v) or {"error": v.get("error") or "no result", "causal": None})
        for k, v in recs.items()
        if k.startswith("variant/")
    }
    if var:
        first = next((v for v in var.values() if "tokens_per_s" in v), {})
        L += [
            "",
            f"## Variants (reference preset with {doc['sizes']['var_overrides']}: "
            f"{first.get('n_layer')} layer(s), E={first.get('n_embd')}, "
            f"T={first.get('block_size')}, 1 device)",
            "",
            "| variant | causal | tokens/s | vs learned | compile (s) | XLA temp (MiB) |",
            "|---|---|---:|---:|---:|---:|",
        ]
        ref_tps = (var.get("learned") or {}).get("tokens_per_s")
        for k, v in var.items():
            causal = doc.get("variant_causal", {}).get(k, v.get("causal"))
            lab = {True: "yes", False: "**NON-CAUSAL**", None: "?"}[causal]
            if "error" in v:
                L.append(f"| {k} | {lab} | error: {v['error'][:80]} | | | |")
                continue
            L.append(
                f"| {k} | {lab} | {_fmt(v['tokens_per_s'], 0)} | "
                f"{_fmt(v['tokens_per_s'] / ref_tps if ref_tps else None, 2)} | "
                f"{_fmt(v['compile_s'])} | {_fmt(v['xla_temp_mb'])} |"
            )
    skipped = [k for k, v in recs.items() if v.get("error")]
    if skipped:
        L += ["", "## Not measured", ""] + [f"- {k}: {recs[k]['error']}" for k in skipped]
    return "\n".join(L) + "\n"


def readme(doc: dict, json_name: str, note: str = "") -> str:
    """experiments/results/bench/README.md: the headline numbers of this run, what was tried."""
    summ, recs = doc["summary"], doc["records"]
    ref = summ["reference"]

    def tps(k):
        return ref.get(k, {}).get("tokens_per_s")

    L = [
        "# Performance benchmarks (issues 8 and 14)",
        "",
        f"Made by `{doc['command']}` on {doc['date']} ({cpu_text(doc['env'])}, "
        f"{doc['env']['cpu_count']} CPUs; load average before {doc['load_before']}, after "
        f"{doc['load_after']}). Every number below is read from [`{json_name}`]({json_name}) (the "
        f"tables: [`{json_name[:-5]}.md`]({json_name[:-5]}.md)); the FLOP count and the protocol "
        "are in `experiments/bench/measure.py` and `run.py`.",
        "",
    ]
    L += ([note, ""] if note else []) + [
        "## Targets",
        "",
        "| target | measured | met | short by |",
        "|---|---:|---|---:|",
    ]
    goal = {"jax_vs_torch>=1.0": 1.0, "mfu>=0.5": 0.5, "sweep4>=1.5x": 1.5}
    for k, v in summ["targets"].items():
        g = goal.get(k.split(" @")[0], 1.0 if k.startswith("f32_vs_torch") else None)
        short = (
            ""
            if v["met"]
            else (
                f"{100 * (1 - v['value'] / g):.0f}%"
                if g
                else f"{100 * (v['value'] / 1.3 - 1):.0f}% over"
            )
        )
        L.append(
            f"| {k}{' (' + v['best'] + ')' if 'best' in v else ''} | {_fmt(v['value'], 2)} | "
            f"{'yes' if v['met'] else '**no**'} | {short} |"
        )
    L += [
        "",
        f"f32 matmul peak measured in this run: {_fmt(summ['peak_gflops'])} GFLOP/s (MFU = model "
        "FLOPs/s divided by it; measured in the same run, so a busy machine lowers both). 'vs "
        "PyTorch' divides by the faster of the two PyTorch thread settings.",
        "",
        "## Reference model, batch 16",
        "",
        "| implementation | tokens/s | MFU | vs PyTorch |",
        "|---|---:|---:|---:|",
    ]
    for k, row in ref.items():
        L.append(
            f"| {REF_ROWS[k]} | {_fmt(row['tokens_per_s'], 0)} | "
            f"{_fmt(100 * row['mfu'], 1) + '%' if 'mfu' in row else 'n/a'} | "
            f"{_fmt(row.get('vs_torch'), 2)} |"
        )
    if summ.get("configs"):
        L += [
            "",
            "## The sizes we train (single process"
            + (
                "; each row the best of alternating rounds)"
                if any("#" in k for k in recs)
                else "; one round)"
            ),
            "",
            "| config | JAX f32 tokens/s, 1 device | f32 / best PyTorch | attn_layout=bhtd / best "
            "PyTorch | bhtd + 4 query blocks / best PyTorch | 2 host devices / best PyTorch | "
            "2 host devices, bhtd + blocks / best PyTorch | JAX on 1 core / PyTorch 1 thread | "
            "bf16 matmuls / f32 |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, row in summ["configs"].items():
            L.append(
                f"| {CONFIGS[name][0]} | {_fmt(row['jax'], 0)} | {_fmt(row['jax_vs_torch'], 2)} | "
                f"{_fmt(row.get('bhtd_vs_torch'), 2)} | {_fmt(row.get('blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('dp2_vs_torch'), 2)} | {_fmt(row.get('dp2_blocks_vs_torch'), 2)} | "
                f"{_fmt(row.get('1core_vs_torch_1t'), 2)} | "
                f"{_fmt(row['bf16_vs_f32'], 2)} |"
            )
    mlp = (_r(recs.get("mlp")) or {}).get("results", {})
    prof = _r(recs.get("profile"))
    pchar = _r(recs.get("profile/nanogpt-char"))
    L += [
        "",
        "## What was measured and tried",
        "",
        "* **Where the time goes**: a `jax.profiler` trace of one reference step, grouped by the "
        "source of each XLA operation"
        + (
            f" ({prof['overrides']}): "
            + ", ".join(f"{k} {100 * v:.0f}%" for k, v in prof["share"].items())
            + "."
            if prof
            else " (not measured in this run)."
        )
        + " The random bits are threefry's rounds over a (B,H,T,T) uint32 array per layer for the "
        "attention-dropout masks; the profiled step uses the default (unrolled) lowering."
        + (
            " The same for one step at nanoGPT's character config: "
            + ", ".join(f"{k} {100 * v:.0f}%" for k, v in pchar["share"].items())
            + ". "
            + _attention_note(pchar)
            if pchar
            else ""
        ),
        "* **threefry on CPU**: JAX lowers its PRNG on CPU as a rolled `while` loop (one pass over "
        "the array per iteration); `mope_jax.perf.fast_cpu_threefry` (called by `make_train`) "
        "registers the unrolled lowering JAX uses on GPU/TPU: the same bits (tests/test_perf.py "
        "checks them against a Python Threefry-2x32 and Random123's known answers), one fused loop."
        + (
            f" In this run: {_fmt(tps('jax/1dev'), 0)} vs {_fmt(tps('jax/1dev/rolled'), 0)} "
            f"tokens/s (x{tps('jax/1dev') / tps('jax/1dev/rolled'):.2f}) on one device."
            if tps("jax/1dev") and tps("jax/1dev/rolled")
            else ""
        ),
        "* **GELU**: `mope_jax.model.gelu` (exact, erf form, one fused expression for Phi(x) + x "
        "phi(x) via `jax.custom_jvp`) replaced `nn.gelu(approximate=False)` (erfc, derivative "
        "rebuilt by autodiff). Same numbers to f32 rounding (tests/test_perf.py); the default is "
        "unchanged in meaning.",
    ]
    if mlp:
        L.append(
            "  One MLP forward+backward in this run: "
            + "; ".join(f"{k}: {v['ms']:.1f} ms" for k, v in mlp.items())
            + ". `gelu_approximate=true` stays an opt-in (it changes the model)."
        )
    lay = _r(recs.get("layout"))
    if lay:
        (fa, va), (fb, vb) = lay["results"].items()
        L.append(
            "* **Dense layers on 2-D inputs** (issue 14): flax's `nn.Dense` contracts a (B,T,E) "
            "input, so each weight gradient contracts two axes and XLA:CPU writes a transposed "
            "copy of the activation gradient first; `mope_jax.attention.core.Dense` multiplies x "
            "flattened to (B*T, E), same parameters, same math. At nanoGPT's character config in "
            f"this run: {va['copy_elements_per_step']:,} -> {vb['copy_elements_per_step']:,} "
            f"copied elements per step, {_fmt(va['tokens_per_s'], 0)} -> "
            f"{_fmt(vb['tokens_per_s'], 0)} tokens/s (x{lay['speedup']:.2f}, timed alternately in "
            "one process), first losses bitwise equal: "
            f"{'yes' if lay['bitwise_equal_losses'] else 'NO'}"
            + (
                ""
                if lay["bitwise_equal_losses"]
                else " (largest difference over the "
                f"{len(va['first_losses'])} steps "
                f"{max(abs(x - y) for x, y in zip(va['first_losses'], vb['first_losses'])):.1e}: "
                "the flattened matmuls sum in another order at this size, while at the tiny size "
                "of tests/test_bench.py the losses are bitwise equal; every campaign record was "
                "made after this change, commit 82bc6a3)"
            )
            + "."
        )
    cfgs = summ.get("configs") or {}
    bf = {k: v["bf16_vs_f32"] for k, v in cfgs.items() if v.get("bf16_vs_f32")}
    if bf:
        L.append(
            "* **bf16 matmuls** (`model.compute_dtype=bfloat16`, opt-in: it changes the numbers): "
            "bf16 inputs to every matmul with float32 accumulation, float32 master weights, "
            "LayerNorm, softmax and loss. Tokens/s bf16 / f32 in this run: "
            + ", ".join(f"{k} {v:.2f}x" for k, v in bf.items())
            + "."
        )
    L += [
        "* **Data parallel over 2 host devices**: `make_train(cfg, "
        "batch_sharding=NamedSharding(mesh, P('data')))` shards each batch; XLA partitions the "
        "step and all-reduces the gradients "
        "(`XLA_FLAGS=--xla_force_host_platform_device_count=2`). Same numbers to float tolerance "
        "(tests/test_perf.py)."
        + (
            f" In this run: {_fmt(tps('jax/dp2'), 0)} vs {_fmt(tps('jax/1dev'), 0)} tokens/s on "
            "one device."
            if tps("jax/dp2") and tps("jax/1dev")
            else ""
        ),
        "* **Donation**: `train.run` already donates the state (`donate_argnums=0`); the benchmark "
        "does too.",
        "* **XLA CPU flags** (`--xla_cpu_use_xnnpack`, `--xla_cpu_experimental_ynn_fusion_type`, "
        "`--xla_cpu_use_onednn`, `--xla_cpu_prefer_vector_width=512`, "
        "`--xla_cpu_multi_thread_eigen`, fast math): tried on the MLP (issue 8) and, in issue 14, "
        "YNNPACK fusions off, `dot,eltwise,reduce`, oneDNN and XNNPACK dot fusions on the "
        "nanoGPT-char step, each in its own process on a machine shared with other jobs: no "
        "difference stood out of the noise (oneDNN and XNNPACK left the loss bit for bit "
        "unchanged, i.e. the same kernels), so nothing is claimed about them; none is used in this "
        "run.",
        "* **Attention formulation**: the hand-written einsum attention is kept. Opt-in "
        "`model.attn_layout=bhtd` (issue 14) moves the heads next to the batch before the "
        "einsums: XLA:CPU's batched dot wants its batch dimensions leading, and one explicit "
        "transpose per operand costs less than the copies it inserts around "
        "`BTHD,BSHD->BHTS`. Same math, but the kernels then sum in another order: gradients "
        "bitwise equal to the default's in this run: "
        + {True: "yes", False: "no", None: "not measured"}[
            (_r(recs.get("attention")) or {}).get("layout_gradients_bitwise_equal")
        ]
        + " (parameters after 5 training steps at nanoGPT-char differed by up to 4e-9 in a "
        "scratch check), so it is not the default: every committed record used `bthd`. "
        "Opt-in `model.attn_query_blocks=n` (issue 14) computes only the causal key blocks: "
        "the queries in n blocks, each scored against the keys up to its last row, (n+1)/(2n) "
        "of the score matrix; the same dropout bits (one draw, sliced), the same values to "
        "float32 rounding for every model variant (tests/test_attention_blocks.py), but shorter "
        "sums, so not the default either. The 'bhtd + 4 query blocks' column uses both. One "
        "attention forward+backward in this run: "
        + (
            "; ".join(
                f"{k}: {v['ms']:.1f} ms" for k, v in _r(recs.get("attention"))["results"].items()
            )
            if _r(recs.get("attention"))
            else "not measured"
        )
        + ".",
        "",
        "## Other sections",
        "",
        f"Seed sweeps, the causal spectral filters (`{CAUSAL_FILTER}`, FFT and Toeplitz) at T=256, "
        "the filters' cost vs T = 128 ... 4096 and every model variant (non-causal ones labelled "
        f"NON-CAUSAL) are in [`{json_name[:-5]}.md`]({json_name[:-5]}.md).",
    ]
    not_run = sorted(
        k.split("/", 1)[1] for k, v in recs.items() if k.startswith("variant/") and v.get("error")
    )
    if not_run:
        L += [
            "",
            f"Variants not measured in this run ({len(not_run)}: {', '.join(not_run)}): the quick "
            "run measures them in a fixed order (one of each family first) until its time budget "
            "ends; `python -m experiments.bench.run` (full sizes) measures every variant.",
        ]
    miss = [k for k, v in summ["targets"].items() if not v["met"]]
    if miss:
        L += [
            "",
            "## Missed targets",
            "",
            "Missed in this run: "
            + ", ".join(miss)
            + ". The measured values and the shortfall are in the "
            "table above.",
        ]
        if any(k.startswith("sweep") for k in miss):
            L.append(
                "Seed sweeps: every `mope_jax.sweep` strategy (map, vmap, shard over 2 host "
                f"devices) is in [`{json_name[:-5]}.md`]({json_name[:-5]}.md) next to "
                "one-seed-at-a-time training; none was faster by 1.5x. Not tried: pinning each "
                "host device to its own core."
            )
        if any(k.startswith("f32_vs_torch") for k in miss):

            def per_config(key, nd=2):
                return ", ".join(
                    f"{_fmt(cfgs[n].get(key), nd)} ({n})" for n in CONFIGS if n in cfgs
                )

            nc = cfgs.get("nanogpt-char") or {}
            scaling = ""
            if nc.get("jax-1core") and nc.get("jax") and nc.get("torch") and nc.get("torch/1t"):
                scaling = (
                    f" From one core to two, JAX gained x{nc['jax'] / nc['jax-1core']:.2f} at "
                    f"nanoGPT-char and PyTorch x{nc['torch'] / nc['torch/1t']:.2f}: the gap there "
                    "is both per-core speed and how the second core is used."
                )
            L.append(
                "The sizes we train (issue 14): tried as listed above (2-D Dense, attention "
                "layout, causal query blocks, flags, bf16); the profiles above say where the "
                "nanoGPT-char step's time goes. With both f32 opt-ins (bhtd + 4 query blocks) "
                f"JAX / best PyTorch is {per_config('blocks_vs_torch')}; with them on 2 host "
                f"devices {per_config('dp2_blocks_vs_torch')}. Per core (JAX pinned to one core "
                f"against PyTorch at 1 thread): {per_config('1core_vs_torch_1t')}."
                + scaling
                + " Also tried and dropped (scratch A/B, 2026-12-01, Intel Xeon with AVX-512 "
                "and AMX): drawing the attention-dropout bits only on the causal triangle (rows "
                "i and T-1-i packed into one, half the threefry work; the masks equal "
                "`jax.random.bernoulli`'s where they matter): the packed mask no longer fuses "
                "into its consumers and the step got slower at the reference and `mid` sizes, "
                "and the gradients differed at float32 rounding (XLA fused the backward "
                "differently); oneDNN, XNNPACK and YNNPACK-off XLA flags at nanoGPT-char: no "
                "gain there either, nor (2 rounds each, campaigns paused) "
                "`--xla_cpu_use_thunk_runtime=false` (21.9-22.3k tokens/s), "
                "`--xla_cpu_enable_concurrency_optimized_scheduler=true` (22.3-23.1k) or "
                "`--xla_cpu_parallel_codegen_split_count=8` (22.2-22.8k) against no flags "
                "(21.4-22.0k). The same step on 2 "
                "host devices (batch sharded, `mope-jax sweep --data-parallel 2`) is the row "
                "`jax/dp2` of the reference table. This machine is shared: the same JAX "
                "measurement varied by ~20% between runs minutes apart, which is why the rows "
                "above are the best of alternating rounds. Tried in scratch A/Bs and left out "
                "(2026-12-01, no gain): a custom attention VJP (the rowsum(dO * O) form), scaling "
                "q by 1/sqrt(D) in place of the scores. Not tried for lack of time: a fused "
                "LayerNorm backward, Eigen instead of YNNPACK per dot shape."
            )
        if any(k.startswith(("mfu", "jax_vs")) for k in miss):
            L.append(
                "Reference step: tried as listed above. Not tried for lack of time: a custom VJP "
                "that routes the weight-gradient matmuls (XLA's Eigen dots) to YNNPACK, bf16 "
                "matmuls (would change numerics), a fused attention kernel (Pallas has no CPU "
                "backend)."
            )
    return "\n".join(L) + "\n"


def render(doc: dict, json_path) -> dict[str, str]:
    """bench_<size>.md and README.md (README_tiny.md for --tiny) from bench_<size>.json alone
    (``mope-jax report --regenerate``)."""
    from mope_jax.analysis.report import rendered_note

    json_path = Path(json_path)
    note = rendered_note(doc, json_path)
    return {
        json_path.with_suffix(".md").name: markdown(doc, note),
        "README.md" if doc["size"] != "tiny" else "README_tiny.md": readme(
            doc, json_path.name, note
        ),
    }


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
        "renderer": "experiments/bench/run.py:render",
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
