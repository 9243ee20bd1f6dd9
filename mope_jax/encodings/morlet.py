"""Morlet positional encoding (MOPE, paper A; DESIGN.md section 1).

    MOPE(b, i) = exp(i omega_i b) exp(-(b - b0_i)^2 / (2 sigma_i^2)),    b = 0..T-1

n = E/2 (omega, sigma) pairs, stored as ``log_omega`` and ``log_sigma`` (omega in rad/token,
sigma and b0 in tokens). Real layout (the authors'): pe[b, 2i] = cos(omega_i b) env_i(b),
pe[b, 2i+1] = sin(omega_i b) env_i(b). The table is ADDED to the token embeddings.

Constraints on (omega, sigma) (``constrain``):
  * ``"clamp"`` -- the paper's projection, exactly:
        omega = min(omega, 0.95 pi); sigma = max(sigma, 1e-3);
        omega = where(omega sigma < bound, bound / sigma, omega)
    min and max with torch.clamp's gradients (:func:`clamp_max`, :func:`clamp_min`): the whole
    gradient passes at a tie (omega exactly 0.95 pi, sigma exactly 1e-3), where jnp.minimum /
    jnp.maximum would pass half. While a pair is clamped, omega = bound / sigma does not
    depend on log_omega, so log_omega gets NO gradient (only weight decay moves it) and the
    pair sits exactly on the admissibility boundary omega sigma = bound.
  * ``"penalty"`` -- the same min/max guards, but the admissibility bound is a soft,
    differentiable penalty (:func:`admissibility_penalty`) added to the training loss.
  * ``"none"`` -- omega = exp(log_omega), sigma = exp(log_sigma), nothing else.

Limits (tested): sigma -> inf gives the sin/cos family with the same frequencies; the phase
difference between positions m and n is omega_i (m - n), RoPE's rotation angle.
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from mope_jax import hparams
from mope_jax.errors import ConfigError
from mope_jax.typing import Array

OMEGA_MAX = 0.95 * math.pi  # rad/token, the authors' cap (below the Nyquist limit pi)
SIGMA_MIN = 1e-3  # tokens
BOUNDARY_TOL = 1e-3  # |omega sigma - bound| below this counts as "on the boundary"
CONSTRAINTS = ("clamp", "penalty", "none")
INITS = ("boundary", "off")


def morlet_init(
    n: int, *, init: str = "boundary", bound: float = 5.0
) -> tuple[np.ndarray, np.ndarray]:
    """The authors' initial (log_omega, log_sigma), each (n,) float32.

    omega_i = exp(linspace(log 1, log 0.99 pi, n)) rad/token;
    sigma_i = bound / omega_i (``init="boundary"``: every pair starts ON omega sigma = bound,
    the paper's choice) or 2 bound / omega_i (``init="off"``: omega sigma = 10 for bound 5).
    """
    if init not in INITS:
        raise ConfigError(f"unknown MOPE init {init!r}; choose one of {INITS}")
    log_omega = np.linspace(0.0, math.log(0.99 * math.pi), n)
    product = bound if init == "boundary" else 2.0 * bound
    log_sigma = math.log(product) - log_omega
    return log_omega.astype(np.float32), log_sigma.astype(np.float32)


def clamp_max(x: Array, hi: float) -> Array:
    """min(x, hi) with torch.clamp(x, max=hi)'s gradient: 1 where x <= hi, 0 where x > hi.

    jnp.minimum has the same values but splits the gradient at a tie x == hi (1/2 to x);
    torch.clamp's backward is ``where(self <= max, grad, 0)``, the whole gradient at the tie."""
    return jnp.where(x > hi, hi, x)


def clamp_min(x: Array, lo: float) -> Array:
    """max(x, lo) with torch.clamp(x, min=lo)'s gradient: 1 where x >= lo, 0 where x < lo
    (jnp.maximum: 1/2 at the tie x == lo)."""
    return jnp.where(x < lo, lo, x)


def _capped(log_omega: Array, log_sigma: Array) -> tuple[Array, Array]:
    """omega = min(exp(log_omega), 0.95 pi), sigma = max(exp(log_sigma), 1e-3), with the
    gradients of the authors' torch.clamp (:func:`clamp_max`, :func:`clamp_min`)."""
    return clamp_max(jnp.exp(log_omega), OMEGA_MAX), clamp_min(jnp.exp(log_sigma), SIGMA_MIN)


def clamp_paper(log_omega: Array, log_sigma: Array, *, bound: float = 5.0) -> tuple[Array, Array]:
    """The paper's projection (see module docstring). (n,), (n,) -> omega, sigma (n,), (n,)."""
    omega, sigma = _capped(log_omega, log_sigma)
    omega = jnp.where(omega * sigma < bound, bound / sigma, omega)
    return omega, sigma


def clamp_active(log_omega: Array, log_sigma: Array, *, bound: float = 5.0) -> Array:
    """(n,) bool: True where the paper's ``where`` replaces omega by bound / sigma."""
    omega, sigma = _capped(log_omega, log_sigma)
    return omega * sigma < bound


def constrain(
    log_omega: Array, log_sigma: Array, *, constraint: str = "clamp", bound: float = 5.0
) -> tuple[Array, Array]:
    """(omega rad/token, sigma tokens), each (n,), under ``constraint`` (module docstring)."""
    if constraint == "clamp":
        return clamp_paper(log_omega, log_sigma, bound=bound)
    if constraint == "penalty":
        return _capped(log_omega, log_sigma)
    if constraint == "none":
        return jnp.exp(log_omega), jnp.exp(log_sigma)
    raise ConfigError(f"unknown MOPE constraint {constraint!r}; choose one of {CONSTRAINTS}")


def boundary_stats(
    omega: np.ndarray, sigma: np.ndarray, bound: float, prefix: str = "mope"
) -> dict[str, float]:
    """Fraction of pairs on omega sigma = bound (|. - bound| < 1e-3), below it, and ranges."""
    prod = np.asarray(omega, np.float64) * np.asarray(sigma, np.float64)
    return {
        f"{prefix}_on_boundary_frac": float(np.mean(np.abs(prod - bound) < BOUNDARY_TOL)),
        f"{prefix}_below_bound_frac": float(np.mean(prod < bound - BOUNDARY_TOL)),
        f"{prefix}_product_min": float(prod.min()),
        f"{prefix}_product_median": float(np.median(prod)),
        f"{prefix}_product_max": float(prod.max()),
        f"{prefix}_omega_min": float(np.min(omega)),
        f"{prefix}_omega_max": float(np.max(omega)),
        f"{prefix}_sigma_min": float(np.min(sigma)),
        f"{prefix}_sigma_max": float(np.max(sigma)),
        f"{prefix}_aliased_frac": float(np.mean(np.asarray(omega) > math.pi)),
    }


def admissibility_penalty(log_omega: Array, log_sigma: Array, *, bound: float = 5.0) -> Array:
    """Soft admissibility penalty, a scalar: mean_i relu(log bound - log omega_i - log sigma_i)^2.

    Zero on and above the boundary omega sigma >= bound, quadratic in the log-ratio below it,
    differentiable everywhere (both log_omega and log_sigma receive gradient).
    """
    gap = jnp.log(bound) - log_omega - log_sigma  # (n,)
    return jnp.mean(jnp.square(jnp.maximum(gap, 0.0)))


def morlet_encoding(
    positions: Array,
    log_omega: Array,
    log_sigma: Array,
    *,
    center: Array | None = None,
    constraint: str = "none",
    bound: float = 5.0,
) -> Array:
    """MOPE table (DESIGN.md section 1).

    Args:
      positions: (T,) positions b in tokens.
      log_omega: (n,) log angular frequencies (omega in rad/token).
      log_sigma: (n,) log envelope widths (sigma in tokens).
      center: optional (n,) envelope centres b0_i in tokens (the paper: 0).
      constraint: applied to (omega, sigma) first, see :func:`constrain`; the default
        ``"none"`` uses exp(log_omega), exp(log_sigma) as given.
    Returns:
      (T, 2n) float32: pe[b, 2i] = cos(omega_i b) env, pe[b, 2i+1] = sin(omega_i b) env,
      env = exp(-(b - b0_i)^2 / (2 sigma_i^2)).
    """
    omega, sigma = constrain(log_omega, log_sigma, constraint=constraint, bound=bound)
    b = positions.astype(jnp.float32)[:, None]  # (T, 1)
    offset = b if center is None else b - center[None, :]  # (T, 1) or (T, n)
    env = jnp.exp(-jnp.square(offset) / (2.0 * jnp.square(sigma))[None, :])  # (T, n)
    angle = b * omega[None, :]  # (T, n)
    pe = jnp.stack([jnp.cos(angle) * env, jnp.sin(angle) * env], axis=-1)  # (T, n, 2)
    return pe.reshape(positions.shape[0], 2 * omega.shape[0])  # (T, n, 2) -> (T, 2n)


class MorletPositionalEncoding(nn.Module):
    """Learned MOPE table; parameters ``log_omega``, ``log_sigma`` (and ``center`` if learned).

    With ``constraint="penalty"`` the weighted :func:`admissibility_penalty` is sown into the
    ``aux_loss`` collection (the trainer adds it to the training loss).
    """

    dim: int
    init_mode: str = "boundary"  # (not ``init``: that would shadow Module.init)
    constraint: str = "clamp"
    bound: float = 5.0
    penalty_weight: float = 1.0
    learn_center: bool = False

    @nn.compact
    def __call__(self, positions: Array) -> Array:
        """positions (T,) in tokens -> (T, E)."""
        if self.dim % 2:
            raise ConfigError(f"MOPE needs an even width, got n_embd={self.dim}")
        if self.constraint not in CONSTRAINTS:
            raise ConfigError(
                f"unknown MOPE constraint {self.constraint!r}; choose one of {CONSTRAINTS}"
            )
        n = self.dim // 2
        lo, ls = morlet_init(n, init=self.init_mode, bound=self.bound)
        log_omega = self.param("log_omega", lambda key, shape: jnp.asarray(lo), (n,))
        log_sigma = self.param("log_sigma", lambda key, shape: jnp.asarray(ls), (n,))
        center = self.param("center", nn.initializers.zeros, (n,)) if self.learn_center else None
        # inside a training step the bound is the train state's traced value, supplied in the
        # hparams collection (one program can train several bounds); it equals self.bound for a
        # run of this config
        bound = hparams.read(self, "mope_bound", self.bound)
        if self.constraint == "penalty":
            self.sow(
                "aux_loss",
                "mope_penalty",
                self.penalty_weight * admissibility_penalty(log_omega, log_sigma, bound=bound),
            )
        return morlet_encoding(
            positions, log_omega, log_sigma, center=center, constraint=self.constraint, bound=bound
        )
