"""The library's evaluation protocols, tested once: context extension
(mope_jax.analysis.extension), position-targeted probes (mope_jax.analysis.probes) and the
energy stability distance (freq_energy.energy_tv), against closed forms on models whose output
is known (all-zero parameters: zero logits and uniform causal attention)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis import extension as ext
from mope_jax.analysis.freq_energy import energy_tv
from mope_jax.analysis.probes import source_attention, target_accuracy
from mope_jax.config import ModelConfig
from mope_jax.encodings.rope import extend_context
from mope_jax.model import GPT, init_params

V = 11
TINY = ModelConfig(
    vocab_size=V,
    block_size=16,
    n_layer=2,
    n_head=2,
    n_embd=16,
    dropout=0.0,
    pos_encoding="none",
    qk_position="rope",
)


def _zeros():
    return jax.tree.map(jnp.zeros_like, init_params(TINY, jax.random.PRNGKey(0)))


def test_energy_tv_closed_forms():
    p = np.array([[[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]])  # (L=1, H=2, F=3)
    assert energy_tv(p, p) == 0.0
    q = np.array([[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]])  # head 0: TV 0.5, head 1: disjoint, TV 1
    assert energy_tv(p, q) == pytest.approx(0.75, abs=1e-15)
    assert energy_tv(p.tolist(), q.tolist()) == energy_tv(q, p)  # lists (records) and symmetry
    with pytest.raises(ValueError, match="shapes"):
        energy_tv(p, q[..., :2])


def test_sweep_measures_each_rule_and_factor_once_and_shares_s1():
    calls = []

    def measure(cfg, s):
        calls.append(
            (cfg.rope_scaling, s, cfg.rope_factor, cfg.block_size, cfg.rope_original_length)
        )
        return object()

    out = ext.sweep(TINY, 16, measure, factors=(1, 2, 4))
    assert calls[0] == ("none", 1, 1.0, 16, 16)
    assert len(calls) == 1 + 2 * len(ext.METHODS)  # s = 1 once, s = 2 and 4 per rule
    assert {(m, s) for m, s, *_ in calls[1:]} == {(m, s) for m in ext.METHODS for s in (2, 4)}
    assert all(bs == 16 * s and f == float(s) for _, s, f, bs, _ in calls[1:])
    assert set(out) == {f"{m}@{s}" for m in ext.METHODS for s in (1, 2, 4)}
    assert all(out[f"{m}@1"] is out["none@1"] for m in ext.METHODS)
    assert len({id(out[f"{m}@2"]) for m in ext.METHODS}) == len(ext.METHODS)
    # no s = 1: nothing is shared, nothing invented
    assert set(ext.sweep(TINY, 16, lambda c, s: s, factors=(2,))) == {f"{m}@2" for m in ext.METHODS}


def test_every_rule_is_the_identity_at_s1():
    """Why :func:`ext.sweep` may evaluate only ``none@1``: each rule at factor 1 gives the
    trained model's logits."""
    params = init_params(TINY, jax.random.PRNGKey(3))
    x = jax.random.randint(jax.random.PRNGKey(4), (2, 16), 0, V)
    ref = GPT(TINY).apply({"params": params}, x, deterministic=True)
    for m in ext.METHODS:
        got = GPT(extend_context(TINY, m, 1.0)).apply({"params": params}, x, deterministic=True)
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=0, atol=1e-6, err_msg=m)


def test_windows_are_fixed_slices_of_the_stream():
    val = np.arange(1000) % 97
    w = ext.windows(val, 64, 5)
    starts = np.linspace(0, 1000 - 64 - 2, 5).astype(np.int64)
    assert w.shape == (5, 65) and w.dtype == np.int32
    for row, s in zip(w, starts):
        np.testing.assert_array_equal(row, val[s : s + 65])
    with pytest.raises(ValueError, match="cannot hold"):
        ext.windows(val[:60], 64, 2)


def test_losses_of_a_zero_model_are_ln_v_and_beyond_l_only_when_longer():
    val = np.random.default_rng(0).integers(0, V, 400)
    out = ext.losses(TINY, _zeros(), val, 16, 3, factors=(1, 2))
    assert set(out) == {f"{m}@{s}" for m in ext.METHODS for s in (1, 2)}
    assert out["none@1"]["beyond_L"] is None and out["pi@1"] is out["none@1"]
    for k, v in out.items():
        assert v["all"] == pytest.approx(math.log(V), abs=1e-5), k
        if k.endswith("@2"):
            assert v["beyond_L"] == pytest.approx(math.log(V), abs=1e-5), k


def test_target_accuracy_and_source_attention_of_a_zero_model():
    """Zero logits predict token 0 everywhere; zero q and k attend uniformly, so the query at
    j - 1 gives each of its j keys 1 / j."""
    params = _zeros()
    x = np.ones((4, 16), np.int32)
    j = np.array([3, 7, 11])
    x[:2, j] = 0  # half the windows hold the argmax token at the targets
    assert target_accuracy(TINY, params, x, j) == 0.5
    att = source_attention(TINY, params, x, j, distance=2)
    assert att.shape == (TINY.n_layer, TINY.n_head)
    np.testing.assert_allclose(att, np.mean(1.0 / j), rtol=1e-6)
    with pytest.raises(ValueError, match="target positions"):
        target_accuracy(TINY, params, x, np.array([0, 3]))
    with pytest.raises(ValueError, match="distance"):
        source_attention(TINY, params, x, j, distance=4)
