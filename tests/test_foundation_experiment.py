"""experiments/foundation.py: the `cpu` preset as a campaign row, and a smoke campaign whose
table renders the val-loss bar as a section verdict."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mope_jax import campaign
from mope_jax.cli import main
from mope_jax.presets import apply_variant, get_preset

REPO = Path(__file__).resolve().parents[1]


def test_declaration_is_the_cpu_preset():
    exp = campaign.load_experiment("foundation", REPO)
    assert [r.name for r in exp.rows] == ["learned"] and exp.baseline == "learned"
    assert [s.name for s in exp.scales] == ["smoke", "cpu"]
    cfg = campaign.row_config(exp, exp.scale("cpu"), exp.row("learned"))
    ref = apply_variant(get_preset("cpu"), "learned")
    assert cfg.model == ref.model and cfg.train == ref.train


def _records(vals):
    return [
        {"row": "learned", "seed": s, "final_val_loss": v, "config": {"data": {"source": "text"}}}
        for s, v in enumerate(vals)
    ]


def test_bar_verdict_from_the_records():
    exp = campaign.load_experiment("foundation", REPO)
    md = campaign.render_campaign(exp, "cpu", _records([1.7315]))
    assert "**val loss below 2.0** (every seed): mean 1.7315, highest 1.7315 over 1 seeds: " in md
    assert "**passes**." in md
    assert "**fails**." in campaign.render_campaign(exp, "cpu", _records([1.9, 2.01]))
    assert "not judged at scale `smoke`" in campaign.render_campaign(exp, "smoke", _records([3]))


@pytest.mark.slow
def test_smoke_campaign_renders_the_verdict(shakespeare_path, tmp_path):
    root = tmp_path / "repo"
    (root / "experiments").mkdir(parents=True)
    for f in ("__init__.py", "foundation.py"):
        shutil.copy(REPO / "experiments" / f, root / "experiments" / f)
    argv = ["campaign", "run", "foundation", "--scale", "smoke", "--root", str(root)]
    assert main([*argv, "--corpus", str(shakespeare_path), "--no-progress"]) == 0
    out = root / "experiments" / "results" / "foundation" / "smoke"
    rec = json.loads((out / "records" / "learned" / "seed0.json").read_text())
    assert rec["row"] == "learned" and rec["final_val_loss"] < 4.2
    md = (out / "table.md").read_text()
    assert "## Verdict" in md and "not judged at scale `smoke`" in md
    assert f"mean final val loss here {rec['final_val_loss']:.4f} over 1 seeds" in md
