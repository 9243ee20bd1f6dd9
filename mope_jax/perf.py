"""CPU speed switches that keep every number bit for bit (issue 8; experiments/bench).

``fast_cpu_threefry()``: JAX lowers its threefry2x32 PRNG on CPU as a rolled 5-iteration
``while`` loop, each iteration a separate pass over the whole uint32 array; on GPU/TPU it
uses the unrolled form, which XLA fuses into one elementwise loop. The two compute the same
function (the same 20 rounds of Threefry-2x32, Salmon et al. 2011), so registering the
unrolled rule for CPU gives identical random bits at a fraction of the cost: the dropout
masks of a training step drew ~a fifth of its time before (experiments/results/bench).
``make_train`` calls it; set ``MOPE_JAX_ROLLED_THREEFRY=1`` to keep JAX's own lowering
(the benchmark does, for its "as before" row). It touches a private JAX module, so it
checks what it finds and does nothing (returning False) when that has changed.
"""

from __future__ import annotations

import os

_STATE = {"unrolled": False}


def fast_cpu_threefry(enable: bool = True) -> bool:
    """Lower threefry2x32 on CPU unrolled (enable) or rolled (JAX's default). Returns whether
    the unrolled rule is now active. Affects programs compiled after the call."""
    if enable and os.environ.get("MOPE_JAX_ROLLED_THREEFRY", "") not in ("", "0"):
        enable = False
    if enable == _STATE["unrolled"]:
        return _STATE["unrolled"]
    try:
        from jax._src.interpreters import mlir
        from jax._src.random import threefry2x32 as tf

        rule = tf._threefry2x32_lowering_rule if enable else tf._threefry2x32_cpu_lowering_rule
        mlir.register_lowering(tf.threefry2x32_p, rule, platform="cpu")
    except (ImportError, AttributeError):  # a JAX without these internals: keep its lowering
        return False
    _STATE["unrolled"] = enable
    return enable


def threefry_unrolled() -> bool:
    """Whether fast_cpu_threefry is active (recorded in train.environment())."""
    return _STATE["unrolled"]
