"""model.attn_query_blocks (opt-in): causal attention computed per query block is
the default full-matrix attention to float32 rounding, for every model variant, with the same
dropout bits, and it stays causal."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis.causality import audit_model
from mope_jax.attention.core import causal_block_bounds
from mope_jax.config import Config, ModelConfig, TrainConfig, apply_overrides
from mope_jax.errors import ConfigError
from mope_jax.model import GPT, init_params
from mope_jax.presets import apply_variant, get_preset, model_variants
from mope_jax.train import make_train


@pytest.mark.parametrize("t,n", [(8, 2), (13, 3), (16, 4), (5, 8), (256, 2)])
def test_block_bounds_tile_the_rows_and_skip_the_future(t, n):
    bounds = causal_block_bounds(t, n)
    rows = [r for r0, r1 in bounds for r in range(r0, r1)]
    assert rows == list(range(t))  # every query row exactly once, in order
    assert len(bounds) == min(n, t)
    pairs = sum((r1 - r0) * r1 for r0, r1 in bounds)  # scored (query, key) pairs
    assert t * (t + 1) // 2 <= pairs <= t * t
    if n == 2 and t % 2 == 0:
        assert pairs == 3 * t * t // 4


def _small(fields: dict, blocks: int, t: int = 13) -> ModelConfig:
    base = dict(block_size=t, n_layer=1, n_head=2, n_embd=32, dropout=0.0, vocab_size=17)
    return ModelConfig(**(base | fields | {"attn_query_blocks": blocks}))


@pytest.mark.parametrize("variant", sorted(model_variants()))
def test_blocked_logits_equal_the_full_matrix_for_every_variant(variant):
    """T = 13 in 3 blocks of 4, 5, 4 rows (unequal on purpose); random LayerNorms so that no
    block sees a degenerate input."""
    fields = model_variants()[variant].model
    full, blocked = _small(fields, 1), _small(fields, 3)
    params = init_params(full, jax.random.PRNGKey(0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 13), 0, 17)
    outs = [GPT(c).apply({"params": params}, tokens, deterministic=True) for c in (full, blocked)]
    assert np.all(np.isfinite(outs[0]))
    np.testing.assert_allclose(outs[1], outs[0], rtol=2e-5, atol=2e-5)


def _dropout_configs(variant: str) -> list[Config]:
    base = apply_variant(
        Config(
            model=ModelConfig(
                vocab_size=11, block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.1
            ),
            train=TrainConfig(batch_size=4, max_steps=10, warmup_steps=1, lr=1e-2),
        ),
        variant,
    )
    return [
        dataclasses.replace(base, model=dataclasses.replace(base.model, attn_query_blocks=n))
        for n in (1, 2)
    ]


@pytest.mark.parametrize("variant", ["learned", "rope", "a-ega-morlet-causal"])
def test_blocked_gradients_equal_the_full_matrix_with_dropout(variant):
    """Dropout 0.1 on the attention probabilities: the blocks slice one (B,H,T,T) draw, so they
    drop the same entries, and the gradients agree to float32 rounding (dropping other
    entries would change them by O(1) of their scale)."""
    cfgs = _dropout_configs(variant)
    params = init_params(cfgs[0].model, jax.random.PRNGKey(0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (4, 17), 0, 11)

    def loss(p, model_cfg):
        logits = GPT(model_cfg).apply(
            {"params": p},
            tokens[:, :-1],
            deterministic=False,
            rngs={"dropout": jax.random.PRNGKey(5)},
        )
        logp = jax.nn.log_softmax(logits)
        return -jnp.mean(jnp.take_along_axis(logp, tokens[:, 1:, None], -1))

    grads = [jax.tree_util.tree_leaves(jax.grad(loss)(params, c.model)) for c in cfgs]
    scale = max(float(jnp.abs(g).max()) for g in grads[0])
    assert scale > 1e-3
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-6 * scale)


def test_blocked_training_losses_equal_the_full_matrix():
    """Through make_train (the campaigns' path): same init, and the losses of 3 steps with
    dropout agree to float32 rounding. (Parameters after Adam are not compared: a gradient
    that is ~0 in exact arithmetic is rounding noise that Adam scales to O(lr).)"""
    trainers = [make_train(c) for c in _dropout_configs("learned")]
    data = jnp.asarray(np.random.default_rng(0).integers(0, 11, 500), jnp.int32)
    states = [jax.jit(t.init)(jax.random.PRNGKey(0)) for t in trainers]
    for a, b in zip(jax.tree_util.tree_leaves(states[0]), jax.tree_util.tree_leaves(states[1])):
        np.testing.assert_array_equal(a, b)
    losses = [np.asarray(t.train_steps(s, data, 3)[1]["loss"]) for t, s in zip(trainers, states)]
    assert np.all(np.isfinite(losses[0])) and losses[0][0] > 1.0
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)


def test_blocked_attention_passes_the_causality_audit():
    cfg = _small({"pos_encoding": "learned"}, 4, t=24)
    res = audit_model(cfg, init_params(cfg, jax.random.PRNGKey(0)))
    assert res.causal and res.leak == 0.0


def test_blocked_attention_at_a_length_below_block_size():
    """The blocks follow the input's length, not block_size: 2 blocks of a 21-token input to a
    model built for 32 (odd, so the blocks are 10 and 11 rows)."""
    cfg = _small(model_variants()["rope"].model, 2, t=32)
    params = init_params(cfg, jax.random.PRNGKey(0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (1, 21), 0, 17)
    ref = GPT(dataclasses.replace(cfg, attn_query_blocks=1)).apply(
        {"params": params}, tokens, deterministic=True
    )
    out = GPT(cfg).apply({"params": params}, tokens, deterministic=True)
    np.testing.assert_allclose(out, ref, rtol=2e-5, atol=2e-5)


def test_attn_query_blocks_below_one_fails_at_config_build():
    with pytest.raises(ConfigError, match="attn_query_blocks"):
        apply_overrides(get_preset("cpu"), ["model.attn_query_blocks=0"])
