"""EGA-M, paper 1's Morlet-filter energy gate (DESIGN.md section 5), an ``attn_bias`` variant.

This is the gate behind seed A's remark that omega sigma = 5 "also appeared in a separate
energy-gate experiment". ``ega-m`` and ``ega-m-prefix`` compute what the authors' code
computes. On xn = LN(x) (B, T, E), the input every EGA gate receives, per head h:

    u_t       = mean_E xn_t                                           scalar signal (B, T)
    h_hs[j]   = exp(-j^2 / (2 sigma_hs^2)) e^{i omega_hs j},  j < l_s   taps of filter s
    c_hs(t)   = sum_{j < l_s} h_hs[j] u_{t-(l_s-1)+j}                 (u = 0 before t = 0)
    e_hs(t)   = |c_hs(t)|^2                                           energy, s = 1..4
    z_hs      = z-norm of e_hs over the sequence (full: all T, NOT causal; prefix: keys 0..i,
                causal)
    g_h       = sum_s softmax(scale_w_h)_s sigmoid(alpha_hs (z_hs - tau_hs))   key gate of head h

with lengths l_s = 3, 7, 15, 31 taps, omega in rad/token, sigma in tokens. c_hs is what the
authors' ``conv1d`` computes after left-padding u by l_s - 1 zeros: conv1d is a
cross-correlation and does NOT flip its kernel, so tap j multiplies the token at lag
l_s - 1 - j, and the envelope peak (j = 0) sits on the OLDEST token of each window (the newest
token meets tap l_s - 1, where the envelope is smallest). The paper-5a code flips its kernels;
paper 1's does not, and we compute paper 1's as it is. Only u at t' <= t is read: the filter is
causal; the full z-norm is not.

Parameters (per layer): ``log_omega``, ``log_sigma``, ``alpha``, ``tau``, ``scale_w``, each
(H, 4): every head owns its own four filters, gates and mix (20 parameters per head; the
authors' count, 960 = 20 x 8 heads x 6 layers). The signal u has no head axis, so the heads'
gates differ only through their parameters; the log-gate has shape (B, H, T', S).

Ours, not the paper's, kept under its own names (``ega-m-shared``, full z-norm;
``ega-m-shared-prefix``, causal): one filter set per layer shared by the heads (parameters
(4,), log-gate (B, 1, T', S), broadcast over H), tap j on lag j, c_s(t) = sum_{j<l_s} h_s[j]
u_{t-j} (envelope peak on the newest token). The omega_sigma_control results committed before
the authors' definition was adopted were made with it. One module (:class:`EnergyGateMorlet`)
computes both, with the flags
``per_head`` and ``tap_order`` ("conv1d" | "lag").

Init and constraint follow MOPE's (:mod:`mope_jax.encodings.morlet`), the same init for every
head: omega_s = pi / l_s; sigma_s = bound / omega_s (``init="boundary"``, the paper's, ON
omega sigma = bound) or 2 bound / omega_s (``init="off"``); constraint ``clamp`` (the paper's:
omega <= 0.95 pi, sigma >= 1e-3, omega = where(omega sigma < bound, bound / sigma, omega)),
``penalty`` (the soft admissibility penalty, sown into ``aux_loss``) or ``none``. The bound is
``model.mope_bound``, read from the ``hparams`` collection as MOPE reads it, so the omega*sigma
control and sweeps can grid it; the penalty weight is ``model.mope_penalty``.
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from mope_jax import hparams
from mope_jax.attention.energy_gate import EGA_C_LENGTHS, mixed_gate_log, znormalise
from mope_jax.attention.registry import AttnBias, get, per_layer, register
from mope_jax.encodings.morlet import (
    CONSTRAINTS,
    INITS,
    admissibility_penalty,
    boundary_stats,
    clamp_active,
    constrain,
)
from mope_jax.errors import ConfigError
from mope_jax.typing import Array, Params

EGA_M_LENGTHS = EGA_C_LENGTHS  # l_s = 3, 7, 15, 31 taps
TAP_ORDERS = ("conv1d", "lag")  # the authors' (tap j on lag l_s - 1 - j) | ours (tap j on lag j)


def ega_m_init(
    lengths: tuple[int, ...] = EGA_M_LENGTHS, *, init: str = "boundary", bound: float = 5.0
) -> tuple[np.ndarray, np.ndarray]:
    """Initial (log_omega, log_sigma), each (n,) float32: omega_s = pi / l_s rad/token,
    sigma_s = bound / omega_s (``"boundary"``) or 2 bound / omega_s (``"off"``), tokens.
    The per-head variants start every head at these values."""
    if init not in INITS:
        raise ConfigError(f"unknown EGA-M init {init!r}; choose one of {INITS}")
    log_omega = np.log(math.pi / np.asarray(lengths, np.float64))
    product = bound if init == "boundary" else 2.0 * bound
    return log_omega.astype(np.float32), (math.log(product) - log_omega).astype(np.float32)


def tap_index(lengths: tuple[int, ...], tap_order: str) -> tuple[np.ndarray, np.ndarray]:
    """Which tap j of each filter multiplies the token at lag k (u_{t-k}), k = 0..K-1,
    K = max(lengths): (j (n, K) float64, inside (n, K) bool), j = 0 where ``inside`` is False
    (lag k >= l_s: no tap). ``"conv1d"``: j = l_s - 1 - k (the authors' conv1d after left
    padding, no flip); ``"lag"``: j = k."""
    if tap_order not in TAP_ORDERS:
        raise ConfigError(f"unknown EGA-M tap order {tap_order!r}; choose one of {TAP_ORDERS}")
    lag = np.arange(max(lengths))[None, :]  # (1, K)
    length = np.asarray(lengths)[:, None]  # (n, 1)
    inside = lag < length  # (n, K)
    j = length - 1 - lag if tap_order == "conv1d" else np.broadcast_to(lag, inside.shape)
    return np.where(inside, j, 0).astype(np.float64), inside


def morlet_energies(
    u: Array, omega: Array, sigma: Array, lengths: tuple[int, ...], tap_order: str = "conv1d"
) -> Array:
    """e_s(t) = |sum_{k<l_s} h_s[j_s(k)] u_{t-k}|^2, u = 0 for t < 0, with the taps
    h_s[j] = exp(-j^2/(2 sigma_s^2)) e^{i omega_s j} and j_s(k) = l_s - 1 - k (``"conv1d"``)
    or k (``"lag"``), :func:`tap_index`.

    u (B, T); omega, sigma (..., n) rad/token, tokens ((n,) shared, (H, n) per head); lengths
    (n,) taps -> e (B, ..., n, T). Computed in real arithmetic from one (..., n, K) tap matrix
    per part against K lagged copies of u: e = (sum env cos(omega j) u)^2 +
    (sum env sin(omega j) u)^2.
    """
    t = u.shape[1]
    k = max(lengths)
    j_np, inside_np = tap_index(lengths, tap_order)
    lead = (1,) * (omega.ndim - 1)  # the leading axes of omega, sigma: () shared, (1,) per head
    j = jnp.asarray(j_np, u.dtype).reshape(lead + j_np.shape)  # (n,K) -> (..,n,K) tap at each lag
    inside = jnp.asarray(inside_np, u.dtype).reshape(lead + j_np.shape)  # (n,K) -> (..,n,K)
    env = (
        jnp.exp(-jnp.square(j) / (2.0 * jnp.square(sigma)[..., None])) * inside
    )  # (...,n,1) -> (...,n,K)
    phase = omega[..., None] * j  # (...,n,K)
    u_pad = jnp.pad(u, ((0, 0), (k - 1, 0)))  # (B, K-1+T): zeros before the sequence
    lagged = jnp.stack(
        [u_pad[:, k - 1 - lag : k - 1 - lag + t] for lag in range(k)], axis=-1
    )  # (B,T,K): u_{t-k}
    re = jnp.einsum("BTK,...NK->B...NT", lagged, env * jnp.cos(phase))
    im = jnp.einsum("BTK,...NK->B...NT", lagged, env * jnp.sin(phase))
    return jnp.square(re) + jnp.square(im)  # (B,...,n,T)


class EnergyGateMorlet(nn.Module):
    """EGA-M (module docstring). xn (B, T, E) -> AttnBias(log_gate (B, H or 1, 1 or T, T)).

    ``per_head=True, tap_order="conv1d"`` (the defaults; ``ega-m``, ``ega-m-prefix``): the
    authors' EGA-M, parameters (H, 4), H = ``n_head``. ``per_head=False, tap_order="lag"``
    (``ega-m-shared``, ``ega-m-shared-prefix``): ours, one (4,) set per layer shared by the
    heads, tap j on lag j."""

    znorm: str = "full"
    init_mode: str = "boundary"  # (not ``init``: that would shadow Module.init)
    constraint: str = "clamp"
    bound: float = 5.0
    penalty_weight: float = 1.0
    lengths: tuple[int, ...] = EGA_M_LENGTHS
    n_head: int = 1
    per_head: bool = True
    tap_order: str = "conv1d"

    @nn.compact
    def __call__(self, xn: Array, positions: Array, deterministic: bool = True) -> AttnBias:
        if self.constraint not in CONSTRAINTS:
            raise ConfigError(
                f"unknown EGA-M constraint {self.constraint!r}; choose one of {CONSTRAINTS}"
            )
        n = len(self.lengths)
        shape = (self.n_head, n) if self.per_head else (n,)  # (H,n) per head, (n,) shared
        lo, ls = ega_m_init(self.lengths, init=self.init_mode, bound=self.bound)  # (n,), (n,)
        log_omega = self.param("log_omega", lambda key, s: jnp.broadcast_to(lo, s), shape)
        log_sigma = self.param("log_sigma", lambda key, s: jnp.broadcast_to(ls, s), shape)
        alpha = self.param("alpha", nn.initializers.constant(2.0), shape)
        tau = self.param("tau", nn.initializers.zeros, shape)
        scale_w = self.param("scale_w", nn.initializers.zeros, shape)
        # the train state's traced value inside a training step (the hparams collection)
        bound = hparams.read(self, "mope_bound", self.bound)
        if self.constraint == "penalty":
            self.sow(
                "aux_loss",
                "ega_m_penalty",
                self.penalty_weight * admissibility_penalty(log_omega, log_sigma, bound=bound),
            )
        omega, sigma = constrain(
            log_omega, log_sigma, constraint=self.constraint, bound=bound
        )  # shape, shape
        u = xn.astype(jnp.promote_types(xn.dtype, jnp.float32)).mean(-1)  # (B,T,E) -> (B,T)
        e = morlet_energies(
            u, omega.astype(u.dtype), sigma.astype(u.dtype), self.lengths, self.tap_order
        )  # (B,H,n,T) per head, (B,n,T) shared
        if self.per_head:
            z = znormalise(e, self.znorm)  # (B,H,n,T',S)
            return AttnBias(log_gate=mixed_gate_log(z, alpha, tau, scale_w))  # (B,H,T',S)
        z = znormalise(e, self.znorm)[:, None]  # (B,n,T',S) -> (B,1,n,T',S): one "head", shared
        return AttnBias(
            log_gate=mixed_gate_log(z, alpha[None], tau[None], scale_w[None])
        )  # (B,1,T',S)


def _builder(znorm: str, per_head: bool, tap_order: str):
    def build(cfg):
        return EnergyGateMorlet(
            znorm,
            cfg.ega_m_init,
            cfg.ega_m_constraint,
            cfg.mope_bound,
            cfg.mope_penalty,
            n_head=cfg.n_head,
            per_head=per_head,
            tap_order=tap_order,
            name="ega_m",
        )

    return build


def ega_m_filter_sets(model_cfg) -> int:
    """Filter sets per layer of the configured EGA-M variant: ``n_head`` (``ega-m``,
    ``ega-m-prefix``: per head) or 1 (``ega-m-shared*``)."""
    module = get("attn_bias", model_cfg.attn_bias).build(model_cfg)
    return model_cfg.n_head if module.per_head else 1


def ega_m_values(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """EGA-M's learned spectra, (L, H, 4) per layer, head and filter (``ega-m``,
    ``ega-m-prefix``) or (L, 4) per layer and filter (``ega-m-shared*``): omega (rad/token) and
    sigma (tokens) after the configured constraint, raw exp(log .), clamp mask, gate alpha/tau,
    mix weights (softmax over the filters, the last axis)."""
    lo, ls = per_layer(params, "ega_m", "log_omega"), per_layer(params, "ega_m", "log_sigma")
    if lo is None:
        return {}
    omega, sigma = constrain(
        lo, ls, constraint=model_cfg.ega_m_constraint, bound=model_cfg.mope_bound
    )
    return {
        "ega_m_omega": np.asarray(omega),
        "ega_m_sigma": np.asarray(sigma),
        "ega_m_raw_omega": np.exp(lo),
        "ega_m_raw_sigma": np.exp(ls),
        "ega_m_clamp_active": np.asarray(clamp_active(lo, ls, bound=model_cfg.mope_bound)),
        "ega_m_alpha": per_layer(params, "ega_m", "alpha"),
        "ega_m_tau": per_layer(params, "ega_m", "tau"),
        "ega_m_mix": np.asarray(jax.nn.softmax(per_layer(params, "ega_m", "scale_w"), axis=-1)),
    }


def ega_m_summary(model_cfg, params: Params) -> dict[str, float]:
    """The boundary statistics of EGA-M's (omega, sigma), as MOPE's, prefixed ``ega_m_``,
    over every (layer, [head,] filter) pair."""
    v = ega_m_values(model_cfg, params)
    if not v:
        return {}
    out = boundary_stats(
        v["ega_m_omega"].ravel(), v["ega_m_sigma"].ravel(), model_cfg.mope_bound, prefix="ega_m"
    )
    out["ega_m_clamp_active_frac"] = float(np.mean(v["ega_m_clamp_active"]))
    return out


# what every EGA-M variant declares besides its builder and causality
_EGA_M = dict(
    options={
        "ega_m_init": INITS,
        "ega_m_constraint": CONSTRAINTS,
        "mope_bound": None,
        "mope_penalty": None,
    },
    spectral_params=("log_omega", "log_sigma", "alpha", "tau", "scale_w"),
    spectra=ega_m_values,
    summary=ega_m_summary,
    hparams=("mope_bound",),
)

register(
    "attn_bias",
    "ega-m",
    causal=False,
    doc="EGA-M (paper 1) as the authors compute it: per head, 4 causal Morlet filters "
    "(l = 3/7/15/31, conv1d taps, envelope peak on the oldest token) of mean_E xn, |c|^2 "
    "energies, gates mixed; z-norm over ALL positions",
    **_EGA_M,
)(_builder("full", True, "conv1d"))
register(
    "attn_bias",
    "ega-m-prefix",
    causal=True,
    doc="EGA-M (authors', per head, conv1d taps) with the causal prefix z-norm",
    **_EGA_M,
)(_builder("prefix", True, "conv1d"))
register(
    "attn_bias",
    "ega-m-shared",
    causal=False,
    doc="ours, not the paper's: one filter set per layer shared by the heads, tap j on lag j "
    "(envelope peak on the newest token); the omega_sigma_control results committed before "
    "the authors' definition was adopted were made with it; z-norm over ALL positions",
    **_EGA_M,
)(_builder("full", False, "lag"))
register(
    "attn_bias",
    "ega-m-shared-prefix",
    causal=True,
    doc="ours, not the paper's: one filter set per layer shared by the heads, tap j on lag j "
    "(envelope peak on the newest token); causal prefix z-norm",
    **_EGA_M,
)(_builder("prefix", False, "lag"))
