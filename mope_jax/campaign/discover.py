"""Finding the experiments of a repository and importing their declarations: the repository
root is the folder holding ``experiments/__init__.py``, and a campaign is a module
``experiments/<name>.py`` that defines ``EXPERIMENT = Experiment(...)``."""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
from pathlib import Path

from mope_jax.campaign.spec import Experiment
from mope_jax.errors import CampaignError


def find_root(root: str | Path | None = None) -> Path:
    """The repository root: ``root`` (default: the current directory), which must hold
    ``experiments/__init__.py``."""
    path = Path(root if root is not None else ".").resolve()
    if not (path / "experiments" / "__init__.py").is_file():
        raise CampaignError(
            f"{path} has no experiments/__init__.py, so it is not a repository root; run from "
            "the repository root or pass --root PATH"
        )
    return path


@contextlib.contextmanager
def _experiments_of(root: Path):
    """Import ``experiments.*`` from ``root``: its folder first on sys.path and any
    ``experiments`` package of another root out of sys.modules for the duration; both are put
    back after (several roots can be used in one process, e.g. by tests and report)."""
    pkg = sys.modules.get("experiments")
    ours = pkg is not None and any(
        Path(p).resolve() == root / "experiments" for p in getattr(pkg, "__path__", [])
    )
    saved = {}
    if not ours:
        saved = {
            k: sys.modules.pop(k)
            for k in list(sys.modules)
            if k == "experiments" or k.startswith("experiments.")
        }
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(root))
        if not ours:
            for k in [k for k in sys.modules if k == "experiments" or k.startswith("experiments.")]:
                del sys.modules[k]
            sys.modules.update(saved)


def available(root: Path) -> list[str]:
    """Experiment modules of ``root`` that declare ``EXPERIMENT`` (by their text, not run)."""
    return sorted(
        p.stem
        for p in (root / "experiments").glob("*.py")
        if not p.stem.startswith("_") and re.search(r"^EXPERIMENT\b", p.read_text(), re.M)
    )


def import_experiment_module(name: str, root: Path):
    """The module ``experiments.<name>`` of the repository at ``root`` (imported by name)."""
    with _experiments_of(Path(root)):
        return importlib.import_module(f"experiments.{name}")


def load_experiment(name: str, root: str | Path | None = None) -> Experiment:
    """``EXPERIMENT`` of the module ``experiments.<name>`` of the repository at ``root``."""
    root = find_root(root)
    known = available(root)
    if (
        not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name)
        or not (root / "experiments" / f"{name}.py").is_file()
    ):
        raise CampaignError(
            f"unknown experiment {name!r}; the campaigns in {root / 'experiments'}: "
            + (", ".join(known) or "none")
        )
    mod = import_experiment_module(name, root)
    exp = getattr(mod, "EXPERIMENT", None)
    if not isinstance(exp, Experiment):
        raise CampaignError(
            f"experiments/{name}.py defines no EXPERIMENT = Experiment(...), so it is not a "
            "campaign; campaigns here: " + (", ".join(known) or "none")
        )
    if exp.name != name:
        raise CampaignError(
            f"experiments/{name}.py declares Experiment(name={exp.name!r}); name it {name!r}"
        )
    return exp
