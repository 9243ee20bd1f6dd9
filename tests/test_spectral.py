"""Spectral Q/K filters (attention/spectral.py) and paper C diagnostics
(analysis/diagnostics.py)."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis import diagnostics as dg
from mope_jax.attention import spectral as sp
from mope_jax.config import ModelConfig
from mope_jax.model import GPT, init_params

KEY = jax.random.PRNGKey(0)


def _qk(b=2, t=16, h=3, d=4, seed=0):
    kq, kk = jax.random.split(jax.random.PRNGKey(seed))
    return jax.random.normal(kq, (b, t, h, d)), jax.random.normal(kk, (b, t, h, d))


def _np_causal_conv(u, h):
    """float64 numpy reference: y[t] = sum_{j<=t, j<K} h[j] u[t-j], per head (axis 2)."""
    u, h = np.asarray(u, np.float64), np.asarray(h, np.float64)
    y = np.zeros_like(u)
    t_len, k_len = u.shape[1], h.shape[1]
    for t in range(t_len):
        for j in range(min(t + 1, k_len)):
            y[:, t] += h[None, :, j, None] * u[:, t - j]
    return y


# ----------------------------------------------------------------- closed forms


def test_identity_filter_is_exact():
    q, _ = _qk(t=17)  # odd T too
    for t in (16, 17):
        x = q[:, :t]
        w = jnp.ones((x.shape[2], t // 2 + 1))
        np.testing.assert_allclose(sp.spectral_filter(x, w), x, rtol=1e-5, atol=1e-5)
    # identity rotation basis
    x = q[:, :16]
    m = jnp.asarray(sp.random_orthogonal(16, 3), jnp.float32)
    np.testing.assert_allclose(sp.basis_filter(x, jnp.ones((3, 16)), m), x, rtol=1e-5, atol=1e-5)


def test_single_bin_window_selects_one_frequency():
    """A window that keeps only bin f0 returns the projection of q on cos/sin at f0."""
    t, f0 = 32, 5
    tt = np.arange(t)
    sig = np.cos(2 * np.pi * f0 * tt / t) + 0.7 * np.sin(2 * np.pi * 9 * tt / t)
    x = jnp.asarray(sig, jnp.float32)[None, :, None, None]  # (1,T,1,1)
    w = jnp.zeros((1, t // 2 + 1)).at[0, f0].set(1.0)
    np.testing.assert_allclose(
        sp.spectral_filter(x, w)[0, :, 0, 0], np.cos(2 * np.pi * f0 * tt / t), atol=1e-5
    )


def test_windows_normalised():
    c = jnp.asarray([[0.5, 4.0, 30.0, 200.0]])  # includes a centre far outside [0, F)
    g = sp.gaussian_window(c, 17, 2.0)
    np.testing.assert_allclose(g.sum(-1), 1.0, rtol=1e-6)
    m = sp.mexhat_window(c, 17, 2.0)
    np.testing.assert_allclose(jnp.abs(m).sum(-1), 1.0, rtol=1e-6)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(m))
    f = np.arange(17.0)
    ref = np.exp(-((f - 4.0) ** 2) / 8.0)
    np.testing.assert_allclose(g[0, 1], ref / ref.sum(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("k_len", [1, 5, 16, 40])
def test_causal_convs_agree_with_reference(k_len):
    u, _ = _qk(t=16)
    h = jax.random.normal(jax.random.PRNGKey(1), (3, k_len))
    ref = _np_causal_conv(u, h[:, :16])
    for conv in (sp.causal_conv_direct, sp.causal_conv_fft, sp.causal_conv_toeplitz):
        # FFT round-off on O(1) inputs: ~1e-6 absolute in float32
        np.testing.assert_allclose(conv(u, h), ref, rtol=1e-5, atol=2e-6, err_msg=conv.__name__)


def test_circular_conv_wraps_the_future():
    u, _ = _qk(t=16)
    h = jax.random.normal(jax.random.PRNGKey(1), (3, 5))
    y = sp.circular_conv_fft(u, h)
    # y[0] = h[0] u[0] + sum_{j>=1} h[j] u[T-j]: the last positions reach position 0
    y0 = np.einsum("HJ,BJHD->BHD", np.asarray(h), np.asarray(u)[:, [0, 15, 14, 13, 12]])
    np.testing.assert_allclose(y[:, 0], y0, rtol=1e-5, atol=2e-6)
    assert np.abs(np.asarray(y) - _np_causal_conv(u, h)).max() > 1e-2


def test_kernel_taps_shapes_and_values():
    a = jnp.asarray([2.0, 8.0])
    g = sp.kernel_taps("gauss", a, 10)
    j = np.arange(10.0)
    ref = np.exp(-(j**2) / 8.0)
    np.testing.assert_allclose(g[0, 0], ref / ref.sum(), rtol=1e-5)
    m = sp.kernel_taps("morlet", a, 10)
    assert m.shape == (2, 2, 10)
    z = np.exp(-(j**2) / 128.0) * np.exp(1j * 6.0 * j / 8.0)
    z = z / np.abs(z).sum()
    np.testing.assert_allclose(m[0, 1], z.real, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(m[1, 1], z.imag, rtol=1e-4, atol=1e-6)
    mh = sp.kernel_taps("mexhat", a, 10)
    np.testing.assert_allclose(jnp.abs(mh).sum(-1), 1.0, rtol=1e-6)


def test_morlet_score_is_re_re_plus_im_im():
    q, k = _qk(t=12)
    filt = sp.CausalKernelFilter(3, "morlet", 12, 3.0, False, 6.0, "toeplitz")
    qs, ks = filt.apply({}, q, k)
    taps = sp.kernel_taps("morlet", jnp.full((3,), 3.0), 12)
    hc = np.asarray(taps[0]) + 1j * np.asarray(taps[1])
    qc = _np_causal_conv(q, hc.real) + 1j * _np_causal_conv(q, hc.imag)
    kc = _np_causal_conv(k, hc.real) + 1j * _np_causal_conv(k, hc.imag)
    ref = np.einsum("BTHD,BSHD->BHTS", qc.real, kc.real) + np.einsum(
        "BTHD,BSHD->BHTS", qc.imag, kc.imag
    )
    np.testing.assert_allclose(jnp.einsum("BTHD,BSHD->BHTS", qs, ks), ref, rtol=1e-4, atol=1e-5)


def test_multifourier_score_is_mean_of_k_scores():
    q, k = _qk(t=16)
    filt = sp.SpectralFilter(3, (2.0, 5.0), 2.0)
    params = filt.init(KEY, q, k)
    qs, ks = filt.apply(params, q, k)
    assert qs.shape == (2, 16, 3, 8)
    w = sp.gaussian_window(jnp.asarray([[2.0] * 3, [5.0] * 3]), 9, 2.0)  # (K,H,F)
    scores = [
        jnp.einsum("BTHD,BSHD->BHTS", sp.spectral_filter(q, w[i]), sp.spectral_filter(k, w[i]))
        for i in range(2)
    ]
    np.testing.assert_allclose(
        jnp.einsum("BTHD,BSHD->BHTS", qs, ks), (scores[0] + scores[1]) / 2, rtol=1e-5, atol=1e-6
    )


def test_fnet_mix_matches_numpy():
    x = jax.random.normal(KEY, (2, 8, 6))
    ref = np.fft.fft2(np.asarray(x, np.float64), axes=(1, 2), norm="ortho").real
    np.testing.assert_allclose(sp.fnet_mix(x), ref, rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------- phase surrogates


@pytest.mark.parametrize("mode", sp.PHASE_MODES)
def test_phase_surrogates_preserve_amplitude_spectra(mode):
    q, k = _qk(t=16)
    qf, kf = jnp.fft.rfft(q, axis=1), jnp.fft.rfft(k, axis=1)
    qs, ks = sp.phase_surrogate(qf, kf, mode, KEY, 16)
    np.testing.assert_allclose(jnp.abs(qs), jnp.abs(qf), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.abs(ks), jnp.abs(kf), rtol=1e-5, atol=1e-6)
    # and through the time domain: the surrogate signal has the same amplitude spectrum (every
    # surrogate leaves DC and Nyquist real, so irfft keeps them whole)
    w = jnp.ones((3, 9))
    qt, kt = sp.spectral_filter_qk(q, k, w, phase=mode, key=KEY)
    gain = np.ones((1, 9, 1, 1))
    # atol: irfft/rfft round trip of O(1) inputs in float32
    np.testing.assert_allclose(
        jnp.abs(jnp.fft.rfft(qt, axis=1)), jnp.abs(qf) * gain, rtol=1e-4, atol=1e-4
    )
    np.testing.assert_allclose(
        jnp.abs(jnp.fft.rfft(kt, axis=1)), jnp.abs(kf) * gain, rtol=1e-4, atol=1e-4
    )
    if mode != "none":  # and it does change the signal
        assert float(jnp.abs(qt - q).max() + jnp.abs(kt - k).max()) > 1e-2


def test_additive_shared_phases_keep_cross_spectrum():
    q, k = _qk(t=16)
    qf, kf = jnp.fft.rfft(q, axis=1), jnp.fft.rfft(k, axis=1)
    qs, ks = sp.phase_surrogate(qf, kf, "add-shared", KEY, 16)
    np.testing.assert_allclose(qs * jnp.conj(ks), qf * jnp.conj(kf), rtol=1e-4, atol=1e-4)
    qi, ki = sp.phase_surrogate(qf, kf, "add-independent", KEY, 16)
    assert float(jnp.abs(qi * jnp.conj(ki) - qf * jnp.conj(kf)).max()) > 1e-1


# ----------------------------------------------------------------- learned parameters


def _tiny(**kw):
    return ModelConfig(
        block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0, vocab_size=11, **kw
    )


@pytest.mark.parametrize(
    "fields",
    [
        dict(qk_filter="fourier"),
        dict(qk_filter="multifourier"),
        dict(qk_filter="mexhat-window"),
        dict(qk_position="morlet-xcorr"),
        dict(qk_filter="causal-morlet"),
    ],
)
def test_learned_centre_and_scale_gradients_are_finite(fields):
    cfg = _tiny(**fields)
    params = init_params(cfg, KEY)
    tokens = jax.random.randint(KEY, (2, 16), 0, 11)

    def loss(p):
        return GPT(cfg).apply({"params": p}, tokens, deterministic=True).std()

    grads = jax.jit(jax.grad(loss))(params)
    named = {**dg._named(grads, "log_center"), **dg._named(grads, "log_scale")}
    assert named, "no learned centre/scale found"
    for path, g in named.items():
        assert np.all(np.isfinite(g)), path
        assert np.abs(g).max() > 0, f"{path}: zero gradient"


def test_random_filter_has_no_parameters_and_is_fixed():
    cfg = _tiny(qk_filter="random")
    p0, p1 = init_params(cfg, jax.random.PRNGKey(0)), init_params(cfg, jax.random.PRNGKey(1))
    assert not dg._named(p0, "log_center")
    tokens = jax.random.randint(KEY, (1, 16), 0, 11)
    same = dataclasses.replace(cfg, filter_seed=0)
    out_a = GPT(cfg).apply({"params": p0}, tokens)
    out_b = GPT(same).apply({"params": p0}, tokens)
    np.testing.assert_array_equal(out_a, out_b)
    del p1


def test_learned_periods_at_init():
    cfg = _tiny(qk_filter="multifourier")
    params = init_params(cfg, KEY)
    (periods,) = dg.learned_periods(cfg, params).values()
    np.testing.assert_allclose(periods[:, 0], sp.PAPER_PERIODS, rtol=1e-5)
    cfg1 = _tiny(qk_filter="fourier")
    (p1,) = dg.learned_periods(cfg1, init_params(cfg1, KEY)).values()
    np.testing.assert_allclose(p1, 16 / 4.0, rtol=1e-5)


def test_conv_impls_give_the_same_model():
    tokens = jax.random.randint(KEY, (2, 16), 0, 11)
    outs = []
    for impl in sp.CONV_IMPLS:
        cfg = _tiny(qk_filter="causal-gauss", conv_impl=impl, kernel_len=6)
        outs.append(jax.jit(GPT(cfg).apply)({"params": init_params(cfg, KEY)}, tokens))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[0], outs[2], rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------- diagnostics


def test_shuffle_is_one_global_permutation_and_gap_sign():
    rng = np.random.default_rng(0)
    val = np.tile(np.arange(7), 200)
    s = dg.shuffle_tokens(val, 3)
    assert sorted(s.tolist()) == sorted(val.tolist()) and not np.array_equal(s, val)
    x, y = dg.eval_windows(val, 16, 10)
    assert x.shape == (10, 16) and np.array_equal(x[:, 1:], y[:, :-1])
    cfg = _tiny()
    params = init_params(cfg, KEY)
    out = dg.shuffled_gap(cfg, params, val, num_windows=8)
    assert math.isclose(out["gap"], out["shuffled"] - out["val"])
    del rng


def test_eval_time_controls_run_and_match_at_identity():
    cfg = _tiny(qk_filter="fourier", init_std=0.5)  # O(1) scores, so the controls matter
    params = init_params(cfg, KEY)
    val = np.random.default_rng(0).integers(0, 11, 500)
    # every mode is checked on spectra above; here: the config switch reaches the model
    full = dg.eval_loss(cfg, params, val, num_windows=4)
    shifted = dg.eval_loss(
        dataclasses.replace(cfg, filter_phase="phase_shift"), params, val, num_windows=4
    )
    rotated = dg.eval_loss(
        dataclasses.replace(cfg, filter_transform="rotation"), params, val, num_windows=4
    )
    assert np.isfinite([full, shifted, rotated]).all()
    assert shifted != full and rotated != full


def test_pct_phase():
    assert dg.pct_phase(1.5, 1.0, 2.0) == 50.0
    assert dg.pct_phase(2.5, 1.0, 2.0) == 150.0
    assert math.isnan(dg.pct_phase(1.5, 2.0, 1.0))


def test_emd_recovers_periods_of_a_two_tone_signal():
    pytest.importorskip("PyEMD")
    t = np.arange(512)
    sig = np.sin(2 * np.pi * t / 50) + 0.5 * np.sin(2 * np.pi * t / 6)
    periods = dg.emd_periods(sig)
    assert abs(periods[0] - 6) < 0.6 and abs(periods[1] - 50) < 5, periods


def test_filter_impulse_response_period_by_emd():
    pytest.importorskip("PyEMD")
    cfg = ModelConfig(
        block_size=256, n_layer=1, n_head=2, n_embd=16, qk_filter="fourier", filter_bandwidth=1.0
    )
    params = init_params(
        dataclasses.replace(cfg, block_size=16), KEY
    )  # log_center does not depend on T
    (resp,) = dg.filter_impulse_responses(cfg, params).values()
    assert resp.shape == (1, 2, 256)
    period = dg.emd_periods(resp[0, 0])[0]
    assert abs(period - 64) < 8, period  # bin 4 of 256 = period 64 tokens


@pytest.mark.parametrize(
    "module",
    [
        sp.CausalKernelFilter(3, "gauss", 128, 3.0, False, 6.0, "fft", "l1", 24),
        sp.CausalKernelFilter(3, "mexhat", 128, 3.0, False, 6.0, "fft", "l1", 24),
        sp.CausalKernelFilter(3, "morlet", 8, 3.0, False, 6.0, "fft", "l1", 24),
        sp.CausalFreqFilter(3, 4.0, None, 128, "fft", "l2", 24),
        sp.CausalFreqFilter(3, 4.0, 8.0, 128, "fft", "l1", 24),
        sp.FreqCollapse(3, 4.0, 2.0, "l2", 24),
    ],
    ids=["gauss-l1", "mexhat-l1", "morlet-l1-K8", "freq-l2", "freq-fixed-l1", "collapse"],
)
def test_causal_filters_are_prefix_invariant_and_unchanged_at_the_block_size(module):
    """T is the block size the module is built with: on the first t positions it computes the
    first t positions of the whole-sequence output (no kernel sized or normalised from t), and
    at t = T it is bit for bit the module that takes T from the sequence (block_size None)."""
    q, k = _qk(t=24)
    params = module.init(jax.random.PRNGKey(0), q, k)
    full = module.apply(params, q, k)
    for t in (1, 7, 13, 23):
        part = module.apply(params, q[:, :t], k[:, :t])
        for a, b in zip(part, full):
            np.testing.assert_allclose(a, b[:, :t], rtol=0, atol=1e-6 * float(jnp.abs(b).max()))
    free = dataclasses.replace(module, block_size=None)
    for a, b in zip(free.apply(params, q, k), full):
        np.testing.assert_array_equal(a, b)
    # the module that takes T from the sequence is not prefix-invariant (what was fixed)
    short = free.apply(params, q[:, :7], k[:, :7])
    assert max(float(jnp.abs(a - b[:, :7]).max()) for a, b in zip(short, full)) > 1e-4
