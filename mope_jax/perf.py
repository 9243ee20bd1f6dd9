"""CPU speed switches that keep every number bit for bit (measured by experiments/bench).

``fast_cpu_threefry()``: JAX lowers its threefry2x32 PRNG on CPU as a rolled 5-iteration
``while`` loop, each iteration a separate pass over the whole uint32 array; on GPU/TPU it
uses the unrolled form, which XLA fuses into one elementwise loop. The two compute the same
function (the same 20 rounds of Threefry-2x32, Salmon et al. 2011), so registering the
unrolled rule for CPU gives identical random bits at a fraction of the cost: the dropout
masks of a training step drew ~a fifth of its time before (experiments/results/bench).
``make_train`` calls it; set ``MOPE_JAX_ROLLED_THREEFRY=1`` to keep JAX's own lowering
(the benchmark does, for its "as before" row).

It touches a private JAX module, so it is gated twice: on the JAX version (only the
``TESTED_JAX`` minor versions, where tests/test_perf.py checked that the unrolled rule gives
the same bits) and on what it finds in that module. Anywhere else it does nothing and
``threefry_status()`` says why; the run is then merely slower, never different.
"""

from __future__ import annotations

import os

import jax

# (major, minor) versions of JAX whose private threefry lowering rules this module was tested
# against; pyproject.toml bounds jax to the same range.
TESTED_JAX = ((0, 10),)

_STATE = {"unrolled": False, "reason": "not requested"}


def _jax_minor(version: str) -> tuple[int, int]:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        return (-1, -1)


def supported(version: str | None = None) -> bool:
    """Whether the private-lowering patch is allowed for this JAX version."""
    return _jax_minor(version or jax.__version__) in TESTED_JAX


def fast_cpu_threefry(enable: bool = True) -> bool:
    """Lower threefry2x32 on CPU unrolled (enable) or rolled (JAX's default). Returns whether
    the unrolled rule is now active. Affects programs compiled after the call."""
    if enable and os.environ.get("MOPE_JAX_ROLLED_THREEFRY", "") not in ("", "0"):
        enable, why = False, "MOPE_JAX_ROLLED_THREEFRY is set"
    elif enable and not supported():
        enable, why = False, f"jax {jax.__version__} is not a tested version {TESTED_JAX}"
    else:
        why = "active" if enable else "disabled"
    if enable == _STATE["unrolled"]:
        if not enable:
            _STATE["reason"] = why
        return _STATE["unrolled"]
    try:
        from jax._src.interpreters import mlir
        from jax._src.random import threefry2x32 as tf

        rule = tf._threefry2x32_lowering_rule if enable else tf._threefry2x32_cpu_lowering_rule
        mlir.register_lowering(tf.threefry2x32_p, rule, platform="cpu")
    except (ImportError, AttributeError) as e:  # internals moved: keep JAX's own lowering
        _STATE["reason"] = f"jax internals changed ({type(e).__name__}: {e})"
        return False
    _STATE["unrolled"], _STATE["reason"] = enable, why
    return enable


def threefry_unrolled() -> bool:
    """Whether fast_cpu_threefry is active (recorded in train.environment())."""
    return _STATE["unrolled"]


def threefry_status() -> str:
    """'active', or why the unrolled lowering is not in effect."""
    return "active" if _STATE["unrolled"] else _STATE["reason"]
