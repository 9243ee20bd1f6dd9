"""The training driver: one chunked loop for R >= 1 runs.

``train.run`` drives one run (R = 1, a plain state); ``sweep.sweep`` drives R runs stacked
along a leading axis of one state. Both hand this module a :class:`Program` (the compiled
step and evaluation for their layout) and get the same loop:

* chunks on a global grid of ``log_interval`` steps, so a run depends only on (config, seed),
  never on how it was chunked or interrupted;
* evaluation every ``eval_interval`` and at the end, one ``metrics.jsonl`` line per chunk
  and run, a progress bar;
* a save at every ``checkpoint_interval``, at the end, at ``stop_after`` and on SIGTERM
  (then the loop returns with ``sigterm=True``);
* the non-finite stop: a non-finite loss, parameter or eval ends the run with a
  :class:`~mope_jax.errors.TrainingError` naming the last good checkpoint, which is kept;
* the records: one ``final.json`` per run, written atomically when the run is finished; a
  finished run opened again keeps its record, or rebuilds it from the last checkpoint.

Analysis enters only through :class:`Hooks` (learned spectra saved with each checkpoint, a
summary logged with each eval), passed in by the caller.
"""

from __future__ import annotations

import json
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.config import Config, without_location
from mope_jax.data import Corpus, check_vocab
from mope_jax.errors import TrainingError
from mope_jax.rundir import atomic_write_text, read_jsonl, read_record, truncate_jsonl
from mope_jax.typing import Array

SPECTRA_MAX_VALUES = 4096  # larger learned arrays stay in the checkpoint only


@dataclass(frozen=True)
class Hooks:
    """Analysis called by the loop. ``spectra(cfg, state)``: named arrays saved with every
    checkpoint and (when small) in the record; ``summary(cfg, state)``: JSON values logged
    with every eval. ``state`` is one run's TrainState (its leaves may be numpy arrays)."""

    spectra: Callable[[Config, Any], dict[str, Any]] | None = None
    summary: Callable[[Config, Any], dict[str, Any]] | None = None


NO_HOOKS = Hooks()


def default_hooks() -> Hooks:
    """``mope_jax.analysis.spectra``'s extractors: what ``run``/``sweep`` use unless told."""
    from mope_jax.analysis import spectra

    return Hooks(spectra=spectra.extract_spectra, summary=spectra.eval_summary)


@dataclass
class Program:
    """The compiled pieces of R runs.

    steps(n)(states, train_data) -> (states, metrics) runs n optimiser steps of every run;
    evaluate(states, train_data, val_data) -> {"train", "val"}. With ``stacked`` every leaf
    has a leading run axis (R,...) and so do the metrics; otherwise (R = 1) the state is
    one run's and the loop adds the axis to what it reads.
    """

    n_runs: int
    steps: Callable[[int], Callable]
    evaluate: Callable
    stacked: bool
    to_host: Callable = field(default=lambda tree: jax.tree_util.tree_map(np.asarray, tree))

    def per_run(self, tree):
        """Host arrays with a leading run axis."""
        tree = self.to_host(tree)
        return tree if self.stacked else jax.tree_util.tree_map(lambda x: np.asarray(x)[None], tree)

    def run_state(self, states, r: int):
        return jax.tree_util.tree_map(lambda x: x[r], states) if self.stacked else states


@dataclass
class Outcome:
    states: Any
    step: int
    records: list[dict[str, Any]]
    wall_s: float
    interrupted: bool  # stopped before max_steps (stop_after, SIGTERM, the CLI's Ctrl-C)
    sigterm: bool  # stopped by SIGTERM or the CLI's Ctrl-C (CtrlC), after saving


# --------------------------------------------------------------------------- the chunk grid


def boundaries(t) -> list[int]:
    """The intervals whose multiples end a chunk (log, eval, checkpoint), checked positive."""
    for name in ("eval_interval", "checkpoint_interval", "log_interval"):
        if getattr(t, name) <= 0:
            raise TrainingError(f"train.{name} must be positive")
    return sorted({t.log_interval, t.eval_interval, t.checkpoint_interval})


def next_boundary(step: int, t) -> int:
    nxt = min(((step // n) + 1) * n for n in boundaries(t))
    return min(nxt, t.max_steps)


def is_save_point(step: int, t, target: int, sigterm: bool) -> bool:
    """Checkpoint at every checkpoint_interval, at the end, at a requested stop, and on SIGTERM."""
    return step % t.checkpoint_interval == 0 or step in (t.max_steps, target) or sigterm


# --------------------------------------------------------------------------- checks


def all_finite(tree) -> Array:
    """A bool scalar: every element of every leaf is finite (params, or an eval dict)."""
    leaves = jax.tree_util.tree_leaves(tree)
    if not leaves:
        return jnp.asarray(True)
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(x)) for x in leaves]))


_all_finite_jit = jax.jit(all_finite)


def params_finite(params, flag=None) -> bool:
    """True if every parameter is finite: checked on the state before it is kept or saved.
    ``flag``: the training program's own answer (``train_steps``' ``params_finite`` metric, one
    per run), used when given instead of a separate program over the parameters."""
    if flag is not None:
        return bool(np.all(np.asarray(flag)))
    return bool(_all_finite_jit(params))


def non_finite_message(what: str, run_dir: Path, last_good: int | None) -> str:
    kept = (
        f"the last good checkpoint (step {last_good}) is kept in {run_dir}"
        if last_good is not None
        else f"no checkpoint was saved before it in {run_dir}"
    )
    return f"{what}; {kept}; lower train.lr or train.grad_clip and start a new run_dir"


def check_resumable(
    saved: dict[str, Any], cfg: Config, corpus: Corpus, run_dir: Path, *, what: str = "a run"
) -> None:
    """Before any array is restored: the checkpoint is of this kind (one run, or a sweep),
    its config (the corpus's location aside: a moved corpus is checked by its digest), corpus
    digest and vocabulary are this run's (a changed model would otherwise fail deep inside
    Orbax's structure check)."""
    if ("runs" in saved) != (what == "a sweep"):
        if "runs" in saved:
            raise TrainingError(
                f"{run_dir} holds a sweep of {len(saved['runs'])} runs, not one run (mope-jax "
                f"sweep --run-dir {run_dir} resumes it); give train another --run-dir"
            )
        raise TrainingError(
            f"{run_dir} holds one run made by mope-jax train, not a sweep; give the sweep "
            "another --run-dir"
        )
    old, new = without_location(Config.from_dict(saved["config"])), without_location(cfg)
    if old != new:
        a, b = old.to_dict(), new.to_dict()
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
            f"the corpus changed since {run_dir} was checkpointed (sha256 {old_sha[:12]}... -> "
            f"{new_sha[:12]}...); restore the original file to resume, or start a new --run-dir"
        )
    check_vocab(corpus.vocab, tuple(saved["vocab"]))


class CtrlC:
    """A SIGINT handler for a process that must not unwind while JAX or Orbax works (the CLI's).

    Python turns Ctrl-C into a ``KeyboardInterrupt`` raised wherever the main thread is, e.g.
    inside a jax dispatch or a garbage-collector callback of XLA's; the process then unwinds
    and exits while XLA's threads still run the dispatched chunk (or compile), and the
    interpreter's teardown frees what they use: a segmentation fault, a swallowed
    Ctrl-C (the exception is "ignored" in the callback) or an asyncio traceback. This handler
    never raises:

    * inside the chunk loop (a :class:`SigtermFlag` is active), the first Ctrl-C is a flag,
      like SIGTERM: the loop saves at the next chunk boundary and returns (``seen`` is True);
    * anywhere else, or a second Ctrl-C while the loop finishes its chunk, it prints
      ``message`` to stderr and ends the process with ``os._exit(code)``, no teardown. That
      is exactly as safe as a SIGKILL at that moment, which a run directory is built to
      survive (checkpoints and records are written atomically, metrics are cut back to the
      checkpoint on resume, the flock goes with the process); outside the loop nothing is
      being saved.
    """

    def __init__(self, message: str, code: int):
        self.message, self.code = message, code
        self.seen = False
        self.loop: SigtermFlag | None = None

    def __call__(self, signum, frame):
        if self.loop is not None and not self.seen:
            self.seen = True
            self.loop.set = self.loop.sigint = True
            return
        self.seen = True
        self.exit_now()

    def exit_now(self) -> None:
        import os
        import sys

        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001  (e.g. a reentrant call: the signal came mid-print)
                pass
        os.write(2, (self.message + "\n").encode())
        os._exit(self.code)


class SigtermFlag:
    """Turns SIGTERM into a flag checked between chunks (then: save, return); Ctrl-C too while
    the process's SIGINT handler is a :class:`CtrlC` (the CLI's; ``sigint`` then says so)."""

    def __init__(self):
        self.set = False
        self.sigint = False
        self._old = None
        self._ctrl_c: CtrlC | None = None

    def __enter__(self):
        try:
            self._old = signal.signal(signal.SIGTERM, self._handler)
        except ValueError:  # not the main thread (e.g. some notebook runners)
            self._old = None
        handler = signal.getsignal(signal.SIGINT)
        if isinstance(handler, CtrlC):
            self._ctrl_c, handler.loop = handler, self
        return self

    def _handler(self, signum, frame):
        self.set = True

    def __exit__(self, *exc):
        if self._old is not None:
            signal.signal(signal.SIGTERM, self._old)
        if self._ctrl_c is not None:
            self._ctrl_c.loop = None


def record_hook(path: Path) -> None:
    """Called just before a record is written; tests replace it to simulate a kill there."""


# --------------------------------------------------------------------------- start


def resume_or_init(
    ckpt,
    abstract,
    init: Callable[[], Any],
    run_dirs: Sequence[Path],
    *,
    check_meta: Callable[[dict[str, Any]], None],
    run_dir: Path,
    log: Callable[[str], None],
    primary: bool = True,
) -> tuple[Any, int | None]:
    """(states, last good step): restored from the newest intact checkpoint (each run's
    metrics cut back to it), or ``init()`` with empty metrics files (last good None)."""
    if ckpt.latest_step() is None:
        states = init()
        for d in run_dirs:
            if primary:
                atomic_write_text(d / "metrics.jsonl", "")
        return states, None
    try:
        last_good, states, _ = ckpt.restore_intact(
            abstract, check_meta=check_meta, log=log, quarantine=primary
        )
    except BaseException:
        ckpt.close()
        raise
    for d in run_dirs:
        if primary:
            truncate_jsonl(d / "metrics.jsonl", last_good)
            # a line is appended before every save, so the log reaches the checkpoint's step;
            # earlier evals cannot be rebuilt (older checkpoints are gone): refuse, not guess
            logged = read_jsonl(d / "metrics.jsonl")
            end = logged[-1].get("step", 0) if logged else 0
            if end < last_good:
                ckpt.close()
                raise TrainingError(
                    f"{d / 'metrics.jsonl'} ends at step {end} but the checkpoint is at step "
                    f"{last_good}: lines are missing, so the curve and best val loss would be "
                    "wrong; restore that file, or start a new --run-dir"
                )
    log(f"resuming {run_dir} from step {last_good}")
    return states, last_good


# --------------------------------------------------------------------------- the loop


@dataclass(frozen=True)
class RunSpec:
    """What :func:`drive` trains and where it keeps it.

    cfg: the config every run shares (its train section sets the chunk grid); run_cfgs[r],
    run_dirs[r], labels[r]: run r's own config (hooks read it), the folder that receives its
    ``metrics.jsonl`` and ``final.json``, and its name in messages; train_data / val_data: the
    token arrays; ckpt: the open checkpointer (closed by drive); meta: stored with every
    checkpoint and record; run_dir: the folder a resume starts from; last_good: the newest
    intact checkpoint's step (None before any); desc: the progress bar's label;
    record_extra(wall_s): added to every record; primary: this process writes the files
    (Orbax coordinates its own).
    """

    cfg: Config
    run_cfgs: Sequence[Config]
    run_dirs: Sequence[Path]
    labels: Sequence[str]
    train_data: Any
    val_data: Any
    ckpt: Any
    meta: dict[str, Any]
    run_dir: Path
    last_good: int | None
    desc: str | None = None
    record_extra: Callable[[float], dict[str, Any]] | None = None
    primary: bool = True


def drive(
    program: Program,
    states,
    spec: RunSpec,
    *,
    hooks: Hooks = NO_HOOKS,
    stop_after: int | None = None,
    progress: bool = True,
    log: Callable[[str], None] = print,
) -> Outcome:
    """Train every run of ``states`` (:class:`RunSpec`: what and where) to ``train.max_steps``
    (or ``stop_after``) in chunks and return the records; closes ``spec.ckpt``."""
    cfg, run_cfgs, run_dirs, labels = spec.cfg, spec.run_cfgs, spec.run_dirs, spec.labels
    train_data, val_data, ckpt, meta = spec.train_data, spec.val_data, spec.ckpt, spec.meta
    run_dir, last_good, primary = spec.run_dir, spec.last_good, spec.primary
    desc, record_extra = spec.desc, spec.record_extra
    t = cfg.train
    R = program.n_runs
    step = int(program.per_run(states.step)[0])
    target = t.max_steps if stop_after is None else min(t.max_steps, stop_after)
    tokens_per_run_step = t.batch_size * cfg.model.block_size
    rates: list[float] = []  # tokens/s of one run, per chunk of this session
    per_run_spectra = None
    sigterm_stop = False
    t_start = time.perf_counter()

    def stop(what: str):
        ckpt.close()
        raise TrainingError(non_finite_message(what, run_dir, last_good))

    def who(ok: np.ndarray) -> str:
        return "" if R == 1 else " of " + ", ".join(lb for lb, g in zip(labels, ok) if not g)

    bar = _progress(progress, step, t.max_steps, desc)
    with SigtermFlag() as sigterm:
        while step < target:
            n = next_boundary(step, t) - step
            t0 = time.perf_counter()
            new_states, m = program.steps(n)(states, train_data)
            m = program.per_run(m)
            finite_flag = m.pop("params_finite", None)
            losses = m["loss"]  # (R, n)
            dt = time.perf_counter() - t0
            finite = np.isfinite(losses)
            if not finite.all():
                first = step + int(np.argmin(finite.all(axis=0)))
                stop(f"the loss{who(finite.all(axis=1))} became non-finite at step {first}")
            if not params_finite(new_states.params, finite_flag):  # finite loss, inf/nan weights
                stop(f"the parameters became non-finite by step {step + n}")
            states, step = new_states, step + n
            rates.append(n * tokens_per_run_step / dt)
            ev = None
            if step % t.eval_interval == 0 or step == t.max_steps:
                ev = program.per_run(program.evaluate(states, train_data, val_data))
                ok = np.isfinite(ev["train"]) & np.isfinite(ev["val"])
                if not ok.all():
                    stop(f"the eval loss{who(ok)} became non-finite at step {step}")
            save = is_save_point(step, t, target, sigterm.set)
            need = (ev is not None and hooks.summary is not None) or (save and hooks.spectra)
            local = program.to_host(states) if need else None
            for r, d in enumerate(run_dirs):
                rec = {
                    "step": step,
                    "loss": float(losses[r].mean()),
                    "lr": float(m["lr"][r, -1]),
                    "grad_norm": float(m["grad_norm"][r].mean()),
                    "tokens_per_s": rates[-1],
                    "seconds": dt,
                }
                if ev is not None:
                    rec.update(eval_train=float(ev["train"][r]), eval_val=float(ev["val"][r]))
                    if hooks.summary is not None:
                        rec.update(hooks.summary(run_cfgs[r], program.run_state(local, r)))
                if primary:
                    with (d / "metrics.jsonl").open("a") as f:
                        f.write(json.dumps(rec) + "\n")
            _progress_update(bar, n, losses, rates[-1] * R, ev)
            if save:
                spectra = None
                if hooks.spectra is not None:
                    per_run_spectra = [
                        hooks.spectra(run_cfgs[r], program.run_state(local, r)) for r in range(R)
                    ]
                    spectra = _stack_spectra(per_run_spectra, program.stacked)
                ckpt.save(step, states, meta, spectra)
                last_good = step
            if sigterm.set:
                sigterm_stop = True
                log(
                    f"{'Ctrl-C' if sigterm.sigint else 'SIGTERM'}: saved step {step} in "
                    f"{run_dir}; run the same command again to resume"
                )
                break
    if bar is not None:
        bar.close()
    ckpt.close()
    wall = time.perf_counter() - t_start
    finished = step >= t.max_steps
    kept = [read_record(d / "final.json") for d in run_dirs] if not rates else [None] * R
    if finished and per_run_spectra is None and hooks.spectra is not None:
        # a finished run opened again (e.g. killed after the final save, before its record was
        # written): the spectra come from the restored state. Done whatever the files say: the
        # host transfer is a collective every process must join.
        local = program.to_host(states)
        per_run_spectra = [
            hooks.spectra(run_cfgs[r], program.run_state(local, r)) for r in range(R)
        ]
    records = []
    for r, (run_cfg, d) in enumerate(zip(run_cfgs, run_dirs)):
        if kept[r] is not None and kept[r].get("steps") == step:  # finished before: keep it
            records.append(kept[r])
            continue
        rec = summarize(
            d,
            run_cfg,
            meta,
            steady_rate(rates, d),
            spectra=per_run_spectra[r] if per_run_spectra else None,
        )
        if record_extra is not None:
            rec.update(record_extra(wall))
        if finished and primary:
            record_hook(d / "final.json")
            atomic_write_text(d / "final.json", json.dumps(rec, indent=2) + "\n")
        records.append(rec)
    return Outcome(states, step, records, wall, sigterm_stop or not finished, sigterm_stop)


def _stack_spectra(per_run: list[dict[str, Any]], stacked: bool) -> dict[str, Any] | None:
    if not stacked:
        return per_run[0]
    return {k: np.stack([p[k] for p in per_run]) for k in (per_run[0] or {})}


# --------------------------------------------------------------------------- records


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """The lines of ``run_dir/metrics.jsonl`` (a partial last line, left by a kill, is dropped)."""
    return read_jsonl(Path(run_dir) / "metrics.jsonl")


def steady_rate(rates: list[float], run_dir: Path) -> list[float]:
    """This session's chunk rates; none (a finished run opened again): those in metrics.jsonl."""
    if rates:
        return rates
    return [r["tokens_per_s"] for r in read_metrics(run_dir) if r.get("tokens_per_s")]


def summarize(
    run_dir: Path,
    cfg: Config,
    meta: dict[str, Any],
    rates: list[float],
    spectra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A run's record (``final.json``) from its metrics; ``spectra``: the learned spectra of
    the final state (omega, sigma, filter centres, RoPE energies...), kept when small."""
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


# --------------------------------------------------------------------------- progress


def _progress(enabled: bool, start: int, total: int, desc: str | None):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=start, unit="step", dynamic_ncols=True, desc=desc)


def _progress_update(bar, n: int, losses: np.ndarray, tokens_per_s: float, ev) -> None:
    if bar is None:
        return
    post = {"loss": f"{losses[:, -1].mean():.4f}", "tok/s": f"{tokens_per_s:,.0f}"}
    if ev is not None:
        post["val"] = f"{np.mean(ev['val']):.4f}"
    bar.set_postfix(post, refresh=False)
    bar.update(n)
