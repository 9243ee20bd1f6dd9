"""Test-wide settings: fail loudly on implicit rank promotion; shared corpus fixtures."""

from __future__ import annotations

import os
from pathlib import Path

# Two CPU devices, so sharded code paths (seed sweeps over a mesh) are exercised; must be
# set before jax initialises its backends.
if "--xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
    ).strip()

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
