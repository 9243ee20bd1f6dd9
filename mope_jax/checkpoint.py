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
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp

from mope_jax.typing import PyTree


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
        return self._mngr.latest_step()

    def all_steps(self) -> list[int]:
        return list(self._mngr.all_steps())

    def save(self, step: int, state: PyTree, meta: dict[str, Any], spectra: dict[str, Any] | None = None) -> None:
        items = dict(state=ocp.args.StandardSave(state), meta=ocp.args.JsonSave(meta))
        if spectra:
            items["spectra"] = ocp.args.StandardSave({k: np.asarray(v) for k, v in spectra.items()})
        self._mngr.save(step, args=ocp.args.Composite(**items), force=True)
        self._mngr.wait_until_finished()

    def restore(self, abstract_state: PyTree, step: int | None = None) -> tuple[PyTree, dict[str, Any]]:
        """Restore ``state`` (matching ``abstract_state``: shapes, dtypes, shardings) and meta."""
        step = self.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(f"no checkpoint in {self.directory}")
        abstract = jax.tree_util.tree_map(_as_abstract, abstract_state)
        out = self._mngr.restore(
            step, args=ocp.args.Composite(state=ocp.args.StandardRestore(abstract), meta=ocp.args.JsonRestore())
        )
        return out["state"], out["meta"]

    def read_meta(self, step: int | None = None) -> dict[str, Any]:
        step = self.latest_step() if step is None else step
        if step is None:
            raise FileNotFoundError(f"no checkpoint in {self.directory}")
        return self._mngr.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))["meta"]

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
