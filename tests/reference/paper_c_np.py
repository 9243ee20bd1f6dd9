"""Frozen float64 numpy references for paper C (FourierQK) as the authors' code computes it.

Written directly from DESIGN.md sections 2 and 5 with explicit loops, independent of the
library code (numpy's FFT stands in for the DFT). Never edit these to make a test pass.
Shapes: q, k (T, D) for one head; windows (F,), F = T // 2 + 1.
"""

from __future__ import annotations

import math

import numpy as np


def gaussian_window(center, t, bandwidth=2.0, norm="l2"):
    """w(f) = exp(-(f - c)^2 / 2b^2) / N, f = 0..T/2; N = ||.||_2 (l2) or sum (l1)."""
    f = np.arange(t // 2 + 1, dtype=np.float64)
    g = np.exp(-((f - center) ** 2) / (2 * bandwidth**2))
    return g / (np.sqrt(np.sum(g**2)) if norm == "l2" else np.sum(g))


def ladder_center(rung, t):
    """Fixed-bin ladder: rung given in bins at T = 256 -> rung * T / 256 (same period in tokens)."""
    return rung * t / 256.0


def bilateral(x, w):
    """irfft(rfft(x, axis=0) * w, n=T) for x (T, D), w (F,)."""
    t = x.shape[0]
    return np.fft.irfft(np.fft.rfft(x, axis=0) * w[:, None], n=t, axis=0)


def mean_scores(qs, ks):
    """mean over the list of (q~_s, k~_s) pairs of q~_s k~_s^T / sqrt(D), D = q.shape[1]."""
    d = qs[0].shape[1]
    return sum(q @ k.T for q, k in zip(qs, ks)) / len(qs) / math.sqrt(d)


def mexhat_k4(s, t):
    """H_s(f) = (s w)^2 exp(-(s w)^2/2) / sum_f, w = 2 pi f / T, f = 0..T/2; s (K,) -> (K, F)."""
    out = []
    for sk in s:
        x = sk * 2 * math.pi * np.arange(t // 2 + 1) / t
        h = x**2 * np.exp(-(x**2) / 2)
        out.append(h / h.sum())
    return np.stack(out)


def causal_conv(x, h):
    """y[t] = sum_{j=0}^{min(t, K-1)} h[j] x[t - j]; x (T, D), h (K,) real or complex."""
    t_len = x.shape[0]
    y = np.zeros(x.shape, dtype=np.result_type(x, h))
    for t in range(t_len):
        for j in range(min(t + 1, len(h))):
            y[t] += h[j] * x[t - j]
    return y


def morlet_taps_l2(a, k=128, w0=6.0):
    """h[j] = exp(-j^2/2a^2) e^{i w0 j / a}, j = 0..K-1, divided by sqrt(sum_j |h[j]|^2)."""
    j = np.arange(k, dtype=np.float64)
    h = np.exp(-(j**2) / (2 * a**2)) * np.exp(1j * w0 * j / a)
    return h / math.sqrt(np.sum(np.abs(h) ** 2))


def morlet_taps_l1(a, k, t, w0=6.0):
    """Our earlier norm: min(K, T) taps, divided by sum_j |h[j]| (= sum of the envelope)."""
    j = np.arange(min(k, t), dtype=np.float64)
    h = np.exp(-(j**2) / (2 * a**2)) * np.exp(1j * w0 * j / a)
    return h / np.sum(np.abs(h))


def freq_taps(log_f, a, k, t):
    """Causal learned frequency: f = clip(exp(log_f), 2, F-2) bins, F = T/2 + 1;
    h[j] = exp(-j^2/2a^2) e^{i 2 pi f j / T}, unit energy over the K taps."""
    f = min(max(math.exp(log_f), 2.0), t // 2 + 1 - 2.0)
    j = np.arange(k, dtype=np.float64)
    h = np.exp(-(j**2) / (2 * a**2)) * np.exp(2j * math.pi * f * j / t)
    return h / math.sqrt(np.sum(np.abs(h) ** 2))


def freq_taps_authors(log_f, k, t):
    """The authors' causal learned-frequency kernel: the Gaussian envelope width is
    sigma_t = T / (2 pi * 2) tokens, T the sequence length; f = clip(exp(log_f), 2, F-2)
    bins, F = T//2 + 1; h[j] = exp(-j^2 / (2 sigma_t^2)) exp(i 2 pi f j / T), j = 0..K-1,
    divided by sqrt(sum_j env[j]^2)."""
    sigma_t = t / (2 * math.pi * 2)
    f = min(max(math.exp(log_f), 2.0), t // 2 + 1 - 2.0)
    h = np.zeros(k, dtype=np.complex128)
    energy = 0.0
    for j in range(k):
        env = math.exp(-(j * j) / (2 * sigma_t * sigma_t))
        energy += env * env
        h[j] = env * complex(math.cos(2 * math.pi * f * j / t), math.sin(2 * math.pi * f * j / t))
    return h / math.sqrt(energy)


def complex_scores(q, k, h):
    """(Re q~ Re k~^T + Im q~ Im k~^T) / sqrt(D) with q~ = causal_conv(q, h)."""
    qc, kc = causal_conv(q, h), causal_conv(k, h)
    return (qc.real @ kc.real.T + qc.imag @ kc.imag.T) / math.sqrt(q.shape[1])


def collapse_weights(center, t, bandwidth=2.0):
    """Seed C reading: c(t) = sum_{f=0}^{T/2} w(f) cos(2 pi f t / T), w the L2 Gaussian window."""
    w = gaussian_window(center, t, bandwidth, "l2")
    return np.array(
        [sum(w[f] * math.cos(2 * math.pi * f * n / t) for f in range(len(w))) for n in range(t)]
    )


def surrogate(z, mode, phi=None, t=None):
    """The authors' eval-time surrogates of one spectrum z = rfft(x, axis=0) (F, D) of a T-point
    signal: phase_rand / phase_rand_indep |z| e^{i phi}; amp_only |z|; phase_shift z e^{i pi/4}
    on every bin except DC (bin 0) and, for even T, Nyquist (bin T/2), which keep their
    unrotated values (needs t)."""
    if mode in ("phase_rand", "phase_rand_indep"):
        return np.abs(z) * np.exp(1j * phi)
    if mode == "amp_only":
        return np.abs(z).astype(complex)
    if mode == "phase_shift":
        out = np.array(z, dtype=np.complex128)
        for f in range(z.shape[0]):
            if f == 0 or (t % 2 == 0 and f == t // 2):
                continue  # DC, Nyquist: unrotated
            out[f] = z[f] * complex(math.cos(math.pi / 4), math.sin(math.pi / 4))
        return out
    raise ValueError(mode)
