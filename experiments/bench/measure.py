"""Measurements run inside one worker process (``python -m experiments.bench.measure TASK.json``).

Each task prints one JSON line ``{"task": ..., "result": ...}`` on stdout. The driver
(``experiments/bench/run.py``) starts one process per task group, so that XLA flags, the
host device count and ``ru_maxrss`` (peak resident memory) belong to that group alone.

Model FLOPs (what MFU counts): ``mope_jax.device.train_flops_per_token`` (its docstring has
the count; the campaigns' records use the same), re-exported here.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from typing import Any, Callable

import numpy as np

from mope_jax.device import train_flops_per_token  # noqa: F401  (re-exported for the bench)


def maxrss_mb() -> float:
    """Peak resident set size of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def attention_flop_share(n_layer: int, n_embd: int, block_size: int, vocab_size: int) -> float:
    """The share of :func:`train_flops_per_token` in the attention's q k^T and A V products
    (4 T E per token and layer, forward; the backward keeps the 1:2 ratio of the rest)."""
    attn = 4 * block_size * n_embd * n_layer
    return 3.0 * attn / train_flops_per_token(n_layer, n_embd, block_size, vocab_size)


def best_time(fn: Callable[[], Any], reps: int) -> tuple[float, list[float]]:
    """Run fn() reps times (it must block); return (min seconds, all seconds)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), times


# --------------------------------------------------------------------------- tasks


def task_peak(n: int = 2048, reps: int = 5) -> dict:
    """f32 matmul peak: a large jnp.dot (n x n) @ (n x n), best of reps."""
    import jax
    import jax.numpy as jnp

    key_a, key_b = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(key_a, (n, n), jnp.float32)
    b = jax.random.normal(key_b, (n, n), jnp.float32)
    dot = jax.jit(jnp.dot)
    jax.block_until_ready(dot(a, b))
    s, times = best_time(lambda: jax.block_until_ready(dot(a, b)), reps)
    return {"n": n, "seconds": s, "gflops": 2 * n**3 / s / 1e9, "all_seconds": times}


def _random_tokens(vocab: int, n: int = 100_000):
    import jax.numpy as jnp

    return jnp.asarray(np.random.default_rng(0).integers(0, vocab, n), jnp.int32)


def task_train(
    overrides: list[str],
    steps: int,
    reps: int,
    devices: int = 1,
    preset: str = "reference",
    variant: str | None = None,
) -> dict:
    """Training throughput of ``make_train(cfg).train_steps`` (scan of ``steps`` steps, the
    state donated, as ``train.run`` does), on synthetic random tokens.

    devices > 1: data parallel over that many host devices (batch sharded, state replicated).
    Returns tokens/s (best of reps), compile seconds (lower + compile), XLA's memory analysis.
    """
    import jax
    from jax.sharding import NamedSharding, PartitionSpec as P

    from mope_jax.config import apply_overrides
    from mope_jax.model import count_params
    from mope_jax.perf import threefry_unrolled
    from mope_jax.presets import apply_variant, get_preset
    from mope_jax.train import make_train

    cfg = get_preset(preset)
    if variant is not None:
        cfg = apply_variant(cfg, variant)
    cfg = apply_overrides(cfg, overrides)
    batch_sharding, replicated = None, None
    if devices > 1:
        if jax.device_count() < devices:
            raise RuntimeError(f"{devices} devices asked, {jax.device_count()} present")
        mesh = jax.make_mesh(
            (devices,),
            ("data",),
            devices=jax.devices()[:devices],
            axis_types=(jax.sharding.AxisType.Auto,),
        )
        batch_sharding, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    trainer = make_train(cfg, batch_sharding=batch_sharding)
    data = _random_tokens(cfg.model.vocab_size)
    state = jax.jit(trainer.init)(jax.random.PRNGKey(0))
    if replicated is not None:
        state, data = jax.device_put((state, data), replicated)
    fn = jax.jit(trainer.train_steps, static_argnums=2, donate_argnums=0)
    t0 = time.perf_counter()
    compiled = fn.lower(state, data, steps).compile()
    compile_s = time.perf_counter() - t0
    mem = compiled.memory_analysis()
    state, m = compiled(state, data)  # warm-up call
    jax.block_until_ready(m)
    first_loss = float(np.asarray(m["loss"])[0])
    holder = {"state": state}

    def call():
        holder["state"], mm = compiled(holder["state"], data)
        jax.block_until_ready(mm)

    s, times = best_time(call, reps)
    tokens = steps * cfg.train.batch_size * cfg.model.block_size
    mc = cfg.model
    return {
        "config": cfg.name,
        "variant": variant,
        "overrides": overrides,
        "devices": devices,
        "n_layer": mc.n_layer,
        "n_embd": mc.n_embd,
        "block_size": mc.block_size,
        "batch_size": cfg.train.batch_size,
        "n_params": count_params(state.params),
        "steps_per_call": steps,
        "step_s": s / steps,
        "tokens_per_s": tokens / s,
        "all_call_seconds": times,
        "flops_per_token": train_flops_per_token(
            mc.n_layer, mc.n_embd, mc.block_size, mc.vocab_size
        ),
        "compile_s": compile_s,
        "first_loss": first_loss,
        "threefry_unrolled": threefry_unrolled(),
        "xla_temp_mb": getattr(mem, "temp_size_in_bytes", 0) / 2**20 if mem is not None else None,
        "xla_argument_mb": getattr(mem, "argument_size_in_bytes", 0) / 2**20
        if mem is not None
        else None,
        "maxrss_mb": maxrss_mb(),
    }


def task_variant(name: str, preset: str, overrides: list[str], steps: int, reps: int) -> dict:
    """task_train for one model variant, its declared causality attached (non-causal ones are
    trained with train.allow_noncausal=true: this measures speed, not a causal-LM loss).
    Variants share a worker process, so the memory figure is XLA's compiled temp size."""
    from mope_jax.attention import registry
    from mope_jax.config import apply_overrides
    from mope_jax.presets import apply_variant, get_preset

    cfg = apply_overrides(apply_variant(get_preset(preset), name), overrides)
    causal = registry.declared_causal(cfg.model)
    ov = list(overrides) + ([] if causal else ["train.allow_noncausal=true"])
    r = task_train(ov, steps, reps, preset=preset, variant=name)
    r["causal"] = causal
    return r


def task_mlp(n_tokens: int, n_embd: int, reps: int) -> dict:
    """Where the time goes: one MLP (E -> 4E -> E) forward + backward, GELU implementations
    compared with the matmuls alone (identity in place of GELU)."""
    import jax
    import jax.numpy as jnp

    from mope_jax.model import gelu

    key_x, key_1, key_2 = jax.random.split(jax.random.PRNGKey(0), 3)
    x = jax.random.normal(key_x, (n_tokens, n_embd))
    w1 = jax.random.normal(key_1, (n_embd, 4 * n_embd)) * 0.05
    w2 = jax.random.normal(key_2, (4 * n_embd, n_embd)) * 0.05
    acts = {
        "jax.nn.gelu exact (erfc)": lambda h: jax.nn.gelu(h, approximate=False),
        "mope_jax gelu exact (erf, fused jvp)": lambda h: gelu(h, approximate=False),
        "tanh approximation": lambda h: jax.nn.gelu(h, approximate=True),
        "identity (matmuls only)": lambda h: h,
    }
    flops = 3 * 2 * 2 * n_tokens * n_embd * 4 * n_embd
    out = {}
    for name, act in acts.items():

        def loss(x, w1, w2, act=act):
            return jnp.sum((act(x @ w1) @ w2) * x)

        g = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
        jax.block_until_ready(g(x, w1, w2))
        s, _ = best_time(lambda: jax.block_until_ready(g(x, w1, w2)), reps)
        out[name] = {"ms": s * 1e3, "gflops": flops / s / 1e9}
    return {"n_tokens": n_tokens, "n_embd": n_embd, "results": out}


def task_attention(batch: int, heads: int, t: int, head_dim: int, reps: int) -> dict:
    """One masked attention forward + backward (scores given): dropout off, threefry
    masks in JAX's rolled and the unrolled lowering (mope_jax.perf), and
    jax.nn.dot_product_attention."""
    import jax
    import jax.numpy as jnp

    from mope_jax.attention.core import attend, causal_mask, dot_product_scores
    from mope_jax.perf import fast_cpu_threefry

    key_q, key_k, key_v, key_d = jax.random.split(jax.random.PRNGKey(0), 4)
    q, k, v = (
        jax.random.normal(kk, (batch, t, heads, head_dim)) for kk in (key_q, key_k, key_v)
    )  # (B,T,H,D)
    mask = causal_mask(t)

    def ours(q, k, v, det, layout="bthd"):
        return attend(
            dot_product_scores(q, k, head_dim, layout=layout),
            v,
            mask=mask,
            dropout_rate=0.1,
            dropout_rng=key_d,
            deterministic=det,
            layout=layout,
        )

    cases = {
        "einsum attention, no dropout": lambda q, k, v: ours(q, k, v, True),
        "einsum attention, attn_layout=bhtd, no dropout": lambda q, k, v: ours(
            q, k, v, True, "bhtd"
        ),
        (
            "einsum attention, dropout 0.1 (threefry masks, JAX's rolled CPU lowering)"
        ): lambda q, k, v: ours(q, k, v, False),
        "einsum attention, dropout 0.1 (threefry masks, unrolled: the default)": lambda q, k, v: (
            ours(q, k, v, False)
        ),
        "jax.nn.dot_product_attention, no dropout": lambda q, k, v: jax.nn.dot_product_attention(
            q, k, v, is_causal=True
        ),
    }
    out = {}
    grads = {}
    for name, f in cases.items():
        fast_cpu_threefry("rolled" not in name)  # before the (fresh) jit below is lowered
        g = jax.jit(jax.grad(lambda q, k, v, f=f: jnp.sum(f(q, k, v) ** 2), argnums=(0, 1, 2)))
        grads[name] = jax.block_until_ready(g(q, k, v))
        sec, _ = best_time(lambda g=g: jax.block_until_ready(g(q, k, v)), reps)
        out[name] = {"ms": sec * 1e3}
    before = grads["einsum attention, no dropout"]
    now = grads["einsum attention, attn_layout=bhtd, no dropout"]
    same = all(bool(jnp.array_equal(a, b)) for a, b in zip(before, now))
    return {
        "batch": batch,
        "heads": heads,
        "t": t,
        "head_dim": head_dim,
        "results": out,
        "layout_gradients_bitwise_equal": same,
    }


def task_profile(overrides: list[str]) -> dict:
    """Per-operation time of one training step from a jax.profiler trace (needs
    XLA_FLAGS=--xla_cpu_enable_xprof_traceme=true), grouped: dense matmuls and the attention's
    batched matmuls (YNNPACK fusions and dots, told apart by the einsum in their source),
    dropout random bits (ops whose source is jax.random), other. Profiling slows the step; the
    shares, not the times, are the result. ``attention_flop_share``: the attention matmuls'
    share of the step's model FLOPs (measure.py's count), to set beside their time share."""
    import collections
    import glob
    import gzip
    import re
    import tempfile

    import jax

    from mope_jax.config import apply_overrides
    from mope_jax.presets import get_preset
    from mope_jax.train import make_train

    cfg = apply_overrides(get_preset("reference"), overrides)
    trainer = make_train(cfg)
    data = _random_tokens(cfg.model.vocab_size)
    state = jax.jit(trainer.init)(jax.random.PRNGKey(0))
    fn = jax.jit(trainer.train_steps, static_argnums=2)
    compiled = fn.lower(state, data, 1).compile()
    # op_name of every instruction, and of everything inside each fused computation (an XLA
    # fusion is named after its root, but random bits may be fused into e.g. the dropout select)
    origin, calls, inside, current = {}, {}, {}, None
    for line in compiled.as_text().splitlines():
        head = re.match(r"^\s*%([\w.\-]+) \(.*\{\s*$", line)
        if head:
            current = head.group(1)
            inside[current] = ""
            continue
        if line.startswith("}"):
            current = None
        m = re.match(r"\s*(?:ROOT )?%([\w.\-]+) = .*?op_name=\"([^\"]*)\"", line)
        if m:
            origin[m.group(1)] = m.group(2)
            if current is not None:
                inside[current] += " " + m.group(2)
        c = re.match(r"\s*(?:ROOT )?%([\w.\-]+) = .*calls=%([\w.\-]+)", line)
        if c:
            calls[c.group(1)] = c.group(2)
    jax.block_until_ready(compiled(state, data))
    with tempfile.TemporaryDirectory() as d:
        with jax.profiler.trace(d, create_perfetto_trace=True):
            jax.block_until_ready(compiled(state, data))
        files = glob.glob(f"{d}/**/*.trace.json.gz", recursive=True)
        trace = json.load(gzip.open(files[0])) if files else {"traceEvents": []}
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    groups: collections.Counter = collections.Counter()
    for e in events:
        name = e.get("name", "")
        if e.get("ph") != "X" or name not in origin or name.startswith("while"):
            continue  # while thunks only wrap their body's thunks, which are counted
        src = origin[name] + inside.get(calls.get(name, ""), "")
        if name.startswith(("ynn_fusion", "dot", "custom-call")) or "dot_general" in origin[name]:
            # the attention's batched products q k^T and A V are einsums with a (B,H,T,S) side
            group = (
                "attention matmuls (q k^T, A V and their gradients)"
                if "BHTS" in origin[name]
                else "dense matmuls (Dense layers, LM head, and their gradients)"
            )
        elif any(
            w in src for w in ("random_bits", "threefry", "_bernoulli", "_uniform", "random_wrap")
        ):
            group = "ops that draw dropout random bits (with what is fused into them)"
        else:
            group = "other (elementwise, softmax, layout copies, optimizer)"
        groups[group] += e.get("dur", 0)
    total = sum(groups.values())
    m = cfg.model
    return {
        "overrides": overrides,
        "total_ms": total / 1e3,
        "share": {k: v / total for k, v in groups.most_common()} if total else {},
        "attention_flop_share": attention_flop_share(
            m.n_layer, m.n_embd, m.block_size, m.vocab_size
        ),
    }


def task_spectral(
    lengths: list[int],
    batch: int,
    heads: int,
    head_dim: int,
    reps: int,
    toeplitz_max_t: int = 1 << 30,
) -> dict:
    """Forward + backward seconds of the causal filters of one (B,T,H,D) tensor and of the
    attention scores, per T (pure functions of mope_jax/attention/spectral.py). The Toeplitz
    form builds an (H,T,T) matrix; above ``toeplitz_max_t`` it is not measured (None)."""
    import jax
    import jax.numpy as jnp

    from mope_jax.attention.core import dot_product_scores
    from mope_jax.attention.spectral import causal_conv_fft, causal_conv_toeplitz, kernel_taps

    fns = {
        "fft_conv": lambda u, h: causal_conv_fft(u, h),
        "toeplitz_conv": lambda u, h: causal_conv_toeplitz(u, h),
        "attention_scores": lambda u, h: dot_product_scores(u, u, head_dim),
    }
    out = {}
    for t in lengths:
        key = jax.random.PRNGKey(t)
        u = jax.random.normal(key, (batch, t, heads, head_dim))
        taps = kernel_taps("gauss", jnp.full((heads,), 8.0), min(128, t))[0]  # (H,K)
        row = {}
        for name, f in fns.items():
            if name == "toeplitz_conv" and t > toeplitz_max_t:
                row[name] = None
                continue
            g = jax.jit(jax.grad(lambda u, h, f=f: jnp.sum(f(u, h) ** 2), argnums=(0, 1)))
            jax.block_until_ready(g(u, taps))
            s, _ = best_time(lambda: jax.block_until_ready(g(u, taps)), reps)
            row[name] = s
        out[str(t)] = row
    return {
        "batch": batch,
        "heads": heads,
        "head_dim": head_dim,
        "kernel_len": 128,
        "seconds": out,
        "toeplitz_max_t": toeplitz_max_t,
    }


def task_sweep(
    seed_counts: list[int],
    strategies: list[str],
    preset: str,
    overrides: list[str],
    steps: int,
    reps: int,
) -> dict:
    """Seeds/hour of R seeds trained together (mope_jax.sweep.over_seeds) vs one at a time."""
    import jax

    from mope_jax.config import apply_overrides
    from mope_jax.presets import get_preset
    from mope_jax.sweep import over_seeds, place_seeds, seed_keys, seed_mesh
    from mope_jax.train import make_train

    cfg = apply_overrides(get_preset(preset), overrides)
    trainer = make_train(cfg)
    data = _random_tokens(cfg.model.vocab_size)
    init_all = jax.jit(jax.vmap(trainer.init))
    out = {}
    # the baseline: one seed after another, each as train.run trains it (one jitted, donated
    # train_steps on an unstacked state; no per-call stacking as in over_seeds' "sequential")
    single = jax.jit(trainer.train_steps, static_argnums=2, donate_argnums=0)
    holder1 = {"s": jax.jit(trainer.init)(jax.random.PRNGKey(0))}

    def call1():
        holder1["s"], mm = single(holder1["s"], data, steps)
        jax.block_until_ready(mm)

    t0 = time.perf_counter()
    call1()
    first_s = time.perf_counter() - t0
    sec, _ = best_time(call1, reps)
    out["run/R=1"] = {
        "strategy": "run (train.run's program, seeds one after another)",
        "seeds": 1,
        "step_s": sec / steps,
        "first_call_s": first_s,
        "seeds_per_hour": 3600.0 / (sec / steps * cfg.train.max_steps),
        "tokens_per_s": cfg.train.batch_size * cfg.model.block_size / (sec / steps),
    }
    for strategy in strategies:
        fn = None
        for r in seed_counts:
            if strategy == "shard" and r % jax.device_count():
                continue
            mesh = seed_mesh() if strategy == "shard" else None
            if (
                fn is None or strategy != "sequential"
            ):  # sequential: one per-seed program for every R
                fn = over_seeds(lambda s, d: trainer.train_steps(s, d, steps), strategy, mesh)
            states = place_seeds(init_all(seed_keys(range(r))), strategy, mesh)
            t0 = time.perf_counter()
            states, m = fn(states, data)  # compiles
            jax.block_until_ready(m)
            first_s = time.perf_counter() - t0
            holder = {"s": states}

            def call():
                holder["s"], mm = fn(holder["s"], data)
                jax.block_until_ready(mm)

            s, _ = best_time(call, reps)
            step_s = s / steps  # seconds per optimiser step of all R seeds
            out[f"{strategy}/R={r}"] = {
                "strategy": strategy,
                "seeds": r,
                "step_s": step_s,
                "first_call_s": first_s,
                "seeds_per_hour": r * 3600.0 / (step_s * cfg.train.max_steps),
                "tokens_per_s": r * cfg.train.batch_size * cfg.model.block_size / step_s,
            }
    return {
        "preset": preset,
        "overrides": overrides,
        "max_steps": cfg.train.max_steps,
        "device_count": jax.device_count(),
        "results": out,
    }


def copy_elements(hlo_text: str) -> int:
    """Elements written by the copy/transpose fusions of a compiled XLA:CPU program (layout
    changes: data moved, nothing computed)."""
    import re

    total = 0
    for m in re.finditer(
        r"^\s*(?:ROOT )?%([\w.\-]+) = f32\[([\d,]*)\]\{[\d,]*\} fusion\(", hlo_text, re.M
    ):
        if "copy" in m.group(1) or "transpose" in m.group(1):
            total += int(np.prod([int(v) for v in m.group(2).split(",") if v]))
    return total


def task_layout(overrides: list[str], steps: int, reps: int) -> dict:
    """The model's Dense layers (attention/core.py: x flattened to 2-D) against flax's
    ``nn.Dense`` on the rank-3 input, same parameters: copy/transpose elements in the compiled
    step, and tokens/s of both, timed alternately in this one process (a fair ratio on a noisy
    machine). Both must give bitwise-identical losses."""
    import flax.linen as nn
    import jax

    import mope_jax.attention.core as core
    import mope_jax.model as model_mod
    from mope_jax.config import apply_overrides
    from mope_jax.presets import get_preset
    from mope_jax.train import make_train

    def flax_dense(cfg, features, name, *, use_bias=None):
        return nn.Dense(
            features,
            use_bias=cfg.use_bias if use_bias is None else use_bias,
            kernel_init=nn.initializers.normal(cfg.init_std),
            name=name,
        )

    cfg = apply_overrides(get_preset("reference"), overrides)
    data = _random_tokens(cfg.model.vocab_size)
    ours = core.dense
    runs = {}
    for name, fn in (("flax nn.Dense on (B,T,E)", flax_dense), ("2-D Dense (ours)", ours)):
        core.dense = model_mod.dense = fn
        try:
            trainer = make_train(cfg)
            state = jax.jit(trainer.init)(jax.random.PRNGKey(0))
            compiled = (
                jax.jit(trainer.train_steps, static_argnums=2, donate_argnums=0)
                .lower(state, data, steps)
                .compile()
            )
        finally:
            core.dense = model_mod.dense = ours
        state, m = compiled(state, data)
        runs[name] = {
            "compiled": compiled,
            "state": state,
            "first_losses": np.asarray(m["loss"]).tolist(),
            "copy_elements_per_step": copy_elements(compiled.as_text()),
            "times": [],
        }
    for _ in range(reps):
        for r in runs.values():
            t0 = time.perf_counter()
            r["state"], m = r["compiled"](r["state"], data)
            jax.block_until_ready(m)
            r["times"].append(time.perf_counter() - t0)
    tokens = steps * cfg.train.batch_size * cfg.model.block_size
    out = {
        k: {
            "copy_elements_per_step": r["copy_elements_per_step"],
            "tokens_per_s": tokens / min(r["times"]),
            "all_call_seconds": r["times"],
            "first_losses": r["first_losses"],
        }
        for k, r in runs.items()
    }
    a, b = out.values()
    return {
        "overrides": overrides,
        "results": out,
        "bitwise_equal_losses": a["first_losses"] == b["first_losses"],
        "speedup": b["tokens_per_s"] / a["tokens_per_s"],
    }


def task_torch(overrides: list[str], steps: int, reps: int, threads: int) -> dict:
    from experiments.bench.torch_ref import time_training

    return time_training(overrides, steps, reps, threads)


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
