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

Driver: ``run(cfg, run_dir)`` trains in chunks on a global grid of ``log_interval`` steps,
evaluates every ``eval_interval``, checkpoints every ``checkpoint_interval`` and at the end,
appends metrics to ``run_dir/metrics.jsonl``, resumes from the newest intact checkpoint
(skipping damaged ones), saves on SIGTERM, and stops on a non-finite loss, parameter or eval
keeping the last good checkpoint. One process at a time owns a run directory (``RunLock``);
``final.json`` and a rewritten ``metrics.jsonl`` are replaced atomically, and a finished run
opened again keeps (or rebuilds from its last checkpoint) a complete record.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import signal
import subprocess
import time
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
from mope_jax.config import TRACED_MODEL_FIELDS, Config, traced_fields
from mope_jax.data import Corpus, DataError, check_vocab, load_corpus
from mope_jax.data.batches import sample_batch
from mope_jax.errors import CheckpointError, TrainingError
from mope_jax.model import GPT, count_params, cross_entropy, init_params
from mope_jax.perf import fast_cpu_threefry, threefry_unrolled
from mope_jax.rundir import (
    RunLock,
    atomic_write_text,
    environment_errors,
    make_run_dir,
    read_jsonl,
    read_record,
    truncate_jsonl,
)
from mope_jax.typing import Array, Params, PRNGKey

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


GRID_FIELDS = ("lr", "weight_decay", "grad_clip")


def initial_hparams(cfg: Config) -> dict[str, Array]:
    """The train state's traced scalars: GRID_FIELDS of the train config and the model's
    TRACED_MODEL_FIELDS (e.g. mope_bound, read by the MOPE clamp during a step)."""
    return {f: jnp.asarray(getattr(cfg.train, f), jnp.float32) for f in GRID_FIELDS} | {
        f: jnp.asarray(getattr(cfg.model, f), jnp.float32) for f in TRACED_MODEL_FIELDS
    }


def _traced(hparams: dict[str, Array]):
    return traced_fields({f: hparams[f] for f in TRACED_MODEL_FIELDS if f in hparams})


# --------------------------------------------------------------------------- optimiser


def lr_schedule(cfg: Config) -> optax.Schedule:
    """Linear warmup 0 -> lr over warmup_steps, then cosine to min_lr at max_steps."""
    t = cfg.train
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=t.lr,
        warmup_steps=t.warmup_steps,
        decay_steps=max(t.max_steps, t.warmup_steps + 1),
        end_value=t.min_lr,
    )


def decay_mask(cfg: Config, params: Params) -> Params:
    """True for parameters that get weight decay (train.decay_group, train.no_decay)."""
    group, excluded = cfg.train.decay_group, cfg.train.no_decay
    if group not in ("all", "2d"):
        raise TrainingError(f"train.decay_group={group!r}; use 'all' or '2d'")

    def rule(path, leaf) -> bool:
        name = "/".join(str(getattr(p, "key", p)) for p in path)
        if any(ex in name for ex in excluded):
            return False
        return group == "all" or leaf.ndim >= 2

    return jax.tree_util.tree_map_with_path(rule, params)


def unit_schedule(cfg: Config) -> optax.Schedule:
    """The lr schedule divided by train.lr (peak 1); the step multiplies it by hparams["lr"]."""
    t = cfg.train
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0,
        peak_value=1.0,
        warmup_steps=t.warmup_steps,
        decay_steps=max(t.max_steps, t.warmup_steps + 1),
        end_value=t.min_lr / t.lr if t.lr else 0.0,
    )


def make_optimizer(
    cfg: Config, params: Params, hparams: dict[str, Array] | None = None
) -> optax.GradientTransformation:
    """Clip + AdamW. With ``hparams`` (traced scalars from the train state), lr, weight decay and
    the clip norm come from there instead of the config."""
    t = cfg.train
    if hparams is None:
        hparams = {f: getattr(t, f) for f in GRID_FIELDS}
    unit = unit_schedule(cfg)
    return optax.chain(
        optax.clip_by_global_norm(hparams["grad_clip"]),
        optax.adamw(
            lambda count: hparams["lr"] * unit(count),
            b1=t.beta1,
            b2=t.beta2,
            weight_decay=hparams["weight_decay"],
            mask=decay_mask(cfg, params),
        ),
    )


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

    def loss(params: Params, x: Array, y: Array, dropout_key: PRNGKey | None) -> Array:
        """Cross-entropy; in training plus every value a module sowed into ``aux_loss``
        (e.g. a soft admissibility penalty). Evaluation (dropout_key None) is the pure LM loss."""
        if dropout_key is None:
            logits = model.apply({"params": params}, x, deterministic=True)
            return cross_entropy(logits, y)
        logits, aux = model.apply(
            {"params": params},
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
        with _traced(state.hparams):
            value, grads = jax.value_and_grad(loss)(state.params, x, y, dropout_key)
        updates, opt_state = tx.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        metrics = {
            "loss": value,
            "grad_norm": optax.tree.norm(grads),
            "lr": state.hparams["lr"] * unit(state.step),
        }
        return state.replace(step=state.step + 1, params=params, opt_state=opt_state), metrics

    def train_steps(state: TrainState, data: Array, n_steps: int):
        """n_steps optimiser steps with lax.scan; metrics are (n_steps,) arrays."""
        return jax.lax.scan(lambda s, _: one_step(s, data), state, None, length=n_steps)

    def evaluate(state: TrainState, train_data: Array, val_data: Array) -> dict[str, Array]:
        """Mean loss over ``eval_batches`` random batches per split (no dropout)."""
        key = jax.random.fold_in(jax.random.fold_in(state.key, EVAL_TAG), state.step)

        def split_loss(data, split_key):
            def one(i):
                x, y = sample_batch(jax.random.fold_in(split_key, i), data, bsz, T)
                return loss(state.params, x, y, None)

            with _traced(state.hparams):
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


# --------------------------------------------------------------------------- bookkeeping


def environment() -> dict[str, Any]:
    """Versions, machine and git commit, recorded with every run and result."""
    import optax as _optax
    import orbax.checkpoint as _ocp

    dev = jax.devices()[0]
    return {
        "jax": jax.__version__,
        "flax": flax.__version__,
        "optax": _optax.__version__,
        "orbax_checkpoint": getattr(_ocp, "__version__", "unknown"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "backend": jax.default_backend(),
        "device": getattr(dev, "device_kind", str(dev)),
        "device_count": jax.device_count(),
        "threefry_unrolled_on_cpu": threefry_unrolled(),
        "git_commit": git_commit(),
    }


def git_commit() -> str:
    try:
        here = Path(__file__).resolve().parent
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        if out.returncode == 0:
            dirty = subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=here,
                capture_output=True,
                text=True,
                timeout=5,
            ).stdout.strip()
            return out.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


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
            "pass train.allow_noncausal=true to train it anyway (the run is then labelled non-causal)"
        )


def prepare(cfg: Config) -> tuple[Config, Corpus]:
    """Load the corpus and fit the model's vocabulary to it."""
    corpus = load_corpus(cfg.data, cfg.model.block_size)
    model = dataclasses.replace(cfg.model, vocab_size=corpus.vocab_size)
    return dataclasses.replace(cfg, model=model), corpus


def _boundaries(t) -> list[int]:
    for name in ("eval_interval", "checkpoint_interval", "log_interval"):
        if getattr(t, name) <= 0:
            raise TrainingError(f"train.{name} must be positive")
    return sorted({t.log_interval, t.eval_interval, t.checkpoint_interval})


def _next_boundary(step: int, t) -> int:
    nxt = min(((step // n) + 1) * n for n in _boundaries(t))
    return min(nxt, t.max_steps)


def _is_save_point(step: int, t, target: int, sigterm: bool) -> bool:
    """Checkpoint at every checkpoint_interval, at the end, at a requested stop, and on SIGTERM."""
    return step % t.checkpoint_interval == 0 or step in (t.max_steps, target) or sigterm


def _to_py(tree):
    return jax.tree_util.tree_map(lambda x: np.asarray(x).tolist(), tree)


def all_finite(tree) -> Array:
    """A bool scalar: every element of every leaf is finite (params, or an eval dict)."""
    leaves = jax.tree_util.tree_leaves(tree)
    return (
        jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves]))
        if leaves
        else jnp.asarray(True)
    )


_all_finite_jit = jax.jit(all_finite)


def params_finite(params) -> bool:
    """True if every parameter is finite: checked on the state before it is kept or saved."""
    return bool(_all_finite_jit(params))


def non_finite_message(what: str, run_dir: Path, last_good: int | None) -> str:
    kept = (
        f"the last good checkpoint (step {last_good}) is kept in {run_dir}"
        if last_good is not None
        else f"no checkpoint was saved before it in {run_dir}"
    )
    return f"{what}; {kept}; lower train.lr or train.grad_clip and start a new run_dir"


def steady_rate(rates: list[float], run_dir: Path) -> list[float]:
    """This session's chunk rates; none (a finished run opened again): those in metrics.jsonl."""
    if rates:
        return rates
    return [
        r["tokens_per_s"]
        for r in read_jsonl(Path(run_dir) / "metrics.jsonl")
        if r.get("tokens_per_s")
    ]


class _SigtermFlag:
    """Turns SIGTERM into a flag checked between chunks (then: save, exit)."""

    def __init__(self):
        self.set = False
        self._old = None

    def __enter__(self):
        try:
            self._old = signal.signal(signal.SIGTERM, self._handler)
        except ValueError:  # not the main thread (e.g. some notebook runners)
            self._old = None
        return self

    def _handler(self, signum, frame):
        self.set = True

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)


@dataclass
class RunResult:
    run_dir: Path
    cfg: Config
    state: TrainState
    final: dict[str, Any]
    interrupted: bool = False
    sigterm: bool = False  # stopped by SIGTERM (saved first); the CLI exits with EXIT_INTERRUPTED


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """The records of ``run_dir/metrics.jsonl`` (a partial last line, left by a kill, is dropped)."""
    return read_jsonl(Path(run_dir) / "metrics.jsonl")


def run(
    cfg: Config,
    run_dir: str | Path,
    *,
    progress: bool = True,
    stop_after: int | None = None,
    spectra_fn: Callable[[Config, TrainState], dict[str, Any]] | None = None,
    summary_fn: Callable[[Config, TrainState], dict[str, Any]] | None = None,
    log: Callable[[str], None] = print,
) -> RunResult:
    """Train ``cfg`` in ``run_dir``, resuming from its latest checkpoint if there is one.

    stop_after: stop (after saving) once this many steps are done -- for tests and for
    splitting a run over several sessions.
    spectra_fn(cfg, state) -> named arrays stored in every checkpoint (default:
    :func:`mope_jax.analysis.spectra.extract_spectra`).
    summary_fn(cfg, state) -> JSON scalars/lists logged with every eval (default:
    :func:`mope_jax.analysis.spectra.eval_summary`).
    """
    check_causal(cfg)
    cfg, corpus = prepare(cfg)
    run_dir = Path(run_dir)
    make_run_dir(run_dir)
    with RunLock(run_dir, jax.process_index()), environment_errors(run_dir):
        return _run_locked(
            cfg,
            corpus,
            run_dir,
            progress=progress,
            stop_after=stop_after,
            spectra_fn=spectra_fn,
            summary_fn=summary_fn,
            log=log,
        )


def _run_locked(
    cfg: Config, corpus: Corpus, run_dir: Path, *, progress, stop_after, spectra_fn, summary_fn, log
) -> RunResult:
    from mope_jax.checkpoint import Checkpointer

    t = cfg.train
    trainer = make_train(cfg)
    train_data = jnp.asarray(corpus.train)
    val_data = jnp.asarray(corpus.val)
    if spectra_fn is None:
        spectra_fn = _default_hook("extract_spectra")
    if summary_fn is None:
        summary_fn = _default_hook("eval_summary")

    meta = {
        "config": cfg.to_dict(),
        "vocab": list(corpus.vocab),
        "corpus": corpus.meta,
        "causality": causality_record(cfg),
        "env": environment(),
        "num_params": None,
    }
    ckpt = Checkpointer(run_dir / "checkpoints", keep=t.keep_checkpoints)
    abstract = jax.eval_shape(trainer.init, jax.random.PRNGKey(t.seed))
    metrics_path = run_dir / "metrics.jsonl"
    last_good = None
    if ckpt.latest_step() is not None:
        try:
            last_good, state, _ = ckpt.restore_intact(
                abstract,
                check_meta=lambda saved: _check_resumable(saved, cfg, corpus, run_dir),
                log=log,
                quarantine=True,
            )
        except BaseException:
            ckpt.close()
            raise
        truncate_jsonl(metrics_path, last_good)
        log(f"resuming {run_dir} from step {last_good}")
    else:
        state = jax.jit(trainer.init)(jax.random.PRNGKey(t.seed))
        atomic_write_text(metrics_path, "")
    meta["num_params"] = count_params(state.params)
    atomic_write_text(run_dir / "config.json", cfg.to_json() + "\n")

    steps_fn = jax.jit(trainer.train_steps, static_argnums=2, donate_argnums=0)
    eval_fn = jax.jit(trainer.evaluate)
    step = int(state.step)
    target = t.max_steps if stop_after is None else min(t.max_steps, stop_after)
    tokens_per_step = t.batch_size * cfg.model.block_size
    bar = _progress(progress, step, t.max_steps)
    evals, rates, interrupted = [], [], False

    last_spectra = None

    def save(state):
        nonlocal last_good, last_spectra
        spectra = last_spectra = spectra_fn(cfg, state) if spectra_fn else None
        ckpt.save(int(state.step), state, meta, spectra)
        last_good = int(state.step)

    def stop(what: str):
        ckpt.close()
        raise TrainingError(non_finite_message(what, run_dir, last_good))

    with _SigtermFlag() as sigterm:
        while step < target:
            n = _next_boundary(step, t) - step
            t0 = time.perf_counter()
            new_state, m = steps_fn(state, train_data, n)
            losses = np.asarray(m["loss"])
            dt = time.perf_counter() - t0
            if not np.all(np.isfinite(losses)):
                stop(f"loss became non-finite at step {step + int(np.argmin(np.isfinite(losses)))}")
            if not params_finite(new_state.params):  # a finite loss can still leave inf/nan weights
                stop(f"the parameters became non-finite by step {step + n}")
            state, step = new_state, step + n
            rate = n * tokens_per_step / dt
            rates.append(rate)
            rec = {
                "step": step,
                "loss": float(losses.mean()),
                "lr": float(m["lr"][-1]),
                "grad_norm": float(np.asarray(m["grad_norm"]).mean()),
                "tokens_per_s": rate,
                "seconds": dt,
            }
            if step % t.eval_interval == 0 or step == t.max_steps:
                ev = _to_py(eval_fn(state, train_data, val_data))
                if not all(np.isfinite(v) for v in ev.values()):
                    stop(
                        f"the eval loss became non-finite at step {step} (train {ev['train']}, val {ev['val']})"
                    )
                rec.update(eval_train=ev["train"], eval_val=ev["val"])
                if summary_fn is not None:
                    rec.update(summary_fn(cfg, state))
                evals.append((step, ev["val"]))
            with metrics_path.open("a") as f:
                f.write(json.dumps(rec) + "\n")
            _progress_update(bar, n, rec)
            if _is_save_point(step, t, target, sigterm.set):
                save(state)
            if sigterm.set:
                interrupted = True
                log(
                    f"SIGTERM: saved step {step} in {run_dir}; run the same command again to resume"
                )
                break
    if bar is not None:
        bar.close()
    ckpt.close()
    final_path = run_dir / "final.json"
    kept = read_record(final_path) if not rates else None
    if (
        kept is not None and kept.get("steps") == step
    ):  # a finished run, opened again: keep its record
        final = kept
    else:
        if last_spectra is None and spectra_fn is not None and step >= t.max_steps:
            last_spectra = spectra_fn(
                cfg, state
            )  # e.g. killed after the final save, before final.json
        final = summarize(run_dir, cfg, meta, steady_rate(rates, run_dir), spectra=last_spectra)
        if step >= t.max_steps:
            _record_hook(final_path)
            atomic_write_text(final_path, json.dumps(final, indent=2) + "\n")
    return RunResult(
        run_dir,
        cfg,
        state,
        final,
        interrupted=interrupted or step < t.max_steps,
        sigterm=interrupted,
    )


def _record_hook(path: Path) -> None:
    """Called just before a record is written; tests replace it to simulate a kill in that window."""


SPECTRA_MAX_VALUES = 4096  # larger learned arrays stay in the checkpoint only


def summarize(
    run_dir: Path,
    cfg: Config,
    meta: dict[str, Any],
    rates: list[float],
    spectra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The run's record (``final.json``); ``spectra``: the learned spectra of the final state
    (omega, sigma, filter centres, RoPE energies...), kept when small enough for JSON."""
    recs = read_metrics(run_dir)
    ev = [(r["step"], r["eval_val"], r["eval_train"]) for r in recs if "eval_val" in r]
    steady = rates[1:] if len(rates) > 1 else rates  # the first chunk includes compilation
    return {
        "name": cfg.name,
        "seed": cfg.train.seed,
        "steps": recs[-1]["step"] if recs else 0,
        "final_val_loss": ev[-1][1] if ev else None,
        "final_train_loss": ev[-1][2] if ev else None,
        "best_val_loss": min(v for _, v, _ in ev) if ev else None,
        "curve": [{"step": s, "val": v, "train": tr} for s, v, tr in ev],
        "tokens_per_s": float(np.median(steady)) if steady else None,
        "train_seconds": float(sum(r.get("seconds", 0.0) for r in recs)),
        "num_params": meta["num_params"],
        "causality": meta["causality"],
        "env": meta["env"],
        "config": cfg.to_dict(),
        "spectra": {
            k: np.asarray(v).tolist()
            for k, v in (spectra or {}).items()
            if np.asarray(v).size <= SPECTRA_MAX_VALUES
        },
    }


def _check_resumable(
    saved: dict[str, Any], cfg: Config, corpus: Corpus, run_dir: Path, *, what: str = "a run"
) -> None:
    """Before any array is restored: the checkpoint's config, corpus digest and vocabulary are
    this run's (a changed model would otherwise fail deep inside Orbax's structure check)."""
    old = Config.from_dict(saved["config"])
    if old != cfg:
        a, b = old.to_dict(), cfg.to_dict()
        diff = [
            f"{s}.{k}: {a[s][k]!r} -> {b[s][k]!r}"
            for s in ("model", "data", "train")
            for k in a[s]
            if a[s][k] != b[s][k]
        ]
        raise TrainingError(
            f"{run_dir} holds {what} with another config ({'; '.join(diff) or 'name'}); "
            "use a new --run-dir, or the same overrides as before to resume"
        )
    old_sha, new_sha = (saved.get("corpus") or {}).get("sha256"), corpus.meta.get("sha256")
    if old_sha is not None and new_sha is not None and old_sha != new_sha:
        raise TrainingError(
            f"the corpus changed since {run_dir} was checkpointed (sha256 {old_sha[:12]}... -> {new_sha[:12]}...); "
            "restore the original file to resume, or start a new --run-dir"
        )
    check_vocab(corpus.vocab, tuple(saved["vocab"]))


def load_run(
    run_dir: str | Path, step: int | None = None
) -> tuple[Config, TrainState, dict[str, Any]]:
    """Restore (config, state, meta) from a run directory's checkpoint."""
    from mope_jax.checkpoint import Checkpointer

    path = Path(run_dir) / "checkpoints"
    if not path.is_dir() or not any(p.name.isdigit() for p in path.iterdir()):
        raise CheckpointError(
            f"{run_dir} has no checkpoints; train first: mope-jax train --run-dir {run_dir}"
        )
    with Checkpointer(path, read_only=True) as ckpt:
        if step is not None:
            meta = ckpt.read_meta(step)
            cfg = Config.from_dict(meta["config"])
            state, meta = ckpt.restore(_abstract_state(cfg), step, meta=meta)
            return cfg, state, meta
        _, state, meta = ckpt.restore_intact(
            lambda meta: _abstract_state(Config.from_dict(meta["config"])), log=_warn
        )
    return Config.from_dict(meta["config"]), state, meta


def _abstract_state(cfg: Config):
    return jax.eval_shape(make_train(cfg).init, jax.random.PRNGKey(cfg.train.seed))


def _warn(msg: str) -> None:
    import sys

    print(msg, file=sys.stderr)


def evaluate_run(
    run_dir: str | Path, cfg_data=None, *, batches: int | None = None
) -> dict[str, float]:
    """Evaluate a checkpoint on its own corpus (or ``cfg_data``, checked against its vocab)."""
    cfg, state, meta = load_run(run_dir)
    if cfg_data is not None:
        cfg = dataclasses.replace(cfg, data=cfg_data)
    if batches is not None:
        cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, eval_batches=batches))
    corpus = load_corpus(cfg.data, cfg.model.block_size)
    check_vocab(corpus.vocab, tuple(meta["vocab"]))
    ev = jax.jit(make_train(cfg).evaluate)(
        state, jnp.asarray(corpus.train), jnp.asarray(corpus.val)
    )
    return {k: float(v) for k, v in ev.items()} | {"step": int(state.step)}


def generate(
    cfg: Config,
    params: Params,
    prompt: np.ndarray,
    num_tokens: int,
    key: PRNGKey,
    *,
    temperature: float = 1.0,
    top_k: int = 0,
) -> np.ndarray:
    """Sample ``num_tokens`` after ``prompt`` (1-D int array). Uses a fixed (1, T) window so it
    compiles once: causality makes the logits at position p depend on tokens <= p only."""
    T = cfg.model.block_size
    model = GPT(cfg.model)
    if len(prompt) == 0:
        raise DataError("the prompt is empty; give at least one character, e.g. --prompt 'ROMEO:'")
    total = len(prompt) + num_tokens
    buf = np.zeros((max(total, T),), np.int32)
    buf[: len(prompt)] = prompt

    @jax.jit
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
    for i, pos in enumerate(range(len(prompt), total)):
        buf = step(buf, pos, jax.random.fold_in(key, i))
    return np.asarray(buf[len(prompt) : total])


def _default_hook(name: str):
    """A hook from mope_jax.analysis.spectra, if that module defines it."""
    try:
        from mope_jax.analysis import spectra
    except ImportError:
        return None
    return getattr(spectra, name, None)


def _progress(enabled: bool, start: int, total: int):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=start, unit="step", dynamic_ncols=True)


def _progress_update(bar, n: int, rec: dict[str, Any]) -> None:
    if bar is None:
        return
    post = {"loss": f"{rec['loss']:.4f}", "tok/s": f"{rec['tokens_per_s']:,.0f}"}
    if "eval_val" in rec:
        post["val"] = f"{rec['eval_val']:.4f}"
    bar.set_postfix(post, refresh=False)
    bar.update(n)
