"""Frozen float64 numpy references for paper 1's energy gates (EGA-n, EGA-C, EGA-M), written
from DESIGN.md section 5 with explicit loops, independent of the library code. Never edit
these to make a test pass.

Every function returns the key gate g (not its log) of ONE batch row:
  * full z-norm: (H, S), the same for every query row;
  * prefix z-norm: (H, T, S), row i normalised with keys 0..i.
"""

from __future__ import annotations

import math

import numpy as np


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, np.float64)))  # = 1 / (1 + e^-x), no overflow


def _znorm(p, znorm):
    """p (S,) -> (S,) (full) or (T, S) (prefix); population std, floored at 1e-8."""
    p = np.asarray(p, np.float64)
    if znorm == "full":
        return (p - p.mean()) / max(p.std(), 1e-8)
    out = np.zeros((len(p), len(p)))
    for i in range(len(p)):
        pre = p[: i + 1]
        out[i] = (p - pre.mean()) / max(pre.std(), 1e-8)
    return out


def _mix(energies, alpha, tau, scale_w, znorm):
    """energies (n, S) of one head; alpha, tau, scale_w (n,) ->
    g = sum_s softmax(w)_s sigmoid(alpha_s (z_s - tau_s))."""
    w = np.exp(scale_w - np.max(scale_w))
    w = w / w.sum()
    g = 0.0
    for s in range(len(energies)):
        g = g + w[s] * _sigmoid(alpha[s] * (_znorm(energies[s], znorm) - tau[s]))
    return g


def ega_n_gate(xn, kernel, bias, alpha, tau, scale_w, znorm):
    """EGA-n, authors' mixing. xn (T, E); kernel (E, H, n), bias (H, n): projection s of head h
    is p_s(j) = xn_j . kernel[:, h, s] + bias[h, s]; alpha, tau, scale_w (H, n)."""
    xn = np.asarray(xn, np.float64)
    E, H, n = kernel.shape
    out = []
    for h in range(H):
        energies = np.array(
            [[xn[j] @ kernel[:, h, s] + bias[h, s] for j in range(len(xn))] for s in range(n)]
        )
        out.append(_mix(energies, alpha[h], tau[h], scale_w[h], znorm))
    return np.array(out)


def ega_c_gate(xn, kernels, biases, alpha, tau, scale_w, znorm):
    """EGA-C. kernels[s] (l_s, E, H, 2): tap k multiplies xn_{j - (l_s - 1 - k)} (tap l_s - 1 is
    the current position), zero before the sequence; biases[s] (H, 2). Energy = a^2 + b^2 of the
    two channels; alpha, tau, scale_w (H, n)."""
    xn = np.asarray(xn, np.float64)
    T = len(xn)
    H = alpha.shape[0]
    out = []
    for h in range(H):
        energies = np.zeros((len(kernels), T))
        for s, (kern, b) in enumerate(zip(kernels, biases)):
            length = kern.shape[0]
            for j in range(T):
                ch = np.array(b[h], np.float64)  # (2,)
                for lag in range(length):
                    if j - lag >= 0:
                        ch = ch + xn[j - lag] @ kern[length - 1 - lag, :, h, :]
                energies[s, j] = ch[0] ** 2 + ch[1] ** 2
        out.append(_mix(energies, alpha[h], tau[h], scale_w[h], znorm))
    return np.array(out)


def paper_clamp(omega, sigma, bound=5.0):
    """MOPE's clamp: omega <= 0.95 pi, sigma >= 1e-3, omega = bound / sigma where
    omega sigma < bound."""
    omega = min(omega, 0.95 * math.pi)
    sigma = max(sigma, 1e-3)
    if omega * sigma < bound:
        omega = bound / sigma
    return omega, sigma


def ega_m_gate(
    xn,
    log_omega,
    log_sigma,
    alpha,
    tau,
    scale_w,
    znorm,
    *,
    lengths=(3, 7, 15, 31),
    constraint="clamp",
    bound=5.0,
):
    """EGA-M. u_t = mean_E xn_t; c_s(t) = sum_{j<l_s} exp(-j^2/2 sigma_s^2) e^{i omega_s j} u_{t-j};
    e_s = |c_s|^2; all parameters (n,), shared by the heads. Returns (S,) or (T, S)."""
    xn = np.asarray(xn, np.float64)
    u = xn.mean(-1)
    T = len(u)
    energies = np.zeros((len(lengths), T))
    for s, length in enumerate(lengths):
        omega, sigma = math.exp(log_omega[s]), math.exp(log_sigma[s])
        if constraint == "clamp":
            omega, sigma = paper_clamp(omega, sigma, bound)
        for t in range(T):
            c = 0j
            for j in range(length):
                if t - j >= 0:
                    c += math.exp(-(j**2) / (2 * sigma**2)) * np.exp(1j * omega * j) * u[t - j]
            energies[s, t] = abs(c) ** 2
    return _mix(
        energies,
        np.asarray(alpha, np.float64),
        np.asarray(tau, np.float64),
        np.asarray(scale_w, np.float64),
        znorm,
    )


def central_difference(f, x, h=1e-5):
    """d f / d x by central differences, float64; f scalar function of an array x."""
    x = np.array(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (f(xp) - f(xm)) / (2 * h)
    return g


def ega_m_example_params(seed=0):
    """Example EGA-M parameters (4,) for the tests (not a definition): log_omega/log_sigma with
    the clamp active for filters 0 and 2 and not for 1 and 3, every raw product at least 10%
    away from the bound (central differences stay on one side); alpha, tau, scale_w drawn
    from ``seed``."""
    r = np.random.default_rng(seed)
    omega = np.array([1.2, 0.8, 0.3, 0.15])
    sigma = np.array([3.0, 9.0, 12.0, 45.0])  # products 3.6 (< 5), 7.2, 3.6 (< 5), 6.75
    return dict(
        log_omega=np.log(omega),
        log_sigma=np.log(sigma),
        alpha=r.uniform(0.5, 3.0, 4),
        tau=r.normal(0, 0.5, 4),
        scale_w=r.normal(0, 1.0, 4),
    )
