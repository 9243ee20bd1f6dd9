"""Ctrl-C while the CLI starts (argument parsing, the imports of jax): exit 130, one line.

Python's default SIGINT handling raised ``KeyboardInterrupt`` inside the import of jax: it was
swallowed in one of XLA's garbage-collector callbacks ("Exception ignored", and the command
went on to exit 0), printed a long traceback or ended in a segfault. ``python -m mope_jax``
and ``mope-jax`` now install :func:`mope_jax.interrupt.exit_interrupted` first.

Each test starts ``train --preset smoke`` with far more steps than it will ever run (so it is
still working when the signal comes; an exit 0 would be a swallowed Ctrl-C) under
``PYTHONPROFILEIMPORTTIME``, whose one stderr line per finished import tells where the start-up
is: the signal is sent at a fixed time after the start, but never before the entry has run
(CPython's own start-up, before any of the package's code, is out of its reach), or as soon as
the first module of jax has been imported, i.e. while ``import jax`` is still under way.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mope_jax.cli import main
from mope_jax.interrupt import EXIT_KEYBOARD, INTERRUPTED_MESSAGE

REPO = Path(__file__).resolve().parents[1]
TRAIN = ["train", "--preset", "smoke", "--no-progress", "train.max_steps=100000"]
TRAIN += ["train.checkpoint_interval=1000"]


class _Imports:
    """Reads a child's stderr in a thread; the ``import time:`` lines mark its progress."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self.entry = threading.Event()  # an import after mope_jax.interrupt's: handler installed
        self.jax = threading.Event()  # a module of jax imported, ``import jax`` not finished
        self.jax_modules = 0
        self._after_interrupt = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self.lines.append(line)
            if not line.startswith("import time:") or "|" not in line:
                continue
            name = line.rsplit("|", 1)[1].strip()
            if self._after_interrupt:
                self.entry.set()
            if name == "mope_jax.interrupt":
                self._after_interrupt = True
            if name.startswith(("jax.", "jaxlib")):
                self.jax_modules += 1
                self.jax.set()

    def stderr(self) -> str:
        self._thread.join(timeout=30)
        return "".join(ln for ln in self.lines if not ln.startswith("import time:"))


def _interrupt(tmp_path, moment, script: bool = False) -> tuple[int, str]:
    """Starts ``train`` (``python -m mope_jax``, or the ``mope-jax`` script), sends SIGINT at
    ``moment`` (seconds after the start, not before the entry has run; or "jax"), returns (exit
    code, stderr without the import-time lines)."""
    exe = [str(Path(sys.executable).with_name("mope-jax"))] if script else [sys.executable, "-m"]
    cmd = exe + ([] if script else ["mope_jax"]) + TRAIN + ["--run-dir", str(tmp_path / "r")]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPROFILEIMPORTTIME": "1"}
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        imports = _Imports(proc.stderr)
        if moment == "jax":
            assert imports.jax.wait(timeout=120), imports.stderr()
        else:
            assert imports.entry.wait(timeout=120), imports.stderr()
            time.sleep(max(0.0, start + moment - time.monotonic()))
        assert proc.poll() is None, (proc.returncode, imports.stderr())  # still working
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return code, imports.stderr()


def _one_interrupted_line(code: int, err: str) -> None:
    for bad in ("Traceback", "Exception ignored", "Segmentation", "Fatal Python error"):
        assert bad not in err, err
    assert code == EXIT_KEYBOARD == 130, (code, err)
    assert [ln for ln in err.splitlines() if ln.strip()] == [INTERRUPTED_MESSAGE], err


@pytest.mark.parametrize("moment", [0.05, 0.3, 0.8, 1.5, "jax"])
def test_ctrl_c_while_starting_exits_130_with_one_line(tmp_path, moment):
    """0.05 s lands as soon as the entry has run (argument parsing, absl), later moments in
    the imports of numpy and jax or the building of the model, "jax" inside ``import jax``."""
    _one_interrupted_line(*_interrupt(tmp_path, moment))


def test_ctrl_c_while_the_console_script_imports_jax_exits_130(tmp_path):
    """The installed ``mope-jax`` script (whichever entry it was installed with: both install
    the handler before jax is imported)."""
    if not Path(sys.executable).with_name("mope-jax").is_file():
        pytest.skip("no mope-jax console script beside this interpreter")
    _one_interrupted_line(*_interrupt(tmp_path, "jax", script=True))


def test_main_in_process_gives_the_sigint_handler_back(capsys):
    """``main`` called in-process (tests, experiments' scripts) leaves the caller's handler."""

    def mine(signum, frame):
        raise AssertionError("not called")

    old = signal.signal(signal.SIGINT, mine)
    try:
        assert main(["presets"]) == 0
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, old)
    assert "scale presets" in capsys.readouterr().out
