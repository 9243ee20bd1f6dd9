"""GPU benchmark: tokens/s and MFU of the reference model at each precision, beside a PyTorch
nanoGPT-architecture model of the same size trained on the same card in the same call.

Command:  python -m experiments.bench.gpu --out DIR        (on the lent GPU: ~3-5 min; see
          experiments/device_campaigns.py for how a loan is used)
          python -m experiments.bench.gpu --tiny --out DIR (seconds, any backend: the tests)
Writes:   DIR/gpu.{json,md} (gpu_tiny.* with --tiny); DIR defaults to experiments/results/bench

Measures, in one process, on the default JAX backend:
  * the achieved matmul rate of this device: an (n x n) @ (n x n) ``jnp.dot`` at each precision
    (f32 'highest', tf32 'high', bf16 operands), beside the datasheet peak
    (``mope_jax.device.PEAK_TFLOPS``, looked up by ``jax.devices()[0].device_kind``);
  * training tokens/s of the reference model (DESIGN.md section 0: 6 x 256, T=256, batch 64,
    dropout 0.1) as ``train.run`` trains it (``train_steps`` scanned, state donated) at each
    ``ModelConfig.precision`` (f32, tf32, bf16 = ``compute_dtype=bfloat16`` with float32 master
    weights); MFU = model FLOPs/s (``mope_jax.device.model_flops_per_token``) / the datasheet
    peak of that precision, and the same over the measured matmul rate;
  * the same model in PyTorch (``experiments/bench/torch_ref.py``: nanoGPT's architecture,
    eager, AdamW, ``F.scaled_dot_product_attention``) at each precision (f32, TF32 allowed,
    bf16 autocast), when ``import torch`` works (the device's python has it under /opt/torch;
    ``--torch-path`` adds it); on a CPU only at f32. The JAX / PyTorch ratio of each precision
    is measured side by side, never against a number from another machine;
  * seeds/hour of 1 and 8 seeds trained as one vmapped program (``mope_jax.sweep``) at bf16.
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
PRECISIONS = ("f32", "tf32", "bf16")
# how each precision reaches the config (ModelConfig.precision) and a bare jnp.dot
OVERRIDES = {
    "f32": [],
    "tf32": ["model.matmul_precision=tf32"],
    "bf16": ["model.compute_dtype=bfloat16"],
}

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
    torch_steps=20,
    torch_reps=3,
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
    torch_steps=2,
    torch_reps=1,
)


def peak(n: int, reps: int, precision: str) -> dict:
    """Achieved rate of an (n x n) @ (n x n) product at ``precision`` on the default device."""
    import jax
    import jax.numpy as jnp

    dtype = jnp.bfloat16 if precision == "bf16" else jnp.float32
    level = {"f32": "highest", "tf32": "high", "bf16": "default"}[precision]
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n)).astype(dtype)
    b = jax.random.normal(jax.random.PRNGKey(1), (n, n)).astype(dtype)
    dot = jax.jit(lambda x, y: jnp.dot(x, y, precision=level))
    jax.block_until_ready(dot(a, b))
    s, times = measure.best_time(lambda: jax.block_until_ready(dot(a, b)), reps)
    return {"n": n, "precision": precision, "seconds": s, "tflops": 2 * n**3 / s / 1e12}


def torch_available(extra_path: str | None) -> tuple[bool, str]:
    """(importable, why not) for PyTorch, after adding ``extra_path`` to sys.path."""
    if extra_path and extra_path not in sys.path:
        sys.path.append(extra_path)
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        return False, f"import torch failed: {type(e).__name__}: {e}"
    return True, ""


def run(size: dict, with_torch: bool) -> dict:
    import jax

    from mope_jax.device import device_kind, peak_tflops

    kind = device_kind()
    on_gpu = jax.devices()[0].platform == "gpu"
    recs: dict = {
        "device": {"platform": jax.devices()[0].platform, "kind": kind},
        "peak": {},
        "train": {},
    }
    for p in PRECISIONS:
        recs["peak"][p] = peak(size["peak_n"], size["peak_reps"], p)
        recs["peak"][p]["datasheet_tflops"] = peak_tflops(kind, p)
        r = measure.task_train(
            size["overrides"] + OVERRIDES[p], size["steps"], size["reps"], preset=size["preset"]
        )
        rate = r["tokens_per_s"] * r["flops_per_token"]
        sheet = peak_tflops(kind, p)
        r["precision"] = p
        r["mfu"] = None if sheet is None else rate / (sheet * 1e12)
        r["mfu_of_measured_matmul"] = rate / (recs["peak"][p]["tflops"] * 1e12)
        recs["train"][p] = r
    recs["torch"] = {}
    if with_torch:
        from experiments.bench.torch_ref import time_training

        for p in PRECISIONS if on_gpu else ("f32",):
            t = time_training(
                size["overrides"],  # the precision is torch's own switch (below)
                size["torch_steps"],
                size["torch_reps"],
                threads=1 if on_gpu else 2,
                preset=size["preset"],
                device="cuda" if on_gpu else "cpu",
                precision=p,
            )
            t["jax_over_torch"] = recs["train"][p]["tokens_per_s"] / t["tokens_per_s"]
            recs["torch"][p] = t
    recs["sweep"] = measure.task_sweep(
        size["seed_counts"],
        ["vmap"],
        size["preset"],
        size["overrides"] + OVERRIDES["bf16"],
        size["sweep_steps"],
        size["sweep_reps"],
    )
    return recs


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def markdown(doc: dict) -> str:
    r = doc["records"]
    tr = r["train"]
    f32 = tr["f32"]
    L = [
        "# GPU benchmark",
        "",
        f"Command: `{doc['command']}`  ",
        f"Date: {doc['date']}  ",
        f"Device: {r['device']['kind']} ({r['device']['platform']})  ",
        f"Versions: jax {doc['env']['jax']}, flax {doc['env']['flax']}, "
        f"python {doc['env']['python']}, commit {doc['env']['git_commit']}",
        "",
        f"Model: {f32['config']}: {f32['n_layer']} x {f32['n_embd']}, T={f32['block_size']}, "
        f"batch {f32['batch_size']}, {f32['n_params']:,} parameters, "
        f"{f32['flops_per_token'] / 1e6:.1f} MFLOP a training token.",
        "",
        "| precision | matmul, measured TFLOP/s | datasheet TFLOP/s | JAX tokens/s | "
        "MFU (datasheet) | MFU (measured matmul) | PyTorch tokens/s | JAX / PyTorch |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in PRECISIONS:
        pk, t, th = r["peak"][p], tr[p], r["torch"].get(p)
        sheet = pk.get("datasheet_tflops")
        L.append(
            f"| {p} | {pk['tflops']:.1f} | {'-' if sheet is None else f'{sheet:g}'} | "
            f"{t['tokens_per_s']:,.0f} | {_pct(t['mfu'])} | "
            f"{_pct(t['mfu_of_measured_matmul'])} | "
            + ("- | -" if th is None else f"{th['tokens_per_s']:,.0f} | {th['jax_over_torch']:.2f}")
            + " |"
        )
    why = r.get("torch_missing")
    if why:
        L += ["", f"PyTorch not measured: {why}."]
    L += [
        "",
        f"Seeds per hour ({r['sweep']['max_steps']} steps per seed, bf16):",
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
    ap.add_argument("--out", default=str(RESULTS), help="folder for gpu.json and gpu.md")
    ap.add_argument(
        "--torch",
        choices=("auto", "off"),
        default="auto",
        help="train the PyTorch model side by side when torch imports (default auto)",
    )
    ap.add_argument("--torch-path", default="/opt/torch", help="added to sys.path for torch")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from mope_jax.analysis.report import publish
    from mope_jax.train import environment

    ok, why = (False, "--torch off") if args.torch == "off" else torch_available(args.torch_path)
    t0 = time.time()
    doc = {
        "renderer": "experiments/bench/gpu.py:render",
        "command": "python -m experiments.bench.gpu "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "env": environment(),
        "records": run(TINY if args.tiny else FULL, ok),
    }
    if not ok:
        doc["records"]["torch_missing"] = why
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
