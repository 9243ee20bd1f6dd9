"""experiments/freq_matching.py: paper B's frequency-matching campaign declaration, and a smoke
campaign of two rows (one per task) whose records carry the analysis the section renders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mope_jax.campaign import data_fields, load_experiment, render_campaign, row_config
from mope_jax.cli import main

REPO = Path(__file__).resolve().parents[1]


def test_declaration_keeps_the_single_script_settings():
    exp = load_experiment("freq_matching", REPO)
    assert exp.baseline == "copy-B4" and exp.analyze is not None and exp.sections
    assert [s.name for s in exp.scales] == ["smoke", "cpu"]
    assert [r.name for r in exp.rows] == [
        *(f"copy-B{b}" for b in (4, 6, 10, 18, 34)),
        *(f"repeat-W{w}" for w in (2, 4, 8, 16, 32)),
    ]
    smoke, cpu = exp.scale("smoke"), exp.scale("cpu")
    assert (smoke.seeds, cpu.seeds) == (1, 3)
    data = data_fields(exp, cpu, REPO)
    c = row_config(exp, cpu, exp.row("copy-B10"), data)
    assert (c.data.source, c.data.block_len, c.data.num_symbols, c.data.num_tokens) == (
        "blocks",
        10,
        16,
        100_000,
    )
    m, t = c.model, c.train
    assert (m.block_size, m.n_layer, m.n_head, m.n_embd, m.dropout) == (128, 2, 2, 64, 0.0)
    assert (m.pos_encoding, m.qk_position) == ("none", "rope")
    assert (t.batch_size, t.max_steps, t.lr, t.warmup_steps, t.eval_interval) == (
        16,
        400,
        3e-3,
        50,
        50,
    )
    r = row_config(exp, cpu, exp.row("repeat-W8"), data)
    assert r.data.source == "text" and Path(r.data.path).name == "repeat_W8.txt"
    assert r.train.max_steps == 300 and r.train.checkpoint_interval == 300  # as the script
    s = row_config(exp, smoke, exp.row("repeat-W8"))
    assert (s.train.max_steps, s.train.warmup_steps, s.train.eval_interval) == (20, 5, 10)
    assert "## Frequency matching" not in render_campaign(exp, "cpu", [])  # no records, no section


@pytest.mark.slow
def test_smoke_campaign_records_analysis_and_renders_the_law(tmp_path):
    root = tmp_path / "repo"
    (root / "experiments").mkdir(parents=True)
    for f in ("__init__.py", "_paper_b.py", "freq_matching.py"):
        shutil.copy(REPO / "experiments" / f, root / "experiments" / f)
    argv = ["campaign", "run", "freq_matching", "--scale", "smoke", "--rows", "copy-B6,repeat-W2"]
    assert main([*argv, "--root", str(root), "--no-progress"]) == 0
    out = root / "experiments" / "results" / "freq_matching" / "smoke"
    copy = json.loads((out / "records" / "copy-B6" / "seed0.json").read_text())["analysis"]
    rep = json.loads((out / "records" / "repeat-W2" / "seed0.json").read_text())["analysis"]
    assert (copy["task"], copy["W"], copy["W_measured"], copy["block_len"]) == ("copy", 4, 4, 6)
    assert (rep["task"], rep["W"], rep["block_len"]) == ("repeat", 2, 5)
    for a in (copy, rep):
        assert 0 < a["theta_eff"] <= 1 and 0 <= a["copy_accuracy"] <= 1
        assert len(a["p"]) == 2 and len(a["p"][0]) == 2 and len(a["p"][0][0]) == 16
    md = (out / "table.md").read_text()
    assert "## Frequency matching" in md and "### copy task" in md and "### repeat task" in md
    assert "c = theta_eff W, mean (95% CI)" in md and "all runs, all heads (primary)" in md
