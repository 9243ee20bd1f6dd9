"""Where a training step's time goes: a profiler trace grouped by the source of each XLA
operation (``profile``), the attention matmuls' share of the model FLOPs to set beside it
(``attention_flop_share``), and the layout copies and speed of our 2-D Dense layers against
flax's ``nn.Dense`` (``layout``, ``copy_elements``)."""

from __future__ import annotations

import json
import time

import numpy as np

from experiments.bench.measure_train import random_tokens
from mope_jax.device import train_flops_per_token


def attention_flop_share(n_layer: int, n_embd: int, block_size: int, vocab_size: int) -> float:
    """The share of :func:`train_flops_per_token` in the attention's q k^T and A V products
    (4 T E per token and layer, forward; the backward keeps the 1:2 ratio of the rest)."""
    attn = 4 * block_size * n_embd * n_layer
    return 3.0 * attn / train_flops_per_token(n_layer, n_embd, block_size, vocab_size)


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
    data = random_tokens(cfg.model.vocab_size)
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
    data = random_tokens(cfg.model.vocab_size)
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
