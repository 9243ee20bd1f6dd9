"""model.compute_dtype=bfloat16: bf16 matmul inputs, float32 accumulation, everything else f32."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.config import Config, ModelConfig, TrainConfig
from mope_jax.model import GPT, cross_entropy, init_params
from mope_jax.train import make_train


def _cfg(dtype: str, **kw) -> ModelConfig:
    return ModelConfig(
        vocab_size=17,
        block_size=16,
        n_layer=2,
        n_head=2,
        n_embd=32,
        dropout=0.0,
        compute_dtype=dtype,
        **kw,
    )


@pytest.mark.parametrize("tie", [True, False])
def test_bf16_matmuls_track_float32_and_keep_float32_state(tie):
    p = init_params(_cfg("float32", tie_embeddings=tie), jax.random.PRNGKey(0))
    p = jax.tree_util.tree_map(lambda a: a * 10 if a.ndim == 2 else a, p)  # O(1) activations
    x = jax.random.randint(jax.random.PRNGKey(1), (3, 16), 0, 17)
    y = jnp.roll(x, -1, axis=1)
    res = {}
    for d in ("float32", "bfloat16"):
        model = GPT(_cfg(d, tie_embeddings=tie))
        logits = model.apply({"params": p}, x)
        loss, grads = jax.value_and_grad(lambda q: cross_entropy(model.apply({"params": q}, x), y))(
            p
        )
        assert logits.dtype == jnp.float32
        assert all(g.dtype == jnp.float32 for g in jax.tree_util.tree_leaves(grads))
        res[d] = (np.asarray(logits), float(loss), grads)
    diff = np.abs(res["bfloat16"][0] - res["float32"][0])
    scale = np.abs(res["float32"][0]).max()
    # bf16 keeps 8 significant bits (relative rounding 2^-9 ~ 2e-3 per input): logits of O(1-10)
    # move by about 1e-2, far more than float32 rounding (1e-6) and far less than O(1)
    assert 1e-4 * scale < diff.max() < 3e-2 * scale
    assert abs(res["bfloat16"][1] - res["float32"][1]) < 1e-2 * res["float32"][1]
    for a, b in zip(
        jax.tree_util.tree_leaves(res["bfloat16"][2]), jax.tree_util.tree_leaves(res["float32"][2])
    ):
        np.testing.assert_allclose(a, b, rtol=0.1, atol=0.05 * float(np.abs(b).max()) + 1e-6)


def test_bf16_dots_take_bf16_inputs_and_accumulate_in_float32():
    cfg = _cfg("bfloat16")
    p = init_params(_cfg("float32"), jax.random.PRNGKey(0))
    x = jnp.zeros((2, 16), jnp.int32)
    hlo = jax.jit(lambda q: GPT(cfg).apply({"params": q}, x)).lower(p).as_text()
    dots = re.findall(r"stablehlo.dot_general.*", hlo)
    assert len(dots) == 2 * 6 + 1  # per layer: c_attn, scores, AV, c_proj, c_fc, c_proj; tied head
    for line in dots:
        ins, out = line.split("->")[0], line.split("->")[-1]
        assert "bf16" in ins and "f32" not in ins.split(":")[-1], line
        assert "f32" in out, line
    f32_hlo = jax.jit(lambda q: GPT(_cfg("float32")).apply({"params": q}, x)).lower(p).as_text()
    assert "bf16" not in f32_hlo


def test_bf16_training_steps_keep_float32_master_weights():
    cfg = Config(
        model=_cfg("bfloat16"),
        train=TrainConfig(batch_size=4, max_steps=5, warmup_steps=1, lr=1e-2),
    )
    trainer = make_train(cfg)
    data = jax.random.randint(jax.random.PRNGKey(3), (400,), 0, 17)
    state = jax.jit(trainer.init)(jax.random.PRNGKey(0))
    state, m = jax.jit(trainer.train_steps, static_argnums=2)(state, data, 3)
    assert all(a.dtype == jnp.float32 for a in jax.tree_util.tree_leaves(state.params))
    assert np.isfinite(np.asarray(m["loss"])).all()


def test_unknown_compute_dtype_is_refused():
    with pytest.raises(ValueError, match="compute_dtype='fp8'.*bfloat16"):
        init_params(_cfg("fp8"), jax.random.PRNGKey(0))
