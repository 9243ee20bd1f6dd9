"""Provenance: which command made a file, when, on what machine, with which versions.

Every writer of a run record, a results JSON or a table uses this module, so that they all
say the same things the same way: :func:`environment` (versions, machine, backend, git
commit), :func:`utc_now`, :func:`current_command`, :func:`stamp` (those three added to a
payload) and :func:`write_json`.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np


def git_commit() -> str:
    """HEAD of the repository this package lives in, ``+dirty`` with uncommitted changes to
    tracked files; ``unknown`` outside git. ``MOPE_JAX_GIT_COMMIT``, where set, is taken as
    it is: a copy of the working tree sent to another machine may carry no .git, or an older
    one (a borrowed accelerator's copy read the session's first HEAD, +dirty)."""
    if os.environ.get("MOPE_JAX_GIT_COMMIT"):
        return os.environ["MOPE_JAX_GIT_COMMIT"]
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


# The commit of the code this process loaded: read once, when this module is first imported
# (the call at the end of this module; every entry point imports it before training). A
# campaign that outlives a commit made beside it would otherwise name, in records written
# later, code it never ran.
_COMMIT_AT_LOAD: str | None = None


def loaded_commit() -> str:
    """:func:`git_commit` as it was when this process first imported this module."""
    global _COMMIT_AT_LOAD
    if _COMMIT_AT_LOAD is None:
        _COMMIT_AT_LOAD = git_commit()
    return _COMMIT_AT_LOAD


def commit_fields() -> dict[str, str]:
    """``{"git_commit": <commit at load>}``, plus ``"git_commit_at_write"`` (HEAD now) when
    the repository has changed since this process loaded its code."""
    loaded, now = loaded_commit(), git_commit()
    fields = {"git_commit": loaded}
    if now != loaded:
        fields["git_commit_at_write"] = now
    return fields


def at_write(env: dict[str, Any]) -> dict[str, Any]:
    """``env`` (an :func:`environment` taken earlier, e.g. when a run started) with
    ``git_commit_at_write`` read again now: HEAD when a record is written, kept only when it
    differs from the commit the process loaded."""
    out = {k: v for k, v in env.items() if k != "git_commit_at_write"}
    now = git_commit()
    if now != out.get("git_commit"):
        out["git_commit_at_write"] = now
    return out


# CPU features that change speed or (for bf16) the numbers: recorded with every run
_CPU_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")


def cpu_info() -> dict[str, Any]:
    """The CPU's model name and which of ``_CPU_FLAGS`` it has (Linux /proc/cpuinfo; None
    where that cannot be read). bf16 results differ between CPUs with and without AVX-512
    BF16, and the PyTorch reference's speed differed far more than ours between two of our
    machines (experiments/results/bench/NOTES.md)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {"cpu_model": None, "cpu_flags": None}
    model, flags = None, set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and model is None:
            model = value.strip()
        elif key.strip() == "flags" and not flags:
            flags = set(value.split())
    return {"cpu_model": model, "cpu_flags": [f for f in _CPU_FLAGS if f in flags]}


def cpu_text(env: dict) -> str:
    """'x86_64' or, where the record has them, 'x86_64, <model> (<flags>)' for tables."""
    text = str(env.get("processor", "?"))
    if env.get("cpu_model"):
        flags = ", ".join(env.get("cpu_flags") or []) or "no AVX2"
        text += f", {env['cpu_model']} ({flags})"
    return text


def environment() -> dict[str, Any]:
    """Versions, machine and git commit, recorded with every run and result."""
    import flax
    import jax
    import optax
    import orbax.checkpoint as ocp

    from mope_jax.perf import threefry_unrolled

    dev = jax.devices()[0]
    return {
        "jax": jax.__version__,
        "flax": flax.__version__,
        "optax": optax.__version__,
        "orbax_checkpoint": getattr(ocp, "__version__", "unknown"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        **cpu_info(),
        "cpu_count": os.cpu_count(),
        "backend": jax.default_backend(),
        "device": getattr(dev, "device_kind", str(dev)),
        "device_count": jax.device_count(),
        # float32 matmuls: "highest" is full float32 on every backend; JAX's default is TF32
        # on NVIDIA GPUs and bfloat16 passes on TPUs (CPUs compute float32 either way)
        "matmul_precision": str(jax.config.jax_default_matmul_precision or "default"),
        "threefry_unrolled_on_cpu": threefry_unrolled(),
        **commit_fields(),
    }


def utc_now() -> str:
    """The current time, ISO 8601 in UTC to the second (``2026-11-30T17:40:05+00:00``)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def current_command(program: str = "mope-jax") -> str:
    """This process's command line as a user would type it again."""
    return " ".join(shlex.quote(a) for a in [program, *sys.argv[1:]])


def stamp(payload: dict[str, Any], *, command: str) -> dict[str, Any]:
    """``payload`` with ``command``, ``date_utc`` and ``env`` in front."""
    return {"command": command, "date_utc": utc_now(), "env": environment(), **payload}


def describe(env: dict[str, Any]) -> str:
    """One phrase naming the machine of an ``environment()`` record."""
    return (
        f"{env.get('platform', '?')} ({env.get('processor', '?')}, {env.get('cpu_count', '?')} "
        f"CPUs, backend {env.get('backend', '?')} x{env.get('device_count', '?')}); "
        f"jax {env.get('jax', '?')}, flax {env.get('flax', '?')}; "
        f"commit {env.get('git_commit', '?')}"
        + (
            f" (HEAD {env['git_commit_at_write']} when written)"
            if env.get("git_commit_at_write")
            else ""
        )
    )


def jsonable(x, *, nan_as_null: bool = False):
    """``x`` with numpy/JAX arrays and scalars turned into lists and Python numbers (and, with
    ``nan_as_null``, every non-finite float into None: strict JSON has no NaN)."""
    if isinstance(x, dict):
        return {str(k): jsonable(v, nan_as_null=nan_as_null) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v, nan_as_null=nan_as_null) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    elif hasattr(x, "__array__") and not isinstance(x, (str, bytes)):
        return jsonable(np.asarray(x).tolist(), nan_as_null=nan_as_null)
    if nan_as_null and isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def save_json(path: str | Path, obj: Any, *, nan_as_null: bool = False) -> Path:
    """Write ``obj`` (made :func:`jsonable`) as indented JSON, atomically: a kill leaves the old
    file or the new one. Every results JSON is written through here."""
    from mope_jax.rundir import atomic_write_text

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(jsonable(obj, nan_as_null=nan_as_null), indent=2) + "\n"
    atomic_write_text(path, text)
    return path


def write_json(path: str | Path, payload: dict[str, Any], *, command: str) -> Path:
    """Write a results JSON that says which command made it, when, and on what machine
    (atomically: a kill leaves the old file or the new one)."""
    return save_json(path, stamp(payload, command=command))


loaded_commit()
