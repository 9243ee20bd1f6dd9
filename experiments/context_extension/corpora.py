"""The texts of the context-extension study: the generated arithmetic and retrieval training
texts of each scale (under ``runs/paper_b/<scale>/``) and the shared TinyShakespeare, the
arithmetic models' other domain."""

from __future__ import annotations

from pathlib import Path

from experiments import _paper_b as pb
from experiments.context_extension.settings import OPS, bases
from mope_jax.data import igsm, retrieval

# karpathy's input.txt in the shared folder beside the repository root; when it is missing, the
# arithmetic models' energy on the other domain is None
SHAKESPEARE = (
    Path(__file__).resolve().parents[3] / "shared" / "data" / "tinyshakespeare" / "input.txt"
)
# training text per scale: mid trains 2000 x 16 x 256 = 8.2M characters, ~4 passes over 2M
IGSM_CHARS = {"smoke": 60_000, "cpu": 1_000_000, "mid": 2_000_000}


def igsm_file(scale: str) -> Path:
    """Where the arithmetic training text of a scale lies (written by :func:`write_data`)."""
    return pb.RUNS / scale / "igsm_train.txt"


def retrieval_file(scale: str) -> Path:
    """Where the retrieval training text of a scale lies: examples of L characters, L the
    retrieval row's training length at that scale (written by :func:`write_data`)."""
    return pb.RUNS / scale / "retrieval_train.txt"


def write_data(scale: str) -> None:
    """Write the scale's generated training texts (deterministic; rewritten only when missing or
    different, never committed). A campaign calls it before it reads its corpora; reading the
    results (``report``) never does, so a read-only checkout renders."""
    for path, text in (
        (
            igsm_file(scale),
            lambda: igsm.igsm_text(IGSM_CHARS[scale], seed=2024, ops_range=(1, 2), ops=OPS),
        ),
        (
            retrieval_file(scale),
            lambda: retrieval.stream(IGSM_CHARS[scale], bases(scale)["retrieval"][0], seed=2025),
        ),
    ):
        body = text()
        if not path.is_file() or path.read_text() != body:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body)
