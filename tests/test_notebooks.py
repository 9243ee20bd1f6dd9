"""The Colab notebooks: generated from colab/make_notebooks.py, and each runs top to bottom on CPU.

Execution uses nbclient with an ipykernel of this interpreter, JAX_PLATFORMS=cpu and two host
devices (``make_notebooks.kernel_env``), in a temporary folder, failing on the first cell that
raises. ``python colab/make_notebooks.py --time`` runs the same function and records the times
in colab/timings.json.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytest.importorskip(
    "nbclient", reason="the notebook tests need the dev extra: pip install -e '.[dev]'"
)
pytest.importorskip(
    "ipykernel", reason="the notebook tests need the dev extra: pip install -e '.[dev]'"
)

COLAB = Path(__file__).resolve().parents[1] / "colab"
_spec = importlib.util.spec_from_file_location("make_notebooks", COLAB / "make_notebooks.py")
mk = importlib.util.module_from_spec(_spec)
sys.modules["make_notebooks"] = mk
_spec.loader.exec_module(mk)

NAMES = list(mk.NOTEBOOKS)


def test_committed_notebooks_are_generated():
    """Every .ipynb in colab/ is exactly the generator's output (outputs cleared), and nothing
    else."""
    assert mk.stale() == [], "run: python colab/make_notebooks.py"
    assert sorted(p.stem for p in COLAB.glob("*.ipynb")) == sorted(NAMES)


def test_readme_timings_come_from_timings_json():
    """The table in colab/README.md is what ``--time`` writes from colab/timings.json."""
    readme = (COLAB / "README.md").read_text()
    payload = json.loads((COLAB / "timings.json").read_text())
    assert set(payload["wall_seconds"]) == set(NAMES) == set(payload["kernel_cpu_seconds"])
    assert mk.with_timings(readme, payload) == readme


@pytest.mark.parametrize("name", NAMES)
def test_notebook_structure(name):
    nb = mk.nbformat.read(COLAB / f"{name}.ipynb", as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown"
    assert (
        f"colab.research.google.com/github/{mk.GITHUB_REPO}/blob/main/colab/{name}.ipynb"
        in first.source
    )
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one parameter cell"
    install = [
        c for c in nb.cells if c.cell_type == "code" and 'find_spec("mope_jax") is None' in c.source
    ]
    assert len(install) == 1 and nb.cells.index(install[0]) < nb.cells.index(tagged[0])
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "outputs must be cleared"
    )


# The quickstart runs in the default tier (the library's front door: a notebook that stops
# working is caught by every test run); the other four are the slow tier's (pyproject.toml).
CI_NOTEBOOKS = ("00_quickstart",)


@pytest.mark.parametrize(
    "name",
    [n if n in CI_NOTEBOOKS else pytest.param(n, marks=pytest.mark.slow) for n in NAMES],
)
def test_notebook_runs_on_cpu(name, tmp_path):
    seconds = mk.execute(COLAB / f"{name}.ipynb", tmp_path, timeout=mk.TIMEOUT_S)
    # The run directories a notebook writes stay in its working folder.
    assert not (COLAB / "mope_runs").exists()
    print(f"{name}: {seconds:.1f} s")
