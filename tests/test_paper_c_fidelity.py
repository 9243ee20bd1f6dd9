"""Paper C as the authors' code computes it (DESIGN.md section 5; issue 12): every new or
changed Q/K filter variant against the float64 numpy reference in tests/reference/paper_c_np.py,
values at float32 and gradients of the learned parameters at float64 (jax.grad vs a numpy
central finite difference)."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis.spectra import extract_spectra
from mope_jax.attention import registry
from mope_jax.attention import spectral as sp
from mope_jax.config import ModelConfig
from mope_jax.model import init_params
from mope_jax.presets import model_variants
from tests.reference import paper_c_np as ref

KEY = jax.random.PRNGKey(0)
B, T, H, D = 2, 16, 2, 4
LADDER = {
    "dc": 0.0,
    "1": 1.0,
    "4": 4.0,
    "16": 16.0,
    "64": 64.0,
    "nyquist": 128.0,
}  # bins at T = 256


def _cfg(variant: str, t: int = T) -> ModelConfig:
    base = ModelConfig(block_size=t, n_layer=1, n_head=H, n_embd=H * D, dropout=0.0, vocab_size=11)
    return dataclasses.replace(base, **model_variants()[variant].model)


def _qk(t=T, dtype=jnp.float32):
    kq, kk = jax.random.split(jax.random.PRNGKey(1))
    return (jax.random.normal(kq, (B, t, H, D), dtype), jax.random.normal(kk, (B, t, H, D), dtype))


def _scores(module, params, q, k):
    qs, ks = module.apply({"params": params}, q, k)
    return jnp.einsum("BTHD,BSHD->BHTS", qs, ks) / math.sqrt(D)  # (B,H,T,S)


def _per_head(fn, q, k):
    """Reference scores (B,H,T,S) from fn(h, q (T,D), k (T,D)) -> (T,S), float64."""
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    return np.stack([np.stack([fn(h, q[b, :, h], k[b, :, h]) for h in range(H)]) for b in range(B)])


def _bilateral_ref(windows):
    """windows(h) -> list of (F,) windows of head h; mean of the per-window score matrices."""

    def fn(h, q, k):
        ws = windows(h)
        return ref.mean_scores([ref.bilateral(q, w) for w in ws], [ref.bilateral(k, w) for w in ws])

    return fn


# (variant, parameter name or None, reference builder p -> fn(h, q, k); p = the parameter array)
CASES = {
    "fourier-qk": (
        "log_center",
        lambda p: _bilateral_ref(lambda h: [ref.gaussian_window(math.exp(p[0, h]), T)]),
    ),
    "multifourier-qk": (
        "log_center",
        lambda p: _bilateral_ref(
            lambda h: [ref.gaussian_window(math.exp(p[i, h]), T) for i in range(4)]
        ),
    ),
    "fixed-bin-learned": (
        "log_center",
        lambda p: _bilateral_ref(lambda h: [ref.gaussian_window(math.exp(p[0, h]), T)]),
    ),
    **{
        f"fixed-bin-{r}": (
            None,
            lambda p, b=b: _bilateral_ref(
                lambda h: [ref.gaussian_window(ref.ladder_center(b, T), T)]
            ),
        )
        for r, b in LADDER.items()
    },
    "mexhat-k4-qk": (
        "log_s",
        lambda p: _bilateral_ref(lambda h: list(ref.mexhat_k4(np.exp(p[h]), T))),
    ),
    "causal-morlet": (
        "log_scale",
        lambda p: lambda h, q, k: ref.complex_scores(q, k, ref.morlet_taps_l2(math.exp(p[h]), 128)),
    ),
    **{
        f"causal-morlet-a{a}": (
            None,
            lambda p, a=a: (
                lambda h, q, k: ref.complex_scores(q, k, ref.morlet_taps_l2(float(a), 128))
            ),
        )
        for a in (2, 4, 8, 16, 32)
    },
    "causal-morlet-l1": (
        "log_scale",
        lambda p: (
            lambda h, q, k: ref.complex_scores(q, k, ref.morlet_taps_l1(math.exp(p[h]), 128, T))
        ),
    ),
    "causal-freq-qk": (
        "log_freq",
        lambda p: lambda h, q, k: ref.complex_scores(q, k, ref.freq_taps(p[h], 8.0, 128, T)),
    ),
    "seedc-collapse-qk": (
        "log_center",
        lambda p: (
            lambda h, q, k: (
                (ref.collapse_weights(math.exp(p[h]), T)[:, None] * q)
                @ (ref.collapse_weights(math.exp(p[h]), T)[:, None] * k).T
                / math.sqrt(D)
            )
        ),
    ),
}
LEARNED = [v for v, (name, _) in CASES.items() if name is not None]


def _module_and_params(variant):
    cfg = _cfg(variant)
    module = registry.get("qk_filter", cfg.qk_filter).build(cfg)
    q, k = _qk()
    params = module.init(KEY, q, k).get("params", {})
    name = CASES[variant][0]
    if name is not None:  # move off the init, so the test does not only see initial values
        rng = np.random.default_rng(0)
        p0 = np.asarray(params[name], np.float64)
        params = {name: jnp.asarray(p0 + rng.uniform(-0.3, 0.3, p0.shape), jnp.float32)}
    return module, params


def _assert_close(x, r, rtol=1e-5):
    """float32 vs float64: rtol 1e-5 of the largest reference value (FFT sums of O(1) terms
    round at ~1e-7 of that scale, so a per-element rtol would be meaningless near zeros)."""
    x = np.asarray(x)
    x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    np.testing.assert_allclose(x, r, rtol=0, atol=rtol * np.abs(r).max())


@pytest.mark.parametrize("variant", list(CASES))
def test_variant_scores_match_float64_reference(variant):
    module, params = _module_and_params(variant)
    q, k = _qk()
    name, build = CASES[variant]
    p = None if name is None else np.asarray(params[name], np.float64)
    _assert_close(_scores(module, params, q, k), _per_head(build(p), q, k))


@pytest.mark.parametrize("variant", LEARNED)
def test_learned_parameter_gradient_matches_numpy_finite_difference(variant):
    module, params = _module_and_params(variant)
    name, build = CASES[variant]
    p0 = np.asarray(params[name], np.float64)
    q, k = _qk()
    r = np.asarray(jax.random.normal(jax.random.PRNGKey(2), (B, H, T, T)), np.float64)
    with jax.enable_x64(True):
        q64, k64 = jnp.asarray(q, jnp.float64), jnp.asarray(k, jnp.float64)
        grad = jax.grad(lambda p: jnp.sum(_scores(module, {name: p}, q64, k64) * r))(
            jnp.asarray(p0)
        )
    grad = np.asarray(grad, np.float64)

    def loss(p):
        return float(np.sum(_per_head(build(p), q, k) * r))

    fd = np.zeros_like(p0)
    eps = 1e-5
    for idx in np.ndindex(p0.shape):
        e = np.zeros_like(p0)
        e[idx] = eps
        fd[idx] = (loss(p0 + e) - loss(p0 - e)) / (2 * eps)
    assert np.abs(fd).max() > 1e-3, "the loss does not depend on the parameter"
    # float64 both sides; constants built in float32 inside the modules (e.g. 2 pi f / T) and
    # the O(eps^2) difference error stay below 1e-6 of the largest component
    np.testing.assert_allclose(grad, fd, rtol=0, atol=1e-6 * np.abs(fd).max())


# ----------------------------------------------------------------- definitions in isolation


def test_window_norms():
    for c in (0.0, 3.3, 8.0):
        w2 = sp.gaussian_window(jnp.asarray([c]), 9, 2.0, "l2")[0]
        _assert_close(w2, ref.gaussian_window(c, 16, 2.0, "l2"))
        np.testing.assert_allclose(jnp.sqrt(jnp.sum(w2**2)), 1.0, rtol=1e-6)
        _assert_close(
            sp.gaussian_window(jnp.asarray([c]), 9, 2.0, "l1")[0],
            ref.gaussian_window(c, 16, 2.0, "l1"),
        )
    with pytest.raises(ValueError, match="filter_norm='l3' is not valid; choose one of l1, l2"):
        sp.gaussian_window(jnp.asarray([1.0]), 9, 2.0, "l3")


def test_ladder_rule_keeps_period_and_end_points():
    for t in (16, 64, 256):
        assert sp.ladder_bin(0.0, t) == 0.0 and sp.ladder_bin(128.0, t) == t / 2  # DC, Nyquist
        assert sp.ladder_bin(4.0, t) == ref.ladder_center(4.0, t)
        assert math.isclose(
            t / sp.ladder_bin(64.0, t), 4.0
        )  # bin 64 of 256 = period 4 tokens at any T
    assert {f"fixed-bin-{r}" for r in sp.FIXED_BIN_LADDER} <= set(model_variants())
    for r, b in LADDER.items():
        assert model_variants()[f"fixed-bin-{r}"].model["filter_fixed_bin"] == b
    assert not init_params(_cfg("fixed-bin-4"), KEY)["h_0"]["attn"].get(
        "SpectralFilter_0"
    )  # not trained


def test_morlet_l2_normalises_over_all_128_taps_even_when_t_is_shorter():
    taps = sp.kernel_taps("morlet", jnp.asarray([2.0, 32.0]), 128, 6.0, "l2")  # (2,H,K)
    np.testing.assert_allclose(jnp.sum(taps**2, axis=(0, 2)), 1.0, rtol=1e-6)
    for i, a in enumerate((2.0, 32.0)):
        h = ref.morlet_taps_l2(a, 128)
        _assert_close(taps[0, i], h.real)
        _assert_close(taps[1, i], h.imag)
    # at T = 16 only 16 taps act, but they keep the 128-tap scale: at a = 32 their energy is
    # ~0.52, not 1 (the causal-morlet-a32 case above checks the model uses exactly these taps)
    first = ref.morlet_taps_l2(32.0, 128)[:16]
    assert 0.4 < np.sum(np.abs(first) ** 2) < 0.6


def test_causal_freq_clamp():
    f = sp.causal_freq_bins(jnp.log(jnp.asarray([0.5, 4.0, 100.0])), 16)
    np.testing.assert_allclose(f, [2.0, 4.0, 7.0], rtol=1e-6)  # [2, F-2], F = 9


def test_mexhat_k4_peaks_at_init_periods_and_is_zero_at_dc():
    t = 256
    log_s = jnp.asarray(sp.mexhat_k4_init_log_s(), jnp.float32)[None]  # (1,K)
    spec = np.asarray(sp.mexhat_k4_spectra(log_s, t))[:, 0]  # (K,F)
    _assert_close(spec, ref.mexhat_k4(np.exp(np.asarray(log_s[0], np.float64)), t))
    np.testing.assert_allclose(spec.sum(-1), 1.0, rtol=1e-5)
    assert np.all(spec[:, 0] == 0.0)
    peaks = t / np.argmax(spec, axis=-1)
    np.testing.assert_allclose(peaks, sp.PAPER_PERIODS, rtol=0.13)  # integer bins around the peak


# ----------------------------------------------------------------- surrogates


def test_surrogate_phase_draws():
    shape = (3, 9, H, D)
    phi, phk = sp.surrogate_phases("phase_rand", KEY, shape, 16)
    assert phi.shape == (3, 9, H, 1) and phk is phi  # shared by channels and by q and k
    assert np.all(phi[:, [0, -1]] == 0) and np.all(phi[:, 1:-1] > 0) and np.all(phi < 2 * math.pi)
    assert float(jnp.abs(phi[0] - phi[1]).max()) > 0.1  # a draw per batch row
    qi, ki = sp.surrogate_phases("phase_rand_indep", KEY, shape, 16)
    assert qi.shape == ki.shape == shape and float(jnp.abs(qi - ki).max()) > 0.1
    assert np.all(qi[:, [0, -1]] == 0) and np.all(ki[:, [0, -1]] == 0)
    odd, _ = sp.surrogate_phases("phase_rand", KEY, (3, 8, H, D), 15)  # odd T: no Nyquist bin
    assert np.all(odd[:, 0] == 0) and np.all(odd[:, -1] > 0)


@pytest.mark.parametrize("mode", sp.AUTHOR_PHASE_MODES)
def test_author_surrogates_match_reference(mode):
    q, k = _qk()
    w = jnp.asarray(np.stack([ref.gaussian_window(c, T) for c in (2.0, 5.0)]), jnp.float32)  # (H,F)
    qt, kt = sp.spectral_filter_qk(q, k, w, phase=mode, key=KEY)
    phi_q, phi_k = sp.surrogate_phases(mode, KEY, (B, T // 2 + 1, H, D), T)
    phi_q = np.broadcast_to(np.asarray(phi_q, np.float64), (B, T // 2 + 1, H, D))
    phi_k = np.broadcast_to(np.asarray(phi_k, np.float64), (B, T // 2 + 1, H, D))
    for x, xt, phi in ((q, qt, phi_q), (k, kt, phi_k)):
        x = np.asarray(x, np.float64)
        r = np.stack(
            [
                np.stack(
                    [
                        np.fft.irfft(
                            ref.surrogate(np.fft.rfft(x[b, :, h], axis=0), mode, phi[b, :, h])
                            * np.asarray(w[h], np.float64)[:, None],
                            n=T,
                            axis=0,
                        )
                        for h in range(H)
                    ],
                    axis=1,
                )
                for b in range(B)
            ]
        )  # (B,T,H,D)
        _assert_close(xt, r)


def test_phase_shift_rotates_both_spectra_and_add_shift_only_q():
    q, k = _qk()
    qf, kf = jnp.fft.rfft(q, axis=1), jnp.fft.rfft(k, axis=1)
    qs, ks = sp.phase_surrogate(qf, kf, "phase_shift", None, T)
    _assert_close(qs / qf, np.full(qf.shape, np.exp(1j * math.pi / 4)))
    _assert_close(ks / kf, np.full(kf.shape, np.exp(1j * math.pi / 4)))
    qa, ka = sp.phase_surrogate(qf, kf, "add-shift", None, T)  # ours: q only, interior bins
    np.testing.assert_array_equal(ka, kf)
    np.testing.assert_array_equal(qa[:, 0], qf[:, 0])


def test_unknown_phase_mode_fails_with_one_line_naming_choices():
    q, k = _qk()
    with pytest.raises(
        ValueError,
        match=r"model.filter_phase='shared' is not valid; choose one of none, phase_rand",
    ):
        sp.spectral_filter_qk(q, k, jnp.ones((H, T // 2 + 1)), phase="shared", key=KEY)


# ----------------------------------------------------------------- records


def test_records_carry_the_norms_and_the_learned_spectra():
    cfg = _cfg("fourier-qk")
    assert cfg.filter_norm == "l2" and ModelConfig().filter_norm == "l1"
    assert _cfg("causal-morlet").kernel_norm == "l2" and _cfg("causal-morlet").kernel_len == 128
    assert (
        _cfg("causal-morlet-l1").kernel_norm == "l1"
        and _cfg("mexhat-window-qk").filter_norm == "l1"
    )
    for variant, names in [
        ("fixed-bin-learned", {"qk_center", "qk_period"}),
        ("mexhat-k4-qk", {"qk_mexhat_s", "qk_mexhat_period"}),
        ("causal-freq-qk", {"qk_freq", "qk_freq_period"}),
        ("causal-morlet", {"qk_kernel_scale"}),
        ("seedc-collapse-qk", {"qk_center", "qk_period"}),
    ]:
        cfg = dataclasses.replace(_cfg(variant, t=256), n_layer=2)
        got = extract_spectra(cfg, init_params(cfg, KEY))
        assert set(got) == names, variant
        assert all(v.shape[0] == 2 for v in got.values())  # one entry per layer
    cfg = dataclasses.replace(_cfg("mexhat-k4-qk", t=256), n_layer=1)
    np.testing.assert_allclose(
        extract_spectra(cfg, init_params(cfg, KEY))["qk_mexhat_period"][0, 0],
        sp.PAPER_PERIODS,
        rtol=1e-5,
    )
    cfg = _cfg("fixed-bin-learned", t=256)
    np.testing.assert_allclose(
        extract_spectra(cfg, init_params(cfg, KEY))["qk_center"], 4.0, rtol=1e-6
    )
