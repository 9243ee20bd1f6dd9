"""Energy-gated attention (EGA, paper A and its paper-1 gates; DESIGN.md sections 1 and 5),
``attn_bias`` variants.

EGA-1 (``ega``, ``ega-prefix``), per head h, on xn = LN(x) (B, T, E):

    p_j = w_h . xn_j + c_h                                  energy (Linear E -> 1 per head)
    e_j = (p_j - mean p) / max(std p, 1e-8)                 z-normalised energy
    g_j = sigmoid(alpha_h (e_j - tau_h))                    key gate, alpha init 2, tau init 0

The gate multiplies the attention probabilities AFTER softmax and dropout and is renormalised
(:func:`mope_jax.attention.core.attend`); without dropout that equals softmax(s + log g).
Every variant returns log g as ``AttnBias.log_gate``.

Two normalisations, registered separately because they differ in causality:
  * ``znorm="full"`` (the paper's): mean and std over ALL T positions of the sequence, so the
    gate of key j depends on future tokens -- NOT causal. The gate does not depend on the
    query row: log_gate has shape (B, H, 1, S).
  * ``znorm="prefix"`` (causal): query row i normalises with the mean and std of keys 0..i,
    computed with cumulative sums, so log_gate has shape (B, H, T, S). Row T-1 equals the
    full gate.
Standard deviations are population ones (divide by the count, not count - 1).

The paper-1 gates with n energies mix the n GATES, as the authors' code does (DESIGN.md
section 5): with z_s the z-normalised energy s of a head,

    g = sum_s softmax(scale_w)_s sigmoid(alpha_s (z_s - tau_s))     alpha_s init 2, tau_s init 0,
                                                                    scale_w init 0 (equal weights)
    log g = logsumexp_s(log softmax(scale_w)_s + log sigmoid(alpha_s (z_s - tau_s)))   (stable)

  * EGA-n (``ega-n``, ``ega-n-prefix``; n = ``model.ega_n``): n separate Linear(E -> 1)
    energy projections per head, p_{s,j} = w_{h,s} . xn_j + c_{h,s}; alpha, tau, scale_w are
    (H, n): per head (as EGA-1's alpha_h, tau_h) and per energy s. For n = 1 this is EGA-1.
  * EGA-C (``ega-c``, ``ega-c-prefix``): four causal two-channel convolutions of xn, lengths
    l_s = 3, 7, 15, 31 (``EGA_C_LENGTHS``). Our reading of DESIGN.md section 5 (which names
    the channel count and lengths but no other change from our one-channel conv energy): per
    length l, Conv(E -> 2 channels per head, kernel l, bias, zero left padding of l - 1), so
    (a_j, b_j) = sum_{k<l} W_{h,k} xn_{j-k} + c_h and the energy is the squared output
    p_{s,j} = a_j^2 + b_j^2; then z-norm, own (alpha, tau) per head and length, gates mixed
    as in EGA-n. The convolutions are causal; the full z-norm is not.
  * EGA-M (``ega-m``, ``ega-m-prefix``): Morlet-filter energies, :mod:`mope_jax.attention.ega_m`.

Our earlier, different computations keep their own names:
  * ``ega-n-energymix``, ``ega-n-energymix-prefix``: the n z-normalised energies are mixed
    with softmax(scale_w) BEFORE one sigmoid, g = sigmoid(alpha_h (sum_s softmax(scale_w)_s
    z_s - tau_h)). Equal to EGA-n for n = 1 only.
  * ``ega-conv1``, ``ega-conv1-prefix`` (formerly ``ega-conv*``): ONE linear
    channel per head, K = ``model.ega_conv_len`` taps, p_j = sum_{k<K} w_{h,k} . xn_{j-k} + c_h,
    then EGA-1's z-norm and single gate.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.attention.registry import AttnBias, per_layer, register, rename
from mope_jax.errors import ConfigError
from mope_jax.typing import Array, Params

STD_FLOOR = 1e-8
ZNORMS = ("full", "prefix")
EGA_C_LENGTHS = (3, 7, 15, 31)  # paper 1's EGA-C (and EGA-M) filter lengths, tokens


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


def znormalise(p: Array, znorm: str) -> Array:
    """(..., S) -> (..., T', S), T' = 1 (``"full"``, not causal) or S (``"prefix"``, causal)."""
    if znorm == "full":
        return znorm_full(p)
    if znorm == "prefix":
        return znorm_prefix(p)
    raise ConfigError(f"unknown EGA znorm {znorm!r}; choose one of {ZNORMS}")


def energy_log_gate(e: Array, alpha: Array, tau: Array) -> Array:
    """log g = log sigmoid(alpha_h (e - tau_h)). e (B, H, T', S), alpha/tau (H,) ->
    (B, H, T', S)."""
    h = alpha.shape[0]
    a = alpha.reshape(1, h, 1, 1)  # (H,) -> (1,H,1,1)
    t = tau.reshape(1, h, 1, 1)
    return jax.nn.log_sigmoid(a * (e - t))


def mixed_gate_log(z: Array, alpha: Array, tau: Array, scale_w: Array) -> Array:
    """Paper-1 gate mixing, log g = log sum_s softmax(scale_w)_s sigmoid(alpha_s (z_s - tau_s)).

    z (B, H, n, T', S) z-normalised energies; alpha, tau, scale_w (H, n) -> log g (B, H, T', S),
    computed as logsumexp_s(log_softmax(scale_w)_s + log_sigmoid(alpha_s (z_s - tau_s))) so
    that a gate near 0 keeps a finite log and gradient.
    """
    h, n = alpha.shape
    a = alpha.reshape(1, h, n, 1, 1)  # (H,n) -> (1,H,n,1,1)
    t = tau.reshape(1, h, n, 1, 1)
    log_w = jax.nn.log_softmax(scale_w, axis=-1).reshape(1, h, n, 1, 1)  # (H,n) -> (1,H,n,1,1)
    return jax.scipy.special.logsumexp(
        log_w + jax.nn.log_sigmoid(a * (z - t)), axis=2
    )  # (B,H,T',S)


def mixed_energy(p: Array, scale_w: Array | None, znorm: str) -> Array:
    """``ega-n-energymix``: z-normalise n energies and mix the ENERGIES. p (B, H, n, S),
    scale_w (H, n) or None (n = 1) -> e (B, H, T', S) with T' = 1 (full) or S (prefix)."""
    z = znormalise(p, znorm)  # (B,H,n,T',S)
    if scale_w is None:
        return z[:, :, 0]
    h, n = scale_w.shape
    mix = jax.nn.softmax(scale_w, axis=-1).reshape(1, h, n, 1, 1)  # (H,n) -> (1,H,n,1,1)
    return (mix * z).sum(2)


def _compute_dtype(x: Array):
    return jnp.promote_types(
        x.dtype, jnp.float32
    )  # f32 in training; f64 stays f64 (reference tests)


class EnergyGate(nn.Module):
    """EGA-1, ``ega-n-energymix`` (n > 1) and ``ega-conv1`` (conv_len > 1).

    Parameters: ``energy`` Dense E -> H n (kernel w, bias c) or Conv (kernel (K, E, H n)),
    ``alpha`` (H,), ``tau`` (H,), ``scale_w`` (H, n) when n > 1."""

    n_head: int
    n_energy: int = 1
    znorm: str = "full"
    init_std: float = 0.02
    conv_len: int = (
        1  # K > 1: one-channel causal convolution energy (ega-conv1); kernel (K, E, H n)
    )

    @nn.compact
    def __call__(self, xn: Array, positions: Array, deterministic: bool = True) -> AttnBias:
        """xn (B, T, E) -> AttnBias(log_gate (B, H, 1 or T, T))."""
        b, t, _ = xn.shape
        h, n = self.n_head, self.n_energy
        init = nn.initializers.normal(self.init_std)
        if self.conv_len > 1:  # left padding only: p_j sees xn_{j-K+1..j}
            p = nn.Conv(
                h * n,
                (self.conv_len,),
                padding=((self.conv_len - 1, 0),),
                kernel_init=init,
                name="energy",
            )(xn)  # (B,T,H*n)
        else:
            p = nn.Dense(h * n, kernel_init=init, name="energy")(xn)  # (B,T,H*n)
        p = p.reshape(b, t, h, n).transpose(0, 2, 3, 1)  # (B,T,H*n) -> (B,T,H,n) -> (B,H,n,T)
        alpha = self.param("alpha", nn.initializers.constant(2.0), (h,))
        tau = self.param("tau", nn.initializers.zeros, (h,))
        scale_w = self.param("scale_w", nn.initializers.zeros, (h, n)) if n > 1 else None
        e = mixed_energy(p.astype(_compute_dtype(p)), scale_w, self.znorm)
        return AttnBias(log_gate=energy_log_gate(e, alpha, tau))


class EnergyGateMix(nn.Module):
    """The authors' EGA-n (``lengths`` empty) and EGA-C (``lengths`` = conv lengths): n
    energies per head, each z-normalised and gated with its own alpha, tau; gates mixed.

    Parameters: EGA-n: ``energy`` Dense E -> H n (kernel (E, H n), bias (H n,)); EGA-C:
    ``energy_l{l}`` Conv E -> 2 H (kernel (l, E, 2 H), bias (2 H,)) per length l; and
    ``alpha`` (H, n) init 2, ``tau`` (H, n) init 0, ``scale_w`` (H, n) init 0.
    """

    n_head: int
    n_energy: int = 1
    znorm: str = "full"
    init_std: float = 0.02
    lengths: tuple[int, ...] = ()

    @nn.compact
    def __call__(self, xn: Array, positions: Array, deterministic: bool = True) -> AttnBias:
        """xn (B, T, E) -> AttnBias(log_gate (B, H, 1 or T, T))."""
        b, t, _ = xn.shape
        h = self.n_head
        init = nn.initializers.normal(self.init_std)
        if self.lengths:
            n = len(self.lengths)
            energies = []
            for l in self.lengths:  # noqa: E741  (l: the paper's length)
                c = nn.Conv(
                    2 * h, (l,), padding=((l - 1, 0),), kernel_init=init, name=f"energy_l{l}"
                )(xn)  # (B,T,2H)
                c = c.reshape(b, t, h, 2).astype(_compute_dtype(c))  # (B,T,2H) -> (B,T,H,2)
                energies.append(jnp.square(c).sum(-1))  # (B,T,H): a^2 + b^2
            p = jnp.stack(energies, axis=-1)  # (B,T,H,n)
        else:
            n = self.n_energy
            p = nn.Dense(h * n, kernel_init=init, name="energy")(xn).reshape(
                b, t, h, n
            )  # (B,T,H*n) -> (B,T,H,n)
        p = p.transpose(0, 2, 3, 1)  # (B,T,H,n) -> (B,H,n,T)
        alpha = self.param("alpha", nn.initializers.constant(2.0), (h, n))
        tau = self.param("tau", nn.initializers.zeros, (h, n))
        scale_w = self.param("scale_w", nn.initializers.zeros, (h, n))
        z = znormalise(p.astype(_compute_dtype(p)), self.znorm)  # (B,H,n,T',S)
        return AttnBias(log_gate=mixed_gate_log(z, alpha, tau, scale_w))


def ega_spectra(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """alpha, tau (L, H) for EGA-1, (L, H, n) for the mixed gates, and the mix weights
    softmax(scale_w) (L, H, n) where present."""
    alpha = per_layer(params, "ega", "alpha")
    if alpha is None:
        return {}
    out = {"ega_alpha": alpha, "ega_tau": per_layer(params, "ega", "tau")}
    scale_w = per_layer(params, "ega", "scale_w")
    if scale_w is not None:
        out["ega_mix"] = np.asarray(jax.nn.softmax(scale_w, axis=-1))
    return out


# what every EGA variant of this module declares besides its builder and causality
_EGA = dict(
    options={"ega_n": None, "ega_conv_len": None},
    spectral_params=("alpha", "tau", "scale_w"),
    spectra=ega_spectra,
)


def _builder(n_from_cfg: bool, znorm: str, conv: bool = False):
    def build(cfg):
        n = cfg.ega_n if n_from_cfg else 1
        return EnergyGate(
            cfg.n_head, n, znorm, cfg.init_std, cfg.ega_conv_len if conv else 1, name="ega"
        )

    return build


def _mix_builder(znorm: str, lengths: tuple[int, ...] = ()):
    def build(cfg):
        return EnergyGateMix(cfg.n_head, cfg.ega_n, znorm, cfg.init_std, lengths, name="ega")

    return build


register(
    "attn_bias",
    "ega",
    causal=False,
    **_EGA,
    doc="EGA-1 as published: key gate with z-norm over ALL positions (sees the future)",
)(_builder(False, "full"))
register(
    "attn_bias",
    "ega-prefix",
    causal=True,
    doc="EGA-1, causal: row i z-normalises with keys 0..i",
    **_EGA,
)(_builder(False, "prefix"))
register(
    "attn_bias",
    "ega-n",
    causal=False,
    **_EGA,
    doc="EGA-n as the authors mix it: n = model.ega_n projections, own alpha/tau, GATES mixed; "
    "z-norm over ALL positions",
)(_mix_builder("full"))
register(
    "attn_bias",
    "ega-n-prefix",
    causal=True,
    **_EGA,
    doc="EGA-n (authors' gate mixing), causal prefix z-norm",
)(_mix_builder("prefix"))
register(
    "attn_bias",
    "ega-n-energymix",
    causal=False,
    **_EGA,
    doc="ours, not the paper's: n z-normed energies mixed under ONE sigmoid; "
    "z-norm over ALL positions",
)(_builder(True, "full"))
register(
    "attn_bias",
    "ega-n-energymix-prefix",
    causal=True,
    **_EGA,
    doc="ours, not the paper's: energies mixed under one sigmoid, causal prefix z-norm",
)(_builder(True, "prefix"))
register(
    "attn_bias",
    "ega-c",
    causal=False,
    **_EGA,
    doc="EGA-C as the authors define it: squared 2-channel causal convs, lengths 3/7/15/31, "
    "gates mixed; z-norm over ALL positions",
)(_mix_builder("full", EGA_C_LENGTHS))
register(
    "attn_bias",
    "ega-c-prefix",
    causal=True,
    doc="EGA-C (authors'), causal prefix z-norm",
    **_EGA,
)(_mix_builder("prefix", EGA_C_LENGTHS))
register(
    "attn_bias",
    "ega-conv1",
    causal=False,
    **_EGA,
    doc="ours, not the paper's EGA-C: ONE linear causal conv channel (model.ega_conv_len taps), "
    "one gate; z-norm over ALL positions",
)(_builder(False, "full", conv=True))
register(
    "attn_bias",
    "ega-conv1-prefix",
    causal=True,
    **_EGA,
    doc="one-channel conv energy (ega-conv1) with the causal prefix z-norm",
)(_builder(False, "prefix", conv=True))
# the one-channel conv energy was formerly registered as ega-conv / ega-conv-prefix
rename("attn_bias", "ega-conv", "ega-conv1")
rename("attn_bias", "ega-conv-prefix", "ega-conv1-prefix")
