"""RoPE frequency energy: how much each rotary frequency contributes to the raw scores.

DESIGN.md section 3 (paper B). With the complex pair q~_i = q_{2i} + i q_{2i+1} (interleaved
layout; the half layout pairs q_i with q_{i+D/2}), the RoPE score is

    s(m, n) = sum_i |q~_i(m)| |k~_i(n)| cos(theta_i (m - n) + phi_i),

so frequency i enters with amplitude |q~_i(m)| |k~_i(n)|. Its energy is the mean squared
amplitude over causal pairs,

    E_i = mean_{m >= n} (|q~_i(m)| |k~_i(n)|)^2,        p_i = E_i / sum_j E_j,

per layer and head (and averaged over the batch). The rotation does not change |q~_i|, so
q and k are taken before RoPE (``SelfAttention`` sows them as ``intermediates/q``, ``k``).

Summaries of a distribution p over the frequencies theta (rad/token):
  * dominant frequency theta_{argmax p};
  * log-mean effective frequency  log theta_eff = sum_i p_i log theta_i;
  * entropy H = -sum_i p_i ln p_i (nats; ln F for the uniform distribution).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.typing import Array, Params


def pair_power(x: Array, layout: str = "interleaved") -> Array:
    """|x~_i|^2 for each rotary pair: (..., D) -> (..., D/2)."""
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"rotary pairs need an even head dim, got {d}")
    xf = x.astype(jnp.float32)
    if layout == "interleaved":
        pairs = xf.reshape(*x.shape[:-1], d // 2, 2)  # (..., D/2, 2)
        return (pairs * pairs).sum(-1)
    if layout == "half":
        a, b = xf[..., : d // 2], xf[..., d // 2 :]
        return a * a + b * b
    raise ValueError(f"unknown RoPE layout {layout!r}; use 'interleaved' or 'half'")


def frequency_energy(q: Array, k: Array, layout: str = "interleaved") -> Array:
    """E_i = mean over batch and causal pairs m >= n of |q~_i(m)|^2 |k~_i(n)|^2.

    Args:
      q, k: (B, T, H, D) queries and keys (before or after RoPE: the rotation keeps |q~_i|).
      layout: rotary pair layout.
    Returns:
      (H, F) energies, F = D/2, non-negative.
    """
    t = q.shape[1]
    a = pair_power(q, layout)  # (B,T,H,F)
    c = pair_power(k, layout)  # (B,S,H,F)
    c_cum = jnp.cumsum(c, axis=1)  # (B,T,H,F): sum over keys n <= m
    total = jnp.einsum("BTHF,BTHF->BHF", a, c_cum)
    n_pairs = t * (t + 1) / 2
    return total.mean(0) / n_pairs


def normalise(energy: Array) -> Array:
    """p = E / sum_F E along the last axis."""
    return energy / jnp.maximum(energy.sum(-1, keepdims=True), 1e-30)


def capture_qk(cfg, params: Params, tokens: Array) -> list[tuple[Array, Array]]:
    """[(q, k)] per layer, each (B, T, H, D) before the position transform.

    cfg: a ModelConfig; tokens (B, T) int.
    """
    from mope_jax.model import GPT

    _, state = GPT(cfg).apply(
        {"params": params}, tokens, deterministic=True, mutable=["intermediates"]
    )
    inter = state["intermediates"]
    out = []
    for i in range(cfg.n_layer):
        attn = inter[f"h_{i}"]["attn"]
        out.append((attn["q"][0], attn["k"][0]))
    return out


def _model_energies(cfg, params: Params, tokens: Array) -> Array:
    qk = capture_qk(cfg, params, tokens)
    return jnp.stack([frequency_energy(q, k, cfg.rope_layout) for q, k in qk])  # (L,H,F)


# cfg (a frozen ModelConfig) is static, so each model shape compiles once per process
_model_energies_jit = jax.jit(_model_energies, static_argnums=0)


def model_energies(cfg, params: Params, tokens: Array) -> Array:
    """(L, H, F) frequency energies of a model (ModelConfig ``cfg``) on tokens (B, T)."""
    return _model_energies_jit(cfg, params, jnp.asarray(tokens))


def _attention_probs(cfg, params: Params, tokens: Array) -> Array:  # (L,B,H,T,S)
    """(L, B, H, T, S) attention probabilities of a model whose scores are q.k / sqrt(D) after
    its ``qk_position`` variant (e.g. RoPE), recomputed from the captured q and k."""
    from mope_jax.attention import registry
    from mope_jax.attention.core import causal_mask, dot_product_scores

    position = registry.get("qk_position", cfg.qk_position).build(cfg)
    t = tokens.shape[1]
    positions = jnp.arange(t)
    out = []
    for q, k in capture_qk(cfg, params, tokens):
        if position is not None:
            q, k = position.apply({}, q, k, positions)
        scores = dot_product_scores(q, k, cfg.head_dim)  # (B,H,T,S)
        scores = jnp.where(causal_mask(t), scores, -jnp.inf)
        out.append(jax.nn.softmax(scores.astype(jnp.float32), axis=-1))
    return jnp.stack(out)


_attention_probs_jit = jax.jit(_attention_probs, static_argnums=0)


def attention_probs(cfg, params: Params, tokens) -> np.ndarray:
    """(L, B, H, T, S) attention probabilities on tokens (B, T), float64, for the models
    :func:`offset_attention` accepts (it checks the model)."""
    return np.asarray(_attention_probs_jit(cfg, params, jnp.asarray(tokens)), np.float64)


def offset_attention(cfg, params: Params, tokens: Array, offset: int) -> np.ndarray:
    """(L, H): the mean attention probability from a query at m to the key at m - ``offset``,
    over the windows and every m >= offset.

    For models whose attention is softmax(q.k / sqrt(D)) after a parameter-free ``qk_position``
    variant (RoPE and its extensions, or none), without an ``attn_bias``, ``qk_filter`` or
    another mixer (ValueError otherwise: their probabilities are not recomputed here)."""
    if cfg.attn_bias != "none" or cfg.qk_filter != "none" or cfg.mixer != "attention":
        raise ValueError(
            "offset_attention recomputes softmax(q.k / sqrt(D)) only; this model has "
            f"attn_bias={cfg.attn_bias}, qk_filter={cfg.qk_filter}, mixer={cfg.mixer}"
        )
    t = tokens.shape[1]
    if not 0 <= offset < t:
        raise ValueError(f"offset {offset} must be in [0, {t})")
    probs = attention_probs(cfg, params, tokens)
    m = np.arange(offset, t)
    return probs[:, :, :, m, m - offset].mean(axis=(1, 3))  # (L, H)


def summarize(p: np.ndarray, theta: np.ndarray) -> dict[str, np.ndarray]:
    """Summaries of normalised energies p (..., F) over frequencies theta (F,), rad/token.

    Returns arrays of shape p.shape[:-1]: ``dominant_theta``, ``log_theta_eff``
    (sum p log theta), ``theta_eff`` (its exp), ``entropy`` (nats).
    """
    p = np.asarray(p, np.float64)
    log_theta = np.log(np.asarray(theta, np.float64))
    safe = np.where(p > 0, p, 1.0)
    log_eff = (p * log_theta).sum(-1)
    return {
        "dominant_theta": np.asarray(theta, np.float64)[np.argmax(p, axis=-1)],
        "log_theta_eff": log_eff,
        "theta_eff": np.exp(log_eff),
        "entropy": -(p * np.log(safe)).sum(-1),
    }


def probe_tokens(stream: np.ndarray, block_size: int, num_windows: int = 8) -> np.ndarray:
    """(num_windows, T) windows at evenly spaced, deterministic offsets of a token stream."""
    n = len(stream) - block_size
    if n < 1:
        raise ValueError(
            f"a stream of {len(stream)} tokens is shorter than one window of {block_size}"
        )
    starts = np.linspace(0, n - 1, num_windows).astype(np.int64)
    return np.stack([stream[s : s + block_size] for s in starts]).astype(np.int32)


def energy_report(cfg, params: Params, tokens: np.ndarray) -> dict[str, Any]:
    """Energies and summaries of a RoPE model on tokens (B, T): JSON-ready lists.

    Keys: ``theta`` (F,), ``p`` (L, H, F), the :func:`summarize` fields per (L, H), and their
    means over heads and layers (``*_mean``; the log-mean is averaged in log space)."""
    from mope_jax.encodings.rope import rope_frequencies

    theta = np.asarray(rope_frequencies(cfg.head_dim, cfg.rope_base), np.float64)
    energy = np.asarray(model_energies(cfg, params, jnp.asarray(tokens)), np.float64)  # (L,H,F)
    p = energy / energy.sum(-1, keepdims=True)
    s = summarize(p, theta)
    rep: dict[str, Any] = {"theta": theta.tolist(), "p": p.tolist()}
    for name, v in s.items():
        rep[name] = v.tolist()
    rep["log_theta_eff_mean"] = float(s["log_theta_eff"].mean())
    rep["theta_eff_mean"] = float(np.exp(s["log_theta_eff"].mean()))
    rep["entropy_mean"] = float(s["entropy"].mean())
    rep["p_layer"] = p.mean(1).tolist()  # (L, F), mean over heads
    return rep


def energy_tv(p, q) -> float:
    """Total-variation distance between two normalised energy distributions (..., F), averaged
    over the leading axes (layers, heads): 0 for the same spectrum, 1 for disjoint ones. The
    stability measure of a model's frequency use across prompts, domains or training."""
    p, q = np.asarray(p, np.float64), np.asarray(q, np.float64)
    if p.shape != q.shape:
        raise ValueError(f"energy distributions of shapes {p.shape} and {q.shape} differ")
    return float(0.5 * np.abs(p - q).sum(-1).mean())


def uses_rope(cfg) -> bool:
    return cfg.qk_position == "rope"


# --------------------------------------------------------------------------- training hooks
# Called by mope_jax.analysis.spectra's eval_summary / extract_spectra (train.run's hooks).


def _probe(cfg) -> np.ndarray:
    """8 deterministic validation windows of the run's own corpus, (8, T)."""
    from mope_jax.data import load_corpus

    corpus = load_corpus(cfg.data, cfg.model.block_size)
    return probe_tokens(np.asarray(corpus.val), cfg.model.block_size)


def rope_energy_summary(cfg, state) -> dict[str, Any]:
    """cfg a Config, state a TrainState or params. JSON fields logged at each eval of a RoPE
    model ({} otherwise): the head/layer means of theta_eff and entropy, and ``rope_energy_p``
    (L, F), p averaged over heads."""
    if not uses_rope(cfg.model):
        return {}
    rep = energy_report(cfg.model, getattr(state, "params", state), _probe(cfg))
    return {
        "rope_theta_eff": rep["theta_eff_mean"],
        "rope_energy_entropy": rep["entropy_mean"],
        "rope_energy_p": rep["p_layer"],
    }


def rope_energy_spectra(cfg, state) -> dict[str, np.ndarray]:
    """Named arrays stored with a checkpoint: ``rope_energy`` (L, H, F) normalised energies
    and ``rope_theta`` (F,) rad/token ({} for a model without RoPE)."""
    if not uses_rope(cfg.model):
        return {}
    rep = energy_report(cfg.model, getattr(state, "params", state), _probe(cfg))
    return {
        "rope_energy": np.asarray(rep["p"], np.float32),
        "rope_theta": np.asarray(rep["theta"], np.float32),
    }
