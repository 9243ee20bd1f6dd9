"""The GPT: parameter counts, causality, jit == eager, attention core identities."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis.causality import audit_model
from mope_jax.attention.core import attend, causal_mask
from mope_jax.attention.registry import AttnBias
from mope_jax.config import ModelConfig
from mope_jax.model import GPT, count_params, init_params

TINY = ModelConfig(block_size=16, n_layer=2, n_head=2, n_embd=16, vocab_size=11, dropout=0.0)


def test_reference_parameter_count_is_pinned():
    # 6 x (12 E^2 + 13 E) + V E + T E + 2 E, E = T = 256, V = 65 (DESIGN.md: ~4.8M)
    cfg = ModelConfig()
    n = count_params(jax.eval_shape(lambda: init_params(cfg, jax.random.PRNGKey(0))))
    assert n == 4_821_248
    assert n == 6 * (12 * 256**2 + 13 * 256) + 65 * 256 + 256 * 256 + 2 * 256
    untied = dataclasses.replace(cfg, tie_embeddings=False)
    assert (
        count_params(jax.eval_shape(lambda: init_params(untied, jax.random.PRNGKey(0))))
        == n + 65 * 256
    )
    rope = dataclasses.replace(cfg, pos_encoding="none", qk_position="rope")
    assert (
        count_params(jax.eval_shape(lambda: init_params(rope, jax.random.PRNGKey(0))))
        == n - 256 * 256
    )


def test_init_is_normal_0p02():
    params = init_params(ModelConfig(n_layer=1), jax.random.PRNGKey(0))
    w = np.asarray(params["h_0"]["mlp"]["c_fc"]["kernel"])
    assert abs(w.std() - 0.02) < 5e-4 and abs(w.mean()) < 5e-4
    assert np.all(np.asarray(params["h_0"]["mlp"]["c_fc"]["bias"]) == 0)


@pytest.mark.parametrize(
    "variant",
    [
        dict(),
        dict(pos_encoding="none"),
        dict(pos_encoding="sinusoidal"),
        dict(pos_encoding="none", qk_position="rope"),
        dict(pos_encoding="none", qk_position="rope", rope_layout="half"),
        dict(pos_encoding="none", attn_bias="alibi"),
    ],
)
def test_full_model_is_causal(variant):
    cfg = dataclasses.replace(TINY, **variant)
    params = init_params(cfg, jax.random.PRNGKey(0))
    model = GPT(cfg)
    tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 16), 0, 11)
    base = model.apply({"params": params}, tokens)
    for k in (1, 7, 15):  # perturb tokens at t >= k: logits at t < k unchanged, bitwise
        other = tokens.at[:, k:].set((tokens[:, k:] + 3) % 11)
        out = model.apply({"params": params}, other)
        np.testing.assert_array_equal(np.asarray(out[:, :k]), np.asarray(base[:, :k]))
        assert not np.allclose(np.asarray(out[:, k:]), np.asarray(base[:, k:]))
    assert audit_model(cfg, params).causal


def test_jit_equals_eager():
    params = init_params(TINY, jax.random.PRNGKey(0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 16), 0, 11)
    f = lambda p, t: GPT(TINY).apply({"params": p}, t)  # noqa: E731
    np.testing.assert_allclose(
        np.asarray(jax.jit(f)(params, tokens)), np.asarray(f(params, tokens)), rtol=1e-5, atol=1e-6
    )


def test_gate_without_dropout_is_additive_log_bias():
    key = jax.random.PRNGKey(0)
    s = jax.random.normal(key, (1, 2, 5, 5))
    v = jax.random.normal(jax.random.fold_in(key, 1), (1, 5, 2, 3))
    logg = jnp.log(jax.nn.sigmoid(jax.random.normal(jax.random.fold_in(key, 2), (1, 2, 1, 5))))
    mask = causal_mask(5)
    gated = attend(s, v, mask=mask, bias=AttnBias(log_gate=logg))
    additive = attend(s, v, mask=mask, bias=AttnBias(add=logg))
    np.testing.assert_allclose(np.asarray(gated), np.asarray(additive), rtol=1e-5, atol=1e-6)


def test_attention_dropout_is_inverted_and_keyed():
    s = jnp.zeros((1, 1, 4, 4))
    v = jnp.ones((1, 4, 1, 1))
    out = attend(
        s,
        v,
        mask=causal_mask(4),
        dropout_rate=0.5,
        dropout_rng=jax.random.PRNGKey(0),
        deterministic=False,
    )
    again = attend(
        s,
        v,
        mask=causal_mask(4),
        dropout_rate=0.5,
        dropout_rng=jax.random.PRNGKey(0),
        deterministic=False,
    )
    np.testing.assert_array_equal(np.asarray(out), np.asarray(again))
    # uniform probs 1/(i+1) over i+1 keys, v = 1: out[i] = kept_i / (i+1) / (1 - 0.5)
    kept = np.asarray(out)[0, :, 0, 0] * np.arange(1, 5) * 0.5
    np.testing.assert_allclose(kept, np.round(kept), atol=1e-5)
    assert np.all((kept >= 0) & (kept <= np.arange(1, 5))) and not np.all(kept == np.arange(1, 5))


def test_sequence_longer_than_block_size_is_refused():
    params = init_params(TINY, jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="block_size"):
        GPT(TINY).apply({"params": params}, jnp.zeros((1, 17), jnp.int32))
