"""Spectral Q/K filters (paper C, FourierQK; DESIGN.md section 2), causal and not.

Bilateral FFT filters (declared NON-CAUSAL: irfft(rfft(q) w) over the whole window is a
zero-phase circular filter, so q~[t] depends on q at every position, past and future):

    Qf = rfft(q, axis=T)                       F = T // 2 + 1 bins
    w_h(f) = exp(-(f - f_h)^2 / (2 b^2)) / sum_f' exp(-(f' - f_h)^2 / (2 b^2))     b = 2 bins
    q~ = irfft(Qf * w_h, n=T); same for k;  s = q~ k~^T / sqrt(D);  V is not filtered

    ``fourier``       one learnable centre f_h per head (``log_center``, init bin 4)
    ``multifourier``  K learnable centres per head (init periods ~50/26/10/5 tokens); the K
                      filtered copies are stacked along D and scaled by 1/sqrt(K), so the
                      score is the mean of the K score matrices
    ``random``        fixed random centres (constants from ``filter_seed``; not parameters)
    ``mexhat``        Mexican-hat window (1 - z^2) exp(-z^2/2), z = (f - f_h)/b, normalised
                      by sum_f |w|
    ``morlet-xcorr``  (qk_position slot) the irfft Morlet cross-correlation the paper reports
                      as a leaking negative result; returns raw scores (B,H,T,S)

Causal time-domain kernels (declared causal), h[j], j = 0..K-1, K = min(kernel_len, T):

    q~[t] = sum_{j=0}^{min(t, K-1)} h_h[j] q[t - j]
    Gaussian  exp(-j^2 / 2a^2);  Mexican hat (1 - j^2/a^2) exp(-j^2 / 2a^2);
    complex Morlet exp(-j^2 / 2a^2) exp(i w0 j / a), w0 = 6: Re and Im filtered copies are
    stacked along D, so q~ . k~ = Re q~ Re k~ + Im q~ Im k~ (DESIGN.md section 2).
    Taps are normalised to sum_j |h[j]| = 1 (our choice; the brief does not fix it) so the
    filtered q/k keep their scale for any a. The scale a (tokens) is fixed or learned per head
    (``log_scale``). The convolution is computed by ``model.conv_impl``: "fft" (zero-padded
    to 2T, exact), "toeplitz" (lower-triangular (T,S) matmul) or "direct" (shift and add).
    ``circular-gauss`` uses the UNPADDED FFT (n = T): a circular convolution that wraps the
    future into the past; it is the declared-non-causal foil.

Model-level mixer ``fnet``: Re(FFT2 over (T, E)) of LN(x) replaces the attention sublayer
(FNet, Lee-Thorp et al. 2021); parameter-free and NON-CAUSAL.

Metric-distortion controls and phase surrogates are options of the bilateral filters
(``model.filter_transform``, ``model.filter_phase``) so a trained model can be re-evaluated
with them (:mod:`mope_jax.analysis.diagnostics`).
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.attention.registry import register
from mope_jax.typing import Array, PRNGKey

PHASE_MODES = ("none", "shared", "independent", "amplitude", "shift")
TRANSFORMS = ("dft", "rotation", "projection")
CONV_IMPLS = ("fft", "toeplitz", "direct")
KERNELS = ("gauss", "mexhat", "morlet")
# MultiFourier-QK initial periods in tokens (paper C: paragraph / sub-paragraph / phrase / word)
PAPER_PERIODS = (50.0, 26.0, 10.0, 5.0)


# --------------------------------------------------------------------------- windows


def gaussian_window(centers: Array, n_freq: int, bandwidth: float) -> Array:
    """w(f) = exp(-(f - c)^2 / 2b^2) / sum_f (...)  (DESIGN.md section 2).

    centers (...,) in frequency bins (cycles per window) -> (..., F), F = n_freq, sum_f w = 1.
    Computed as a softmax over f, so centres far outside [0, F) do not underflow to 0/0.
    """
    f = jnp.arange(n_freq, dtype=jnp.float32).reshape((1,) * centers.ndim + (n_freq,))  # (1.., F)
    z = (f - centers[..., None]) / bandwidth  # (..., F)
    return jax.nn.softmax(-0.5 * z**2, axis=-1)


def mexhat_window(centers: Array, n_freq: int, bandwidth: float) -> Array:
    """w(f) = (1 - z^2) exp(-z^2/2), z = (f - c)/b, normalised by sum_f |w|.

    centers (...,) bins -> (..., F). (A sum normalisation would divide by ~0: the Mexican hat
    integrates to zero.)
    """
    f = jnp.arange(n_freq, dtype=jnp.float32).reshape((1,) * centers.ndim + (n_freq,))  # (1.., F)
    z = (f - centers[..., None]) / bandwidth  # (..., F)
    w = (1.0 - z**2) * jax.nn.softmax(-0.5 * z**2, axis=-1)
    return w / jnp.maximum(jnp.abs(w).sum(-1, keepdims=True), 1e-12)


WINDOWS = {"gaussian": gaussian_window, "mexhat": mexhat_window}


def multifourier_init_periods(k: int) -> tuple[float, ...]:
    """K initial periods in tokens: the paper's 50/26/10/5 for K=4, else geometric 50 -> 5."""
    if k == len(PAPER_PERIODS):
        return PAPER_PERIODS
    return tuple(float(p) for p in np.geomspace(50.0, 5.0, k)) if k > 1 else (PAPER_PERIODS[0],)


# --------------------------------------------------------------------------- bilateral filters


def spectral_filter(x: Array, w: Array) -> Array:
    """Zero-phase circular filter along T: irfft(rfft(x, axis=T) * w, n=T).  NON-CAUSAL.

    x (B,T,H,D); w (H,F) real, F = T // 2 + 1 -> (B,T,H,D). With w = 1 this is the identity.
    """
    t = x.shape[1]
    xf = jnp.fft.rfft(x, axis=1)  # (B,F,H,D)
    return jnp.fft.irfft(xf * w.T[None, :, :, None], n=t, axis=1).astype(x.dtype)


def _interior(n_freq: int, t: int) -> Array:
    """(F,) 1.0 on bins whose phase irfft keeps: all but DC and (for even T) Nyquist."""
    keep = jnp.ones((n_freq,), jnp.float32).at[0].set(0.0)
    return keep.at[-1].set(0.0) if t % 2 == 0 else keep


def phase_surrogate(qf: Array, kf: Array, mode: str, key: PRNGKey | None, t: int) -> tuple[Array, Array]:
    """Eval-time phase surrogates of the spectra qf, kf (B,F,H,D) complex (T = t).

    shared:      qf e^{i phi}, kf e^{i phi}, phi ~ U(0, 2pi) per (F,H,D), the same for Q and K
    independent: qf e^{i phi_q}, kf e^{i phi_k}, independent draws
    amplitude:   |qf|, |kf| (all phases set to 0)
    shift:       qf e^{i pi/4}, kf unchanged (a constant relative phase offset)
    Every mode keeps |qf| and |kf| exactly. Phases are drawn for the interior bins only (DC
    and, for even T, Nyquist keep theirs: irfft would drop an imaginary part there).
    """
    if mode not in PHASE_MODES:
        raise ValueError(f"unknown phase surrogate {mode!r}; one of {PHASE_MODES}")
    if mode == "none":
        return qf, kf
    n_freq, h, d = qf.shape[1:]
    interior = _interior(n_freq, t)[:, None, None]  # (F,1,1)
    if mode == "amplitude":
        return jnp.abs(qf).astype(qf.dtype), jnp.abs(kf).astype(kf.dtype)
    if mode == "shift":
        return qf * jnp.exp(1j * (math.pi / 4) * interior)[None], kf
    if key is None:
        raise ValueError(f"phase surrogate {mode!r} needs a key")
    kq, kk = jax.random.split(key)
    phi_q = 2 * math.pi * jax.random.uniform(kq, (n_freq, h, d)) * interior  # (F,H,D)
    phi_k = phi_q if mode == "shared" else 2 * math.pi * jax.random.uniform(kk, (n_freq, h, d)) * interior
    return qf * jnp.exp(1j * phi_q)[None], kf * jnp.exp(1j * phi_k)[None]


def spectral_filter_qk(q: Array, k: Array, w: Array, *, phase: str = "none", key: PRNGKey | None = None):
    """The FourierQK pair filter with an optional phase surrogate.  NON-CAUSAL.

    q, k (B,T,H,D); w (H,F) -> (q~, k~) (B,T,H,D). phase="none" equals spectral_filter twice.
    """
    t = q.shape[1]
    qf, kf = jnp.fft.rfft(q, axis=1), jnp.fft.rfft(k, axis=1)  # (B,F,H,D)
    qf, kf = phase_surrogate(qf, kf, phase, key, t)
    wf = w.T[None, :, :, None]  # (1,F,H,1)
    return (jnp.fft.irfft(qf * wf, n=t, axis=1).astype(q.dtype),
            jnp.fft.irfft(kf * wf, n=t, axis=1).astype(k.dtype))


def random_orthogonal(t: int, seed: int) -> np.ndarray:
    """(T,T) float64 Haar-random orthogonal matrix from a fixed seed (QR with sign fix)."""
    g = np.random.default_rng(seed).standard_normal((t, t))
    qm, r = np.linalg.qr(g)
    return qm * np.sign(np.diag(r))[None, :]


def random_projection(t: int, seed: int) -> np.ndarray:
    """(T,T) float64 Gaussian matrix / sqrt(T): E[P^T P] = I but P is not orthogonal."""
    return np.random.default_rng(seed).standard_normal((t, t)) / math.sqrt(t)


def basis_filter(x: Array, w: Array, m: Array) -> Array:
    """Metric-distortion control: x~ = M^T diag(w) M x along T, M in place of the DFT.

    x (B,T,H,D); w (H,F) over the F = T rows of m; m (F,T) -> (B,T,H,D). NON-CAUSAL.
    With M orthogonal and w = 1 this is the identity.
    """
    y = jnp.einsum("FT,BTHD->BFHD", m, x)
    y = y * w.T[None, :, :, None]  # (B,F,H,D) * (1,F,H,1)
    return jnp.einsum("FT,BFHD->BTHD", m, y)


def stack_components(ys: Array, scale: float) -> Array:
    """(C,B,T,H,D) filtered copies -> (B,T,H,C*D) * scale (stacked along the head dim)."""
    c, b, t, h, d = ys.shape
    ys = jnp.transpose(ys, (1, 2, 3, 0, 4))  # (B,T,H,C,D)
    return ys.reshape(b, t, h, c * d) * scale  # (B,T,H,C*D)


# --------------------------------------------------------------------------- causal kernels


def kernel_taps(kind: str, scale: Array, length: int, w0: float = 6.0) -> Array:
    """Causal kernel taps h[c, h, j], j = 0..length-1 (tokens), scale a (H,) in tokens.

    Returns (C,H,K): C = 1 (gauss, mexhat) or 2 (morlet: real, imaginary part), normalised so
    that sum_j |h[j]| = 1 (sum of the complex modulus for morlet).
    """
    j = jnp.arange(length, dtype=jnp.float32)[None, :]  # (1,K)
    a = scale[:, None]  # (H,1)
    env = jnp.exp(-0.5 * (j / a) ** 2)  # (H,K)
    if kind == "gauss":
        h = env[None]
    elif kind == "mexhat":
        h = ((1.0 - (j / a) ** 2) * env)[None]
    elif kind == "morlet":
        h = jnp.stack([env * jnp.cos(w0 * j / a), env * jnp.sin(w0 * j / a)])  # (2,H,K)
        return h / env.sum(-1)[None, :, None]
    else:
        raise ValueError(f"unknown kernel {kind!r}; one of {KERNELS}")
    return h / jnp.abs(h).sum(-1, keepdims=True)


def causal_conv_direct(u: Array, h: Array) -> Array:
    """Reference: y[t] = sum_{j=0}^{min(t,K-1)} h[j] u[t-j], by shift and add.

    u (B,T,H,D); h (H,K) -> (B,T,H,D). Exactly causal (no FFT).
    """
    t = u.shape[1]
    y = jnp.zeros_like(u)
    for j in range(min(h.shape[1], t)):
        shifted = jnp.pad(u[:, : t - j], ((0, 0), (j, 0), (0, 0), (0, 0)))  # (B,T,H,D), u[t-j]
        y = y + shifted * h[:, j][None, None, :, None]
    return y


def causal_conv_fft(u: Array, h: Array) -> Array:
    """Causal convolution by a zero-padded FFT (DESIGN.md section 2):

        y = irfft(rfft(u, n=2T) * rfft(h, n=2T), n=2T)[:T]

    u (B,T,H,D); h (H,K), K <= T (longer kernels are cut to T) -> (B,T,H,D). Padding to
    2T >= T + K - 1 makes the circular product a linear convolution, so nothing wraps.
    """
    t = u.shape[1]
    n = 2 * t
    uf = jnp.fft.rfft(u, n=n, axis=1)  # (B,n/2+1,H,D)
    hf = jnp.fft.rfft(h[:, :t], n=n, axis=-1)  # (H,n/2+1)
    return jnp.fft.irfft(uf * hf.T[None, :, :, None], n=n, axis=1)[:, :t].astype(u.dtype)


def circular_conv_fft(u: Array, h: Array) -> Array:
    """The UNPADDED FFT convolution irfft(rfft(u) rfft(h, n=T), n=T): circular, so
    y[t] += h[j] u[t - j + T] for j > t -- future inputs reach past outputs.  NON-CAUSAL.

    u (B,T,H,D); h (H,K), K <= T -> (B,T,H,D).
    """
    t = u.shape[1]
    uf = jnp.fft.rfft(u, axis=1)  # (B,F,H,D)
    hf = jnp.fft.rfft(h[:, :t], n=t, axis=-1)  # (H,F)
    return jnp.fft.irfft(uf * hf.T[None, :, :, None], n=t, axis=1).astype(u.dtype)


def toeplitz_matrix(h: Array, t: int) -> Array:
    """(H,K) taps -> (H,T,S) lower-triangular Toeplitz M[h, t, s] = h[h, t - s] (0 <= t-s < K)."""
    k = h.shape[1]
    lag = jnp.arange(t)[:, None] - jnp.arange(t)[None, :]  # (T,S) = t - s
    taps = h[:, jnp.clip(lag, 0, k - 1)]  # (H,T,S)
    return jnp.where(((lag >= 0) & (lag < k))[None], taps, 0.0)


def causal_conv_toeplitz(u: Array, h: Array) -> Array:
    """Causal convolution as a lower-triangular Toeplitz matmul.

    u (B,T,H,D); h (H,K) -> (B,T,H,D). Exactly causal; O(T^2) per channel, fine at T=256.
    """
    return jnp.einsum("HTS,BSHD->BTHD", toeplitz_matrix(h, u.shape[1]), u)


CONVS = {
    "fft": causal_conv_fft,
    "toeplitz": causal_conv_toeplitz,
    "direct": causal_conv_direct,
    "circular": circular_conv_fft,
}


# --------------------------------------------------------------------------- FNet


def fnet_mix(x: Array) -> Array:
    """FNet token mixing Re(FFT2(x)) over (T, E), orthonormal scaling.  NON-CAUSAL.

    x (B,T,E) -> (B,T,E). norm="ortho" (FNet itself is unnormalised, but it is post-LN; in our
    pre-LN block an unnormalised sum over T*E elements would swamp the residual stream).
    """
    return jnp.fft.fft2(x, axes=(1, 2), norm="ortho").real.astype(x.dtype)


# --------------------------------------------------------------------------- modules


class SpectralFilter(nn.Module):
    """Bilateral FFT filter of q and k with K centres per head (Fourier/MultiFourier/Random/
    Mexican-hat QK). NON-CAUSAL.

    init_bins: K initial centres in bins (the same for every head). learn=False draws fixed
    centres uniformly in [1, F-1] from ``seed`` instead (Random-QK; no parameters).
    """

    n_head: int
    init_bins: tuple[float, ...]
    bandwidth: float = 2.0
    shape: str = "gaussian"
    learn: bool = True
    seed: int = 0
    transform: str = "dft"
    phase: str = "none"

    @nn.compact
    def __call__(self, q: Array, k: Array) -> tuple[Array, Array]:
        """q, k (B,T,H,D) -> (B,T,H,K*D) each, stacked copies scaled by 1/sqrt(K)."""
        t, h = q.shape[1], self.n_head
        n_freq = t // 2 + 1 if self.transform == "dft" else t
        nk = len(self.init_bins)
        if self.learn:
            init = jnp.log(jnp.asarray(self.init_bins, jnp.float32))[:, None] * jnp.ones((1, h))  # (K,H)
            centers = jnp.exp(self.param("log_center", lambda key: init))  # (K,H) bins
        else:
            rng = np.random.default_rng(self.seed)
            centers = jnp.asarray(rng.uniform(1.0, n_freq - 1.0, size=(nk, h)), jnp.float32)  # (K,H)
        w = WINDOWS[self.shape](centers, n_freq, self.bandwidth)  # (K,H,F)
        if self.transform == "dft":
            key = jax.random.PRNGKey(self.seed)
            qs, ks = jax.vmap(lambda wk: spectral_filter_qk(q, k, wk, phase=self.phase, key=key))(w)
        else:
            if self.phase != "none":
                raise ValueError("phase surrogates need filter_transform='dft'")
            if self.transform not in TRANSFORMS:
                raise ValueError(f"unknown filter_transform {self.transform!r}; one of {TRANSFORMS}")
            mk = random_orthogonal if self.transform == "rotation" else random_projection
            m = jnp.asarray(mk(t, self.seed), jnp.float32)  # (T,T)
            qs = jax.vmap(lambda wk: basis_filter(q, wk, m))(w)  # (K,B,T,H,D)
            ks = jax.vmap(lambda wk: basis_filter(k, wk, m))(w)
        scale = 1.0 / math.sqrt(nk)
        return stack_components(qs, scale), stack_components(ks, scale)


class CausalKernelFilter(nn.Module):
    """One-sided time-domain kernel applied to q and k (causal unless impl="circular")."""

    n_head: int
    kind: str = "gauss"
    length: int = 128
    scale: float = 8.0
    learn_scale: bool = True
    w0: float = 6.0
    impl: str = "fft"

    @nn.compact
    def __call__(self, q: Array, k: Array) -> tuple[Array, Array]:
        """q, k (B,T,H,D) -> (B,T,H,C*D), C = 2 for morlet (Re, Im stacked), else 1."""
        if self.impl not in CONVS:
            raise ValueError(f"unknown conv_impl {self.impl!r}; one of {CONV_IMPLS}")
        t, h = q.shape[1], self.n_head
        init = jnp.full((h,), math.log(self.scale), jnp.float32)
        log_scale = self.param("log_scale", lambda key: init) if self.learn_scale else init  # (H,)
        taps = kernel_taps(self.kind, jnp.exp(log_scale), min(self.length, t), self.w0)  # (C,H,K)
        conv = CONVS[self.impl]

        def filt(x):
            return stack_components(jax.vmap(lambda hc: conv(x, hc))(taps), 1.0)

        return filt(q), filt(k)


class MorletXCorr(nn.Module):
    """The irfft Morlet cross-correlation score (paper C's leaking negative result).

        X_h(f) = sum_D Qf(f) conj(Kf(f)) w_h(f);   c(tau) = irfft(X_h, n=T)[tau] / T
        s_ts = (q_t . k_s + c((t - s) mod T)) / sqrt(D)

    c sums over every position of the window (and the kernel is symmetric, c(-tau) = c(tau)
    for real symmetric w), so every score depends on the future.  NON-CAUSAL.
    """

    n_head: int
    head_dim: int
    init_bin: float = 4.0
    bandwidth: float = 2.0

    @nn.compact
    def __call__(self, q: Array, k: Array, positions: Array) -> Array:
        """q, k (B,T,H,D), positions (T,) -> scores (B,H,T,S)."""
        t = q.shape[1]
        init = jnp.full((self.n_head,), math.log(self.init_bin), jnp.float32)
        centers = jnp.exp(self.param("log_center", lambda key: init))  # (H,)
        w = gaussian_window(centers, t // 2 + 1, self.bandwidth)  # (H,F)
        qf, kf = jnp.fft.rfft(q, axis=1), jnp.fft.rfft(k, axis=1)  # (B,F,H,D)
        cross = jnp.einsum("BFHD,BFHD->BHF", qf, jnp.conj(kf))
        c = jnp.fft.irfft(cross * w[None], n=t, axis=-1) / t  # (B,H,T) by lag
        lag = (positions[:, None] - positions[None, :]) % t  # (T,S)
        xcorr = c[:, :, lag]  # (B,H,T,S)
        dots = jnp.einsum("BTHD,BSHD->BHTS", q, k)
        return ((dots + xcorr) / math.sqrt(self.head_dim)).astype(q.dtype)


class FNetMixer(nn.Module):
    """Replaces the attention sublayer: xn (B,T,E) -> Re FFT2(xn). No parameters."""

    @nn.compact
    def __call__(self, xn: Array, positions: Array, *, deterministic: bool) -> Array:
        return fnet_mix(xn)


# --------------------------------------------------------------------------- registry


def _bilateral(cfg, *, bins, shape="gaussian", learn=True):
    return SpectralFilter(cfg.n_head, tuple(bins), cfg.filter_bandwidth, shape, learn, cfg.filter_seed,
                          cfg.filter_transform, cfg.filter_phase)


@register("qk_filter", "fourier", causal=False, doc="bilateral FFT, 1 learned Gaussian centre/head (init bin 4)")
def _fourier(cfg):
    return _bilateral(cfg, bins=(cfg.filter_init_bin,))


@register("qk_filter", "multifourier", causal=False,
          doc="bilateral FFT, K learned centres/head (init periods 50/26/10/5 tokens), scores averaged")
def _multifourier(cfg):
    return _bilateral(cfg, bins=[cfg.block_size / p for p in multifourier_init_periods(cfg.filter_k)])


@register("qk_filter", "random", causal=False, doc="bilateral FFT, fixed random centre/head (not trained)")
def _random(cfg):
    return _bilateral(cfg, bins=(cfg.filter_init_bin,), learn=False)


@register("qk_filter", "mexhat", causal=False, doc="bilateral FFT, learned Mexican-hat spectral window")
def _mexhat(cfg):
    return _bilateral(cfg, bins=(cfg.filter_init_bin,), shape="mexhat")


def _kernel(cfg, kind, impl=None):
    return CausalKernelFilter(cfg.n_head, kind, cfg.kernel_len, cfg.kernel_scale, cfg.kernel_learn_scale,
                              cfg.kernel_w0, impl or cfg.conv_impl)


for _kind in KERNELS:
    register("qk_filter", f"causal-{_kind}", causal=True,
             doc=f"one-sided {_kind} kernel on q/k along T (model.conv_impl: fft/toeplitz/direct)")(
        lambda cfg, _kind=_kind: _kernel(cfg, _kind))


@register("qk_filter", "circular-gauss", causal=False, doc="Gaussian kernel by UNPADDED (circular) FFT: foil")
def _circular(cfg):
    return _kernel(cfg, "gauss", impl="circular")


@register("qk_position", "morlet-xcorr", causal=False, doc="irfft Morlet cross-correlation scores (leaks)")
def _xcorr(cfg):
    return MorletXCorr(cfg.n_head, cfg.head_dim, cfg.filter_init_bin, cfg.filter_bandwidth)


@register("mixer", "fnet", causal=False, doc="Re FFT2 over (T, E) replaces attention (FNet)")
def _fnet(cfg):
    return FNetMixer()
