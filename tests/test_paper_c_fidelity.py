"""Paper C as the authors' code computes it (DESIGN.md section 5): every paper-C
Q/K filter variant against the float64 numpy reference in tests/reference/paper_c_np.py,
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
    # the authors' envelope sigma_t = T / (4 pi); ours, a fixed a = 8 tokens
    "causal-freq-qk": (
        "log_freq",
        lambda p: lambda h, q, k: ref.complex_scores(q, k, ref.freq_taps_authors(p[h], 128, T)),
    ),
    "causal-freq-qk-a8": (
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


# ----------------------------------------------------------------- causal-freq


def _freq_outputs_ref(taps_of_head, q, k):
    """Reference q~, k~ (B,T,H,2D) float64: the complex causal convolution with head h's taps,
    Re and Im stacked along the last axis as the module stacks them."""
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    b_, _, h_, _ = q.shape

    def one(x):
        return np.stack(
            [
                np.stack(
                    [
                        np.concatenate(
                            [(c := ref.causal_conv(x[b, :, h], taps_of_head(h))).real, c.imag],
                            axis=-1,
                        )
                        for h in range(h_)
                    ],
                    axis=1,
                )
                for b in range(b_)
            ]
        )

    return one(q), one(k)


def _freq_module(variant, t, log_freq):
    cfg = _cfg(variant, t)
    module = registry.get("qk_filter", cfg.qk_filter).build(cfg)
    return module, {"log_freq": jnp.asarray(log_freq, jnp.float32)}


# (T, log_freq per head): one head inside the clamp, one outside [2, F-2] (below at T=64,
# above at T=256, F = T//2 + 1)
FREQ_CASES = {64: (math.log(5.3), math.log(1.2)), 256: (math.log(11.7), math.log(150.0))}


@pytest.mark.parametrize("t", list(FREQ_CASES))
def test_causal_freq_uses_the_authors_envelope_t_over_4pi(t):
    log_freq = FREQ_CASES[t]
    module, params = _freq_module("causal-freq-qk", t, log_freq)
    q, k = _qk(t)
    qt, kt = module.apply({"params": params}, q, k)
    rq, rk = _freq_outputs_ref(lambda h: ref.freq_taps_authors(log_freq[h], 128, t), q, k)
    _assert_close(qt, rq)
    _assert_close(kt, rk)
    # the envelope follows T: sigma_t = T / (4 pi) tokens, whatever model.kernel_scale says
    assert math.isclose(sp.authors_envelope_width(256), 20.371832715762604)
    assert math.isclose(sp.authors_envelope_width(64), 5.092958178940651)
    cfg = dataclasses.replace(_cfg("causal-freq-qk", t), kernel_scale=3.0)
    other = registry.get("qk_filter", cfg.qk_filter).build(cfg)
    np.testing.assert_array_equal(other.apply({"params": params}, q, k)[0], qt)
    if t == 256:  # the old width (a = 8 tokens) is far outside the tolerance
        oq, _ = _freq_outputs_ref(lambda h: ref.freq_taps(log_freq[h], 8.0, 128, t), q, k)
        assert np.abs(np.asarray(qt, np.float64) - oq).max() > 1e3 * 1e-5 * np.abs(rq).max()


@pytest.mark.parametrize("t", list(FREQ_CASES))
def test_causal_freq_fixed_keeps_the_a8_envelope(t):
    log_freq = FREQ_CASES[t]
    module, params = _freq_module("causal-freq-qk-a8", t, log_freq)
    q, k = _qk(t)
    qt, kt = module.apply({"params": params}, q, k)
    rq, rk = _freq_outputs_ref(lambda h: ref.freq_taps(log_freq[h], 8.0, 128, t), q, k)
    _assert_close(qt, rq)
    _assert_close(kt, rk)


@pytest.mark.parametrize("t", list(FREQ_CASES))
def test_causal_freq_log_freq_gradient_inside_and_at_the_clamp(t):
    """d/d log_freq of sum(r * [q~, k~]): the numpy finite difference of the reference for the
    head inside [2, F-2], exactly 0 for the head outside (the clamp passes no gradient)."""
    p0 = np.asarray(FREQ_CASES[t], np.float64)
    module, _ = _freq_module("causal-freq-qk", t, p0)
    q, k = _qk(t)
    kr = jax.random.split(jax.random.PRNGKey(3))
    rq = np.asarray(jax.random.normal(kr[0], (B, t, H, 2 * D)), np.float64)
    rk = np.asarray(jax.random.normal(kr[1], (B, t, H, 2 * D)), np.float64)
    with jax.enable_x64(True):
        q64, k64 = jnp.asarray(q, jnp.float64), jnp.asarray(k, jnp.float64)

        def loss_jax(p):
            qt, kt = module.apply({"params": {"log_freq": p}}, q64, k64)
            return jnp.sum(qt * rq) + jnp.sum(kt * rk)

        grad = np.asarray(jax.grad(loss_jax)(jnp.asarray(p0)), np.float64)

    def loss_ref(p):
        oq, ok = _freq_outputs_ref(lambda h: ref.freq_taps_authors(p[h], 128, t), q, k)
        return float(np.sum(oq * rq) + np.sum(ok * rk))

    eps = 1e-5
    e = np.array([eps, 0.0])
    fd = (loss_ref(p0 + e) - loss_ref(p0 - e)) / (2 * eps)
    assert abs(fd) > 1e-2
    np.testing.assert_allclose(grad[0], fd, rtol=1e-5)
    assert grad[1] == 0.0  # outside [2, F-2]: clamped
    f = np.asarray(sp.causal_freq_bins(jnp.asarray(p0, jnp.float32), t))
    assert 2.0 < f[0] < t // 2 - 1 and f[1] in (2.0, t // 2 - 1.0)


def test_causal_freq_variants_declare_the_same_causality_and_their_options():
    paper, ours = (
        registry.get("qk_filter", "causal-freq"),
        registry.get("qk_filter", "causal-freq-fixed"),
    )
    assert paper.causal is True and ours.causal is True
    assert "kernel_scale" not in paper.options and "kernel_scale" in ours.options
    assert set(ours.options) - set(paper.options) == {"kernel_scale"}
    assert "kernel_scale" not in model_variants()["causal-freq-qk"].model
    assert model_variants()["causal-freq-qk-a8"].model["kernel_scale"] == 8.0
    assert "a = 8 tokens" in model_variants()["causal-freq-qk-a8"].description
    from mope_jax.analysis.causality import audit_model_variants

    for row in audit_model_variants(["causal-freq-qk", "causal-freq-qk-a8"], seq_len=16, n_layer=1):
        assert row["declared_causal"] and row["causal"] and row["leak_rel"] < 1e-6, row


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
                            ref.surrogate(np.fft.rfft(x[b, :, h], axis=0), mode, phi[b, :, h], T)
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
    rot = np.full(qf.shape, np.exp(1j * math.pi / 4))
    rot[:, [0, -1]] = 1.0  # DC and Nyquist (T even) keep their unrotated values
    _assert_close(qs / qf, rot)
    _assert_close(ks / kf, rot)
    qa, ka = sp.phase_surrogate(qf, kf, "add-shift", None, T)  # ours: q only, interior bins
    np.testing.assert_array_equal(ka, kf)
    np.testing.assert_array_equal(qa[:, 0], qf[:, 0])


def _phase_shift_ref(x, t, *, keep_ends=True):
    """float64 reference of the authors' phase_shift of x (B,T,H,D): rfft along T, every bin
    rotated by pi/4 except DC and (even T) Nyquist, irfft. keep_ends=False: the old rule (all
    bins rotated; irfft then keeps only the real part at DC and Nyquist)."""
    xf = np.fft.rfft(np.asarray(x, np.float64), axis=1)  # (B,F,H,D)
    rot = np.full(xf.shape[1], np.exp(1j * math.pi / 4))
    if keep_ends:
        rot[0] = 1.0
        if t % 2 == 0:
            rot[t // 2] = 1.0
    return np.fft.irfft(xf * rot[None, :, None, None], n=t, axis=1)


@pytest.mark.parametrize("t", [16, 15])
def test_phase_shift_keeps_dc_and_nyquist(t):
    q, k = _qk(t)
    # through the bilateral filter with w = 1: q~, k~ are the surrogate signals themselves
    qt, kt = sp.spectral_filter_qk(q, k, jnp.ones((H, t // 2 + 1)), phase="phase_shift")
    rq, rk = _phase_shift_ref(q, t), _phase_shift_ref(k, t)
    _assert_close(qt, rq)
    _assert_close(kt, rk)
    zf = np.fft.rfft(np.asarray(q, np.float64), axis=1)
    rf = [ref.surrogate(zf[b, :, h], "phase_shift", t=t) for b in range(B) for h in range(H)]
    _assert_close(
        np.fft.rfft(np.asarray(qt, np.float64), axis=1)
        .transpose(0, 2, 1, 3)
        .reshape(B * H, t // 2 + 1, D),
        np.stack(rf),
    )
    # the old rule (DC and Nyquist rotated too) is far outside the tolerance
    old = _phase_shift_ref(q, t, keep_ends=False)
    assert np.abs(np.asarray(qt, np.float64) - old).max() > 1e3 * 1e-5 * np.abs(rq).max()


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
        ("causal-freq-qk-a8", {"qk_freq", "qk_freq_period"}),
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


# ----------------------------------------------------------------- eval switches


@pytest.mark.parametrize(
    "variant", ["causal-freq-qk", "causal-freq-qk-a8", "causal-morlet", "causal-gauss"]
)
@pytest.mark.parametrize("mode", ["phase_rand", "phase_shift", "add-shift"])
def test_phase_surrogate_on_a_causal_kernel_is_refused_with_one_line(variant, mode):
    from mope_jax.config import Config
    from mope_jax.errors import ConfigError

    m = dataclasses.replace(_cfg(variant), filter_phase=mode)
    with pytest.raises(ConfigError) as err:
        Config(model=m)
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"model.filter_phase={mode} is not read by qk_filter '{m.qk_filter}'")
    assert (
        "(the phase surrogates exist only on the bilateral spectral filters fixed-bin, "
        "fixed-bin-learned, fourier, mexhat-k4, mexhat-window, multifourier, random)" in msg
    )
    assert msg.endswith("remove it or pick one of those")
    Config(model=dataclasses.replace(_cfg("fourier-qk"), filter_phase=mode))  # read: accepted
    Config(model=_cfg(variant))  # filter_phase "none": accepted


def test_metric_control_on_a_causal_kernel_is_refused_with_one_line():
    from mope_jax.config import Config
    from mope_jax.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^model.filter_transform=rotation is not read by "):
        Config(model=dataclasses.replace(_cfg("causal-freq-qk"), filter_transform="rotation"))


@pytest.mark.parametrize("variant", ["causal-freq-qk", "causal-freq-qk-a8"])
def test_causal_freq_on_a_shorter_sequence_is_the_authors_kernel_built_at_the_block_size(variant):
    """The authors build the causal-frequency module for a sequence length and keep its T (the
    frequency grid, the clamp, the envelope T / (4 pi)) whatever length it is then called on;
    ours takes T from the block size, so on t < T positions it gives the authors' taps of T,
    and the same first t positions as on the whole sequence."""
    t_block, t = 64, 40
    log_freq = FREQ_CASES[t_block]
    module, params = _freq_module(variant, t_block, log_freq)
    q, k = _qk(t_block)
    full = module.apply({"params": params}, q, k)
    part = module.apply({"params": params}, q[:, :t], k[:, :t])
    if variant == "causal-freq-qk":
        rq, rk = _freq_outputs_ref(
            lambda h: ref.freq_taps_authors(log_freq[h], 128, t_block), q[:, :t], k[:, :t]
        )
        _assert_close(part[0], rq)
        _assert_close(part[1], rk)
    for a, b in zip(part, full):
        _assert_close(a, np.asarray(b[:, :t], np.float64))
