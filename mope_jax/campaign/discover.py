"""Finding the experiments of a repository and importing them: the one place where the library
imports code of a repository's ``experiments`` package (by module name, the way pytest imports a
rootdir's ``conftest``), and the only module that touches ``sys.path`` and ``sys.modules``.

The repository root is the folder holding ``experiments/__init__.py``, and that file is the
registry: ``CAMPAIGNS`` names the modules (``experiments/<name>.py`` or a package
``experiments/<name>/``) that declare ``EXPERIMENT = Experiment(...)``, and ``ANALYSES`` those
that declare ``ANALYSIS = Analysis(...)`` (claims judged from a results JSON). Nothing is found
by reading source text and no file is executed by path, so an unrelated or broken module of the
folder changes nothing until a registry names it, and then it is reported in one line.
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
from pathlib import Path

from mope_jax.campaign.spec import Experiment
from mope_jax.errors import CampaignError

REGISTRY = "experiments/__init__.py"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def find_root(root: str | Path | None = None) -> Path:
    """The repository root: ``root`` (default: the current directory), which must hold
    ``experiments/__init__.py``."""
    path = Path(root if root is not None else ".").resolve()
    init = path / REGISTRY
    if init.exists() and not init.is_file():
        raise CampaignError(f"{init} is not a file; make it the experiments package's module")
    if not init.is_file():
        raise CampaignError(
            f"{path} has no {REGISTRY}, so it is not a repository root; run from "
            "the repository root or pass --root PATH"
        )
    return path


def _ours(root: Path) -> bool:
    pkg = sys.modules.get("experiments")
    return pkg is not None and any(
        Path(p).resolve() == root / "experiments" for p in getattr(pkg, "__path__", [])
    )


@contextlib.contextmanager
def _experiments_of(root: Path):
    """Import ``experiments.*`` from ``root``: its folder first on sys.path and any
    ``experiments`` package of another root out of sys.modules for the duration; both are put
    back after (several roots can be used in one process, e.g. by tests and report)."""
    ours = _ours(root)
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


def _where(module: str, root: Path) -> Path:
    parts = module.split(".")
    pkg = root.joinpath(*parts)
    return pkg / "__init__.py" if pkg.is_dir() else pkg.with_suffix(".py")


def import_module(module: str, root: str | Path):
    """The module ``module`` (``experiments.<name>[...]``) of the repository at ``root``,
    imported by name; a module that cannot be imported is a :class:`CampaignError` naming the
    file and the error (a syntax error with its line), never a traceback."""
    root = Path(root).resolve()
    if not all(_NAME.match(p) for p in module.split(".")) or module.split(".")[0] != "experiments":
        raise CampaignError(f"{module!r} is not a module of the experiments package")
    try:
        with _experiments_of(root):
            return importlib.import_module(module)
    except SyntaxError as e:  # UnicodeDecodeError of a non-UTF-8 source arrives as one too
        where = Path(e.filename).relative_to(root) if e.filename else _where(module, root)
        raise CampaignError(
            f"{where}:{e.lineno or '?'}: {e.msg}; fix the file (or drop it from {REGISTRY})"
        ) from None
    except ModuleNotFoundError as e:
        if e.name and (e.name == module or module.startswith(e.name + ".")):
            raise CampaignError(
                f"{_where(module, root).relative_to(root)} does not exist; add it or drop "
                f"{module.rpartition('.')[2]!r} from {REGISTRY}"
            ) from None
        raise CampaignError(
            f"{_where(module, root).relative_to(root)} cannot be imported: {e}; install the "
            f"module or fix the import"
        ) from None
    except CampaignError as e:
        raise CampaignError(f"{_where(module, root).relative_to(root)}: {e}") from None
    except Exception as e:  # the module's own code failed while importing
        raise CampaignError(
            f"{_where(module, root).relative_to(root)} fails while importing "
            f"({type(e).__name__}: {' '.join(str(e).split())}); fix it"
        ) from None


def _registry(root: Path, key: str) -> tuple[str, ...]:
    """The module names ``experiments/__init__.py`` lists under ``key``."""
    pkg = import_module("experiments", root)
    names = getattr(pkg, key, None)
    if names is None:
        if key == "ANALYSES":
            return ()
        raise CampaignError(
            f"{root / REGISTRY} declares no {key} = (...); list the campaign modules there, "
            "e.g. CAMPAIGNS = ('paper_a',)"
        )
    if isinstance(names, str) or not all(isinstance(n, str) and _NAME.match(n) for n in names):
        raise CampaignError(
            f"{root / REGISTRY}: {key} must be a tuple of module names, e.g. ('paper_a',)"
        )
    return tuple(names)


def _present(root: Path, name: str) -> bool:
    return (root / "experiments" / f"{name}.py").is_file() or (
        root / "experiments" / name / "__init__.py"
    ).is_file()


def available(root: Path) -> list[str]:
    """The campaigns of ``root``: the modules its registry lists under ``CAMPAIGNS`` that are
    present in this checkout (nothing is imported but the registry)."""
    root = Path(root).resolve()
    return sorted(n for n in _registry(root, "CAMPAIGNS") if _present(root, n))


def analyses(root: Path) -> list[str]:
    """The modules of ``root`` that its registry lists under ``ANALYSES`` and that are present."""
    root = Path(root).resolve()
    return sorted(n for n in _registry(root, "ANALYSES") if _present(root, n))


def import_experiment_module(name: str, root: Path):
    """The module ``experiments.<name>`` of the repository at ``root`` (imported by name)."""
    return import_module(f"experiments.{name}", root)


def load_experiment(name: str, root: str | Path | None = None) -> Experiment:
    """``EXPERIMENT`` of the campaign module ``experiments.<name>`` of the repository at
    ``root``; the name must be listed in the registry's ``CAMPAIGNS``."""
    root = find_root(root)
    known = available(root)
    if name not in known:
        listed = _NAME.match(name) and name in _registry(root, "CAMPAIGNS")
        hint = (
            f"; it is listed in {REGISTRY} but experiments/{name}.py is missing"
            if listed
            else (
                f"; experiments/{name}.py is not listed in CAMPAIGNS of {REGISTRY}"
                if _NAME.match(name) and _present(root, name)
                else ""
            )
        )
        raise CampaignError(
            f"unknown experiment {name!r}{hint}; the campaigns in {root / 'experiments'}: "
            + (", ".join(known) or "none")
        )
    exp = getattr(import_experiment_module(name, root), "EXPERIMENT", None)
    if not isinstance(exp, Experiment):
        others = [n for n in known if n != name]
        raise CampaignError(
            f"experiments/{name}.py defines no EXPERIMENT = Experiment(...) (found "
            f"{type(exp).__name__}); declare one or drop {name!r} from CAMPAIGNS of {REGISTRY}; "
            "the other campaigns: " + (", ".join(others) or "none")
        )
    if exp.name != name:
        raise CampaignError(
            f"experiments/{name}.py declares Experiment(name={exp.name!r}); name it {name!r}"
        )
    return exp


def load_analysis(name: str, root: str | Path):
    """``ANALYSIS`` of the module ``experiments.<name>`` listed in the registry's ``ANALYSES``."""
    from mope_jax.claims.spec import Analysis

    analysis = getattr(import_experiment_module(name, Path(root)), "ANALYSIS", None)
    if not isinstance(analysis, Analysis):
        raise CampaignError(
            f"experiments/{name}.py is listed in ANALYSES of {REGISTRY} but defines no "
            "ANALYSIS = mope_jax.claims.Analysis(...)"
        )
    return analysis
