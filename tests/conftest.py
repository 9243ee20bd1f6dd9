"""Test-wide settings: fail loudly on implicit rank promotion; shared corpus fixtures."""

from __future__ import annotations

from pathlib import Path

import jax
import pytest

jax.config.update("jax_numpy_rank_promotion", "raise")


@pytest.fixture(scope="session")
def shakespeare_path() -> Path:
    """karpathy's TinyShakespeare input.txt from the shared folder (never copied into the repo)."""
    path = (Path(__file__).parents[1] / "../shared/data/tinyshakespeare/input.txt").resolve()
    if not path.is_file():
        pytest.skip(f"TinyShakespeare not found at {path}")
    return path
