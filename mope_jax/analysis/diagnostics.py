"""Paper C's diagnostics (DESIGN.md section 2), applied to a trained model's parameters.

* shuffled validation: one global random permutation of the val tokens;
  gap = loss(shuffled val) - loss(val). A model that reads order has a large gap; the paper
  reads a small gap as a leak sign. (The direct test is the causality audit.)
* eval-time surrogates (bilateral FFT filters only; ``model.filter_phase``; definitions in
  ``attention/spectral.py: apply_phase_surrogate``). The authors' (DESIGN.md section 5):
  ``phase_rand`` replaces the phase by a random phi per (batch row, frequency, head), shared by
  the channels and by Q and K; ``phase_rand_indep`` independent phi for Q and K and per
  channel; ``amp_only`` irfft(|Z|); ``phase_shift`` rotates Q's and K's spectra by pi/4
  except the DC and Nyquist bins, which keep their values (ours rotated those too at
  first: ``PHASE_SHIFT_DEF`` marks the analyses made with the authors' definition).
  Ours, earlier, ADDED to the phase: ``add-shared`` (shared by Q and K, so the Q-K
  cross-spectrum is kept exactly: a weaker test), ``add-independent``, ``add-shift`` (Q only).
  ``SURROGATE_LABELS`` names each in tables.
  ``pct_phase`` = 100 (L_surrogate - L_filter) / (L_baseline - L_filter): the share of the
  filter's gain over the baseline that is lost when the phase is destroyed (100 = all of it;
  > 100 = worse than the baseline). The paper summary names the measurement but gives no
  formula; this is our definition.
* metric-distortion controls (``model.filter_transform``): a fixed random orthogonal T x T
  rotation R in place of the DFT, q~ = R^T diag(w) R q, and a non-orthogonal Gaussian
  projection P in the same formula, evaluated with the trained window centres.
* learned periods T / f_h (tokens) of every learned centre; learned kernel scales (tokens).
* EMD (the ``EMD-signal`` package, imported lazily) of the learned filters' impulse
  responses and of the filtered queries (their first principal component per head).

All losses are computed on deterministic windows (evenly spaced starts), so two models or
two surrogates are compared on exactly the same text.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.attention.spectral import PHASE_MODES, WINDOWS
from mope_jax.config import ModelConfig
from mope_jax.model import GPT
from mope_jax.typing import Array, Params

# --------------------------------------------------------------------------- losses


def eval_windows(
    tokens: np.ndarray, seq_len: int, num_windows: int
) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) (N, T) int32 input/target windows at N evenly spaced starts over the tokens."""
    tokens = np.asarray(tokens)
    last = len(tokens) - seq_len - 1
    if last < 0:
        raise ValueError(f"{len(tokens)} tokens cannot hold one window of {seq_len + 1}")
    starts = np.unique(np.linspace(0, last, num_windows).astype(np.int64))  # (N,)
    idx = starts[:, None] + np.arange(seq_len + 1)[None, :]  # (N, T+1)
    win = tokens[idx].astype(np.int32)
    return win[:, :-1], win[:, 1:]


@functools.lru_cache(maxsize=32)
def make_loss_fn(model_cfg: ModelConfig):
    """jit-compiled (params, x (B,T), y (B,T)) -> per-window mean loss (B,), no dropout. One
    function per config (cached): the diagnostics of every seed of a row compile each of their
    programs once (the parameters are an argument)."""
    model = GPT(model_cfg)

    @jax.jit
    def diagnostic_loss(params, x, y):
        logp = jax.nn.log_softmax(
            model.apply({"params": params}, x, deterministic=True), axis=-1
        )  # (B,T,V)
        return -jnp.take_along_axis(logp, y[..., None], axis=-1)[..., 0].mean(-1)  # (B,)

    return diagnostic_loss


def eval_loss(
    model_cfg: ModelConfig,
    params: Params,
    tokens: np.ndarray,
    *,
    num_windows: int = 256,
    batch_size: int = 32,
    loss_fn=None,
) -> float:
    """Mean next-token loss (nats/token) over ``eval_windows(tokens, block_size, num_windows)``.
    loss_fn: a ``make_loss_fn(model_cfg)`` to reuse (saves a compilation)."""
    x, y = eval_windows(tokens, model_cfg.block_size, num_windows)
    n = len(x)
    pad = -n % batch_size  # one compiled shape: pad the last batch, drop its extra rows
    x, y = (
        np.concatenate([x, np.repeat(x[:1], pad, 0)]),
        np.concatenate([y, np.repeat(y[:1], pad, 0)]),
    )
    fn = loss_fn or make_loss_fn(model_cfg)
    rows = [
        np.asarray(
            fn(params, jnp.asarray(x[i : i + batch_size]), jnp.asarray(y[i : i + batch_size]))
        )
        for i in range(0, len(x), batch_size)
    ]
    return float(np.concatenate(rows)[:n].astype(np.float64).mean())


def shuffle_tokens(tokens: np.ndarray, seed: int = 0) -> np.ndarray:
    """One global random permutation of the tokens (the paper's shuffled validation set)."""
    tokens = np.asarray(tokens)
    return tokens[np.random.default_rng(seed).permutation(len(tokens))]


def shuffled_gap(
    model_cfg: ModelConfig,
    params: Params,
    val: np.ndarray,
    *,
    seed: int = 0,
    num_windows: int = 256,
) -> dict[str, float]:
    """{"val", "shuffled", "gap"}: gap = loss(shuffled val) - loss(val), nats/token."""
    fn = make_loss_fn(model_cfg)
    lv = eval_loss(model_cfg, params, val, num_windows=num_windows, loss_fn=fn)
    ls = eval_loss(
        model_cfg, params, shuffle_tokens(val, seed), num_windows=num_windows, loss_fn=fn
    )
    return {"val": lv, "shuffled": ls, "gap": ls - lv}


# Stored beside the surrogate losses (a record's ``analysis["phase_shift_def"]``): which
# ``phase_shift`` they were computed with (the value's text is stored data, kept as written).
# Analyses without it were made with our first phase_shift, which also rotated the DC and
# Nyquist bins (irfft then scaled them by cos(pi/4)).
PHASE_SHIFT_DEF = "authors: DC and Nyquist unrotated (issue 40)"

# Table headers: which surrogate is whose, and what it does (DESIGN.md section 5).
SURROGATE_LABELS = {
    "phase_rand": "phase_rand (authors': phase replaced, shared q/k)",
    "phase_rand_indep": "phase_rand_indep (authors': replaced, independent)",
    "amp_only": "amp_only (authors': irfft |Z|)",
    "phase_shift": "phase_shift (authors': q and k rotated pi/4 but DC, Nyquist)",
    "add-shared": "add-shared (ours: phase added, shared q/k, cross-spectrum kept)",
    "add-independent": "add-independent (ours: added, independent)",
    "add-shift": "add-shift (ours: q only shifted pi/4)",
}


def phase_surrogate_losses(
    model_cfg: ModelConfig, params: Params, val: np.ndarray, *, num_windows: int = 256
) -> dict[str, float]:
    """Val loss with each eval-time surrogate of PHASE_MODES ("none" = the trained filter)."""
    return {
        mode: eval_loss(
            dataclasses.replace(model_cfg, filter_phase=mode), params, val, num_windows=num_windows
        )
        for mode in PHASE_MODES
    }


def pct_phase(loss_surrogate: float, loss_filter: float, loss_baseline: float) -> float:
    """100 (L_surrogate - L_filter) / (L_baseline - L_filter); NaN when the filter has no gain."""
    gain = loss_baseline - loss_filter
    return float("nan") if gain <= 0 else 100.0 * (loss_surrogate - loss_filter) / gain


def metric_distortion_losses(
    model_cfg: ModelConfig,
    params: Params,
    val: np.ndarray,
    *,
    num_windows: int = 256,
    transforms: tuple[str, ...] = ("dft", "rotation", "projection"),
) -> dict[str, float]:
    """Val loss with the DFT of the trained filter replaced by a random rotation / projection
    (transforms: any of "dft", "rotation", "projection")."""
    return {
        tr: eval_loss(
            dataclasses.replace(model_cfg, filter_transform=tr),
            params,
            val,
            num_windows=num_windows,
        )
        for tr in transforms
    }


# --------------------------------------------------------------------------- learned parameters


def _named(params: Params, leaf_name: str) -> dict[str, np.ndarray]:
    out = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        names = [str(getattr(p, "key", p)) for p in path]
        if names[-1] == leaf_name:
            out["/".join(names[:-1])] = np.asarray(leaf)
    return out


def learned_centers(params: Params) -> dict[str, np.ndarray]:
    """{module path: centres f (K,H) or (H,) in bins} for every ``log_center`` parameter."""
    return {k: np.exp(v) for k, v in _named(params, "log_center").items()}


def learned_periods(model_cfg: ModelConfig, params: Params) -> dict[str, np.ndarray]:
    """{module path: periods T / f (tokens), same shape as the centres}."""
    return {k: model_cfg.block_size / c for k, c in learned_centers(params).items()}


def learned_scales(params: Params) -> dict[str, np.ndarray]:
    """{module path: causal-kernel scales a (H,) in tokens} for every ``log_scale``."""
    return {k: np.exp(v) for k, v in _named(params, "log_scale").items()}


def filter_impulse_responses(
    model_cfg: ModelConfig, params: Params, shape: str = "gaussian"
) -> dict[str, np.ndarray]:
    """{path: (K,H,T)} zero-phase impulse responses irfft(w_h) of the learned windows,
    rolled so that lag 0 sits at T/2 (a symmetric wavelet centred in the window)."""
    t = model_cfg.block_size
    out = {}
    for k, c in learned_centers(params).items():
        c = c.reshape(-1, c.shape[-1])  # (K,H)
        w = WINDOWS[shape](
            jnp.asarray(c), t // 2 + 1, model_cfg.filter_bandwidth, model_cfg.filter_norm
        )  # (K,H,F)
        out[k] = np.roll(np.asarray(jnp.fft.irfft(w, n=t, axis=-1)), t // 2, axis=-1)
    return out


# --------------------------------------------------------------------------- EMD


def _emd():
    try:
        from PyEMD import EMD
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "EMD needs the EMD-signal package: pip install 'mope-jax[analysis]'"
        ) from e
    return EMD


def imf_period(imf: np.ndarray) -> float:
    """Mean period (samples) of an oscillation: 2 len / number of zero crossings (inf if none)."""
    s = np.signbit(np.asarray(imf, np.float64))
    crossings = int(np.count_nonzero(s[1:] != s[:-1]))
    return 2.0 * len(imf) / crossings if crossings else float("inf")


def emd_periods(signal: np.ndarray, max_imf: int = 6) -> list[float]:
    """Empirical mode decomposition of a 1-D signal -> mean period (samples) of each IMF,
    finest first (the residue is dropped)."""
    emd = _emd()()
    imfs = emd.emd(np.asarray(signal, np.float64), max_imf=max_imf)
    imfs = imfs[:-1] if len(imfs) > 1 else imfs  # last row is the residue
    return [imf_period(m) for m in imfs]


def filtered_queries(
    model_cfg: ModelConfig, params: Params, tokens: Array
) -> dict[str, np.ndarray]:
    """{"h_i": q (B,T,H,D')} the queries each layer scores with (after the qk filter), from
    the ``intermediates`` the attention core sows."""
    _, inter = GPT(model_cfg).apply(
        {"params": params}, tokens, deterministic=True, mutable=["intermediates"]
    )
    return {
        name: np.asarray(v["attn"]["q"][0])
        for name, v in inter["intermediates"].items()
        if "attn" in v
    }


def query_emd_periods(
    model_cfg: ModelConfig, params: Params, tokens: Array, layer: int = 0, max_imf: int = 6
) -> list[list[float]]:
    """EMD IMF periods (tokens) of the filtered queries of one layer, per head: the first
    principal component over the head's channels of q~ (T, D') for the first sequence."""
    q = filtered_queries(model_cfg, params, tokens)[f"h_{layer}"][0]  # (T,H,D')
    out = []
    for h in range(q.shape[1]):
        x = q[:, h, :] - q[:, h, :].mean(0, keepdims=True)  # (T,D')
        u, s, _ = np.linalg.svd(x.astype(np.float64), full_matrices=False)
        out.append(emd_periods(u[:, 0] * s[0], max_imf=max_imf))
    return out


def summarize_periods(periods: dict[str, np.ndarray]) -> dict[str, Any]:
    """JSON-friendly {path: nested list} (rounded to 0.01 token)."""
    return {k: np.round(np.asarray(v, np.float64), 2).tolist() for k, v in periods.items()}
