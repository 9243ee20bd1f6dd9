"""The PyTorch reference (experiments/bench/torch_ref.py) computes the Flax GPT's loss.

Skipped when the optional extra ``torch`` is not installed.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from experiments.bench.torch_ref import TorchGPT, load_flax_params, loss as torch_loss  # noqa: E402
from mope_jax.config import ModelConfig  # noqa: E402
from mope_jax.model import GPT, cross_entropy, init_params  # noqa: E402

CFG = ModelConfig(vocab_size=23, block_size=16, n_layer=2, n_head=4, n_embd=32, dropout=0.1)


def _batch(cfg: ModelConfig, key_int: int = 1) -> tuple[np.ndarray, np.ndarray]:
    win = np.random.default_rng(key_int).integers(
        0, cfg.vocab_size, (3, cfg.block_size + 1)
    )  # (B,T+1)
    return win[:, :-1], win[:, 1:]


@pytest.mark.parametrize(
    "approximate,tied,bias", [(False, True, True), (True, False, True), (False, True, False)]
)
def test_torch_loss_and_logits_equal_flax(approximate, tied, bias):
    cfg = dataclasses.replace(CFG, gelu_approximate=approximate, tie_embeddings=tied, use_bias=bias)
    params = init_params(cfg, jax.random.PRNGKey(0))
    # Bigger weights than the N(0, 0.02) init, so the loss is far from log(V) and the GELU
    # and attention are exercised away from their linear regime.
    params = jax.tree_util.tree_map(lambda p: p * 10.0 if p.ndim == 2 else p + 0.1, params)
    x, y = _batch(cfg)
    logits_jax = GPT(cfg).apply({"params": params}, jnp.asarray(x), deterministic=True)
    loss_jax = float(cross_entropy(logits_jax, jnp.asarray(y)))

    model = TorchGPT(cfg).eval()
    load_flax_params(model, params)
    with torch.no_grad():
        logits_torch = model(torch.from_numpy(x)).numpy()
        loss_torch = float(torch_loss(model, torch.from_numpy(x), torch.from_numpy(y)))
    assert loss_jax > 0.5  # not a trivially tiny loss
    # Same f32 arithmetic in a different order (XLA vs ATen kernels, fused vs separate
    # softmax): 1e-5 relative on the loss, 1e-4 absolute on O(10) logits.
    np.testing.assert_allclose(loss_torch, loss_jax, rtol=1e-5)
    np.testing.assert_allclose(logits_torch, np.asarray(logits_jax), rtol=1e-5, atol=1e-4)


def test_torch_reference_rejects_other_variants():
    with pytest.raises(ValueError, match="baseline GPT only"):
        TorchGPT(dataclasses.replace(CFG, qk_position="rope", pos_encoding="none"))


@pytest.mark.parametrize("bias", [True, False])
def test_torch_parameter_count_equals_flax(bias):
    cfg = dataclasses.replace(CFG, use_bias=bias)
    params = init_params(cfg, jax.random.PRNGKey(0))
    n_flax = sum(p.size for p in jax.tree_util.tree_leaves(params))
    assert sum(p.numel() for p in TorchGPT(cfg).parameters()) == n_flax


def test_torch_weight_decay_groups_follow_decay_group():
    from experiments.bench.torch_ref import param_groups
    from mope_jax.config import TrainConfig

    model = TorchGPT(CFG)
    every = param_groups(model, TrainConfig(decay_group="all", weight_decay=0.1))
    assert len(every) == 1 and len(every[0]["params"]) == len(list(model.parameters()))
    decay, no_decay = param_groups(model, TrainConfig(decay_group="2d", weight_decay=0.1))
    assert all(p.dim() >= 2 for p in decay["params"]) and all(
        p.dim() < 2 for p in no_decay["params"]
    )
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))
