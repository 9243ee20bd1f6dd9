"""Context-extension protocols (paper B): one trained RoPE checkpoint evaluated at s times its
training length L under each extension rule, with no retraining.

A rule is an eval-time config override (:func:`mope_jax.encodings.rope.extend_context`), so
every (rule, s) pair is one compiled forward of the same parameters. At s = 1 every rule is the
identity (``tests/test_analysis_extension.py`` checks it), so :func:`sweep` evaluates only
``none@1`` and copies it to the other rules' ``<rule>@1``. Keys are ``"<rule>@<s>"``.

Protocols, each a function of (model config, params, training length L):
  * :func:`losses`: mean next-token loss over fixed validation windows of s L + 1 tokens,
    over all positions and over the positions beyond L only;
  * :func:`igsm_accuracies`: greedy answer and leaf accuracy
    (:func:`mope_jax.data.igsm.answer_accuracy`) and teacher-forced accuracies
    (:func:`mope_jax.data.igsm.forced_accuracy`) of arithmetic problems whose prompt ends in
    an s L window;
  * :func:`retrieval_accuracies`: key-value lookup accuracy
    (:func:`mope_jax.data.retrieval.accuracy`) on fresh examples of s L + 2 characters.
A fine-tuned model (trained further at L' = s L under one rule) is evaluated by the same
functions with ``factors=(1,)`` at its own block size (:func:`window_losses`,
:func:`igsm_at`, :func:`retrieval_at`).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.data import igsm, retrieval
from mope_jax.encodings.rope import extend_context
from mope_jax.model import GPT
from mope_jax.typing import Params

METHODS = ("none", "pi", "ntk", "yarn")  # dynamic_ntk equals ntk on full windows of s L
FACTORS = (1, 2, 4)

# one compiled forward per (config, shape); the params are an argument
_forward = jax.jit(
    lambda cfg, params, x: GPT(cfg).apply({"params": params}, x, deterministic=True),
    static_argnums=0,
)


def logits_fn(model_cfg, params: Params) -> Callable[[np.ndarray], jax.Array]:
    """tokens (B, C) -> logits (B, C, V) of ``model_cfg`` (no dropout), compiled once per shape."""
    return lambda x: _forward(model_cfg, params, jnp.asarray(x))


def sweep(
    model_cfg,
    L: int,
    measure: Callable[[object, int], object],
    *,
    factors: tuple[int, ...] = FACTORS,
    methods: tuple[str, ...] = METHODS,
) -> dict:
    """``{"<m>@<s>": measure(extended config, s)}`` for every rule m and factor s; at s = 1 only
    ``methods[0]`` is measured and shared by the others (every rule is the identity there)."""
    out = {}
    for s in factors:
        for m in methods:
            if s == 1 and m != methods[0]:
                continue
            out[f"{m}@{s}"] = measure(extend_context(model_cfg, m, float(s), original_length=L), s)
    if 1 in factors:
        for m in methods[1:]:
            out[f"{m}@1"] = out[f"{methods[0]}@1"]
    return out


def windows(val: np.ndarray, length: int, num: int) -> np.ndarray:
    """(num, length + 1) int32 fixed windows of the validation stream (inputs and targets), at
    starts evenly spaced over [0, len(val) - length - 2]. Not diagnostics.eval_windows (whose
    starts end one token later and drop repeats): these are the windows the committed
    context-extension records were measured on."""
    val = np.asarray(val)
    if len(val) < length + 2:
        raise ValueError(f"{len(val)} tokens cannot hold one window of {length + 2}")
    starts = np.linspace(0, len(val) - length - 2, num).astype(np.int64)
    return np.stack([val[s : s + length + 1] for s in starts]).astype(np.int32)


def window_losses(model_cfg, params: Params, w: np.ndarray, L: int) -> dict:
    """Mean next-token loss of the windows ``w`` (N, L' + 1): over all L' positions, and over
    the positions >= L (None when L' <= L)."""
    w = jnp.asarray(w)
    logp = jax.nn.log_softmax(_forward(model_cfg, params, w[:, :-1]), -1)
    nll = -jnp.take_along_axis(logp, w[:, 1:, None], -1)[..., 0]  # (N, L')
    return {
        "all": float(nll.mean()),
        "beyond_L": float(nll[:, L:].mean()) if nll.shape[1] > L else None,
    }


def losses(
    model_cfg,
    params: Params,
    val: np.ndarray,
    L: int,
    num: int,
    **grid,
) -> dict:
    """Per rule and s: :func:`window_losses` of ``num`` fixed windows of s L + 1 tokens
    (``grid``: :func:`sweep`'s ``factors`` and ``methods``)."""
    return sweep(
        model_cfg, L, lambda cfg, s: window_losses(cfg, params, windows(val, s * L, num), L), **grid
    )


def igsm_at(
    model_cfg,
    params: Params,
    context: int,
    problems: list,
    forced: list,
    *,
    filler: np.ndarray,
    vocab: tuple[str, ...],
    max_new: int,
    batch: int,
) -> dict:
    """Greedy answer and leaf accuracy of ``problems`` and teacher-forced accuracies of
    ``forced``, each prompt ending in a window of ``context`` tokens after ``filler``."""
    fn = logits_fn(model_cfg, params)
    return igsm.answer_accuracy(
        fn, problems, context=context, filler=filler, max_new=max_new, vocab=vocab, batch=batch
    ) | igsm.forced_accuracy(fn, forced, context=context, filler=filler, vocab=vocab, batch=batch)


def igsm_accuracies(
    model_cfg,
    params: Params,
    L: int,
    problems: list,
    forced: list,
    *,
    filler: np.ndarray,
    vocab: tuple[str, ...],
    max_new: int,
    batch: int,
    **grid,
) -> dict:
    """Per rule and s: :func:`igsm_at` with context s L (``grid`` as in :func:`losses`)."""
    return sweep(
        model_cfg,
        L,
        lambda cfg, s: igsm_at(
            cfg, params, s * L, problems, forced,
            filler=filler, vocab=vocab, max_new=max_new, batch=batch,
        ),
        **grid,
    )  # fmt: skip


def retrieval_at(
    model_cfg, params: Params, context: int, n: int, *, seed: int, vocab, batch: int
) -> float:
    """Lookup accuracy on ``n`` fresh retrieval examples (``seed``) read at ``context`` tokens."""
    x, answers, _ = retrieval.examples(n, context + 2, seed=seed, vocab=vocab)
    return retrieval.accuracy(logits_fn(model_cfg, params), x, answers, batch=batch)


def retrieval_accuracies(
    model_cfg,
    params: Params,
    L: int,
    n: int,
    *,
    vocab: tuple[str, ...],
    batch: int,
    seed: int = 999,
    **grid,
) -> dict:
    """Per rule and s: :func:`retrieval_at` at context s L on examples of seed ``seed + s``
    (one example set per s, shared by the rules; ``grid`` as in :func:`losses`)."""
    return sweep(
        model_cfg,
        L,
        lambda cfg, s: retrieval_at(cfg, params, s * L, n, seed=seed + s, vocab=vocab, batch=batch),
        **grid,
    )
