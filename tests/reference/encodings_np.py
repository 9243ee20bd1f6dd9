"""Frozen float64 numpy references, written independently of mope_jax. Never edit to pass a test."""

import numpy as np


def sinusoidal(T: int, E: int, base: float = 10000.0) -> np.ndarray:
    pe = np.zeros((T, E))
    for pos in range(T):
        for i in range(0, E, 2):
            pe[pos, i] = np.sin(pos / base ** (i / E))
            pe[pos, i + 1] = np.cos(pos / base ** (i / E))
    return pe


def rope_interleaved(x: np.ndarray, pos: int, base: float = 10000.0) -> np.ndarray:
    """x (D,) rotated at position pos; pairs (2i, 2i+1)."""
    D = x.shape[-1]
    out = np.empty(D)
    for i in range(D // 2):
        th = pos * base ** (-2 * i / D)
        a, b = x[2 * i], x[2 * i + 1]
        out[2 * i] = a * np.cos(th) - b * np.sin(th)
        out[2 * i + 1] = a * np.sin(th) + b * np.cos(th)
    return out


def rope_half(x: np.ndarray, pos: int, base: float = 10000.0) -> np.ndarray:
    """x (D,) rotated at position pos; pairs (i, i + D/2) (GPT-NeoX rotate_half)."""
    D = x.shape[-1]
    h = D // 2
    th = pos * base ** (-2 * np.arange(h) / D)
    a, b = x[:h], x[h:]
    return np.concatenate([a * np.cos(th) - b * np.sin(th), a * np.sin(th) + b * np.cos(th)])


def alibi(H: int, T: int) -> np.ndarray:
    """bias (H, T, T) = -m_h (i - j), m_h = 2^(-8h/H) for H a power of two."""
    m = np.array([2.0 ** (-8.0 * (h + 1) / H) for h in range(H)])
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    return -m[:, None, None] * (i - j)[None]
