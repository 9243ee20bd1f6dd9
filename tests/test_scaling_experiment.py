"""experiments/scaling.py: the grid as campaign rows planned per scale, and a smoke campaign of
two grid points whose records carry the cost analysis that the table's section renders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mope_jax import campaign
from mope_jax.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_declaration_is_the_scripts_grid_per_scale():
    exp = campaign.load_experiment("scaling", REPO)
    assert [s.name for s in exp.scales] == ["smoke", "cpu"] and exp.analyze is not None
    smoke, cpu = exp.scale("smoke"), exp.scale("cpu")
    assert smoke.rows == (
        "E16-L1-T32",
        "E16-L2-T32",
        "E32-L1-T32",
        "E32-L2-T32",
        "E64-L1-T32",
        "E64-L2-T32",
        "E32-L2-T16",
        "E32-L2-T64",
    )
    assert len(cpu.rows) == 8 and cpu.rows[-1] == "E64-L2-T128"
    assert exp.baseline in smoke.rows and exp.baseline in cpu.rows
    cfg = campaign.row_config(exp, cpu, exp.row("E128-L2-T64"))
    assert (cfg.model.n_embd, cfg.model.n_layer, cfg.model.n_head, cfg.model.block_size) == (
        128,
        2,
        8,
        64,
    )
    assert cfg.train.max_steps == 200 and cfg.train.batch_size == 16 and cfg.train.lr == 3e-3
    data = campaign.data_fields(exp, smoke, REPO)
    assert data["source"] == "blocks" and data["num_tokens"] == 100_000


@pytest.mark.slow
def test_smoke_campaign_records_cost_analysis(tmp_path):
    root = tmp_path / "repo"
    (root / "experiments").mkdir(parents=True)
    for f in ("__init__.py", "scaling.py"):
        shutil.copy(REPO / "experiments" / f, root / "experiments" / f)
    argv = ["campaign", "run", "scaling", "--scale", "smoke", "--rows", "E16-L1-T32,E32-L2-T64"]
    assert main([*argv, "--seeds", "1", "--root", str(root), "--no-progress"]) == 0
    out = root / "experiments" / "results" / "scaling" / "smoke"
    recs = {
        row: json.loads((out / "records" / row / "seed0.json").read_text())
        for row in ("E16-L1-T32", "E32-L2-T64")
    }
    for row, rec in recs.items():
        a = rec["analysis"]
        assert a["params"] == rec["num_params"] and a["step_s"] > 0 and a["temp_bytes"] > 0
    small, big = recs["E16-L1-T32"]["analysis"], recs["E32-L2-T64"]["analysis"]
    assert 0 < small["flops_per_step"] < big["flops_per_step"]
    md = (out / "table.md").read_text()
    assert "## Cost" in md and "| `E16-L1-T32` | 32 | 16 | 1 | 4,096 |" in md
    assert "`E64-L1-T32`" in md  # planned at smoke, no record yet
    text = campaign.render_campaign(
        campaign.load_experiment("scaling", root), "smoke", campaign.read_records(out / "records")
    )
    assert text == md  # the table is the records' rendering
