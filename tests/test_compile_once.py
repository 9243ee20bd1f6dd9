"""What runs after training compiles once per config, never once per seed: the causality audit,
a re-evaluation with another config (paper A's other gate) and the diagnostics' losses take the
trained parameters as arguments. Counted with ``mope_jax.device.compile_log``. And the speed
a record states: model FLOPs, the device's peak at the run's precision, MFU."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax import device
from mope_jax.analysis import diagnostics
from mope_jax.analysis.causality import audit_model
from mope_jax.config import Config, ModelConfig, TrainConfig
from mope_jax.model import init_params
from mope_jax.train import compiled_evaluate, make_train

SMALL = ModelConfig(block_size=16, n_layer=1, n_head=2, n_embd=16, vocab_size=13, dropout=0.0)


def _params(seed: int):
    return init_params(SMALL, jax.random.PRNGKey(seed))


@pytest.mark.parametrize("max_jacobian_elems", [2**24, 0])  # the Jacobian and jvp-cuts paths
def test_the_audit_of_a_second_parameter_set_compiles_nothing(max_jacobian_elems):
    first = audit_model(SMALL, _params(0), max_jacobian_elems=max_jacobian_elems)
    with device.compile_log() as log:
        second = audit_model(SMALL, _params(1), max_jacobian_elems=max_jacobian_elems)
    assert log.named("audit_") == 0, log.by_name()
    assert first.causal and second.causal and first.method == second.method
    # the parameters are an argument, not a constant: other parameters give another answer
    assert first.scale != second.scale


def test_a_closed_over_function_still_audits_per_call():
    """The one-argument form (a function of x alone) keeps working: it is compiled per call,
    since what it closes over is its own business."""
    from mope_jax.analysis.causality import audit

    w = jnp.tril(jnp.ones((8, 8)))
    res = audit(lambda x: w @ x, jnp.ones((8, 3)))
    assert res.causal and res.method == "jacobian"
    leaky = audit(lambda x: jnp.ones((8, 8)) @ x, jnp.ones((8, 3)))
    assert not leaky.causal


def test_evaluation_of_every_seed_shares_one_program():
    cfg = Config(model=SMALL, train=TrainConfig(batch_size=4, eval_batches=2))
    tr = make_train(cfg)
    data = jnp.asarray(np.random.default_rng(0).integers(0, 13, 4000).astype(np.int32))
    out = []
    with device.compile_log() as log:
        for seed in range(3):
            run_cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=seed))
            state = jax.tree_util.tree_map(np.asarray, jax.jit(tr.init)(jax.random.PRNGKey(seed)))
            out.append(float(compiled_evaluate(run_cfg)(state, data, data)["val"]))
    assert log.named("evaluate") == 1, log.by_name()
    assert len(set(out)) == 3  # each seed's own state, evaluated


def test_diagnostic_losses_compile_once_per_config():
    val = np.random.default_rng(1).integers(0, 13, 3000)
    diagnostics.eval_loss(SMALL, _params(0), val, num_windows=8, batch_size=4)
    with device.compile_log() as log:
        a = diagnostics.eval_loss(SMALL, _params(1), val, num_windows=8, batch_size=4)
        b = diagnostics.eval_loss(SMALL, _params(2), val, num_windows=8, batch_size=4)
    assert log.named("diagnostic_loss") == 0 and a != b


# --------------------------------------------------------------------------- speed


def test_mfu_is_the_program_rate_over_the_peak_of_its_precision():
    ref = ModelConfig(vocab_size=65)  # the papers' model: 33.1 MFLOP a training token
    assert device.model_flops_per_token(ref) == pytest.approx(33.1e6, rel=2e-3)
    p = device.perf_record(ref, 300_000.0, runs=3, kind="NVIDIA H200")
    assert p["tokens_per_s"] == 900_000.0 and p["peak_tflops"] == 67.0
    assert p["mfu"] == pytest.approx(900_000 * device.model_flops_per_token(ref) / 67e12)
    bf16 = dataclasses.replace(ref, compute_dtype="bfloat16")
    assert device.perf_record(bf16, 1.0, 1, kind="NVIDIA H100 80GB HBM3")["peak_tflops"] == 989.4
    assert device.peak_tflops("NVIDIA H100 PCIe", "tf32") == 378.0  # the specific name first
    # no peak, no MFU: a CPU, or a precision the device has no units for
    assert device.perf_record(ref, 1e4, 1, kind="cpu")["mfu"] is None
    assert device.peak_tflops("Tesla T4", "bf16") is None
    # the committed H200 record of a-baseline at float32: 845k tokens/s, 42%
    # (experiments/results/paper_a/reference-f32/records/a-baseline/seed0.json)
    assert "MFU 41.8%" in device.perf_text(device.perf_record(ref, 845_000.0, 1, kind="H200"))
