"""Frozen float64 numpy references for paper A (MOPE, the paper's clamp, Morlet-RoPE, EGA).

Written directly from DESIGN.md section 1 with explicit loops / complex numbers, independent
of the library code. Never edit these to make a test pass.
"""

from __future__ import annotations

import math

import numpy as np


def morlet_table(positions, omega, sigma, center=None):
    """pe[b, 2i] = cos(omega_i b) env, pe[b, 2i+1] = sin(omega_i b) env, float64 (T, 2n)."""
    positions = np.asarray(positions, np.float64)
    n = len(omega)
    center = np.zeros(n) if center is None else np.asarray(center, np.float64)
    out = np.zeros((len(positions), 2 * n))
    for t, b in enumerate(positions):
        for i in range(n):
            z = np.exp(1j * omega[i] * b) * math.exp(-((b - center[i]) ** 2) / (2 * sigma[i] ** 2))
            out[t, 2 * i], out[t, 2 * i + 1] = z.real, z.imag
    return out


def paper_clamp(log_omega, log_sigma, bound=5.0):
    """The authors' projection and its Jacobian, float64.

    Returns omega, sigma and the partial derivatives d omega / d log_omega,
    d omega / d log_sigma, d sigma / d log_sigma (d sigma / d log_omega = 0).
    """
    omega, sigma = (
        np.exp(np.asarray(log_omega, np.float64)),
        np.exp(np.asarray(log_sigma, np.float64)),
    )
    capped = omega > 0.95 * math.pi
    floored = sigma < 1e-3
    dom_dlo = np.where(capped, 0.0, omega)
    omega = np.minimum(omega, 0.95 * math.pi)
    dsig_dls = np.where(floored, 0.0, sigma)
    sigma = np.maximum(sigma, 1e-3)
    active = omega * sigma < bound
    # omega = bound / sigma while active: d/d log_sigma = -bound / sigma^2 * dsigma/dlog_sigma
    dom_dls = np.where(active, -bound / sigma**2 * dsig_dls, 0.0)
    dom_dlo = np.where(active, 0.0, dom_dlo)
    omega = np.where(active, bound / sigma, omega)
    return omega, sigma, dom_dlo, dom_dls, dsig_dls


def rope_theta(head_dim, base=10000.0):
    return base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def morlet_rope_scores(q, k, sigma, base=10000.0, layout="interleaved"):
    """score[b,h,m,n] = sum_i Re[q_i(m) conj(k_i(n)) e^{i theta_i (m-n)}]
    exp(-(m-n)^2/2 sigma_hi^2) / sqrt(D).

    q, k (B, T, H, D); sigma (H, D/2) tokens (one per head and frequency); float64 loops.
    """
    q, k = np.asarray(q, np.float64), np.asarray(k, np.float64)
    B, T, H, D = q.shape
    F = D // 2
    theta = rope_theta(D, base)

    def complex_pairs(x):
        if layout == "interleaved":
            return x[..., 0::2] + 1j * x[..., 1::2]
        return x[..., :F] + 1j * x[..., F:]

    qc, kc = complex_pairs(q), complex_pairs(k)  # (B, T, H, F)
    out = np.zeros((B, H, T, T))
    for m in range(T):
        for n in range(T):
            r = m - n
            env = np.exp(-(r**2) / (2 * np.asarray(sigma, np.float64) ** 2))  # (H, F)
            rot = np.exp(1j * theta * r)  # (F,)
            term = (qc[:, m] * np.conj(kc[:, n]) * rot[None, None, :]).real * env[None]  # (B, H, F)
            out[:, :, m, n] = term.sum(-1) / math.sqrt(D)
    return out


def znorm_full(p):
    """p (S,) -> (S,) population z-score with the std floored at 1e-8."""
    p = np.asarray(p, np.float64)
    return (p - p.mean()) / max(p.std(), 1e-8)


def znorm_prefix(p):
    """p (S,) -> (S, S): row i uses the mean/std of p[0..i] (entries j > i included, unmasked)."""
    p = np.asarray(p, np.float64)
    out = np.zeros((len(p), len(p)))
    for i in range(len(p)):
        pre = p[: i + 1]
        out[i] = (p - pre.mean()) / max(pre.std(), 1e-8)
    return out


def ega_attention(s, log_gate):
    """Masked softmax with a post-softmax key gate, renormalised, float64. s (T, S),
    log_gate (T or 1, S)."""
    s = np.asarray(s, np.float64)
    T, S = s.shape
    mask = np.tril(np.ones((T, S), bool))
    a = np.where(mask, np.exp(s - np.where(mask, s, -np.inf).max(-1, keepdims=True)), 0.0)
    a = a / a.sum(-1, keepdims=True)
    g = a * np.exp(np.broadcast_to(np.asarray(log_gate, np.float64), (T, S)))
    return g / np.maximum(g.sum(-1, keepdims=True), 1e-8)
