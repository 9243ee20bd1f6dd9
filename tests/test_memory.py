"""The memory estimate (mope_jax.memory): known answers, and no preset refused."""

import pytest

from mope_jax import memory
from mope_jax.config import apply_overrides
from mope_jax.errors import ConfigError
from mope_jax.presets import get_preset, presets


def test_num_params_matches_the_model():
    import jax

    from mope_jax.model import count_params, init_params

    for name in ("smoke", "cpu"):
        m = get_preset(name).model
        n = count_params(jax.eval_shape(lambda: init_params(m, jax.random.PRNGKey(0))))
        assert abs(memory.num_params(m) - n) <= 0.01 * n, (name, memory.num_params(m), n)


def test_known_answers():
    cfg = apply_overrides(
        get_preset("smoke"),
        ["model.n_layer=2", "model.n_embd=10", "model.n_head=2", "model.block_size=4"]
        + ["model.vocab_size=7", "train.batch_size=3", "train.eval_batches=5"]
        + ["data.num_tokens=1000", "data.block_len=4"],
    )
    P = 2 * (12 * 100 + 13 * 10) + 7 * 10 + 4 * 10 + 2 * 10
    assert memory.num_params(cfg.model) == P == 2790
    act = 4 * 3 * 4 * (2 * (24 * 10 + 5 * 2 * 4) + 5 * 7 + 2 * 10)
    assert memory.activation_bytes(cfg.model, 3) == act
    est = memory.training(cfg)
    assert est.parts["parameters and optimizer state"][0] == 20 * P
    assert est.parts["evaluation"][0] == 32 * 5 + act // 5
    assert est.parts["data"][0] == 16 * (1000 + 64 * 4)
    assert est.total == 20 * P + act + 16 * 1256  # the train step or the eval, not both
    four = memory.training(cfg, 4, vmapped=True)
    assert four.total == 4 * (20 * P + act) + 16 * 1256
    assert memory.training(cfg, 4).total == 4 * 20 * P + act + 16 * 1256  # map: one at a time


def test_refusal_names_the_estimate_the_memory_and_the_setting(monkeypatch):
    monkeypatch.setattr(memory, "host_available", lambda: (2**30, "MemAvailable"))
    monkeypatch.setattr(memory, "device_limit", lambda: (None, ""))
    big = apply_overrides(get_preset("smoke"), ["train.batch_size=100000"])
    with pytest.raises(
        ConfigError, match=r"needs about .* GiB .* 1\.0 GiB of .*lower train\.batch"
    ):
        memory.check_training(big)
    memory.check_training(get_preset("smoke"))
    monkeypatch.setattr(memory, "host_available", lambda: (None, ""))
    memory.check_training(big)  # unknown memory: nothing refused


def test_no_preset_is_refused_on_a_16_gib_machine(monkeypatch):
    monkeypatch.setattr(memory, "host_available", lambda: (16 * 2**30, "a 16 GiB machine"))
    monkeypatch.setattr(memory, "device_limit", lambda: (None, ""))
    for p in presets().values():
        memory.check_training(p.build())
    memory.check_training(get_preset("reference"), 3)  # a campaign's 3 seeds, strategy map


def test_out_of_memory_errors_are_recognised():
    import numpy as np

    assert memory.is_out_of_memory(MemoryError())
    assert memory.is_out_of_memory(
        (getattr(np, "_core", None) or np.core)._exceptions._ArrayMemoryError(
            (10**12,), np.dtype(np.float32)
        )
    )
    XlaRuntimeError = type("XlaRuntimeError", (RuntimeError,), {})
    assert memory.is_out_of_memory(XlaRuntimeError("RESOURCE_EXHAUSTED: Out of memory"))
    assert not memory.is_out_of_memory(XlaRuntimeError("INTERNAL: something else"))
    assert not memory.is_out_of_memory(ValueError("RESOURCE_EXHAUSTED"))


@pytest.mark.parametrize("precision", ["f32", "tf32", "bf16"])
def test_the_estimate_bounds_xla_at_every_precision(precision):
    """The activation estimate is keyed on ModelConfig.precision and bounds what XLA:CPU's
    memory analysis of the compiled train step holds as temporaries, at each precision (bf16:
    mixed precision, counted at 4 bytes a value; the module doc says why)."""
    import jax
    import jax.numpy as jnp

    from mope_jax.train import make_train

    setting = {
        "f32": [],
        "tf32": ["model.matmul_precision=tf32"],
        "bf16": ["model.compute_dtype=bfloat16"],
    }[precision]
    cfg = apply_overrides(
        get_preset("smoke"),
        ["model.n_layer=2", "model.n_embd=64", "model.n_head=4", "model.block_size=64"]
        + ["train.batch_size=16"]
        + setting,
    )
    assert cfg.model.precision == precision
    trainer = make_train(cfg)
    state = jax.eval_shape(trainer.init, jax.random.PRNGKey(0))
    data = jax.ShapeDtypeStruct((100_000,), jnp.int32)
    compiled = jax.jit(trainer.train_steps, static_argnums=2).lower(state, data, 1).compile()
    temp = compiled.memory_analysis().temp_size_in_bytes
    est = memory.activation_bytes(cfg.model, 16)
    assert temp <= est <= 2 * temp, (precision, temp, est)
