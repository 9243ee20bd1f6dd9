"""Frozen float64 numpy reference of paper 1's EGA-M as the authors' code computes it
(DESIGN.md section 5, "EGA-M (paper 1 ...)"), written from that definition with explicit loops,
independent of the library code. Never edit it to make a test pass.

Per head h and filter s = 1..4 (lengths l_s = 3, 7, 15, 31), on one batch row xn (T, E):

    u_t      = mean_E xn_t
    h_hs[j]  = exp(-j^2 / (2 sigma_hs^2)) exp(i omega_hs j),   j = 0..l_s-1
    c_hs(t)  = sum_{j<l_s} h_hs[j] u[t - (l_s - 1) + j]         u = 0 before t = 0
               (torch's conv1d after left-padding by l_s - 1: a cross-correlation, no flip,
               so tap j = 0, the envelope peak, meets the OLDEST token of the window)
    e_hs(t)  = |c_hs(t)|^2
    z_hs     = (e_hs - mean) / max(std, 1e-8), population std (divide by the count), over all
               T (full) or, for query row i, over keys 0..i (prefix)
    g_h      = sum_s softmax(scale_w_h)_s sigmoid(alpha_hs (z_hs - tau_hs))

(omega_hs, sigma_hs) = exp(log_omega_hs), exp(log_sigma_hs), then MOPE's clamp: omega <= 0.95 pi,
sigma >= 1e-3, omega = bound / sigma where omega sigma < bound (``constraint="clamp"``).

Returns the key gate g (not its log): (H, S) for the full z-norm, (H, T, S) for the prefix one.
"""

from __future__ import annotations

import math

import numpy as np

LENGTHS = (3, 7, 15, 31)


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    ex = math.exp(x)
    return ex / (1.0 + ex)


def _clamp(omega: float, sigma: float, bound: float) -> tuple[float, float]:
    omega = min(omega, 0.95 * math.pi)
    sigma = max(sigma, 1e-3)
    if omega * sigma < bound:
        omega = bound / sigma
    return omega, sigma


def _stats(values) -> tuple[float, float]:
    """(mean, max(population std, 1e-8)) of a list of floats, by explicit sums."""
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / n
    return mean, max(math.sqrt(var), 1e-8)


def filter_output(u, omega: float, sigma: float, length: int) -> np.ndarray:
    """c(t) = sum_{j<length} h[j] u[t - (length - 1) + j], u = 0 before t = 0; complex (T,)."""
    T = len(u)
    c = np.zeros(T, complex)
    for t in range(T):
        acc = 0j
        for j in range(length):
            idx = t - (length - 1) + j
            if idx >= 0:
                h = math.exp(-(j**2) / (2.0 * sigma**2)) * complex(
                    math.cos(omega * j), math.sin(omega * j)
                )
                acc += h * float(u[idx])
        c[t] = acc
    return c


def ega_m_authors_gate(
    xn,
    log_omega,
    log_sigma,
    alpha,
    tau,
    scale_w,
    znorm,
    *,
    lengths=LENGTHS,
    constraint="clamp",
    bound=5.0,
):
    """xn (T, E); log_omega, log_sigma, alpha, tau, scale_w (H, n) -> g (H, S) or (H, T, S)."""
    xn = np.asarray(xn, np.float64)
    T, E = xn.shape
    u = [sum(float(xn[t, k]) for k in range(E)) / E for t in range(T)]
    params = [np.asarray(a, np.float64) for a in (log_omega, log_sigma, alpha, tau, scale_w)]
    log_omega, log_sigma, alpha, tau, scale_w = params
    H, n = log_omega.shape
    assert n == len(lengths)
    out = np.zeros((H, T) if znorm == "full" else (H, T, T))
    for h in range(H):
        wmax = max(scale_w[h])
        w = [math.exp(scale_w[h, s] - wmax) for s in range(n)]
        w = [x / sum(w) for x in w]
        for s, length in enumerate(lengths):
            omega, sigma = math.exp(log_omega[h, s]), math.exp(log_sigma[h, s])
            if constraint == "clamp":
                omega, sigma = _clamp(omega, sigma, bound)
            c = filter_output(u, omega, sigma, length)
            e = [abs(c[t]) ** 2 for t in range(T)]
            if znorm == "full":
                mean, std = _stats(e)
                for j in range(T):
                    z = (e[j] - mean) / std
                    out[h, j] += w[s] * _sigmoid(alpha[h, s] * (z - tau[h, s]))
            else:
                for i in range(T):
                    mean, std = _stats(e[: i + 1])
                    for j in range(T):
                        z = (e[j] - mean) / std
                        out[h, i, j] += w[s] * _sigmoid(alpha[h, s] * (z - tau[h, s]))
    return out
