"""Ctrl-C while the CLI starts: its first SIGINT handler, importing nothing but the stdlib.

``python -m mope_jax`` and the ``mope-jax`` console script install :func:`exit_interrupted`
before anything else of the package is imported, and :func:`mope_jax.cli.main` installs it
again as its first act (for callers of ``main`` and older installs of the console script).
From then on, until ``main`` hands over to :class:`mope_jax.loop.CtrlC` and again after it
takes it back, a SIGINT prints :data:`INTERRUPTED_MESSAGE` and ends the process with status
130 through ``os._exit``.

Python's default handler raises ``KeyboardInterrupt`` wherever the main thread is, during
start-up typically inside the import of jax: swallowed when it lands in one of XLA's
garbage-collector callbacks ("Exception ignored", and the command carries on to exit 0), a
long traceback, or a segfault when the interpreter's teardown frees half-initialised native
modules. Nothing is being saved at these moments, so ending at once, without teardown, is as
safe as a SIGKILL. What this cannot cover is CPython's own start-up before the entry's first
line runs (tens of milliseconds): there Python's default handling applies.
"""

from __future__ import annotations

import os
import signal
import sys

EXIT_KEYBOARD = 130  # 128 + SIGINT, what a shell reports for a process killed by Ctrl-C
INTERRUPTED_MESSAGE = "interrupted; run the same command again to resume from the last checkpoint"


def exit_interrupted(signum=None, frame=None) -> None:
    """Flush, print :data:`INTERRUPTED_MESSAGE` as one line on stderr, ``os._exit(130)``."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001  (e.g. a reentrant call: the signal came mid-print)
            pass
    os.write(2, (INTERRUPTED_MESSAGE + "\n").encode())
    os._exit(EXIT_KEYBOARD)


def install():
    """Makes :func:`exit_interrupted` the SIGINT handler and returns the previous one; None
    (nothing changed) off the main thread, where Python allows no signal handler."""
    try:
        return signal.signal(signal.SIGINT, exit_interrupted)
    except ValueError:
        return None
