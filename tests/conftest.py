"""Test-wide settings: fail loudly on implicit rank promotion; shared corpus fixtures."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

# Two CPU devices, so sharded code paths (seed sweeps over a mesh) are exercised; must be
# set before jax initialises its backends.
if "--xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
    ).strip()

# One persistent compilation cache per test session, shared by the xdist workers and by the
# subprocesses the CLI and campaign tests start (both inherit this environment): many tests
# compile the same small programs, and reading a compiled program back is much cheaper than
# compiling it again: `python -m pytest -q -n 2 --dist loadfile tests/test_{train,sweep,campaign,
# perf,attention_blocks,ega_paper1}.py` took 378 s with this block disabled
# (JAX_COMPILATION_CACHE_DIR unset in the old conftest) and 286 s with it (2026-12-02, 2-core
# Xeon beside two campaigns). The executables are the same, so no number changes. A cache the
# caller chose is kept as it is.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="mope-jax-tests-jax-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
    os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "0")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)

# The campaigns' default corpus, TinyShakespeare, is read from the shared folder, never
# downloaded: where that folder is absent, a test that needs the corpus gets the one-line error
# (no network). Subprocesses inherit it; a folder the caller chose is kept.
os.environ.setdefault(
    "MOPE_JAX_TFDS_MANUAL_DIR",
    str((Path(__file__).parents[1] / "../shared/data/tinyshakespeare").resolve()),
)

import jax  # noqa: E402
import pytest

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture(scope="session")
def shakespeare_path() -> Path:
    """karpathy's TinyShakespeare input.txt from the shared folder (never copied into the repo)."""
    path = (Path(__file__).parents[1] / "../shared/data/tinyshakespeare/input.txt").resolve()
    if not path.is_file():
        pytest.skip(f"TinyShakespeare not found at {path}")
    return path
