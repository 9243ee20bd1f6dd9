"""The ``analyze`` hook of the context-extension campaign: what one trained seed is measured
for (the record's ``analysis``): the validation loss at s L for every extension method, the
answer accuracies of the arithmetic and retrieval rows, and the model's frequency energy; and
the fine-tuned rows' measurement at their own length (``analyze_finetuned``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from experiments import _paper_b as pb
from experiments.context_extension.corpora import SHAKESPEARE
from experiments.context_extension.settings import (
    EVAL_BATCH,
    FACTORS,
    FORCED_PROBLEMS,
    FT_FACTOR,
    MAX_NEW,
    METHODS,
    OPS,
    RETRIEVAL_PROBLEMS,
    SCALES,
)
from mope_jax.analysis import extension as ext
from mope_jax.analysis.freq_energy import energy_report, energy_tv, probe_tokens
from mope_jax.config import Config
from mope_jax.data import igsm


def _filler(vocab: tuple[str, ...]) -> np.ndarray:
    """The text before each arithmetic prompt: 200 other problems (seed 778), encoded."""
    return igsm.encode(
        "".join(p.text for p in igsm.problems(200, seed=778, ops_range=(1, 2), ops=OPS)), vocab
    )


def _answer_problems(scale: str) -> list:
    """The greedy-decoding problems of a scale: fresh 1-operation problems (seed 777)."""
    n = SCALES.get(scale, SCALES["cpu"])["problems"]
    return igsm.problems(n, seed=777, ops_range=(1, 1), ops=OPS)


def forced_problems(scale: str) -> list:
    """The teacher-forced problems of a scale: fresh 1-operation problems (seed 779)."""
    n = FORCED_PROBLEMS.get(scale, FORCED_PROBLEMS["cpu"])
    return igsm.problems(n, seed=779, ops_range=(1, 1), ops=OPS)


def map_text(ids_from: np.ndarray, vocab_from, vocab_to) -> np.ndarray:
    """Re-encode ids of one character vocabulary in another (unknown characters -> space)."""
    index = {c: i for i, c in enumerate(vocab_to)}
    space = index.get(" ", 0)
    return np.array([index.get(vocab_from[i], space) for i in ids_from], np.int32)


def task_of(cfg: Config) -> str:
    name = Path(cfg.data.path).name
    return {"igsm_train.txt": "arithmetic", "retrieval_train.txt": "retrieval"}.get(
        name, "language"
    )


def scale_of(cfg: Config) -> str:
    """The scale of a campaign config, from its name ``context_extension-<scale>/<variant>``."""
    return cfg.name.split("/")[0].rsplit("-", 1)[-1]


def _other_domain_text(task: str, scale: str, n: int) -> str | None:
    """The other domain's validation text (its last 10%), first n characters; None if absent."""
    path = SHAKESPEARE if task != "language" else pb.RUNS / scale / "igsm_train.txt"
    if not Path(path).is_file():
        return None
    text = Path(path).read_text()
    return text[int(0.9 * len(text)) :][:n]


def energy(cfg: Config, params, corpus, task: str, scale: str) -> dict:
    """Frequency energy of one model on its own windows, other windows and the other domain."""
    T = cfg.model.block_size
    val = np.asarray(corpus.val)
    own = energy_report(cfg.model, params, probe_tokens(val, T))
    alt = energy_report(cfg.model, params, probe_tokens(val[len(val) // 3 + 11 :], T))
    out = {
        "theta_eff": own["theta_eff_mean"],
        "entropy": own["entropy_mean"],
        "theta_eff_layer": np.exp(np.asarray(own["log_theta_eff"]).mean(1)).tolist(),
        "tv_other_windows": energy_tv(own["p"], alt["p"]),
        "tv_other_domain": None,
        "theta_eff_other_domain": None,
        "p_layer": own["p_layer"],
        "theta": own["theta"],
    }
    text = _other_domain_text(task, scale, 20 * T)
    if text is not None:
        index = {c: i for i, c in enumerate(corpus.vocab)}
        space = index.get(" ", 0)
        ids = np.array([index.get(c, space) for c in text], np.int32)
        dom = energy_report(cfg.model, params, probe_tokens(ids, T))
        out["tv_other_domain"] = energy_tv(own["p"], dom["p"])
        out["theta_eff_other_domain"] = dom["theta_eff_mean"]
    return out


def analyze(cfg: Config, state, corpus) -> dict:
    """One trained seed: losses at s L for every method (and, for arithmetic, the answer and
    leaf accuracies) and the frequency energy (the record's ``analysis``)."""
    task, scale = task_of(cfg), scale_of(cfg)
    params, L = state.params, cfg.model.block_size
    vocab = tuple(corpus.vocab)
    out = {
        "task": task,
        "train_length": L,
        "loss": ext.losses(
            cfg.model, params, np.asarray(corpus.val), L, EVAL_BATCH, factors=FACTORS,
            methods=METHODS,
        ),
    }  # fmt: skip
    if task == "arithmetic":
        out["answer"] = ext.igsm_accuracies(
            cfg.model, params, L, _answer_problems(scale), forced_problems(scale),
            filler=_filler(vocab), vocab=vocab, max_new=MAX_NEW, batch=EVAL_BATCH,
            factors=FACTORS, methods=METHODS,
        )  # fmt: skip
    if task == "retrieval":
        out["retrieval"] = ext.retrieval_accuracies(
            cfg.model, params, L, RETRIEVAL_PROBLEMS.get(scale, RETRIEVAL_PROBLEMS["cpu"]),
            vocab=vocab, batch=EVAL_BATCH, factors=FACTORS, methods=METHODS,
        )  # fmt: skip
    out["energy"] = energy(cfg, params, corpus, task, scale)
    return out


def analyze_finetuned(cfg: Config, state, corpus) -> dict:
    """One fine-tuned seed at its own length L' = FT_FACTOR L: the loss over all positions and
    beyond L on the same windows as the base row's ``<rule>@2`` (and, for arithmetic, the answer
    and leaf accuracies at context L'), and its frequency energy."""
    task, scale = task_of(cfg), scale_of(cfg)
    params, n, L = state.params, cfg.model.block_size, cfg.model.rope_original_length
    vocab = tuple(corpus.vocab)
    w = ext.windows(np.asarray(corpus.val), n, EVAL_BATCH)
    out = {
        "task": task,
        "train_length": L,
        "eval_length": n,
        "rule": cfg.model.rope_scaling,
        "loss": ext.window_losses(cfg.model, params, w, L),
    }
    if task == "arithmetic":
        out["answer"] = ext.igsm_at(
            cfg.model, params, n, _answer_problems(scale), forced_problems(scale),
            filler=_filler(vocab), vocab=vocab, max_new=MAX_NEW, batch=EVAL_BATCH,
        )  # fmt: skip
    if task == "retrieval":
        out["retrieval"] = ext.retrieval_at(
            cfg.model, params, n, RETRIEVAL_PROBLEMS.get(scale, RETRIEVAL_PROBLEMS["cpu"]),
            seed=999 + FT_FACTOR, vocab=vocab, batch=EVAL_BATCH,
        )  # fmt: skip
    out["energy"] = energy(cfg, params, corpus, task, scale)
    return out
