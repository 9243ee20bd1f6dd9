"""experiments/anchor_nanogpt.py: the anchor and bf16 verdicts are computed from the records."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "anchor_nanogpt", Path(__file__).resolve().parents[1] / "experiments" / "anchor_nanogpt.py"
)
anchor = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(anchor)


def _doc(f32, bf16):
    runs = {
        d: [{"seed": s, "final_val_loss": v, "tokens_per_s": 1000.0} for s, v in enumerate(vals)]
        for d, vals in (("f32", f32), ("bf16", bf16))
    }
    env = {k: "?" for k in ("platform", "cpu_count", "jax", "flax", "git_commit")}
    return {
        "renderer": "experiments/anchor_nanogpt.py:render",
        "command": "x",
        "date": "d",
        "env": env,
        "overrides": anchor.ANCHOR,
        "nanogpt": anchor.NANOGPT,
        "runs": runs,
    }


def test_anchor_passes_and_bf16_within_spread(tmp_path):
    md = anchor.render(_doc([1.90, 1.92, 1.91], [1.905, 1.925, 1.915]), tmp_path / "a.json")["a.md"]
    assert "f32 mean - nanoGPT = +0.0067: **passes**." in md
    assert (
        "bf16 - f32** (paired by seed): +0.0050" in md and "within the seed spread: **yes**" in md
    )


def test_anchor_fails_and_bf16_outside_spread(tmp_path):
    md = anchor.render(_doc([1.95, 1.96, 1.94], [2.00, 2.01, 1.99]), tmp_path / "a.json")["a.md"]
    assert "f32 mean - nanoGPT = +0.0467: **fails**." in md
    assert "within the seed spread: **no**" in md
