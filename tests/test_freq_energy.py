"""RoPE frequency energy (analysis/freq_energy.py, DESIGN.md section 3)."""

import dataclasses
import types

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis.freq_energy import (
    capture_qk,
    energy_report,
    frequency_energy,
    model_energies,
    normalise,
    pair_power,
    rope_energy_spectra,
    rope_energy_summary,
    summarize,
)
from mope_jax.config import Config, DataConfig, ModelConfig
from mope_jax.model import init_params

TINY = ModelConfig(
    block_size=16,
    n_layer=2,
    n_head=2,
    n_embd=16,
    vocab_size=11,
    dropout=0.0,
    pos_encoding="none",
    qk_position="rope",
)


def energy_np(q, k):
    """Independent float64 reference: E_i = mean over b and pairs m >= n of
    |q~_i(m)|^2 |k~_i(n)|^2."""
    q = np.asarray(q, np.float64)
    k = np.asarray(k, np.float64)
    a = q[..., 0::2] ** 2 + q[..., 1::2] ** 2  # (B,T,H,F)
    c = k[..., 0::2] ** 2 + k[..., 1::2] ** 2
    b, t, h, f = a.shape
    tot = np.zeros((h, f))
    for m in range(t):
        for n in range(m + 1):
            tot += (a[:, m] * c[:, n]).sum(0)
    return tot / (b * t * (t + 1) / 2)


def test_energy_matches_double_loop_reference():
    kq, kk = jax.random.split(jax.random.PRNGKey(0))
    q = (
        jax.random.normal(kq, (3, 7, 2, 8))
        * jnp.arange(1, 9, dtype=jnp.float32)[None, None, None, :]
    )
    k = jax.random.normal(kk, (3, 7, 2, 8))
    np.testing.assert_allclose(np.asarray(frequency_energy(q, k)), energy_np(q, k), rtol=1e-5)


def test_energies_non_negative_and_normalised():
    kq, kk = jax.random.split(jax.random.PRNGKey(1))
    q = jax.random.normal(kq, (2, 9, 3, 10))
    k = jax.random.normal(kk, (2, 9, 3, 10)) * 5.0
    e = frequency_energy(q, k)
    assert e.shape == (3, 5) and bool(jnp.all(e >= 0))
    np.testing.assert_allclose(np.asarray(normalise(e).sum(-1)), 1.0, rtol=1e-6)


def test_uniform_for_isotropic_random_qk_and_not_otherwise():
    kq, kk = jax.random.split(jax.random.PRNGKey(2))
    B, T, H, Dh = 64, 64, 2, 16  # F = 8
    q = jax.random.normal(kq, (B, T, H, Dh))
    k = jax.random.normal(kk, (B, T, H, Dh))
    pF = np.asarray(normalise(frequency_energy(q, k))) * (Dh // 2)  # 1 for exact uniformity
    # |q~_i|^2 ~ 2 chi^2_2 / 2 (mean 2, sd 2), so each E_i estimates 4 from N = B T = 4096
    # positions per head; the m >= n weights (linear in m and in T - n) cut the effective N by
    # 3/4, so the relative sd of E_i is ~ sqrt(2 / (0.75 N)) = 0.026 (q and k both contribute).
    # 0.15 is ~6 sd for one value, so the max over 16 values fails by chance with p < 1e-7.
    assert np.max(np.abs(pF - 1.0)) < 0.15
    # the same statistic sees a 2x amplitude on one pair (p_0 F ~ 4 F / (F + 3) = 2.9)
    q2 = q.at[..., :2].multiply(2.0)
    assert float(normalise(frequency_energy(q2, k))[0, 0]) * (Dh // 2) > 2.0


def test_half_layout_is_the_permuted_interleaved_layout():
    x = jax.random.normal(jax.random.PRNGKey(3), (2, 5, 3, 8))
    perm = np.array([0, 2, 4, 6, 1, 3, 5, 7])  # interleaved pair i -> (i, i + D/2)
    np.testing.assert_allclose(
        np.asarray(pair_power(x, "interleaved")),
        np.asarray(pair_power(x[..., perm], "half")),
        rtol=1e-6,
    )
    e_i = frequency_energy(x, x, "interleaved")
    e_h = frequency_energy(x[..., perm], x[..., perm], "half")
    np.testing.assert_allclose(np.asarray(e_i), np.asarray(e_h), rtol=1e-6)
    with pytest.raises(ValueError, match="layout"):
        pair_power(x, "split")


def test_summaries_closed_forms():
    theta = np.array([1.0, 0.1, 0.01, 0.001])
    uni = summarize(np.full((4,), 0.25), theta)
    np.testing.assert_allclose(uni["entropy"], np.log(4), rtol=1e-12)
    np.testing.assert_allclose(uni["log_theta_eff"], np.log(theta).mean(), rtol=1e-12)
    delta = summarize(np.array([[0.0, 0.0, 1.0, 0.0]]), theta)
    assert delta["dominant_theta"][0] == 0.01 and delta["entropy"][0] == 0.0
    np.testing.assert_allclose(delta["theta_eff"][0], 0.01, rtol=1e-12)


def test_captured_qk_are_the_layer_projections():
    params = init_params(TINY, jax.random.PRNGKey(0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 16), 0, 11)
    qk = capture_qk(TINY, params, tokens)
    assert len(qk) == 2 and qk[0][0].shape == (2, 16, 2, 8)
    # layer 0 by hand: q = c_attn(ln_1(wte[tokens]))[:, :, :E] (no position table in a RoPE model)
    p0 = params["h_0"]
    x = params["wte"]["embedding"][tokens]  # (B,T,E)
    xn = nn.LayerNorm(epsilon=1e-5).apply({"params": p0["ln_1"]}, x)
    qkv = xn @ p0["attn"]["c_attn"]["kernel"] + p0["attn"]["c_attn"]["bias"][None, None]  # (B,T,3E)
    q = qkv[..., :16].reshape(2, 16, 2, 8)  # (B,T,H,D)
    np.testing.assert_allclose(np.asarray(qk[0][0]), np.asarray(q), rtol=1e-5, atol=1e-6)
    e = np.asarray(model_energies(TINY, params, tokens))
    assert e.shape == (2, 2, 4) and np.all(e >= 0)


def test_training_hooks_report_rope_models_only():
    cfg = Config(
        model=TINY, data=DataConfig(source="blocks", block_len=6, num_symbols=10, num_tokens=2000)
    )
    state = types.SimpleNamespace(params=init_params(TINY, jax.random.PRNGKey(0)))
    summ = rope_energy_summary(cfg, state)
    assert set(summ) == {"rope_theta_eff", "rope_energy_entropy", "rope_energy_p"}
    assert np.asarray(summ["rope_energy_p"]).shape == (2, 4)
    spec = rope_energy_spectra(cfg, state)
    np.testing.assert_allclose(spec["rope_energy"].sum(-1), 1.0, rtol=1e-5)
    learned = dataclasses.replace(
        cfg, model=dataclasses.replace(TINY, pos_encoding="learned", qk_position="none")
    )
    assert rope_energy_summary(learned, state) == {} and rope_energy_spectra(learned, state) == {}
    rep = energy_report(TINY, state.params, np.zeros((1, 16), np.int32))
    assert len(rep["theta"]) == 4 and np.asarray(rep["p"]).shape == (2, 2, 4)


def test_spectra_dispatcher_includes_rope_energy():
    from mope_jax.analysis import spectra

    cfg = Config(
        model=TINY, data=DataConfig(source="blocks", block_len=6, num_symbols=10, num_tokens=2000)
    )
    state = types.SimpleNamespace(params=init_params(TINY, jax.random.PRNGKey(0)))
    assert "rope_theta_eff" in spectra.eval_summary(cfg, state)
    assert spectra.extract_spectra(cfg, state)["rope_energy"].shape == (2, 2, 4)
    assert "rope_theta_eff" not in spectra.eval_summary(TINY, state)  # no data config, no probe


def test_offset_attention_uses_the_models_own_rotation_and_rows_sum_to_one():
    """The probabilities are softmax(q.k / sqrt(D)) of the rotated q, k that the model's own
    RoPE module outputs (captured with capture_intermediates), causal, rows summing to 1."""
    from mope_jax.analysis.freq_energy import _attention_probs, offset_attention
    from mope_jax.model import GPT

    params = init_params(TINY, jax.random.PRNGKey(3))
    tokens = jax.random.randint(jax.random.PRNGKey(4), (3, 16), 0, 11)
    probs = np.asarray(_attention_probs(TINY, params, tokens), np.float64)  # (L,B,H,T,S)
    assert probs.shape == (2, 3, 2, 16, 16)
    np.testing.assert_allclose(probs.sum(-1), 1.0, atol=1e-5)
    assert np.all(probs[..., np.triu_indices(16, 1)[0], np.triu_indices(16, 1)[1]] == 0)
    _, inter = GPT(TINY).apply(
        {"params": params}, tokens, deterministic=True, capture_intermediates=True
    )
    for layer in range(2):
        q_rot, k_rot = inter["intermediates"][f"h_{layer}"]["attn"]["Rope_0"]["__call__"][0]
        s = np.einsum("bthd,bshd->bhts", np.asarray(q_rot, np.float64), np.asarray(k_rot))
        s = s / np.sqrt(TINY.head_dim) + np.where(np.tril(np.ones((16, 16))), 0.0, -np.inf)
        ref = np.exp(s - s.max(-1, keepdims=True))
        ref /= ref.sum(-1, keepdims=True)
        np.testing.assert_allclose(probs[layer], ref, atol=2e-6)
        for off in (0, 3, 15):
            m = np.arange(off, 16)
            want = ref[:, :, m, m - off].mean(axis=(0, 2))
            np.testing.assert_allclose(
                offset_attention(TINY, params, tokens, off)[layer], want, atol=2e-6
            )
    with pytest.raises(ValueError, match="offset 16"):
        offset_attention(TINY, params, tokens, 16)
    gated = dataclasses.replace(TINY, attn_bias="alibi")
    with pytest.raises(ValueError, match="attn_bias=alibi"):
        offset_attention(gated, params, tokens, 1)
