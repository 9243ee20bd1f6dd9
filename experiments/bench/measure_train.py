"""Training throughput tasks: JAX training steps as ``train.run`` calls them (``train``,
``variant``), R seeds trained together against one at a time (``sweep``), and the PyTorch
reference (``torch``); all on synthetic random tokens (``random_tokens``)."""

from __future__ import annotations

import time

import numpy as np

from experiments.bench.measure_timing import best_time, maxrss_mb
from mope_jax.device import train_flops_per_token


def random_tokens(vocab: int, n: int = 100_000):
    """n random token ids below vocab (seed 0): the training data of every task."""
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
    data = random_tokens(cfg.model.vocab_size)
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
    data = random_tokens(cfg.model.vocab_size)
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


def task_torch(overrides: list[str], steps: int, reps: int, threads: int) -> dict:
    from experiments.bench.torch_ref import time_training

    return time_training(overrides, steps, reps, threads)
