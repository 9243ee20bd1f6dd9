"""Precision is part of the experiment: ``model.matmul_precision`` and ``model.compute_dtype``
name it (``ModelConfig.precision``), every matmul of the model gets it, a record stores it in
its config, and a campaign row never mixes two (a record of another precision is stale)."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest

from mope_jax.campaign.configs import config_diff
from mope_jax.config import Config, ConfigError, ModelConfig, TrainConfig
from mope_jax.model import GPT, init_params

SMALL = dict(block_size=8, n_layer=1, n_head=2, n_embd=16, vocab_size=11)


@pytest.mark.parametrize(
    "fields, word",
    [
        ({}, "f32"),
        ({"matmul_precision": "tf32"}, "tf32"),
        ({"compute_dtype": "bfloat16"}, "bf16"),
    ],
)
def test_precision_names_the_combination(fields, word):
    assert ModelConfig(**SMALL, **fields).precision == word


def test_bf16_with_tf32_is_refused_in_one_line():
    with pytest.raises(ConfigError) as e:
        Config(model=ModelConfig(**SMALL, compute_dtype="bfloat16", matmul_precision="tf32"))
    assert "model.matmul_precision" in str(e.value) and "highest" in str(e.value)
    with pytest.raises(ConfigError) as e:
        Config(model=ModelConfig(**SMALL, matmul_precision="fp8"))
    assert "matmul_precision" in str(e.value)


def _precisions_of_the_training_step(**fields) -> tuple[set[str], int]:
    """The precision attributes of every dot_general in the lowered gradient of the loss."""
    cfg = ModelConfig(**SMALL, **fields)
    params = init_params(cfg, jax.random.PRNGKey(0))
    x = jnp.zeros((2, 8), jnp.int32)
    grad = jax.jit(jax.grad(lambda p: GPT(cfg).apply({"params": p}, x).sum()))
    text = grad.lower(params).as_text()
    found = re.findall(r"precision = \[([A-Z_]+), ([A-Z_]+)\]", text)
    return {a for pair in found for a in pair}, text.count("dot_general")


@pytest.mark.parametrize("name, want", [("highest", "HIGHEST"), ("tf32", "HIGH")])
def test_every_matmul_forward_and_backward_gets_the_precision(name, want):
    """jax's 'tensorfloat32' is XLA's HIGH (TF32 on a GPU that has it); 'highest' is float32.
    The backward pass's matmuls carry the same precision as the forward ones."""
    seen, dots = _precisions_of_the_training_step(matmul_precision=name)
    assert dots >= 10 and seen == {want}


def test_a_global_default_does_not_change_a_models_precision():
    """An environment's JAX_DEFAULT_MATMUL_PRECISION (e.g. a device job's) cannot make a
    float32 model silently TF32: the model's field wins inside the model."""
    with jax.default_matmul_precision("tensorfloat32"):
        seen, _ = _precisions_of_the_training_step()
    assert seen == {"HIGHEST"}


def test_a_record_of_another_precision_is_stale_and_bookkeeping_is_not():
    old = Config(model=ModelConfig(**SMALL), train=TrainConfig(checkpoint_interval=500)).to_dict()
    new = Config(
        model=ModelConfig(**SMALL, matmul_precision="tf32"),
        train=TrainConfig(checkpoint_interval=5000, log_interval=250, keep_checkpoints=1),
    ).to_dict()
    assert config_diff(old, new) == ["model.matmul_precision: 'highest' -> 'tf32'"]
    # a record written before the field existed was made at full float32 precision
    del old["model"]["matmul_precision"]
    assert config_diff(old, Config(model=ModelConfig(**SMALL)).to_dict()) == []
