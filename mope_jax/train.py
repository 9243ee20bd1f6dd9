"""Training: ``make_train(cfg)`` builds pure, jit-able functions; ``run`` drives a resumable run.

Pure part (purejaxrl style, so a whole run can be vmapped over seeds):
    trainer = make_train(cfg)
    state = trainer.init(key)                                  # TrainState
    state, m = trainer.train_steps(state, data, n)             # lax.scan over n steps
    losses = trainer.evaluate(state, train_data, val_data)     # {"train", "val"}
    state, history = trainer.train(key, train_data, val_data)  # the whole run, one program

Randomness: the state carries one base key; step s uses ``fold_in(key, s)`` (batch and
dropout), evaluation at step s uses ``fold_in(fold_in(key, EVAL_TAG), s)``. A run therefore
depends only on (config, seed), not on how it is chunked or when it was interrupted.

Driver: ``run(cfg, run_dir)`` is one run (R = 1) of the chunked loop of
:mod:`mope_jax.loop` (also behind ``mope_jax.sweep``): chunks on a global grid of
``log_interval`` steps, an eval every ``eval_interval``, a checkpoint every
``checkpoint_interval`` and at the end, ``run_dir/metrics.jsonl``, resume from the newest
intact checkpoint, a save on SIGTERM, the non-finite stop keeping the last good checkpoint,
and an atomically written ``final.json``. One process at a time owns a run directory
(``RunLock``). The optimiser and lr schedule live in :mod:`mope_jax.optim`, the provenance
of records in :mod:`mope_jax.provenance`.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import flax
import flax.struct
import jax
import jax.numpy as jnp
import numpy as np
import optax

from mope_jax.attention import registry
from mope_jax import hparams as hparams_collection
from mope_jax import memory
from mope_jax.config import Config, ModelConfig, without_location
from mope_jax.data import Corpus, DataError, check_vocab, load_corpus
from mope_jax.data.batches import sample_batch
from mope_jax.errors import CheckpointError, ConfigError, TrainingError
from mope_jax.loop import (
    Hooks,
    Program,
    all_finite,
    check_resumable,
    default_hooks,
    RunSpec,
    drive,
    read_metrics,
    resume_or_init,
)
from mope_jax.model import GPT, count_params, cross_entropy, init_params
from mope_jax.optim import GRID_FIELDS, lr_schedule, make_optimizer, unit_schedule
from mope_jax.perf import fast_cpu_threefry
from mope_jax.provenance import environment
from mope_jax.rundir import (
    RunLock,
    atomic_write_text,
    environment_errors,
    make_run_dir,
    read_record,
)
from mope_jax.typing import Array, Params, PRNGKey

# re-exported: the optimiser, provenance and records used to live here
__all__ = [
    "EVAL_TAG",
    "GRID_FIELDS",
    "RunResult",
    "TrainState",
    "Trainer",
    "causality_record",
    "check_causal",
    "environment",
    "evaluate_run",
    "generate",
    "initial_hparams",
    "load_run",
    "lr_schedule",
    "make_optimizer",
    "make_train",
    "prepare",
    "read_metrics",
    "run",
    "sampling_corpus",
    "stored_data",
]

EVAL_TAG = 0x5EED


@flax.struct.dataclass
class TrainState:
    step: Array  # int32 ()
    params: Params
    opt_state: optax.OptState
    key: PRNGKey  # base key, uint32 (2,)
    # train.lr / weight_decay / grad_clip as f32 scalars, read by every step: a sweep can give
    # each run of one compiled program its own values (GRID_FIELDS).
    hparams: dict[str, Array]


# Model fields every train state carries as traced scalars (``TrainState.hparams``), whatever
# the model: the MOPE/EGA-M omega*sigma bound (checkpoints of every run hold it). A variant
# reading another field from the ``hparams`` collection adds it to the states of its own runs
# (``registry.model_hparams``).
TRACED_MODEL_FIELDS = ("mope_bound",)


def traced_model_fields(cfg: Config) -> tuple[str, ...]:
    """The model fields of ``cfg``'s train state: TRACED_MODEL_FIELDS and those its variants
    read from the ``hparams`` collection."""
    declared = registry.model_hparams(cfg.model)
    return TRACED_MODEL_FIELDS + tuple(f for f in declared if f not in TRACED_MODEL_FIELDS)


def initial_hparams(cfg: Config) -> dict[str, Array]:
    """The train state's traced scalars: GRID_FIELDS of the train config and the model's
    traced fields (e.g. mope_bound, read by the MOPE clamp during a step)."""
    return {f: jnp.asarray(getattr(cfg.train, f), jnp.float32) for f in GRID_FIELDS} | {
        f: jnp.asarray(getattr(cfg.model, f), jnp.float32) for f in traced_model_fields(cfg)
    }


# --------------------------------------------------------------------------- pure trainer


@dataclass(frozen=True)
class Trainer:
    cfg: Config
    model: GPT
    init: Callable[[PRNGKey], TrainState]
    train_steps: Callable[..., tuple[TrainState, dict[str, Array]]]
    evaluate: Callable[..., dict[str, Array]]
    loss: Callable[..., Array]
    train: Callable[..., tuple[TrainState, dict[str, Array]]]


def make_train(cfg: Config, *, batch_sharding: jax.sharding.Sharding | None = None) -> Trainer:
    """Pure functions for ``cfg`` (none is jitted here; ``run`` and ``sweep`` jit them).

    batch_sharding: optional sharding of each training batch (B,T), e.g.
    ``NamedSharding(mesh, P("data"))``: XLA then partitions the step over the batch axis
    (data parallel; gradients are all-reduced). Same numbers to float tolerance (the batch
    and dropout draws do not depend on it; tests/test_perf.py).
    """
    fast_cpu_threefry()  # the same random bits, cheaper on CPU (mope_jax/perf.py)
    model = GPT(cfg.model)
    t = cfg.train
    bsz, T = t.batch_size, cfg.model.block_size
    unit = unit_schedule(cfg)

    def init(key: PRNGKey) -> TrainState:
        init_key, run_key = jax.random.split(key)
        params = init_params(cfg.model, init_key)
        tx = make_optimizer(cfg, params)
        return TrainState(
            step=jnp.zeros((), jnp.int32),
            params=params,
            opt_state=tx.init(params),
            key=run_key,
            hparams=initial_hparams(cfg),
        )

    traced = traced_model_fields(cfg)

    def loss(
        params: Params,
        x: Array,
        y: Array,
        dropout_key: PRNGKey | None,
        hparams: dict[str, Array] | None = None,
    ) -> Array:
        """Cross-entropy; in training plus every value a module sowed into ``aux_loss``
        (e.g. a soft admissibility penalty). Evaluation (dropout_key None) is the pure LM loss.
        ``hparams`` (the train state's): the traced model fields, supplied to the modules as
        the ``hparams`` variable collection; without it they use the config's values."""
        variables = {"params": params}
        if hparams is not None:
            variables |= hparams_collection.collection(hparams, traced)
        if dropout_key is None:
            logits = model.apply(variables, x, deterministic=True)
            return cross_entropy(logits, y)
        logits, aux = model.apply(
            variables,
            x,
            deterministic=False,
            rngs={"dropout": dropout_key},
            mutable=["aux_loss"],
        )
        penalty = sum(
            jnp.sum(jnp.asarray(v)) for v in jax.tree_util.tree_leaves(aux.get("aux_loss", {}))
        )
        return cross_entropy(logits, y) + penalty

    def one_step(state: TrainState, data: Array) -> tuple[TrainState, dict[str, Array]]:
        tx = make_optimizer(cfg, state.params, state.hparams)
        step_key = jax.random.fold_in(state.key, state.step)
        batch_key, dropout_key = jax.random.split(step_key)
        x, y = sample_batch(batch_key, data, bsz, T)
        if batch_sharding is not None:
            x, y = (jax.lax.with_sharding_constraint(a, batch_sharding) for a in (x, y))
        value, grads = jax.value_and_grad(loss)(state.params, x, y, dropout_key, state.hparams)
        updates, opt_state = tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        metrics = {
            "loss": value,
            "grad_norm": optax.tree.norm(grads),
            "lr": state.hparams["lr"] * unit(state.step),
        }
        return state.replace(step=state.step + 1, params=params, opt_state=opt_state), metrics

    def train_steps(state: TrainState, data: Array, n_steps: int):
        """n_steps optimiser steps with lax.scan; metrics are (n_steps,) arrays, and
        ``params_finite`` (a bool scalar) says whether every parameter is finite after them
        (checked inside the program: no separate program or transfer per chunk)."""
        state, m = jax.lax.scan(lambda s, _: one_step(s, data), state, None, length=n_steps)
        return state, m | {"params_finite": all_finite(state.params)}

    def evaluate(state: TrainState, train_data: Array, val_data: Array) -> dict[str, Array]:
        """Mean loss over ``eval_batches`` random batches per split (no dropout)."""
        key = jax.random.fold_in(jax.random.fold_in(state.key, EVAL_TAG), state.step)

        def split_loss(data, split_key):
            def one(i):
                x, y = sample_batch(jax.random.fold_in(split_key, i), data, bsz, T)
                return loss(state.params, x, y, None, state.hparams)

            return jax.lax.map(one, jnp.arange(t.eval_batches)).mean()

        k_train, k_val = jax.random.split(key)
        return {"train": split_loss(train_data, k_train), "val": split_loss(val_data, k_val)}

    def train(key: PRNGKey, train_data: Array, val_data: Array):
        """The whole run as one program: max_steps steps, evaluated every eval_interval."""
        n_evals, rest = divmod(t.max_steps, t.eval_interval)
        if rest:
            raise TrainingError("train(): max_steps must be a multiple of eval_interval")

        def chunk(state, _):
            state, m = train_steps(state, train_data, t.eval_interval)
            ev = evaluate(state, train_data, val_data)
            return state, {"loss": m["loss"], "eval_train": ev["train"], "eval_val": ev["val"]}

        return jax.lax.scan(chunk, init(key), None, length=n_evals)

    return Trainer(cfg, model, init, train_steps, evaluate, loss, train)


def compiled_evaluate(cfg: Config) -> Callable[..., dict[str, Array]]:
    """``jax.jit(make_train(cfg).evaluate)``, one program per config whatever its seed: a
    run's seed lives in its state's key, so the evaluations of every seed of a row (e.g. a
    trained model re-evaluated with another gate) share one compiled program."""
    return _compiled_evaluate(
        dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=0))
    )


@functools.lru_cache(maxsize=16)
def _compiled_evaluate(cfg: Config):
    return jax.jit(make_train(cfg).evaluate)


# --------------------------------------------------------------------------- bookkeeping


def causality_record(cfg: Config) -> dict[str, Any]:
    """The declared causality of the variants a config uses (the audit measures it)."""
    return {
        "declared_causal": registry.declared_causal(cfg.model),
        "noncausal_parts": registry.noncausal_parts(cfg.model),
        "allow_noncausal": cfg.train.allow_noncausal,
    }


def check_causal(cfg: Config) -> None:
    parts = registry.noncausal_parts(cfg.model)
    if parts and not cfg.train.allow_noncausal:
        raise TrainingError(
            f"{', '.join(parts)} sees future tokens, so its loss is not a causal-LM loss; "
            "pass train.allow_noncausal=true to train it anyway "
            "(the run is then labelled non-causal)"
        )


def prepare(
    cfg: Config, *, option: str = "data.path", longer: str | None = None
) -> tuple[Config, Corpus]:
    """Load the corpus and fit the model's vocabulary to it; a text corpus's ``data.path``
    becomes absolute, so the run's stored config finds it from any directory (its sha256 is
    stored with the checkpoint's corpus meta).

    ``model.vocab_size``: ModelConfig's default is a placeholder the corpus's symbol count
    replaces; a value set by hand below that count is refused (the model could not emit every
    symbol). ``option``, ``longer``: how the command names the corpus (see ``load_corpus``).
    """
    corpus = load_corpus(cfg.data, cfg.model.block_size, option=option, longer=longer)
    v = cfg.model.vocab_size
    if v != ModelConfig.vocab_size and v < corpus.vocab_size:
        raise ConfigError(
            f"model.vocab_size={v} is smaller than the {corpus.vocab_size} symbols of "
            f"{corpus.name}, so the model could not emit every symbol; leave model.vocab_size "
            "out (it is fitted to the corpus)"
        )
    data = cfg.data
    if data.source == "text" and data.path:
        data = dataclasses.replace(data, path=str(Path(data.path).expanduser().resolve()))
    model = dataclasses.replace(cfg.model, vocab_size=corpus.vocab_size)
    return dataclasses.replace(cfg, model=model, data=data), corpus


@dataclass
class RunResult:
    run_dir: Path
    cfg: Config
    state: TrainState
    final: dict[str, Any]
    interrupted: bool = False
    sigterm: bool = False  # stopped by SIGTERM (saved first); the CLI exits with EXIT_INTERRUPTED


def run(
    cfg: Config,
    run_dir: str | Path,
    *,
    progress: bool = True,
    stop_after: int | None = None,
    hooks: Hooks | None = None,
    log: Callable[[str], None] = print,
) -> RunResult:
    """Train ``cfg`` in ``run_dir``, resuming from its latest intact checkpoint if there is one.

    stop_after: stop (after saving) once this many steps are done -- for tests and for
    splitting a run over several sessions.
    hooks: the analysis saved with checkpoints and logged with evals (default:
    :func:`mope_jax.loop.default_hooks`, the learned spectra of ``mope_jax.analysis.spectra``;
    ``mope_jax.loop.NO_HOOKS`` for none).
    """
    check_causal(cfg)
    memory.check_training(cfg)  # before anything is allocated
    cfg, corpus = prepare(cfg)
    run_dir = Path(run_dir)
    done = _finished_read_only(cfg, run_dir)
    if done is not None:  # nothing to write: its record is the answer
        log(f"{run_dir} is read-only and holds this run, finished: reporting its record")
        _, state, _ = load_run(run_dir)
        return RunResult(run_dir, cfg, state, done)
    make_run_dir(run_dir)
    with RunLock(run_dir, jax.process_index()), environment_errors(run_dir):
        return _run_locked(
            cfg,
            corpus,
            run_dir,
            progress=progress,
            stop_after=stop_after,
            hooks=default_hooks() if hooks is None else hooks,
            log=log,
        )


def _finished_read_only(cfg: Config, run_dir: Path) -> dict[str, Any] | None:
    """The record of ``run_dir`` when that folder cannot be written but holds this run (same
    config, the corpus's location aside), finished; else None."""
    if not run_dir.is_dir() or os.access(run_dir, os.W_OK | os.X_OK):
        return None
    rec = read_record(run_dir / "final.json")
    try:
        same = without_location(Config.from_dict(rec["config"])) == without_location(cfg)
    except (KeyError, TypeError, ValueError):  # no record, or not one of a run
        return None
    return rec if same and rec.get("steps") == cfg.train.max_steps else None


def _run_locked(cfg: Config, corpus: Corpus, run_dir: Path, *, progress, stop_after, hooks, log):
    from mope_jax.checkpoint import Checkpointer

    t = cfg.train
    trainer = make_train(cfg)
    meta = {
        "config": cfg.to_dict(),
        "vocab": list(corpus.vocab),
        "corpus": corpus.meta,
        "causality": causality_record(cfg),
        "env": environment(),
        "num_params": None,
    }
    ckpt = Checkpointer(run_dir / "checkpoints", keep=t.keep_checkpoints)
    key = jax.random.PRNGKey(t.seed)
    state, last_good = resume_or_init(
        ckpt,
        jax.eval_shape(trainer.init, key),
        lambda: jax.jit(trainer.init)(key),
        [run_dir],
        check_meta=lambda saved: check_resumable(saved, cfg, corpus, run_dir),
        run_dir=run_dir,
        log=log,
    )
    meta["num_params"] = count_params(state.params)
    atomic_write_text(run_dir / "config.json", cfg.to_json() + "\n")
    steps = jax.jit(trainer.train_steps, static_argnums=2, donate_argnums=0)
    program = Program(
        n_runs=1,
        steps=lambda n: lambda s, data: steps(s, data, n),
        evaluate=jax.jit(trainer.evaluate),
        stacked=False,
        to_host=lambda tree: tree,  # hooks see the device state
    )
    spec = RunSpec(
        cfg=cfg,
        run_cfgs=[cfg],
        run_dirs=[run_dir],
        labels=[cfg.name],
        train_data=jnp.asarray(corpus.train),
        val_data=jnp.asarray(corpus.val),
        ckpt=ckpt,
        meta=meta,
        run_dir=run_dir,
        last_good=last_good,
    )
    out = drive(
        program, state, spec, hooks=hooks, stop_after=stop_after, progress=progress, log=log
    )
    return RunResult(run_dir, cfg, out.states, out.records[0], out.interrupted, out.sigterm)


def load_run(
    run_dir: str | Path, step: int | None = None
) -> tuple[Config, TrainState, dict[str, Any]]:
    """Restore (config, state, meta) from a run directory's checkpoint."""
    from mope_jax.checkpoint import Checkpointer

    path = Path(run_dir) / "checkpoints"
    if not _has_checkpoints(Path(run_dir)):
        sweep = next((d for d in Path(run_dir).parents[:2] if _has_checkpoints(d)), None)
        if sweep is not None and re.fullmatch(r"seed\d+", Path(run_dir).name):
            raise CheckpointError(
                f"{run_dir} is one run of the sweep in {sweep}, whose one checkpoint holds all "
                "its runs; eval and sample read a run trained alone (mope-jax train): give its "
                f"folder as --run-dir ({run_dir}/final.json is this seed's record)"
            )
        raise CheckpointError(
            f"{run_dir} has no checkpoints; train first: mope-jax train --run-dir {run_dir}"
        )

    def abstract(meta):  # before any array is read
        if "runs" in meta:
            seeds = ", ".join(str(s) for s in meta.get("seeds", []))
            raise CheckpointError(
                f"{run_dir} holds a sweep of {len(meta['runs'])} runs (seeds {seeds}), one "
                "checkpoint for all of them; eval and sample read a run trained alone (mope-jax "
                f"train): give its folder as --run-dir (the sweep's records: "
                f"{run_dir}/seed<s>/final.json)"
            )
        return _abstract_state(Config.from_dict(meta["config"]))

    with Checkpointer(path, read_only=True) as ckpt:
        if step is not None:
            meta = ckpt.read_meta(step)
            state, meta = ckpt.restore(abstract(meta), step, meta=meta)
            return Config.from_dict(meta["config"]), state, meta
        _, state, meta = ckpt.restore_intact(abstract, log=_warn)
    return Config.from_dict(meta["config"]), state, meta


def _has_checkpoints(run_dir: Path) -> bool:
    path = run_dir / "checkpoints"
    return path.is_dir() and any(p.name.isdigit() for p in path.iterdir())


def _abstract_state(cfg: Config):
    return jax.eval_shape(make_train(cfg).init, jax.random.PRNGKey(cfg.train.seed))


def _warn(msg: str) -> None:
    import sys

    print(msg, file=sys.stderr)


def stored_data(cfg: Config, meta: dict[str, Any]):
    """The run's DataConfig, its text corpus where the checkpoint says it was read (an
    absolute path, also for runs whose config kept the path as typed)."""
    path = (meta.get("corpus") or {}).get("path")
    if cfg.data.source == "text" and path:
        return dataclasses.replace(cfg.data, path=path)
    return cfg.data


def _sha(corpus_meta: dict[str, Any] | None) -> str | None:
    return (corpus_meta or {}).get("sha256")


def evaluate_run(
    run_dir: str | Path, cfg_data=None, *, batches: int | None = None
) -> dict[str, float]:
    """Evaluate a checkpoint on its own corpus, or on ``cfg_data`` (``eval --data``: the same
    corpus elsewhere, checked against the sha256 stored with the checkpoint, else against its
    vocabulary)."""
    cfg, state, meta = load_run(run_dir)
    stored = _sha(meta.get("corpus"))
    if cfg_data is None:
        cfg_data = stored_data(cfg, meta)
        if cfg_data.source == "text" and not Path(cfg_data.path).is_file():
            digest = f" (checked against its sha256 {stored[:12]}...)" if stored else ""
            raise DataError(
                f"the corpus this run was trained on, {cfg_data.path}, is gone (moved or "
                f"deleted); point eval at it with --data PATH{digest}"
            )
    cfg = dataclasses.replace(cfg, data=cfg_data)
    if batches is not None:
        cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, eval_batches=batches))
    memory.check(memory.evaluation(cfg), "eval")
    corpus = load_corpus(
        cfg.data,
        cfg.model.block_size,
        option="--data",
        longer="give --data the corpus this run was trained on",
    )
    new = _sha(corpus.meta)
    if stored and new and new != stored:
        raise DataError(
            f"{corpus.name} (sha256 {new[:12]}...) is not the corpus this run was trained on "
            f"(sha256 {stored[:12]}...); give --data the file it was trained on, wherever it "
            "is now"
        )
    check_vocab(corpus.vocab, tuple(meta["vocab"]))
    ev = jax.jit(make_train(cfg).evaluate)(
        state, jnp.asarray(corpus.train), jnp.asarray(corpus.val)
    )
    return {k: float(v) for k, v in ev.items()} | {"step": int(state.step)}


def sampling_corpus(
    cfg: Config, meta: dict[str, Any], log: Callable[[str], None] = _warn
) -> Corpus:
    """What ``sample`` encodes prompts and decodes tokens with: the run's corpus when it is
    still there and unchanged (the default prompt comes from its val split), else the
    checkpoint's vocabulary alone (the model needs nothing more)."""
    vocab = tuple(meta["vocab"])
    data = stored_data(cfg, meta)
    try:
        corpus = load_corpus(data, cfg.model.block_size)
        if _sha(meta.get("corpus")) in (None, _sha(corpus.meta)):
            check_vocab(corpus.vocab, vocab)
            return corpus
    except DataError:
        pass
    where = data.path if data.source == "text" else data.source
    log(
        f"note: the corpus this run was trained on ({where}) is not here as it was; sampling "
        f"with the checkpoint's vocabulary alone ({len(vocab)} symbols)"
    )
    return Corpus(
        name=data.source,
        train=np.zeros((0,), np.int32),
        val=np.zeros((0,), np.int32),
        vocab=vocab,
        meta=dict(meta.get("corpus") or {}),
        separator=" " if data.source == "blocks" else "",  # token names, as load_corpus's
    )


def generate(
    cfg: Config,
    params: Params,
    prompt: np.ndarray,
    num_tokens: int,
    key: PRNGKey,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
    log: Callable[[str], None] | None = None,
    log_every_s: float = 10.0,
) -> np.ndarray:
    """Sample ``num_tokens`` after ``prompt`` (1-D int array). Uses a fixed (1, T) window so it
    compiles once: causality makes the logits at position p depend on tokens <= p only.

    The token buffer is donated to each step, so a step writes one token in place (linear
    time in ``num_tokens``); ``log``, when given, gets a progress line every ``log_every_s``
    seconds of a long generation (none for one that ends sooner)."""
    import time

    T = cfg.model.block_size
    model = GPT(cfg.model)
    if len(prompt) == 0:
        raise DataError("the prompt is empty; give at least one character, e.g. --prompt 'ROMEO:'")
    total = len(prompt) + num_tokens
    buf = np.zeros((max(total, T),), np.int32)
    buf[: len(prompt)] = prompt

    @functools.partial(jax.jit, donate_argnums=0)
    def step(buf, pos, key):
        start = jnp.maximum(pos - T, 0)
        window = jax.lax.dynamic_slice(buf, (start,), (T,))[None]
        logits = model.apply({"params": params}, window, deterministic=True)[0]  # (T,V)
        last = jax.lax.dynamic_index_in_dim(logits, pos - 1 - start, keepdims=False) / jnp.maximum(
            temperature, 1e-6
        )
        if top_k:
            kth = jax.lax.top_k(last, top_k)[0][-1]
            last = jnp.where(last < kth, -jnp.inf, last)
        nxt = jax.random.categorical(key, last)
        return buf.at[pos].set(nxt.astype(jnp.int32))

    buf = jnp.asarray(buf)
    t0 = logged = time.monotonic()
    for i, pos in enumerate(range(len(prompt), total)):
        buf = step(buf, pos, jax.random.fold_in(key, i))
        if log is not None and time.monotonic() - logged >= log_every_s:
            buf.block_until_ready()  # steps are dispatched ahead of the work: count done ones
            logged = time.monotonic()
            rate = (i + 1) / (logged - t0)
            left = (num_tokens - i - 1) / rate
            log(
                f"sampling: {i + 1:,}/{num_tokens:,} tokens, {rate:,.0f} tokens/s, "
                f"about {left / 60:.1f} min left"
            )
    return np.asarray(buf[len(prompt) : total])
