"""RoPE context extension (encodings/rope.py) against its closed forms (DESIGN.md section 3)."""

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis.causality import audit_model
from mope_jax.attention.baseline import Rope
from mope_jax.config import ModelConfig
from mope_jax.encodings.rope import (
    SCALINGS,
    apply_rope,
    extend_context,
    rope_frequencies,
    yarn_logit_scale,
    yarn_ramp,
)
from mope_jax.model import GPT, init_params

D, BASE = 32, 10000.0


def theta64(d=D, base=BASE):
    return base ** (-np.arange(0, d, 2) / d)  # float64 reference


@pytest.mark.parametrize("s", [1.0, 2.0, 4.0, 7.5])
def test_pi_divides_every_frequency_by_s(s):
    got = np.asarray(rope_frequencies(D, BASE, scaling="pi", factor=s))
    np.testing.assert_allclose(got, theta64() / s, rtol=1e-6)


@pytest.mark.parametrize("s", [2.0, 4.0, 16.0])
def test_ntk_keeps_highest_and_divides_lowest_by_s(s):
    got = np.asarray(rope_frequencies(D, BASE, scaling="ntk", factor=s))
    want = (BASE * s ** (D / (D - 2))) ** (-np.arange(0, D, 2) / D)  # base' = base s^(D/(D-2))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert got[0] == 1.0
    np.testing.assert_allclose(got[-1], theta64()[-1] / s, rtol=1e-6)
    # strictly between: divided by less than s, more than 1
    ratio = theta64()[1:-1] / got[1:-1]
    assert np.all(ratio > 1.0) and np.all(ratio < s)


def test_dynamic_ntk_is_none_up_to_the_original_length_and_ntk_beyond():
    none = np.asarray(rope_frequencies(D, BASE))
    for t in (1, 32, 64):
        got = np.asarray(
            rope_frequencies(D, BASE, scaling="dynamic_ntk", original_length=64, seq_len=t)
        )
        np.testing.assert_array_equal(got, none)
    for t in (96, 128, 256):
        got = np.asarray(
            rope_frequencies(D, BASE, scaling="dynamic_ntk", original_length=64, seq_len=t)
        )
        want = np.asarray(rope_frequencies(D, BASE, scaling="ntk", factor=t / 64))
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="original_length"):
        rope_frequencies(D, BASE, scaling="dynamic_ntk", seq_len=10)


def test_yarn_ramp_endpoints_and_interpolation():
    L, s, alpha, beta = 256, 4.0, 1.0, 32.0
    theta = theta64(64)
    r = L * theta / (2 * math.pi)  # rotations over the training window
    assert (
        (r > beta).any() and (r < alpha).any() and ((r > alpha) & (r < beta)).any()
    )  # all three regimes
    got = np.asarray(rope_frequencies(64, BASE, scaling="yarn", factor=s, original_length=L))
    hi, lo, mid = r >= beta, r <= alpha, (r > alpha) & (r < beta)
    np.testing.assert_allclose(got[hi], theta[hi], rtol=1e-6)  # gamma = 1: kept
    np.testing.assert_allclose(got[lo], theta[lo] / s, rtol=1e-6)  # gamma = 0: interpolated (PI)
    gamma = (r[mid] - alpha) / (beta - alpha)
    np.testing.assert_allclose(
        got[mid], (1 - gamma) * theta[mid] / s + gamma * theta[mid], rtol=1e-5
    )
    g = np.asarray(yarn_ramp(jnp.asarray(theta, jnp.float32), L, alpha, beta))
    assert g.min() == 0.0 and g.max() == 1.0


def test_yarn_logit_scale_closed_form_and_applied_to_scores():
    assert yarn_logit_scale(1.0) == 1.0
    np.testing.assert_allclose(yarn_logit_scale(4.0), (0.1 * math.log(4.0) + 1.0) ** 2, rtol=1e-12)
    cfg = ModelConfig(
        n_head=1, n_embd=D, rope_scaling="yarn", rope_factor=4.0, rope_original_length=16
    )
    key_q, key_k = jax.random.split(jax.random.PRNGKey(0))
    q = jax.random.normal(key_q, (1, 8, 1, D))
    k = jax.random.normal(key_k, (1, 8, 1, D))
    pos = jnp.arange(8)
    qy, ky = Rope(BASE, "interleaved", cfg)(q, k, pos)
    freqs = rope_frequencies(D, BASE, scaling="yarn", factor=4.0, original_length=16)
    q0, k0 = apply_rope(q, pos, freqs=freqs), apply_rope(k, pos, freqs=freqs)
    got = jnp.einsum("BTHD,BSHD->BHTS", qy, ky)
    want = jnp.einsum("BTHD,BSHD->BHTS", q0, k0) * yarn_logit_scale(4.0)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="unknown RoPE scaling"):
        rope_frequencies(D, scaling="linear")
    with pytest.raises(ValueError, match=">= 1"):
        rope_frequencies(D, scaling="pi", factor=0.5)
    with pytest.raises(ValueError, match="original_length"):
        rope_frequencies(D, scaling="yarn", factor=2.0)


TINY = ModelConfig(
    block_size=16,
    n_layer=1,
    n_head=2,
    n_embd=16,
    vocab_size=11,
    dropout=0.0,
    pos_encoding="none",
    qk_position="rope",
)


def test_model_passes_scaling_through_config():
    params = init_params(TINY, jax.random.PRNGKey(0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 16), 0, 11)
    base = GPT(TINY).apply({"params": params}, tokens)
    # dynamic NTK at T <= L is exactly the unscaled model
    dyn = dataclasses.replace(TINY, rope_scaling="dynamic_ntk", rope_original_length=16)
    np.testing.assert_array_equal(
        np.asarray(GPT(dyn).apply({"params": params}, tokens)), np.asarray(base)
    )
    # PI with s = 2 changes the logits, and the module rotates q by theta m / 2 (positions halved)
    pi = dataclasses.replace(TINY, rope_scaling="pi", rope_factor=2.0, rope_original_length=16)
    out_pi = GPT(pi).apply({"params": params}, tokens)
    assert float(jnp.max(jnp.abs(out_pi - base))) > 1e-4
    q = jax.random.normal(jax.random.PRNGKey(2), (1, 5, 2, 8))
    qp, _ = Rope(TINY.rope_base, "interleaved", pi)(q, q, jnp.arange(5))
    np.testing.assert_allclose(
        np.asarray(qp), np.asarray(apply_rope(q, jnp.arange(5) / 2.0)), rtol=1e-5, atol=1e-6
    )


@pytest.mark.parametrize("scaling", SCALINGS)
def test_extend_context_runs_longer_and_stays_causal(scaling):
    params = init_params(TINY, jax.random.PRNGKey(0))
    ext = extend_context(TINY, scaling, 4.0)
    assert ext.block_size == 64 and ext.rope_original_length == 16 and ext.rope_factor == 4.0
    tokens = jax.random.randint(jax.random.PRNGKey(1), (1, 64), 0, 11)
    assert GPT(ext).apply({"params": params}, tokens).shape == (1, 64, 11)
    if scaling in (
        "dynamic_ntk",
        "yarn",
    ):  # the length-dependent ones (the rest only rescale theta)
        assert audit_model(ext, params, seq_len=24).causal
    with pytest.raises(ValueError, match="learned"):
        extend_context(dataclasses.replace(TINY, pos_encoding="learned"), "pi", 2.0)
