"""Spectral Q/K filters (paper C, FourierQK; DESIGN.md sections 2 and 5), causal and not.

Bilateral FFT filters (declared NON-CAUSAL: irfft(rfft(q) w) over the whole window is a
zero-phase circular filter, so q~[t] depends on q at every position, past and future):

    Qf = rfft(q, axis=T)                       F = T // 2 + 1 bins
    g_h(f) = exp(-(f - f_h)^2 / (2 b^2)),  b = 2 bins;   w_h = g_h / N
    q~ = irfft(Qf * w_h, n=T); same for k;  s = q~ k~^T / sqrt(D);  V is not filtered

    ``model.filter_norm``: "l2" N = ||g_h||_2 over the F bins (paper C's main code: the
    Fourier / MultiFourier / Random-QK rows and the fixed-bin ladder); "l1" N = sum_f g_h (ours
    before, and the filter-shape study's; the ModelConfig default, so older records reload).

    ``fourier``            one learnable centre f_h per head (``log_center``, init bin 4)
    ``multifourier``       K learnable centres per head (init periods ~50/26/10/5 tokens); the K
                           filtered copies are stacked along D and scaled by 1/sqrt(K), so the
                           score is the mean of the K score matrices
    ``random``             fixed random centres (constants from ``filter_seed``; not parameters)
    ``fixed-bin``          paper C's ladder: a constant centre, rung ``filter_fixed_bin`` given at
                           T = 256 and used at bin * T / 256 (same period in tokens; DC stays 0,
                           Nyquist 128 stays T/2)
    ``fixed-bin-learned``  the ladder's learned row: ``log_center`` initialised at that rung
    ``mexhat-window``      one Mexican-hat window (1 - z^2) exp(-z^2/2), z = (f - f_h)/b, around a
                           learned centre, normalised by sum_f |w| (our variant; not MexHat-K4)
    ``mexhat-k4``          MexHat-K4 (the filter-shape study): 4 admissible spectra per head
                           (s w)^2 exp(-(s w)^2/2), w = 2 pi f / T, each / sum_f; learned ``log_s``
    ``morlet-xcorr``       (qk_position slot) the irfft Morlet cross-correlation the paper reports
                           as a leaking negative result; returns raw scores (B,H,T,S)

Causal time-domain kernels (declared causal), h[j], j = 0..K-1:

    q~[t] = sum_{j=0}^{min(t, K-1)} h_h[j] q[t - j]
    Gaussian  exp(-j^2 / 2a^2);  Mexican hat (1 - j^2/a^2) exp(-j^2 / 2a^2);
    complex Morlet exp(-j^2 / 2a^2) exp(i w0 j / a), w0 = 6: Re and Im filtered copies are
    stacked along D, so q~ . k~ = Re q~ Re k~ + Im q~ Im k~ (DESIGN.md section 2).
    ``model.kernel_norm``: "l1" (ours): K = min(kernel_len, T) taps, h / sum_j |h[j]|, so the
    filtered q/k keep their scale for any a; "l2" (the authors' causal Morlet): K = kernel_len
    (128) taps always, h / sqrt(sum_j |h[j]|^2) over all K, of which only the first T reach an
    output. The scale a (tokens) is fixed or learned per head (``log_scale``). The convolution
    is computed by ``model.conv_impl``: "fft" (zero-padded to 2T, exact), "toeplitz"
    (lower-triangular (T,S) matmul) or "direct" (shift and add).
    ``causal-freq``: the phase study's causal SpectralQK, a unit-energy complex kernel with a
    learned frequency (``log_freq``, clamped to [2, F-2] bins) inside the authors' Gaussian
    envelope of width sigma_t = T / (4 pi) tokens (T = the length the layer sees; 20.37 at
    T = 256, 5.09 at T = 64). ``causal-freq-fixed``: ours, the same kernel inside a fixed
    envelope a = ``model.kernel_scale`` tokens (paper C's fourierqk results committed before the
    authors' envelope was adopted used it, a = 8, under the name ``causal-freq-qk``).
    ``circular-gauss`` uses the UNPADDED FFT (n = T): a circular convolution that wraps the
    future into the past; it is the declared-non-causal foil.

``seedc-collapse``: seed C's "successful" FourierQK as we read it (:class:`FreqCollapse`): a
per-position scalar weight c_h(t) = sum_f w_h(f) cos(2 pi f t / T) multiplies q[t] and k[t];
no transform of the sequence, declared causal.

Model-level mixer ``fnet``: Re(FFT2 over (T, E)) of LN(x) replaces the attention sublayer
(FNet, Lee-Thorp et al. 2021); parameter-free and NON-CAUSAL.

Metric-distortion controls and eval-time surrogates are options of the bilateral filters
(``model.filter_transform``, ``model.filter_phase``, see :func:`apply_phase_surrogate`) so a
trained model can be re-evaluated with them (:mod:`mope_jax.analysis.diagnostics`).
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.attention.registry import layer_names, register
from mope_jax.errors import ConfigError
from mope_jax.typing import Array, Params, PRNGKey

# Eval-time surrogates (phase_surrogate): the authors' four (DESIGN.md section 5) and our
# earlier additive-phase ones, prefixed "add-".
AUTHOR_PHASE_MODES = ("phase_rand", "phase_rand_indep", "amp_only", "phase_shift")
ADDITIVE_PHASE_MODES = ("add-shared", "add-independent", "add-shift")
PHASE_MODES = ("none", *AUTHOR_PHASE_MODES, *ADDITIVE_PHASE_MODES)
TRANSFORMS = ("dft", "rotation", "projection")
CONV_IMPLS = ("fft", "toeplitz", "direct")
KERNELS = ("gauss", "mexhat", "morlet")
FILTER_NORMS = ("l1", "l2")  # model.filter_norm: spectral window w / sum|w|, or w / ||w||_2
KERNEL_NORMS = (
    "l1",
    "l2",
)  # model.kernel_norm: causal taps h / sum|h| (min(K,T) taps), or h / ||h||_2 (K taps)
# MultiFourier-QK initial periods in tokens (paper C: paragraph / sub-paragraph / phrase / word)
PAPER_PERIODS = (50.0, 26.0, 10.0, 5.0)
# Paper C's fixed-bin ladder is defined at T = 256; a rung b is used at bin b * T / 256.
LADDER_T = 256
FIXED_BIN_LADDER = {"dc": 0.0, "1": 1.0, "4": 4.0, "16": 16.0, "64": 64.0, "nyquist": 128.0}


def check_choice(field: str, value: str, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else fail with one line naming them."""
    if value not in choices:
        raise ConfigError(
            f"model.{field}={value!r} is not valid; choose one of {', '.join(choices)}"
        )
    return value


# --------------------------------------------------------------------------- windows


def normalise_window(w: Array, norm: str) -> Array:
    """w (..., F) divided by sum_f |w| ("l1") or by sqrt(sum_f w^2) ("l2"), over the last axis."""
    check_choice("filter_norm", norm, FILTER_NORMS)
    if norm == "l1":
        return w / jnp.maximum(jnp.abs(w).sum(-1, keepdims=True), 1e-12)
    return w / jnp.maximum(jnp.sqrt((w**2).sum(-1, keepdims=True)), 1e-12)


def gaussian_window(centers: Array, n_freq: int, bandwidth: float, norm: str = "l1") -> Array:
    """w(f) = g(f) / N, g(f) = exp(-(f - c)^2 / 2b^2), f = 0..F-1  (DESIGN.md sections 2, 5).

    centers (...,) in frequency bins (cycles per window) -> (..., F), F = n_freq.
    norm "l1": N = sum_f g (sum_f w = 1; ours, the filter-shape study's);
    norm "l2": N = sqrt(sum_f g^2) (||w||_2 = 1; paper C's main code, the 1.031/0.608/0.309 rows).
    Computed from a softmax over f, so centres far outside [0, F) do not underflow to 0/0.
    """
    f = jnp.arange(n_freq, dtype=jnp.float32).reshape((1,) * centers.ndim + (n_freq,))  # (1.., F)
    z = (f - centers[..., None]) / bandwidth  # (..., F)
    w = jax.nn.softmax(-0.5 * z**2, axis=-1)  # the l1 window; l2 only rescales it
    return (
        w if check_choice("filter_norm", norm, FILTER_NORMS) == "l1" else normalise_window(w, "l2")
    )


def mexhat_window(centers: Array, n_freq: int, bandwidth: float, norm: str = "l1") -> Array:
    """w(f) = (1 - z^2) exp(-z^2/2), z = (f - c)/b, divided by sum_f |w| ("l1") or ||w||_2.

    centers (...,) bins -> (..., F). (A plain sum normalisation would divide by ~0: the Mexican
    hat integrates to zero.) One window around one centre: the ``mexhat-window`` filter.
    """
    f = jnp.arange(n_freq, dtype=jnp.float32).reshape((1,) * centers.ndim + (n_freq,))  # (1.., F)
    z = (f - centers[..., None]) / bandwidth  # (..., F)
    w = (1.0 - z**2) * jax.nn.softmax(-0.5 * z**2, axis=-1)
    return normalise_window(w, norm)


def mexhat_k4_spectra(log_s: Array, t: int, n_freq: int | None = None) -> Array:
    """MexHat-K4 spectra (filter-shape study, DESIGN.md section 5), admissible (zero at DC):

        H_s(f) = (s w)^2 exp(-(s w)^2 / 2) / sum_f' (...),   w = 2 pi f / T (rad/token)

    log_s (H,K), s in tokens; f = 0..n_freq-1 (n_freq = T//2 + 1 by default) -> (K,H,F).
    The peak sits at s w = sqrt(2), i.e. at the period P = 2 pi s / sqrt(2) tokens.
    """
    n_freq = t // 2 + 1 if n_freq is None else n_freq
    omega = 2 * math.pi * jnp.arange(n_freq, dtype=jnp.float32) / t  # (F,) rad/token
    x = jnp.exp(log_s).T[:, :, None] * omega[None, None, :]  # (K,H,1) * (1,1,F) -> (K,H,F)
    h = x**2 * jnp.exp(-0.5 * x**2)
    return h / jnp.maximum(h.sum(-1, keepdims=True), 1e-30)


def mexhat_k4_init_log_s(periods: tuple[float, ...] = PAPER_PERIODS) -> np.ndarray:
    """(K,) log s with s = sqrt(2) P / (2 pi): the spectrum of scale s peaks at period P tokens."""
    return np.log(math.sqrt(2.0) * np.asarray(periods, np.float64) / (2 * math.pi))


def ladder_bin(rung: float, t: int) -> float:
    """Centre (bins of a T-point DFT) of the fixed-bin ladder rung ``rung`` (bins at T = 256).

    The rule keeps the period in tokens (equivalently the fraction of the Nyquist band):
    bin = rung * T / 256, so DC (0) stays 0 and Nyquist (128) stays T/2 at every T.
    """
    return float(rung) * t / LADDER_T


WINDOWS = {"gaussian": gaussian_window, "mexhat": mexhat_window}  # SpectralFilter.shape


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


def surrogate_phases(
    mode: str, key: PRNGKey | None, shape: tuple[int, int, int, int], t: int
) -> tuple[Array, Array]:
    """Random phases (rad) of the surrogates that need them; spectra shape (B,F,H,D), T = t.

    phase_rand:        phi (B,F,H,1), uniform on [0, 2 pi) per batch row, frequency and head,
                       shared over the D channels; phi_k = phi_q
    phase_rand_indep:  phi_q, phi_k (B,F,H,D), independent per channel and between q and k
    add-shared:        phi (1,F,H,D), shared over the batch; phi_k = phi_q (our earlier draw)
    add-independent:   phi_q, phi_k (1,F,H,D), independent
    Every draw is 0 at DC and, for even T, at Nyquist. Other modes: zeros (1,1,1,1).
    """
    b, n_freq, h, d = shape
    interior = _interior(n_freq, t)[None, :, None, None]  # (1,F,1,1)
    if mode not in ("phase_rand", "phase_rand_indep", "add-shared", "add-independent"):
        zero = jnp.zeros((1, 1, 1, 1), jnp.float32)
        return zero, zero
    if key is None:
        raise ValueError(f"phase surrogate {mode!r} needs a key")
    kq, kk = jax.random.split(key)
    if mode.startswith("add-"):  # our earlier draw: (F,H,D), the same for every batch row
        phi_q = 2 * math.pi * jax.random.uniform(kq, (n_freq, h, d))[None] * interior  # (1,F,H,D)
        phi_k = (
            phi_q
            if mode == "add-shared"
            else (2 * math.pi * jax.random.uniform(kk, (n_freq, h, d))[None] * interior)
        )
        return phi_q, phi_k
    if mode == "phase_rand":
        phi = 2 * math.pi * jax.random.uniform(kq, (b, n_freq, h, 1)) * interior  # (B,F,H,1)
        return phi, phi
    phi_q = 2 * math.pi * jax.random.uniform(kq, (b, n_freq, h, d)) * interior  # (B,F,H,D)
    phi_k = 2 * math.pi * jax.random.uniform(kk, (b, n_freq, h, d)) * interior
    return phi_q, phi_k


def apply_phase_surrogate(
    qf: Array, kf: Array, mode: str, phi_q: Array, phi_k: Array, t: int
) -> tuple[Array, Array]:
    """Eval-time surrogates of the spectra qf, kf = rfft(q), rfft(k) (B,F,H,D) complex, T = t.

    The authors' (phase study, DESIGN.md section 5):
      phase_rand        qf -> |qf| e^{i phi}, kf -> |kf| e^{i phi}: the phase is REPLACED
                        (Theiler surrogate); phi 0 at DC and Nyquist, so those bins become |Z|
      phase_rand_indep  the same with independent phi_q, phi_k
      amp_only          |qf|, |kf| (irfft(|Z|))
      phase_shift       qf e^{i pi/4}, kf e^{i pi/4}: BOTH rotated, on the interior bins;
                        DC and (for even T) Nyquist keep their unrotated values
    Ours, earlier (additive phases; they keep the q-k cross-spectrum qf conj(kf) when shared):
      add-shared        qf e^{i phi}, kf e^{i phi}, phi (F,H,D) shared over the batch
      add-independent   qf e^{i phi_q}, kf e^{i phi_k}
      add-shift         qf e^{i pi/4} on the interior bins, kf unchanged (a relative offset)
    phi_q, phi_k broadcastable to (B,F,H,D), from :func:`surrogate_phases`.
    """
    check_choice("filter_phase", mode, PHASE_MODES)
    if mode == "none":
        return qf, kf
    if mode in ("phase_rand", "phase_rand_indep"):
        return jnp.abs(qf) * jnp.exp(1j * phi_q), jnp.abs(kf) * jnp.exp(1j * phi_k)
    if mode == "amp_only":
        return jnp.abs(qf).astype(qf.dtype), jnp.abs(kf).astype(kf.dtype)
    if mode in ("phase_shift", "add-shift"):
        interior = _interior(qf.shape[1], t)[None, :, None, None]  # (1,F,1,1)
        rot = jnp.exp(1j * (math.pi / 4) * interior)  # 1 at DC and Nyquist
        return qf * rot, (kf * rot if mode == "phase_shift" else kf)
    return qf * jnp.exp(1j * phi_q), kf * jnp.exp(1j * phi_k)  # add-shared, add-independent


def phase_surrogate(
    qf: Array, kf: Array, mode: str, key: PRNGKey | None, t: int
) -> tuple[Array, Array]:
    """Draw the phases of ``mode`` from ``key`` and apply it: qf, kf (B,F,H,D) complex, T = t."""
    check_choice("filter_phase", mode, PHASE_MODES)
    phi_q, phi_k = surrogate_phases(mode, key, qf.shape, t)
    return apply_phase_surrogate(qf, kf, mode, phi_q, phi_k, t)


def spectral_filter_qk(
    q: Array, k: Array, w: Array, *, phase: str = "none", key: PRNGKey | None = None
):
    """The FourierQK pair filter with an optional phase surrogate.  NON-CAUSAL.

    q, k (B,T,H,D); w (H,F) -> (q~, k~) (B,T,H,D). phase="none" equals spectral_filter twice.
    """
    t = q.shape[1]
    qf, kf = jnp.fft.rfft(q, axis=1), jnp.fft.rfft(k, axis=1)  # (B,F,H,D)
    qf, kf = phase_surrogate(qf, kf, phase, key, t)
    wf = w.T[None, :, :, None]  # (1,F,H,1)
    return (
        jnp.fft.irfft(qf * wf, n=t, axis=1).astype(q.dtype),
        jnp.fft.irfft(kf * wf, n=t, axis=1).astype(k.dtype),
    )


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


def kernel_taps(kind: str, scale: Array, length: int, w0: float = 6.0, norm: str = "l1") -> Array:
    """Causal kernel taps h[c, h, j], j = 0..length-1 (tokens), scale a (H,) in tokens.

    Returns (C,H,K): C = 1 (gauss, mexhat) or 2 (morlet: real, imaginary part), divided by
      norm "l1": sum_j |h[j]| (for morlet the complex modulus |h[j]| = env[j]; ours), or
      norm "l2": sqrt(sum_j |h[j]|^2) (unit energy; the authors' causal Morlet, DESIGN.md s. 5).
    The caller chooses ``length``: CausalKernelFilter passes min(K, T) for l1 and K for l2.
    """
    check_choice("kernel_norm", norm, KERNEL_NORMS)
    j = jnp.arange(length, dtype=jnp.float32)[None, :]  # (1,K)
    a = scale[:, None]  # (H,1)
    env = jnp.exp(-0.5 * (j / a) ** 2)  # (H,K)
    if kind == "gauss":
        h = env[None]
    elif kind == "mexhat":
        h = ((1.0 - (j / a) ** 2) * env)[None]
    elif kind == "morlet":
        h = jnp.stack([env * jnp.cos(w0 * j / a), env * jnp.sin(w0 * j / a)])  # (2,H,K)
        if norm == "l1":
            return h / env.sum(-1)[None, :, None]
    else:
        raise ConfigError(f"unknown kernel {kind!r}; one of {KERNELS}")
    if norm == "l2":
        return h / jnp.sqrt((h**2).sum((0, 2), keepdims=True))  # sum over Re, Im and taps
    return h / jnp.abs(h).sum(-1, keepdims=True)


def authors_envelope_width(t: int) -> float:
    """The authors' envelope width of the causal learned-frequency kernel, in tokens:
    sigma_t = T / (2 pi * 2) = T / (4 pi) (20.37 at T = 256, 5.09 at T = 64)."""
    return t / (4 * math.pi)


def freq_kernel_taps(freq: Array, scale: float, length: int, t: int, norm: str = "l2") -> Array:
    """Causal learned-frequency kernel (the phase study's causal SpectralQK, DESIGN.md s. 5):

        h[j] = exp(-j^2 / 2a^2) exp(i 2 pi f j / T) / N,   j = 0..K-1

    freq f (H,) in bins of a T-point DFT (cycles per window; 2 pi f / T rad/token), a the
    envelope width in tokens (``scale``; the authors' is :func:`authors_envelope_width` (T),
    ``causal-freq-fixed``'s a constant), K = length taps -> (2,H,K) (Re, Im). N as
    ``kernel_taps``: "l2" sqrt(sum_j |h[j]|^2) (unit energy over the K taps), "l1" sum_j |h[j]|.
    """
    check_choice("kernel_norm", norm, KERNEL_NORMS)
    j = jnp.arange(length, dtype=jnp.float32)[None, :]  # (1,K)
    env = jnp.exp(-0.5 * (j / scale) ** 2)  # (1,K) = |h[j]| before normalising
    env = env / (jnp.sqrt((env**2).sum()) if norm == "l2" else env.sum())
    phase = 2 * math.pi * freq[:, None] * j / t  # (H,K) rad
    return jnp.stack([env * jnp.cos(phase), env * jnp.sin(phase)])  # (2,H,K)


def causal_freq_bins(log_freq: Array, t: int) -> Array:
    """Effective frequency (bins) of the causal learned-frequency filter: exp(log_freq)
    clamped to [2, F-2], F = T//2 + 1 (the clamp passes no gradient outside)."""
    return jnp.clip(jnp.exp(log_freq), 2.0, (t // 2 + 1) - 2.0)


def collapse_weights(centers: Array, t: int, bandwidth: float, norm: str = "l2") -> Array:
    """Seed C's per-position weight scalars (our reading; see :class:`FreqCollapse`):

        c_h(t) = sum_{f=0}^{F-1} w_h(f) cos(2 pi f t / T),   t = 0..T-1

    centers (H,) bins, w_h the Gaussian window (norm as given) -> (T,H), dimensionless.
    """
    n_freq = t // 2 + 1
    w = gaussian_window(centers, n_freq, bandwidth, norm)  # (H,F)
    pos = jnp.arange(t, dtype=jnp.float32)
    basis = jnp.cos(
        2 * math.pi * jnp.arange(n_freq, dtype=jnp.float32)[:, None] * pos[None, :] / t
    )  # (F,T)
    return jnp.einsum("HF,FT->TH", w, basis)


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


def n_bins(t: int, transform: str) -> int:
    """Rows of the filter basis: F = T//2 + 1 rfft bins for the DFT, T rows for a random basis."""
    return t // 2 + 1 if check_choice("filter_transform", transform, TRANSFORMS) == "dft" else t


def filter_qk(
    q: Array, k: Array, w: Array, *, transform: str = "dft", phase: str = "none", seed: int = 0
) -> tuple[Array, Array]:
    """Filter q and k with K windows per head and stack the copies.  NON-CAUSAL.

    q, k (B,T,H,D); w (K,H,F), F = n_bins(T, transform) -> (B,T,H,K*D) each, scaled by
    1/sqrt(K) so that q~ . k~ is the MEAN of the K score matrices. transform "dft" is the
    FourierQK filter (with the eval-time surrogate ``phase``); "rotation"/"projection" put a
    fixed random (T,T) basis from ``seed`` in place of the DFT (metric-distortion controls).
    """
    t = q.shape[1]
    if n_bins(t, transform) != w.shape[-1]:
        raise ConfigError(
            f"window has {w.shape[-1]} bins; T={t} with {transform!r} needs {n_bins(t, transform)}"
        )
    if transform == "dft":
        key = jax.random.PRNGKey(seed)
        qs, ks = jax.vmap(lambda wk: spectral_filter_qk(q, k, wk, phase=phase, key=key))(
            w
        )  # (K,B,T,H,D)
    else:
        if phase != "none":
            raise ConfigError("phase surrogates need model.filter_transform='dft'")
        mk = random_orthogonal if transform == "rotation" else random_projection
        m = jnp.asarray(mk(t, seed), jnp.float32)  # (T,T)
        qs = jax.vmap(lambda wk: basis_filter(q, wk, m))(w)  # (K,B,T,H,D)
        ks = jax.vmap(lambda wk: basis_filter(k, wk, m))(w)
    scale = 1.0 / math.sqrt(w.shape[0])
    return stack_components(qs, scale), stack_components(ks, scale)


CENTRES = ("learned", "fixed", "random")


class SpectralFilter(nn.Module):
    """Bilateral FFT filter of q and k with K windows per head (Fourier / MultiFourier /
    Random-QK, the fixed-bin ladder, the Mexican-hat window). NON-CAUSAL.

    init_bins: K centres in bins (the same for every head). centres: "learned" (parameter
    ``log_center`` (K,H), initialised at init_bins), "fixed" (the constants init_bins; no
    parameters) or "random" (drawn uniformly in [1, F-1] from ``seed``; no parameters).
    ref_len > 0: init_bins are given at T = ref_len and used at bin * T / ref_len (the
    fixed-bin ladder's rule, :func:`ladder_bin`). norm: the window's "l1" or "l2" norm.
    """

    n_head: int
    init_bins: tuple[float, ...]
    bandwidth: float = 2.0
    shape: str = "gaussian"
    centres: str = "learned"
    seed: int = 0
    transform: str = "dft"
    phase: str = "none"
    norm: str = "l1"
    ref_len: int = 0

    @nn.compact
    def __call__(self, q: Array, k: Array) -> tuple[Array, Array]:
        """q, k (B,T,H,D) -> (B,T,H,K*D) each, stacked copies scaled by 1/sqrt(K)."""
        t, h = q.shape[1], self.n_head
        n_freq = n_bins(t, self.transform)
        nk = len(self.init_bins)
        bins = np.asarray(self.init_bins, np.float64) * (
            t / self.ref_len if self.ref_len else 1.0
        )  # (K,)
        if check_choice("centres", self.centres, CENTRES) == "learned":
            if np.any(bins <= 0):
                raise ConfigError(
                    f"learned centres are log-parameterised: initial bins {bins} must be > 0"
                )
            init = jnp.log(jnp.asarray(bins, jnp.float32))[:, None] * jnp.ones((1, h))  # (K,H)
            centers = jnp.exp(self.param("log_center", lambda key: init))  # (K,H) bins
        elif self.centres == "fixed":
            centers = jnp.asarray(bins, jnp.float32)[:, None] * jnp.ones((1, h))  # (K,H) constants
        else:
            rng = np.random.default_rng(self.seed)
            centers = jnp.asarray(  # (a sequence of 1-2 tokens has no bin above 1)
                rng.uniform(1.0, max(n_freq - 1.0, 1.0), size=(nk, h)), jnp.float32
            )  # (K,H)
        w = WINDOWS[self.shape](centers, n_freq, self.bandwidth, self.norm)  # (K,H,F)
        return filter_qk(q, k, w, transform=self.transform, phase=self.phase, seed=self.seed)


class MexHatK4(nn.Module):
    """MexHat-K4 (filter-shape study, DESIGN.md section 5): K = 4 admissible spectra per head,
    H_s(f) = (s w)^2 exp(-(s w)^2/2) / sum_f, w = 2 pi f / T; s = exp(log_s), ``log_s`` (H,K)
    learned, init s = sqrt(2) P / (2 pi) for P = 50, 26, 10, 5 tokens; the K score matrices
    are averaged. Bilateral (irfft over the window): NON-CAUSAL.
    """

    n_head: int
    periods: tuple[float, ...] = PAPER_PERIODS
    seed: int = 0
    transform: str = "dft"
    phase: str = "none"

    @nn.compact
    def __call__(self, q: Array, k: Array) -> tuple[Array, Array]:
        """q, k (B,T,H,D) -> (B,T,H,K*D) each (score = mean over K of q~_s k~_s^T)."""
        t = q.shape[1]
        init = jnp.asarray(mexhat_k4_init_log_s(self.periods), jnp.float32)[None, :] * jnp.ones(
            (self.n_head, 1)
        )
        log_s = self.param("log_s", lambda key: init)  # (H,K)
        w = mexhat_k4_spectra(log_s, t, n_bins(t, self.transform))  # (K,H,F)
        return filter_qk(q, k, w, transform=self.transform, phase=self.phase, seed=self.seed)


class CausalKernelFilter(nn.Module):
    """One-sided time-domain kernel applied to q and k (causal unless impl="circular").

    norm "l1" (ours): taps cut to min(K, T), divided by sum_j |h[j]|. norm "l2" (the authors'
    causal Morlet): K taps always, divided by their L2 norm over all K taps; only the first T
    of them can reach an output, so the rest are dropped after normalising.

    T is ``block_size``, fixed when the module is built (the model's context), not the length
    of the sequence it is called on: a shorter sequence gets the first positions of the same
    function (prefix invariance, checked by the causality audit). ``block_size`` None (a module
    used on its own): T = the length it sees.
    """

    n_head: int
    kind: str = "gauss"
    length: int = 128
    scale: float = 8.0
    learn_scale: bool = True
    w0: float = 6.0
    impl: str = "fft"
    norm: str = "l1"
    block_size: int | None = None

    @nn.compact
    def __call__(self, q: Array, k: Array) -> tuple[Array, Array]:
        """q, k (B,T,H,D) -> (B,T,H,C*D), C = 2 for morlet (Re, Im stacked), else 1."""
        if self.impl not in CONVS:
            raise ConfigError(f"unknown conv_impl {self.impl!r}; one of {CONV_IMPLS}")
        t, h = q.shape[1], self.n_head
        T = self.block_size or t
        init = jnp.full((h,), math.log(self.scale), jnp.float32)
        log_scale = self.param("log_scale", lambda key: init) if self.learn_scale else init  # (H,)
        n_taps = (
            self.length
            if check_choice("kernel_norm", self.norm, KERNEL_NORMS) == "l2"
            else min(self.length, T)
        )
        taps = kernel_taps(self.kind, jnp.exp(log_scale), n_taps, self.w0, self.norm)[
            ..., :t
        ]  # (C,H,min(K,T))
        return _conv_pair(q, k, taps, CONVS[self.impl])


def _conv_pair(q: Array, k: Array, taps: Array, conv) -> tuple[Array, Array]:
    """q, k (B,T,H,D), taps (C,H,K) -> each convolved with the C kernels, stacked (B,T,H,C*D)."""

    def filt(x):
        return stack_components(jax.vmap(lambda hc: conv(x, hc))(taps), 1.0)

    return filt(q), filt(k)


class CausalFreqFilter(nn.Module):
    """Causal learned-frequency filter (the phase study's causal SpectralQK; DESIGN.md s. 5).

    "A causal Morlet-type kernel whose frequency is learned inside a fixed Gaussian envelope
    of width sigma_t = T / (4 pi) tokens, frequency clamped to [2, F-2] bins":

        h_h[j] = exp(-j^2 / 2a^2) exp(i 2 pi f_h j / T) / sqrt(sum_j' exp(-j'^2/a^2)), j = 0..K-1
        f_h = clip(exp(log_freq_h), 2, F - 2) bins,  F = T//2 + 1
        q~[t] = sum_{j <= t} h[j] q[t - j] (complex); score = (Re q~ Re k~ + Im q~ Im k~) / sqrt(D)

    T is ``block_size``, fixed when the module is built as the authors fix it (their module
    takes the sequence length at construction), so a shorter sequence gets the first positions
    of the same function; ``block_size`` None: T = q.shape[1].

    a (tokens) is not learned: ``scale`` None (``causal-freq``, the authors') gives
    a = T / (4 pi); a number
    (``causal-freq-fixed``, ours) is a fixed width in tokens at every T. ``log_freq`` (H,) is
    learned, init f = ``init_bin``. norm as CausalKernelFilter: "l2" (the variant's, as the
    authors' causal Morlet): K = ``length`` taps, unit energy over all K, the first T used;
    "l1": min(K, T) taps, / sum_j |h[j]|. One-sided taps and a zero-padded (or Toeplitz)
    convolution: causal.
    """

    n_head: int
    init_bin: float = 4.0
    scale: float | None = None
    length: int = 128
    impl: str = "fft"
    norm: str = "l2"
    block_size: int | None = None

    @nn.compact
    def __call__(self, q: Array, k: Array) -> tuple[Array, Array]:
        """q, k (B,T,H,D) -> (B,T,H,2*D) (Re, Im stacked)."""
        if self.impl not in ("fft", "toeplitz", "direct"):
            raise ConfigError(
                f"model.conv_impl={self.impl!r} is not valid; choose one of {', '.join(CONV_IMPLS)}"
            )
        t = q.shape[1]
        T = self.block_size or t
        init = jnp.full((self.n_head,), math.log(self.init_bin), jnp.float32)
        freq = causal_freq_bins(self.param("log_freq", lambda key: init), T)  # (H,) bins
        n_taps = (
            self.length
            if check_choice("kernel_norm", self.norm, KERNEL_NORMS) == "l2"
            else min(self.length, T)
        )
        a = authors_envelope_width(T) if self.scale is None else self.scale  # tokens
        taps = freq_kernel_taps(freq, a, n_taps, T, self.norm)[..., :t]  # (2,H,min(K,T,t))
        return _conv_pair(q, k, taps, CONVS[self.impl])


class FreqCollapse(nn.Module):
    """Seed C's "successful" FourierQK, our most literal reading (DESIGN.md section 5).

    The seed: the working FourierQK "avoids irfft reconstruction of the position-indexed
    sequence; instead it collapses the frequency dimension to a per-position weight scalar".
    Reading: the sequence q is never transformed. The Fourier-QK window w_h(f) (Gaussian,
    learned centre ``log_center`` (H,), init ``init_bin``, width 2 bins, L2 as paper C) is
    collapsed over f against the Fourier basis evaluated at each position, giving one scalar
    weight per position and head, which scales q and k there:

        c_h(t) = sum_{f=0}^{T/2} w_h(f) cos(2 pi f t / T),
        q~[t] = c_h(t) q[t],  k~[s] = c_h(s) k[s]

    so score(t, s) = c_h(t) c_h(s) q_t . k_s / sqrt(D): a learned multiplicative position
    gain. q~[t] reads q[t] alone, so it is causal (the audit measures it). It is a different
    model from the authors' committed "frequency-collapse attention", which still uses irfft.
    """

    n_head: int
    init_bin: float = 4.0
    bandwidth: float = 2.0
    norm: str = "l2"
    block_size: int | None = None  # T of the basis, fixed at build (None: the length seen)

    @nn.compact
    def __call__(self, q: Array, k: Array) -> tuple[Array, Array]:
        """q, k (B,t,H,D) -> (B,t,H,D): the weights of the first t of T positions."""
        t = q.shape[1]
        T = self.block_size or t
        init = jnp.full((self.n_head,), math.log(self.init_bin), jnp.float32)
        centers = jnp.exp(self.param("log_center", lambda key: init))  # (H,) bins
        c = collapse_weights(centers, T, self.bandwidth, self.norm)[None, :t, :, None]  # (1,t,H,1)
        return (q * c).astype(q.dtype), (k * c).astype(k.dtype)


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
    norm: str = "l1"

    @nn.compact
    def __call__(self, q: Array, k: Array, positions: Array) -> Array:
        """q, k (B,T,H,D), positions (T,) -> scores (B,H,T,S)."""
        t = q.shape[1]
        init = jnp.full((self.n_head,), math.log(self.init_bin), jnp.float32)
        centers = jnp.exp(self.param("log_center", lambda key: init))  # (H,)
        w = gaussian_window(centers, t // 2 + 1, self.bandwidth, self.norm)  # (H,F)
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


# --------------------------------------------------------------------------- learned spectra


def learned_filter_spectra(t: int, module_params: dict) -> dict[str, np.ndarray]:
    """The learned spectral quantities of one layer's Q/K filter module, in physical units.

    module_params: that module's parameters (any of ``log_center``, ``log_scale``, ``log_s``,
    ``log_freq``); t = the model's T. Returns (absent parameters give nothing):
      qk_center (K,H) or (H,) bins and qk_period T / f tokens  (Fourier / MultiFourier / ladder /
                 mexhat-window / seedc-collapse / morlet-xcorr centres)
      qk_kernel_scale (H,) tokens                               (causal kernels' a)
      qk_mexhat_s (H,K) tokens and qk_mexhat_period 2 pi s / sqrt(2) tokens (peak period)
      qk_freq (H,) bins after the [2, F-2] clamp and qk_freq_period T / f tokens  (causal-freq)
    """
    out: dict[str, np.ndarray] = {}
    if "log_center" in module_params:
        c = np.exp(np.asarray(module_params["log_center"], np.float64))
        out |= {"qk_center": c, "qk_period": t / c}
    if "log_scale" in module_params:
        out["qk_kernel_scale"] = np.exp(np.asarray(module_params["log_scale"], np.float64))
    if "log_s" in module_params:
        s_ = np.exp(np.asarray(module_params["log_s"], np.float64))
        out |= {"qk_mexhat_s": s_, "qk_mexhat_period": 2 * math.pi * s_ / math.sqrt(2.0)}
    if "log_freq" in module_params:
        f = np.asarray(causal_freq_bins(jnp.asarray(module_params["log_freq"]), t), np.float64)
        out |= {"qk_freq": f, "qk_freq_period": t / f}
    return out


# --------------------------------------------------------------------------- registry


def qk_filter_spectra(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """The learned Q/K filter quantities of every layer, stacked (L, ...), named and converted by
    :func:`learned_filter_spectra`; a quantity missing from some layer is left out."""
    layers = layer_names(params)
    found: dict[str, list[np.ndarray]] = {}
    for name in layers:
        for module in params[name].get("attn", {}).values():
            if isinstance(module, dict):
                for q, v in learned_filter_spectra(model_cfg.block_size, module).items():
                    found.setdefault(q, []).append(v)
    return {q: np.stack(v) for q, v in found.items() if len(v) == len(layers)}


# What the variants of this module declare besides builder and causality: the ModelConfig
# options their builders read, and their learned spectral parameters (all extracted by
# qk_filter_spectra).
_WINDOW = {"filter_bandwidth": None, "filter_norm": FILTER_NORMS}
_BILATERAL = {
    **_WINDOW,
    "filter_seed": None,
    "filter_transform": TRANSFORMS,
    "filter_phase": PHASE_MODES,
}
_KERNEL = {
    "kernel_len": None,
    "kernel_scale": None,
    "kernel_learn_scale": None,
    "kernel_w0": None,
    "conv_impl": CONV_IMPLS,
    "kernel_norm": KERNEL_NORMS,
}


def _learned(*names: str) -> dict:
    return {"spectral_params": names, "spectra": qk_filter_spectra}


def _bilateral(cfg, *, bins, shape="gaussian", centres="learned", ref_len=0):
    return SpectralFilter(
        cfg.n_head,
        tuple(bins),
        cfg.filter_bandwidth,
        shape,
        centres,
        cfg.filter_seed,
        cfg.filter_transform,
        cfg.filter_phase,
        check_choice("filter_norm", cfg.filter_norm, FILTER_NORMS),
        ref_len,
    )


@register(
    "qk_filter",
    "fourier",
    causal=False,
    doc="bilateral FFT, 1 learned Gaussian centre/head (init bin 4)",
    options={**_BILATERAL, "filter_init_bin": None},
    **_learned("log_center"),
)
def _fourier(cfg):
    return _bilateral(cfg, bins=(cfg.filter_init_bin,))


@register(
    "qk_filter",
    "multifourier",
    causal=False,
    doc="bilateral FFT, K learned centres/head (init periods 50/26/10/5 tokens), scores averaged",
    options={**_BILATERAL, "filter_k": None},
    **_learned("log_center"),
)
def _multifourier(cfg):
    return _bilateral(
        cfg, bins=[cfg.block_size / p for p in multifourier_init_periods(cfg.filter_k)]
    )


@register(
    "qk_filter",
    "random",
    causal=False,
    doc="bilateral FFT, fixed random centre/head (not trained)",
    options={**_BILATERAL, "filter_init_bin": None},
)
def _random(cfg):
    return _bilateral(cfg, bins=(cfg.filter_init_bin,), centres="random")


@register(
    "qk_filter",
    "fixed-bin",
    causal=False,
    doc="bilateral FFT, constant Gaussian centre: rung filter_fixed_bin at T=256, bin*T/256 here",
    options={**_BILATERAL, "filter_fixed_bin": None},
)
def _fixed_bin(cfg):
    return _bilateral(cfg, bins=(cfg.filter_fixed_bin,), centres="fixed", ref_len=LADDER_T)


@register(
    "qk_filter",
    "fixed-bin-learned",
    causal=False,
    doc="bilateral FFT, learned centre/head initialised at the ladder rung filter_fixed_bin",
    options={**_BILATERAL, "filter_fixed_bin": None},
    **_learned("log_center"),
)
def _fixed_bin_learned(cfg):
    return _bilateral(cfg, bins=(cfg.filter_fixed_bin,), ref_len=LADDER_T)


@register(
    "qk_filter",
    "mexhat-window",
    causal=False,
    doc="bilateral FFT, one (1-z^2)e^{-z^2/2} window around a learned centre (not MexHat-K4)",
    options={**_BILATERAL, "filter_init_bin": None},
    **_learned("log_center"),
)
def _mexhat_window(cfg):
    return _bilateral(cfg, bins=(cfg.filter_init_bin,), shape="mexhat")


@register(
    "qk_filter",
    "mexhat-k4",
    causal=False,
    doc="bilateral FFT, 4 admissible (s w)^2 e^{-(s w)^2/2} spectra/head, learned log_s, "
    "scores averaged",
    options={"filter_seed": None, "filter_transform": TRANSFORMS, "filter_phase": PHASE_MODES},
    **_learned("log_s"),
)
def _mexhat_k4(cfg):
    return MexHatK4(
        cfg.n_head, PAPER_PERIODS, cfg.filter_seed, cfg.filter_transform, cfg.filter_phase
    )


@register(
    "qk_filter",
    "seedc-collapse",
    causal=True,
    doc="seed C's reading: per-position weight sum_f w(f) cos(2 pi f t/T) scales q, k; no irfft",
    options={**_WINDOW, "filter_init_bin": None},
    **_learned("log_center"),
)
def _seedc_collapse(cfg):
    return FreqCollapse(
        cfg.n_head,
        cfg.filter_init_bin,
        cfg.filter_bandwidth,
        check_choice("filter_norm", cfg.filter_norm, FILTER_NORMS),
        cfg.block_size,
    )


def _kernel(cfg, kind, impl=None):
    return CausalKernelFilter(
        cfg.n_head,
        kind,
        cfg.kernel_len,
        cfg.kernel_scale,
        cfg.kernel_learn_scale,
        cfg.kernel_w0,
        impl or cfg.conv_impl,
        check_choice("kernel_norm", cfg.kernel_norm, KERNEL_NORMS),
        cfg.block_size,
    )


for _kind in KERNELS:
    register(
        "qk_filter",
        f"causal-{_kind}",
        causal=True,
        doc=f"one-sided {_kind} kernel on q/k along T (model.conv_impl: fft/toeplitz/direct)",
        options=_KERNEL,
        **_learned("log_scale"),
    )(lambda cfg, _kind=_kind: _kernel(cfg, _kind))


_FREQ = {
    "filter_init_bin": None,
    "kernel_len": None,
    "conv_impl": CONV_IMPLS,
    "kernel_norm": KERNEL_NORMS,
}


def _freq(cfg, scale):
    return CausalFreqFilter(
        cfg.n_head,
        cfg.filter_init_bin,
        scale,
        cfg.kernel_len,
        cfg.conv_impl,
        check_choice("kernel_norm", cfg.kernel_norm, KERNEL_NORMS),
        cfg.block_size,
    )


@register(
    "qk_filter",
    "causal-freq",
    causal=True,
    doc="causal complex kernel, learned frequency in [2, F-2] bins inside the authors' "
    "envelope sigma_t = T/(4 pi) tokens",
    options=_FREQ,  # no kernel_scale: the envelope follows T
    **_learned("log_freq"),
)
def _causal_freq(cfg):
    return _freq(cfg, None)


@register(
    "qk_filter",
    "causal-freq-fixed",
    causal=True,
    doc="causal complex kernel, learned frequency in [2, F-2] bins inside a fixed envelope "
    "a = kernel_scale tokens (ours)",
    options={**_FREQ, "kernel_scale": None},
    **_learned("log_freq"),
)
def _causal_freq_fixed(cfg):
    return _freq(cfg, cfg.kernel_scale)


@register(
    "qk_filter",
    "circular-gauss",
    causal=False,
    doc="Gaussian kernel by UNPADDED (circular) FFT: foil",
    options=_KERNEL,
    **_learned("log_scale"),
)
def _circular(cfg):
    return _kernel(cfg, "gauss", impl="circular")


@register(
    "qk_position",
    "morlet-xcorr",
    causal=False,
    doc="irfft Morlet cross-correlation scores (leaks)",
    options={**_WINDOW, "filter_init_bin": None},
    **_learned("log_center"),
)
def _xcorr(cfg):
    return MorletXCorr(
        cfg.n_head,
        cfg.head_dim,
        cfg.filter_init_bin,
        cfg.filter_bandwidth,
        check_choice("filter_norm", cfg.filter_norm, FILTER_NORMS),
    )


@register("mixer", "fnet", causal=False, doc="Re FFT2 over (T, E) replaces attention (FNet)")
def _fnet(cfg):
    return FNetMixer()
