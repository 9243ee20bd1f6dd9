"""Orbax checkpoints: the only module that imports orbax.

A checkpoint step holds three items:
  * ``state``   the train state pytree (params, optimiser state, step, key), restored against
                an abstract target (``jax.eval_shape`` of the initialiser) so shapes, dtypes
                and shardings are checked;
  * ``meta``    JSON: config, vocabulary, versions, git commit, causality verdict;
  * ``spectra`` named arrays of learned spectral parameters (omega, sigma, filter centres,
                RoPE energies, ...), readable without rebuilding the model. Optional.
Saves are synchronous and atomic (Orbax writes a temporary folder and renames it), so a run
killed at any moment leaves only complete checkpoints.

No checkpoint is trusted blindly: ``meta`` also holds ``state_sha256``, a digest of every
array of the saved state (shape, dtype and bytes), checked after a restore; and
:meth:`Checkpointer.restore_intact` tries the steps newest first, skips (and names, with the
reason) any that cannot be read or fail the digest, and falls back to the newest intact one.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path
from typing import Any, Callable

import jax
import numpy as np
import orbax.checkpoint as ocp

from mope_jax.errors import CheckpointError, MopeError
from mope_jax.rundir import is_disk_full
from mope_jax.typing import PyTree

DIGEST_KEY = "state_sha256"
SKIPPED_DIR = "skipped-checkpoints"  # beside checkpoints/: corrupt steps moved out of the way


def state_digest(tree: PyTree) -> str | None:
    """sha256 over every leaf's shape, dtype and bytes, in tree order; None when a leaf is
    not fully addressable from this process (multi-process sweeps: nothing to compare)."""
    h = hashlib.sha256()
    for leaf in jax.tree_util.tree_leaves(tree):
        if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable:
            return None
        a = np.ascontiguousarray(np.asarray(leaf))
        h.update(f"{a.shape}{a.dtype.str};".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _reason(e: BaseException) -> str:
    """The first line of an exception, short enough for a one-line notice."""
    text = (str(e).strip().splitlines() or [""])[0]
    text = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return text if len(text) <= 160 else text[:157] + "..."


class Checkpointer:
    def __init__(self, directory: str | Path, *, keep: int = 3, read_only: bool = False):
        self.directory = Path(directory).absolute()
        options = ocp.CheckpointManagerOptions(
            max_to_keep=keep,
            create=not read_only,
            read_only=read_only,
            enable_async_checkpointing=False,
            cleanup_tmp_directories=not read_only,
        )
        self._mngr = ocp.CheckpointManager(self.directory, options=options)

    def latest_step(self) -> int | None:
        steps = self.all_steps()
        return steps[-1] if steps else None

    def all_steps(self) -> list[int]:
        """Every step Orbax lists, and every step folder it does not (e.g. one whose metadata
        was lost), so that a damaged newest step is tried and reported, never silently ignored."""
        steps = set(self._mngr.all_steps())
        if self.directory.is_dir():
            steps |= {
                int(p.name) for p in self.directory.iterdir() if p.is_dir() and p.name.isdigit()
            }
        return sorted(steps)

    def save(
        self, step: int, state: PyTree, meta: dict[str, Any], spectra: dict[str, Any] | None = None
    ) -> None:
        """Save a step; ``meta`` gets the state's digest. A full disk is one CheckpointError
        line."""
        meta = {**meta, DIGEST_KEY: state_digest(state)}
        items = dict(state=ocp.args.StandardSave(state), meta=ocp.args.JsonSave(meta))
        if spectra:
            items["spectra"] = ocp.args.StandardSave({k: np.asarray(v) for k, v in spectra.items()})
        try:
            self._mngr.save(step, args=ocp.args.Composite(**items), force=True)
            self._mngr.wait_until_finished()
        except Exception as e:
            if is_disk_full(e):
                kept = [s for s in self.all_steps() if s < step]
                last = (
                    f"the last complete checkpoint, step {kept[-1]}, is kept"
                    if kept
                    else "no checkpoint was complete yet"
                )
                raise CheckpointError(
                    f"disk full while saving step {step} in {self.directory}: free space and run "
                    f"the same command again ({last})"
                ) from None
            raise

    def restore_intact(
        self,
        abstract_state: PyTree | Callable[[dict[str, Any]], PyTree],
        *,
        check_meta: Callable[[dict[str, Any]], None] | None = None,
        log: Callable[[str], None] | None = None,
        quarantine: bool = False,
    ) -> tuple[int, PyTree, dict[str, Any]]:
        """The newest step that restores and passes its digest: (step, state, meta).

        ``abstract_state``: the restore target, or a function of the step's meta returning it
        (a loaded run's shapes come from the config saved in its meta).

        Steps are tried newest first. ``check_meta(meta)`` runs on each step's meta BEFORE its
        state is restored (e.g. the config and corpus checks of a resume); a MopeError from it
        is raised as is, since an older step of the same run would fail it too. Any other
        failure (missing or garbage files, a digest mismatch) skips the step: ``log`` names it
        and the reason. ``quarantine``: move skipped steps newer than the restored one to
        ``../skipped-checkpoints/`` so that later saves of those step numbers can succeed.
        Raises CheckpointError listing every step and why when none is intact.
        """
        skipped: list[tuple[int, str]] = []
        for step in reversed(self.all_steps()):
            try:
                meta = self.read_meta(step)
                if not isinstance(meta, dict):
                    raise ValueError("meta is not a JSON object")
                if check_meta is not None:
                    check_meta(meta)
                target = abstract_state(meta) if callable(abstract_state) else abstract_state
                state, _ = self.restore(target, step, meta=meta)
            except MopeError:
                raise
            except Exception as e:  # noqa: BLE001  (whatever Orbax raises for damaged files)
                skipped.append((step, _reason(e)))
                if log is not None:
                    log(
                        f"warning: checkpoint step {step} in {self.directory} is unreadable or "
                        f"damaged, skipped ({skipped[-1][1]})"
                    )
                continue
            if quarantine and skipped:
                self._quarantine([s for s, _ in skipped], log)
            return step, state, meta
        if not skipped:
            raise CheckpointError(f"no checkpoint in {self.directory}")
        detail = "; ".join(f"step {s}: {r}" for s, r in skipped)
        raise CheckpointError(
            f"no intact checkpoint in {self.directory} ({detail}); start a new --run-dir"
        )

    def _quarantine(self, steps: list[int], log) -> None:
        dest = self.directory.parent / SKIPPED_DIR
        dest.mkdir(exist_ok=True)
        for s in steps:
            target = dest / f"{s}-{time.strftime('%Y%m%dT%H%M%S')}"
            shutil.move(str(self.directory / str(s)), str(target))
            if log is not None:
                log(f"moved the damaged step {s} to {target}")
        self._mngr.reload()

    def restore(
        self, abstract_state: PyTree, step: int | None = None, *, meta: dict[str, Any] | None = None
    ) -> tuple[PyTree, dict[str, Any]]:
        """Restore ``state`` (matching ``abstract_state``: shapes, dtypes, shardings) and meta,
        and check the state against the digest saved in meta (ValueError if it differs)."""
        step = self.latest_step() if step is None else step
        if step is None:
            raise CheckpointError(f"no checkpoint in {self.directory}")
        if meta is None:
            meta = self.read_meta(step)
        abstract = jax.tree_util.tree_map(_as_abstract, abstract_state)
        state = self._mngr.restore(
            step, args=ocp.args.Composite(state=ocp.args.StandardRestore(abstract))
        )["state"]
        saved = meta.get(DIGEST_KEY)
        if saved is not None:
            got = state_digest(state)
            if got is not None and got != saved:
                raise ValueError(
                    f"the restored arrays do not match the digest saved with them "
                    f"(sha256 {got[:12]}... != {saved[:12]}...)"
                )
        return state, meta

    def read_meta(self, step: int | None = None) -> dict[str, Any]:
        step = self.latest_step() if step is None else step
        if step is None:
            raise CheckpointError(f"no checkpoint in {self.directory}")
        return self._mngr.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))[
            "meta"
        ]

    def read_spectra(self, step: int | None = None) -> dict[str, np.ndarray]:
        """The named spectral arrays of a step (empty if none were saved)."""
        step = self.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(f"no checkpoint in {self.directory}")
        if not (self.directory / str(step) / "spectra").exists():
            return {}
        out = self._mngr.restore(step, args=ocp.args.Composite(spectra=ocp.args.StandardRestore()))
        return {k: np.asarray(v) for k, v in out["spectra"].items()}

    def close(self) -> None:
        self._mngr.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _as_abstract(x):
    if isinstance(x, jax.ShapeDtypeStruct):
        return x
    sharding = getattr(x, "sharding", None)
    return jax.ShapeDtypeStruct(np.shape(x), x.dtype, sharding=sharding)
