"""Energy-gated attention (EGA, paper A; DESIGN.md section 1), an ``attn_bias`` variant.

Per head h, on xn = LN(x) (B, T, E):

    p_j = w_h . xn_j + c_h                                  energy (Linear E -> 1 per head)
    e_j = (p_j - mean p) / max(std p, 1e-8)                 z-normalised energy
    g_j = sigmoid(alpha_h (e_j - tau_h))                    key gate, alpha init 2, tau init 0

The gate multiplies the attention probabilities AFTER softmax and dropout and is renormalised
(:func:`mope_jax.attention.core.attend`); without dropout that equals softmax(s + log g).

Two normalisations, registered separately because they differ in causality:
  * ``znorm="full"`` (the paper's): mean and std over ALL T positions of the sequence, so the
    gate of key j depends on future tokens -- NOT causal (``ega``, ``ega-n``). The gate does
    not depend on the query row: log_gate has shape (B, H, 1, S).
  * ``znorm="prefix"`` (causal): query row i normalises with the mean and std of keys 0..i,
    computed with cumulative sums, so log_gate has shape (B, H, T, S) (``ega-prefix``,
    ``ega-n-prefix``). Row T-1 equals the full gate.
Standard deviations are population ones (divide by the count, not count - 1).

EGA-C (``ega-conv``, ``ega-conv-prefix``): the energy is a causal convolution over the last
K = ``model.ega_conv_len`` positions, p_j = sum_{k<K} w_{h,k} . xn_{j-k} + c_h (zero padding
before the sequence), then the same z-norm and gate. The convolution itself is causal; the
full-sequence z-norm is not.

EGA-n (``ega-n*``, n = ``model.ega_n``) computes n energy projections per head, z-normalises
each, and mixes the normalised energies with softmax(scale_w) (scale_w (H, n), init 0 = equal
weights) before the sigmoid. (Mixing the raw p's would collapse to a single projection.)
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from mope_jax.attention.registry import AttnBias, register
from mope_jax.typing import Array

STD_FLOOR = 1e-8
ZNORMS = ("full", "prefix")


def _floored_std(var: Array) -> Array:
    """max(sqrt(var), 1e-8), written as sqrt(max(var, 1e-16)): the same values, but a finite
    gradient where var = 0 (row 0 of the prefix statistics; constant energies), where
    d sqrt(x)/dx would be infinite and turn the whole gradient into NaN."""
    return jnp.sqrt(jnp.maximum(var, STD_FLOOR**2))


def znorm_full(p: Array) -> Array:
    """(..., S) -> (..., 1, S): (p - mean) / max(std, 1e-8) over the whole S axis."""
    mean = p.mean(-1, keepdims=True)  # (..., 1)
    std = _floored_std(jnp.mean(jnp.square(p - mean), -1, keepdims=True))  # (..., 1)
    return ((p - mean) / std)[..., None, :]  # (..., 1, S)


def znorm_prefix(p: Array) -> Array:
    """(..., S) -> (..., T=S, S): row i is (p - mean_{0..i}) / max(std_{0..i}, 1e-8).

    Prefix statistics come from cumulative sums of p - p_0 (shifting by the first key, which
    every prefix contains, keeps E[x^2] - E[x]^2 from cancelling when |mean| >> std).
    Entries j > i use statistics of keys 0..i only; the causal mask removes them anyway.
    """
    s = p.shape[-1]
    x = p - p[..., :1]  # (..., S)
    count = jnp.arange(1, s + 1, dtype=p.dtype)  # (S,)
    count = count.reshape((1,) * (p.ndim - 1) + (s,))  # (S,) -> (1.., S)
    m1 = jnp.cumsum(x, -1) / count  # (..., S) mean of keys 0..i, shifted
    m2 = jnp.cumsum(jnp.square(x), -1) / count
    std = _floored_std(m2 - jnp.square(m1))  # (..., S)
    mean = m1 + p[..., :1]  # (..., S)
    return (p[..., None, :] - mean[..., :, None]) / std[..., :, None]  # (..., T, S)


def energy_log_gate(e: Array, alpha: Array, tau: Array) -> Array:
    """log g = log sigmoid(alpha_h (e - tau_h)). e (B, H, T', S), alpha/tau (H,) -> (B, H, T', S)."""
    h = alpha.shape[0]
    a = alpha.reshape(1, h, 1, 1)  # (H,) -> (1,H,1,1)
    t = tau.reshape(1, h, 1, 1)
    return jax.nn.log_sigmoid(a * (e - t))


def mixed_energy(p: Array, scale_w: Array | None, znorm: str) -> Array:
    """z-normalise n energies and mix them. p (B, H, n, S), scale_w (H, n) or None (n = 1)
    -> e (B, H, T', S) with T' = 1 (full) or S (prefix)."""
    if znorm == "full":
        z = znorm_full(p)  # (B,H,n,1,S)
    elif znorm == "prefix":
        z = znorm_prefix(p)  # (B,H,n,S,S)
    else:
        raise ValueError(f"unknown EGA znorm {znorm!r}; choose one of {ZNORMS}")
    if scale_w is None:
        return z[:, :, 0]
    h, n = scale_w.shape
    mix = jax.nn.softmax(scale_w, axis=-1).reshape(1, h, n, 1, 1)  # (H,n) -> (1,H,n,1,1)
    return (mix * z).sum(2)


class EnergyGate(nn.Module):
    """Parameters: ``energy`` Dense E -> H n (kernel w, bias c), ``alpha`` (H,), ``tau`` (H,),
    ``scale_w`` (H, n) when n > 1."""

    n_head: int
    n_energy: int = 1
    znorm: str = "full"
    init_std: float = 0.02
    conv_len: int = 1  # K > 1: causal convolution energy (EGA-C); kernel (K, E, H n)

    @nn.compact
    def __call__(self, xn: Array, positions: Array, deterministic: bool = True) -> AttnBias:
        """xn (B, T, E) -> AttnBias(log_gate (B, H, 1 or T, T))."""
        b, t, _ = xn.shape
        h, n = self.n_head, self.n_energy
        init = nn.initializers.normal(self.init_std)
        if self.conv_len > 1:  # left padding only: p_j sees xn_{j-K+1..j}
            p = nn.Conv(h * n, (self.conv_len,), padding=((self.conv_len - 1, 0),), kernel_init=init,
                        name="energy")(xn)  # (B,T,H*n)
        else:
            p = nn.Dense(h * n, kernel_init=init, name="energy")(xn)  # (B,T,H*n)
        p = p.reshape(b, t, h, n).transpose(0, 2, 3, 1)  # (B,T,H,n) -> (B,H,n,T)
        alpha = self.param("alpha", nn.initializers.constant(2.0), (h,))
        tau = self.param("tau", nn.initializers.zeros, (h,))
        scale_w = self.param("scale_w", nn.initializers.zeros, (h, n)) if n > 1 else None
        e = mixed_energy(p.astype(jnp.float32), scale_w, self.znorm)
        return AttnBias(log_gate=energy_log_gate(e, alpha, tau))


def _builder(n_from_cfg: bool, znorm: str, conv: bool = False):
    def build(cfg):
        n = cfg.ega_n if n_from_cfg else 1
        return EnergyGate(cfg.n_head, n, znorm, cfg.init_std, cfg.ega_conv_len if conv else 1, name="ega")

    return build


register("attn_bias", "ega", causal=False,
         doc="EGA-1 as published: key gate with z-norm over ALL positions (sees the future)")(_builder(False, "full"))
register("attn_bias", "ega-n", causal=False,
         doc="EGA-n (n = model.ega_n energies), z-norm over ALL positions")(_builder(True, "full"))
register("attn_bias", "ega-prefix", causal=True,
         doc="EGA-1, causal: row i z-normalises with keys 0..i")(_builder(False, "prefix"))
register("attn_bias", "ega-n-prefix", causal=True,
         doc="EGA-n (n = model.ega_n), causal prefix z-norm")(_builder(True, "prefix"))
register("attn_bias", "ega-conv", causal=False,
         doc="EGA-C: causal conv energy (model.ega_conv_len taps), z-norm over ALL positions")(
    _builder(False, "full", conv=True))
register("attn_bias", "ega-conv-prefix", causal=True,
         doc="EGA-C with the causal prefix z-norm")(_builder(False, "prefix", conv=True))
