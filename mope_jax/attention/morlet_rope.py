"""Paper A's Morlet variants in the registry: MOPE (``pos_encoding=morlet``) and Morlet-RoPE
(``qk_position=morlet-rope``), DESIGN.md section 1.

Morlet-RoPE puts a Gaussian envelope in the relative distance r = m - n on every RoPE
frequency (the paper's "future work"):

    s(m, n) = sum_i Re[q~_i(m) conj(k~_i(n)) e^{i theta_i r}] exp(-r^2 / (2 sigma_i^2)) / sqrt(D)

with q~_i = q_{2i} + i q_{2i+1} (layout as in RoPE), theta_i = base^(-2i/D) rad/token and a
learned sigma (tokens) per HEAD and per frequency, or per head and per group of frequencies
(``model.morlet_rope_groups`` = G; the D/2 frequencies are split into G contiguous groups
that share one sigma). sigma -> inf gives RoPE exactly.

The envelope is not separable into a per-query times per-key factor, so each group needs its
own (T, S) term. ``morlet_rope_scores`` accumulates the groups with ``lax.scan`` and
recomputes each group's term in the backward pass, so neither the forward nor the gradient
holds a (B, H, G, T, S) tensor: peak memory is a few (B, H, T, S) arrays at any G.

Each group's term has a hand-written gradient (:func:`_group_term`). Automatic
differentiation of ``dots * envelope`` reduces ``g * dots`` over the batch axis into a (H, T, S)
envelope gradient first, a reduction over the outermost axis that XLA:CPU runs much slower
than the same sum taken over (T, S) (the step-time effect is measured in
``experiments/paper_a/``'s docstring); the envelope's only parameter is one sigma per head,
so the hand-written gradient reduces straight to it. The forward is the same expression as
before; the gradients are tested against float64 central differences of the reference loop
(``tests/test_morlet.py``).
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.attention.registry import per_layer, register
from mope_jax.encodings.morlet import (
    CONSTRAINTS,
    INITS,
    MorletPositionalEncoding,
    boundary_stats,
    clamp_active,
    constrain,
)
from mope_jax.encodings.rope import LAYOUTS, rope_frequencies
from mope_jax.errors import ConfigError
from mope_jax.typing import Array, Params


def mope_values(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """MOPE's stored spectra: omega (rad/token), sigma (tokens) after the configured constraint,
    the raw exp(log .) values, the clamp mask, and the centres b0 if learned."""
    if "mope" not in params:  # a params tree of another model
        return {}
    p = params["mope"]
    lo, ls = np.asarray(p["log_omega"]), np.asarray(p["log_sigma"])
    omega, sigma = constrain(
        lo, ls, constraint=model_cfg.mope_constraint, bound=model_cfg.mope_bound
    )
    out = {
        "mope_omega": np.asarray(omega),
        "mope_sigma": np.asarray(sigma),
        "mope_raw_omega": np.exp(lo),
        "mope_raw_sigma": np.exp(ls),
        "mope_clamp_active": np.asarray(clamp_active(lo, ls, bound=model_cfg.mope_bound)),
    }
    if "center" in p:
        out["mope_center"] = np.asarray(p["center"])
    return out


def mope_summary(model_cfg, params: Params) -> dict[str, float]:
    """MOPE's eval scalars: the boundary statistics of (omega, sigma) and the clamped fraction."""
    v = mope_values(model_cfg, params)
    if not v:
        return {}
    out = boundary_stats(v["mope_omega"], v["mope_sigma"], model_cfg.mope_bound)
    out["mope_clamp_active_frac"] = float(np.mean(v["mope_clamp_active"]))
    return out


@register(
    "pos_encoding",
    "morlet",
    causal=True,
    doc="MOPE: learned Morlet table cos/sin(omega b) exp(-(b-b0)^2/2sigma^2) (paper A)",
    options={
        "mope_init": INITS,
        "mope_constraint": CONSTRAINTS,
        "mope_bound": None,
        "mope_penalty": None,
        "mope_center": None,
    },
    spectral_params=("log_omega", "log_sigma", "center"),
    spectra=mope_values,
    summary=mope_summary,
    hparams=("mope_bound",),
)
def _morlet(cfg):
    return MorletPositionalEncoding(
        cfg.n_embd,
        init_mode=cfg.mope_init,
        constraint=cfg.mope_constraint,
        bound=cfg.mope_bound,
        penalty_weight=cfg.mope_penalty,
        learn_center=cfg.mope_center,
        name="mope",
    )


def _pairs(x: Array, layout: str) -> Array:
    """(B, T, H, D) -> (B, T, H, D/2, 2): the (real, imaginary) parts of each RoPE pair."""
    b, t, h, d = x.shape
    if layout == "interleaved":
        return x.reshape(b, t, h, d // 2, 2)  # (B,T,H,D) -> (B,T,H,D/2,2)
    if layout == "half":
        return jnp.stack([x[..., : d // 2], x[..., d // 2 :]], axis=-1)  # (B,T,H,D/2,2)
    raise ConfigError(f"unknown RoPE layout {layout!r}; use 'interleaved' or 'half'")


def _rotate_pairs(pairs: Array, positions: Array, freqs: Array) -> Array:
    """RoPE rotation of (re, im) pairs: (B, T, H, F, 2), positions (T,), freqs (F,) -> same
    shape."""
    angle = positions.astype(jnp.float32)[:, None] * freqs[None, :]  # (T, F)
    cos = jnp.cos(angle)[None, :, None, :]  # (1, T, 1, F)
    sin = jnp.sin(angle)[None, :, None, :]
    a, b = pairs[..., 0], pairs[..., 1]  # (B, T, H, F)
    return jnp.stack([a * cos - b * sin, a * sin + b * cos], axis=-1)


def morlet_rope_scores(
    q: Array,
    k: Array,
    q_positions: Array,
    k_positions: Array,
    log_sigma: Array,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
) -> Array:
    """Morlet-RoPE scores (module docstring), divided by sqrt(D).

    Args:
      q: (B, T, H, D); k: (B, S, H, D).
      q_positions: (T,), k_positions: (S,) positions in tokens.
      log_sigma: (H, G) log envelope widths in tokens; G must divide D/2. Group g covers the
        frequencies g*D/(2G) .. (g+1)*D/(2G)-1 (contiguous: similar theta share a sigma).
    Returns:
      (B, H, T, S) float32 raw scores (no mask).
    """
    b, t, h, d = q.shape
    s = k.shape[1]
    n_groups = log_sigma.shape[-1]
    f = d // 2
    if f % n_groups:
        raise ConfigError(f"morlet_rope_groups={n_groups} must divide head_dim/2={f}")
    freqs = rope_frequencies(d, base)  # (F,)
    qr = _rotate_pairs(_pairs(q.astype(jnp.float32), layout), q_positions, freqs)  # (B,T,H,F,2)
    kr = _rotate_pairs(_pairs(k.astype(jnp.float32), layout), k_positions, freqs)  # (B,S,H,F,2)
    p = f // n_groups
    # (B,T,H,G,2P) -> (G,B,H,T,2P): one slice per group, heads before positions
    qg = jnp.transpose(qr.reshape(b, t, h, n_groups, 2 * p), (3, 0, 2, 1, 4))
    kg = jnp.transpose(kr.reshape(b, s, h, n_groups, 2 * p), (3, 0, 2, 1, 4))  # (G,B,H,S,2P)
    r = (q_positions[:, None] - k_positions[None, :]).astype(jnp.float32)  # (T, S)

    def body(acc, xs):
        q_one, k_one, log_sigma_one = xs
        return acc + _group_term(q_one, k_one, r, log_sigma_one), None

    init = jnp.zeros((b, h, t, s), jnp.float32)
    total, _ = jax.lax.scan(body, init, (qg, kg, jnp.moveaxis(log_sigma, 1, 0)))  # xs sigma (G, H)
    return total / math.sqrt(d)


def morlet_envelope(r: Array, sigma: Array) -> Array:
    """exp(-r^2 / (2 sigma^2)). r (T, S) distances in tokens, sigma (H,) tokens -> (H, T, S)."""
    return jnp.exp(-jnp.square(r)[None, :, :] / (2.0 * jnp.square(sigma))[:, None, None])


def _group_envelope(r: Array, log_sigma_one: Array) -> Array:
    """One group's envelope: r (T, S), log_sigma_one (H,) -> (H, T, S)."""
    return morlet_envelope(r, jnp.exp(log_sigma_one))


@jax.custom_vjp
def _group_term(q_one: Array, k_one: Array, r: Array, log_sigma_one: Array) -> Array:
    """One group's term of the scores: (q_one . k_one) * envelope.

    q_one (B, H, T, 2P), k_one (B, H, S, 2P) rotated pairs; r (T, S); log_sigma_one (H,).
    Returns (B, H, T, S). Gradient: ``_group_term_bwd``.
    """
    dots = jnp.einsum("bhtc,bhsc->bhts", q_one, k_one)  # sum over the group's pairs
    return dots * _group_envelope(r, log_sigma_one)[None]


def _group_term_fwd(q_one, k_one, r, log_sigma_one):
    # residuals are the inputs only: the (B, H, T, S) dots are recomputed in the backward pass
    return _group_term(q_one, k_one, r, log_sigma_one), (q_one, k_one, r, log_sigma_one)


def _group_term_bwd(res, g):
    """With e = envelope and d = dots: dq = (g e) k, dk = (g e)^T q, and, since
    d e / d log sigma = e r^2 / sigma^2, d log_sigma_h = sum_{b,t,s} g e d r^2 / sigma_h^2
    (reduced over all three axes at once, module docstring). r gets no gradient."""
    q_one, k_one, r, log_sigma_one = res
    ge = g * _group_envelope(r, log_sigma_one)[None]  # (B,H,T,S)
    dq = jnp.einsum("bhts,bhsc->bhtc", ge, k_one)
    dk = jnp.einsum("bhts,bhtc->bhsc", ge, q_one)
    dots = jnp.einsum("bhtc,bhsc->bhts", q_one, k_one)
    d_log_sigma = jnp.einsum("bhts,bhts->h", ge, dots * jnp.square(r)[None, None])
    return dq, dk, jnp.zeros_like(r), d_log_sigma * jnp.exp(-2.0 * log_sigma_one)


_group_term.defvjp(_group_term_fwd, _group_term_bwd)


def morlet_rope_init(
    head_dim: int, n_head: int, n_groups: int, *, product: float = 5.0, base: float = 10000.0
) -> Array:
    """Initial log_sigma (H, G): sigma_i = product / theta_i (the MOPE boundary omega sigma =
    product, theta in place of omega), averaged in log over each group, the same for all heads."""
    theta = rope_frequencies(head_dim, base)  # (F,)
    log_sigma = math.log(product) - jnp.log(theta)  # (F,)
    per_group = log_sigma.reshape(n_groups, -1).mean(-1)  # (F,) -> (G, F/G) -> (G,)
    return jnp.broadcast_to(per_group[None, :], (n_head, n_groups))


class MorletRope(nn.Module):
    """qk_position variant: returns raw scores (B, H, T, S). Parameter ``log_sigma`` (H, G)."""

    head_dim: int
    n_head: int
    base: float = 10000.0
    layout: str = "interleaved"
    groups: int = 0  # 0 = one sigma per frequency (G = D/2)
    init_product: float = 5.0

    @nn.compact
    def __call__(self, q: Array, k: Array, positions: Array) -> Array:
        n_groups = self.groups or self.head_dim // 2
        log_sigma = self.param(
            "log_sigma",
            lambda key, shape: morlet_rope_init(
                self.head_dim, self.n_head, n_groups, product=self.init_product, base=self.base
            ),
            (self.n_head, n_groups),
        )
        return morlet_rope_scores(
            q, k, positions, positions, log_sigma, base=self.base, layout=self.layout
        )


def morlet_rope_spectra(model_cfg, params: Params) -> dict[str, np.ndarray]:
    """sigma (tokens) per layer, head and frequency group (L, H, G)."""
    log_sigma = per_layer(params, "morlet_rope", "log_sigma")  # (L, H, G)
    return {} if log_sigma is None else {"morlet_rope_sigma": np.exp(log_sigma)}


def morlet_rope_summary(model_cfg, params: Params) -> dict[str, float]:
    log_sigma = per_layer(params, "morlet_rope", "log_sigma")
    if log_sigma is None:
        return {}
    sigma = np.exp(log_sigma)
    return {
        "morlet_rope_sigma_min": float(sigma.min()),
        "morlet_rope_sigma_median": float(np.median(sigma)),
        "morlet_rope_sigma_max": float(sigma.max()),
    }


@register(
    "qk_position",
    "morlet-rope",
    causal=True,
    doc="RoPE with a learned Gaussian envelope exp(-r^2/2sigma^2) per head and frequency (group)",
    options={
        "rope_base": None,
        "rope_layout": LAYOUTS,
        "morlet_rope_groups": None,
        "morlet_rope_init": None,
    },
    spectral_params=("log_sigma",),
    spectra=morlet_rope_spectra,
    summary=morlet_rope_summary,
)
def _morlet_rope(cfg):
    return MorletRope(
        cfg.head_dim,
        cfg.n_head,
        cfg.rope_base,
        cfg.rope_layout,
        cfg.morlet_rope_groups,
        cfg.morlet_rope_init,
        name="morlet_rope",
    )
