"""Every command the documentation tells a user to type runs something.

A script split into modules can lose its ``if __name__ == "__main__"`` guard: without it,
``python -m experiments.bench.run --quick`` (the README's benchmark command) imports the
module and exits 0 having measured nothing. These tests read the commands out of the README,
the experiments' docstrings and the colab README, and check that each names a file that exists
and runs ``main`` when executed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "colab" / "README.md", *sorted(REPO.glob("experiments/**/*.py"))]
COMMAND = re.compile(
    r"python3? (?:-m ((?:experiments|mope_jax|colab)[\w.]*)|((?:experiments|colab)/[\w/]+\.py))"
)


def documented() -> dict[str, Path]:
    """{command as written: the file it runs} over DOCS."""
    out = {}
    for doc in DOCS:
        for m in COMMAND.finditer(doc.read_text()):
            module, path = m.groups()
            if module:
                base = REPO / Path(*module.split("."))
                target = base / "__main__.py" if base.is_dir() else base.with_suffix(".py")
            else:
                target = REPO / path
            out[m.group(0)] = target
    return out


def test_documentation_names_runnable_commands():
    cmds = documented()
    assert "python -m experiments.bench.run" in cmds and "python -m experiments.fourierqk" in cmds
    missing = [c for c, t in cmds.items() if not t.is_file()]
    assert not missing, f"documented commands name no file: {missing}"
    guard = re.compile(r'^if __name__ == "__main__":', re.M)
    no_main = [
        c for c, t in cmds.items() if t.name != "__main__.py" and not guard.search(t.read_text())
    ]
    assert not no_main, f"documented commands that would run nothing: {no_main}"


@pytest.mark.parametrize("module", ["experiments.bench.run", "experiments.bench.gpu"])
def test_bench_commands_answer_help(module):
    """The benchmark entry points parse arguments when run as ``python -m``."""
    r = subprocess.run(
        [sys.executable, "-m", module, "--help"], cwd=REPO, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert r.returncode == 0 and "usage:" in r.stdout, r.stderr[-2000:]
