"""experiments/anchor_nanogpt.py: the campaign declaration is the earlier script's runs, and the
anchor and bf16 verdicts are computed from the records (the campaign section and the legacy
renderer of the committed JSON share them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mope_jax import campaign
from mope_jax.config import apply_overrides
from mope_jax.presets import apply_variant, get_preset

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location(
    "anchor_nanogpt", REPO / "experiments" / "anchor_nanogpt.py"
)
anchor = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(anchor)


def test_declaration_is_the_scripts_runs():
    exp = campaign.load_experiment("anchor_nanogpt", REPO)
    assert exp.baseline == "learned" and [r.name for r in exp.rows] == ["learned", "learned-bf16"]
    assert [s.name for s in exp.scales] == ["smoke", "nanogpt-char"]
    sc = exp.scale("nanogpt-char")
    assert sc.seeds == 3 and sc.train["eval_batches"] == 200 and sc.train["max_steps"] == 1000
    for row, dtype in (("learned", "f32"), ("learned-bf16", "bf16")):
        cfg = campaign.row_config(exp, sc, exp.row(row))
        # exactly `mope-jax sweep --preset reference --variant learned ANCHOR... [bf16]`
        ref = apply_overrides(
            apply_variant(get_preset("reference"), "learned"), anchor.ANCHOR + anchor.DTYPES[dtype]
        )
        assert cfg.model == ref.model and cfg.train == ref.train
    assert campaign.data_fields(exp, sc, REPO)["source"] == "text"  # TinyShakespeare


def _records(f32, bf16):
    return [
        {"row": row, "seed": s, "final_val_loss": v, "config": {"data": {"source": "text"}}}
        for row, vals in (("learned", f32), ("learned-bf16", bf16))
        for s, v in enumerate(vals)
    ]


def _table(f32, bf16, scale="nanogpt-char"):
    return campaign.render_campaign(anchor.EXPERIMENT, scale, _records(f32, bf16))


def test_anchor_passes_and_bf16_within_spread():
    md = _table([1.90, 1.92, 1.91], [1.905, 1.925, 1.915])
    assert "## Verdicts" in md and "f32 mean - nanoGPT = +0.0067: **passes**." in md
    assert (
        "bf16 - f32** (paired by seed): +0.0050" in md and "within the seed spread: **yes**" in md
    )


def test_anchor_fails_and_bf16_outside_spread():
    md = _table([1.95, 1.96, 1.94], [2.00, 2.01, 1.99])
    assert "f32 mean - nanoGPT = +0.0467: **fails**." in md
    assert "within the seed spread: **no**" in md


def test_verdicts_pair_by_seed_and_judge_the_anchor_at_its_scale_only():
    md = _table([1.90, 1.92, 1.91], [1.905, 1.925])  # bf16 seed 2 missing: paired over 0, 1
    assert "every f32 seed (3)" in md and "seeds both rows have (2)" in md
    assert "bf16 - f32** (paired by seed): +0.0050" in md
    smoke = _table([3.5, 3.6], [3.5, 3.6], scale="smoke")
    assert "**Anchor**: not judged at scale `smoke`" in smoke and "**passes**" not in smoke
    one = _table([1.9], [1.9])
    assert "**Anchor**: untested" in one and "**bf16 - f32**: untested" in one
    # the anchor needs only f32 seeds; bf16 stays untested without paired seeds
    f32_only = _table([1.90, 1.92, 1.91], [])
    assert "f32 mean - nanoGPT = +0.0067: **passes**." in f32_only
    assert "**bf16 - f32**: untested" in f32_only and "--rows learned-bf16" in f32_only


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


def test_legacy_renderer_keeps_the_same_verdicts(tmp_path):
    md = anchor.render(_doc([1.90, 1.92, 1.91], [1.905, 1.925, 1.915]), tmp_path / "a.json")["a.md"]
    assert "f32 mean - nanoGPT = +0.0067: **passes**." in md
    assert "within the seed spread: **yes**" in md
    md = anchor.render(_doc([1.95, 1.96, 1.94], [2.00, 2.01, 1.99]), tmp_path / "a.json")["a.md"]
    assert "f32 mean - nanoGPT = +0.0467: **fails**." in md
    assert "within the seed spread: **no**" in md
