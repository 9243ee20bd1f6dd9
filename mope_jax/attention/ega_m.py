"""EGA-M, paper 1's Morlet-filter energy gate (DESIGN.md section 5), an ``attn_bias`` variant.

This is the gate behind seed A's remark that omega sigma = 5 "also appeared in a separate
energy-gate experiment". On xn = LN(x) (B, T, E), the input every EGA gate receives:

    u_t     = mean_E xn_t                                             scalar signal (B, T)
    c_s(t)  = sum_{j < l_s} exp(-j^2 / (2 sigma_s^2)) e^{i omega_s j} u_{t-j}   (u = 0 before t = 0)
    e_s(t)  = |c_s(t)|^2                                              energy, s = 1..4
    z_s     = z-norm of e_s over the sequence (full: all T, NOT causal; prefix: keys 0..i, causal)
    g       = sum_s softmax(scale_w)_s sigmoid(alpha_s (z_s - tau_s))  key gate

with lengths l_s = 3, 7, 15, 31 taps, omega_s in rad/token, sigma_s in tokens.

Parameters (per layer), ``log_omega``, ``log_sigma``, ``alpha``, ``tau``, ``scale_w``, each (4,):
ONE set per layer, shared by every head. Reading of the authors' description (chosen here,
DESIGN.md leaves it open): every quantity is indexed by the filter s only, and the signal u is
a scalar per position with no head axis, so the gate is the same for all heads; the log-gate
has shape (B, 1, T', S) and broadcasts over H.

Init and constraint follow MOPE's (:mod:`mope_jax.encodings.morlet`): omega_s = pi / l_s;
sigma_s = bound / omega_s (``init="boundary"``, the paper's, ON omega sigma = bound) or
2 bound / omega_s (``init="off"``); constraint ``clamp`` (the paper's: omega <= 0.95 pi,
sigma >= 1e-3, omega = where(omega sigma < bound, bound / sigma, omega)), ``penalty`` (the
soft admissibility penalty, sown into ``aux_loss``) or ``none``. The bound is
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
from mope_jax.attention.registry import AttnBias, per_layer, register
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


def ega_m_init(
    lengths: tuple[int, ...] = EGA_M_LENGTHS, *, init: str = "boundary", bound: float = 5.0
) -> tuple[np.ndarray, np.ndarray]:
    """Initial (log_omega, log_sigma), each (n,) float32: omega_s = pi / l_s rad/token,
    sigma_s = bound / omega_s (``"boundary"``) or 2 bound / omega_s (``"off"``), tokens."""
    if init not in INITS:
        raise ConfigError(f"unknown EGA-M init {init!r}; choose one of {INITS}")
    log_omega = np.log(math.pi / np.asarray(lengths, np.float64))
    product = bound if init == "boundary" else 2.0 * bound
    return log_omega.astype(np.float32), (math.log(product) - log_omega).astype(np.float32)


def morlet_energies(u: Array, omega: Array, sigma: Array, lengths: tuple[int, ...]) -> Array:
    """e_s(t) = |sum_{j<l_s} exp(-j^2/(2 sigma_s^2)) e^{i omega_s j} u_{t-j}|^2, u = 0 for t < 0.

    u (B, T); omega (n,) rad/token, sigma (n,) tokens; lengths (n,) taps -> e (B, n, T).
    Computed in real arithmetic: e = (sum env cos(omega j) u)^2 + (sum env sin(omega j) u)^2.
    """
    b, t = u.shape
    k = max(lengths)
    j = jnp.arange(k, dtype=u.dtype)  # (K,) lag in tokens
    inside = (j[None, :] < jnp.asarray(lengths)[:, None]).astype(u.dtype)  # (n, K): tap j < l_s
    env = jnp.exp(-jnp.square(j)[None, :] / (2.0 * jnp.square(sigma)[:, None])) * inside  # (n, K)
    phase = omega[:, None] * j[None, :]  # (n, K)
    u_pad = jnp.pad(u, ((0, 0), (k - 1, 0)))  # (B, K-1+T): zeros before the sequence
    lagged = jnp.stack(
        [u_pad[:, k - 1 - lag : k - 1 - lag + t] for lag in range(k)], axis=-1
    )  # (B,T,K): u_{t-j}
    re = jnp.einsum("BTK,NK->BNT", lagged, env * jnp.cos(phase))
    im = jnp.einsum("BTK,NK->BNT", lagged, env * jnp.sin(phase))
    return jnp.square(re) + jnp.square(im)  # (B,n,T)


class EnergyGateMorlet(nn.Module):
    """EGA-M (module docstring). xn (B, T, E) -> AttnBias(log_gate (B, 1, 1 or T, T))."""

    znorm: str = "full"
    init_mode: str = "boundary"  # (not ``init``: that would shadow Module.init)
    constraint: str = "clamp"
    bound: float = 5.0
    penalty_weight: float = 1.0
    lengths: tuple[int, ...] = EGA_M_LENGTHS

    @nn.compact
    def __call__(self, xn: Array, positions: Array, deterministic: bool = True) -> AttnBias:
        if self.constraint not in CONSTRAINTS:
            raise ConfigError(
                f"unknown EGA-M constraint {self.constraint!r}; choose one of {CONSTRAINTS}"
            )
        n = len(self.lengths)
        lo, ls = ega_m_init(self.lengths, init=self.init_mode, bound=self.bound)
        log_omega = self.param("log_omega", lambda key, shape: jnp.asarray(lo), (n,))
        log_sigma = self.param("log_sigma", lambda key, shape: jnp.asarray(ls), (n,))
        alpha = self.param("alpha", nn.initializers.constant(2.0), (n,))
        tau = self.param("tau", nn.initializers.zeros, (n,))
        scale_w = self.param("scale_w", nn.initializers.zeros, (n,))
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
        )  # (n,), (n,)
        u = xn.astype(jnp.promote_types(xn.dtype, jnp.float32)).mean(-1)  # (B,T,E) -> (B,T)
        e = morlet_energies(
            u, omega.astype(u.dtype), sigma.astype(u.dtype), self.lengths
        )  # (B,n,T)
        z = znormalise(e, self.znorm)[:, None]  # (B,n,T',S) -> (B,1,n,T',S): one "head", shared
        return AttnBias(
            log_gate=mixed_gate_log(z, alpha[None], tau[None], scale_w[None])
        )  # (B,1,T',S)


def _builder(znorm: str):
    def build(cfg):
        return EnergyGateMorlet(
            znorm,
            cfg.ega_m_init,
            cfg.ega_m_constraint,
            cfg.mope_bound,
            cfg.mope_penalty,
            name="ega_m",
        )

    return build


def ega_m_values(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """EGA-M's learned spectra per layer and filter (L, 4): omega (rad/token) and sigma (tokens)
    after the configured constraint, raw exp(log .), clamp mask, gate alpha/tau, mix weights."""
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
    """The boundary statistics of EGA-M's (omega, sigma), as MOPE's, prefixed ``ega_m_``."""
    v = ega_m_values(model_cfg, params)
    if not v:
        return {}
    out = boundary_stats(
        v["ega_m_omega"].ravel(), v["ega_m_sigma"].ravel(), model_cfg.mope_bound, prefix="ega_m"
    )
    out["ega_m_clamp_active_frac"] = float(np.mean(v["ega_m_clamp_active"]))
    return out


# what both EGA-M variants declare besides their builder and causality
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
    doc="EGA-M (paper 1): 4 causal Morlet filters (l = 3/7/15/31) of mean_E xn, |c|^2 energies, "
    "gates mixed; z-norm over ALL positions",
    **_EGA_M,
)(_builder("full"))
register(
    "attn_bias",
    "ega-m-prefix",
    causal=True,
    doc="EGA-M with the causal prefix z-norm",
    **_EGA_M,
)(_builder("prefix"))
