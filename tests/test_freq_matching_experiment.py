"""experiments/freq_matching/: paper B's frequency-matching campaign declaration, and a smoke
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
    assert [s.name for s in exp.scales] == ["smoke", "cpu", "learned"]
    assert [r.name for r in exp.rows] == [
        *(f"copy-B{b}" for b in (4, 6, 10, 18, 34, 66)),
        *(f"repeat-W{w}" for w in (2, 4, 8, 16, 32)),
    ]
    first = [r.name for r in exp.rows if r.name != "copy-B66"]
    assert list(exp.scale("smoke").rows) == list(exp.scale("cpu").rows) == first
    learned = exp.scale("learned")
    assert learned.seeds == 5 and learned.rows is None
    lc = row_config(exp, learned, exp.row("copy-B66"), data_fields(exp, learned, REPO))
    assert (lc.model.n_layer, lc.model.n_head, lc.model.n_embd, lc.model.head_dim) == (
        2,
        4,
        128,
        32,
    )
    assert (lc.train.max_steps, lc.train.lr, lc.data.block_len) == (6000, 1e-3, 66)
    l34 = row_config(exp, learned, exp.row("copy-B34"), data_fields(exp, learned, REPO))
    assert (l34.train.max_steps, l34.train.eval_interval) == (2000, 250)
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
    for f in ("__init__.py", "_paper_b.py"):
        shutil.copy(REPO / "experiments" / f, root / "experiments" / f)
    shutil.copytree(
        REPO / "experiments" / "freq_matching",
        root / "experiments" / "freq_matching",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
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
    for a in (copy, rep):
        share = a["copy_attention"]
        assert len(share) == 2 and len(share[0]) == 2 and all(0 <= x <= 1 for x in share[0])
        assert all(share[i][h] >= 0.5 for i, h in a["copy_heads"])
    assert "runs that learned the copy (copy acc >= 0.9): 0 of 1" in md
    assert "c = theta_eff W, mean (95% CI)" in md and "all runs, all heads (primary)" in md


def _run(W, log_theta, acc=1.0, tv=0.3, seed=0, heads=None):
    return {
        "task": "copy",
        "W": W,
        "block_len": W + 2,
        "seed": seed,
        "copy_accuracy": acc,
        "log_theta_eff": log_theta,
        "log_theta_eff_sharpest_head": log_theta,
        "stability_tv": {"vs_init": tv},
        "copy_heads": [[0, 0]] if heads is None else heads,
        "log_theta_eff_copy_heads": log_theta,
    }


def test_fit_with_distance_recovers_both_slopes():
    import math

    from experiments import freq_matching as fm

    rng = __import__("numpy").random.default_rng(0)
    runs = []
    for W in (2, 4, 8, 16, 32):
        for s in range(3):
            tv = float(rng.uniform(0.1, 0.9))
            runs.append(_run(W, 1.1 + 0.8 * math.log(1 / W) - 0.5 * tv, tv=tv, seed=s))
    f = fm.fit_with_distance(runs)
    assert abs(f["b"] - 0.8) < 1e-9 and abs(f["g"] + 0.5) < 1e-9 and f["n"] == 15
    assert fm.fit_with_distance(runs[:4]) is None


def test_law_judge_counts_unlearned_runs_and_gives_each_verdict():
    import math

    from experiments import freq_matching as fm
    from experiments.freq_matching.claims import _law_judge

    def records(c, slope, extra=()):
        out = []
        for W in (2, 8, 32):
            for s, noise in enumerate((-0.01, 0.0, 0.01)):
                a = _run(W, math.log(c) - slope * math.log(W) + noise, seed=s)
                out.append(
                    {"analysis": a, "seed": s, "final_val_loss": 1.0, "row": f"copy-B{W + 2}"}
                )
        return out + list(extra)

    exp = fm.EXPERIMENT
    assert _law_judge(exp, {}).verdict == "untested"
    unlearned = {"analysis": _run(16, 0.0, acc=0.2, seed=9), "seed": 9, "final_val_loss": 1.0}
    v = _law_judge(exp, {"learned": records(3.1, 1.0, [unlearned])})
    assert v.verdict == "reproduced" and "the 9 of 10 copy runs" in v.evidence
    assert _law_judge(exp, {"learned": records(3.1, 0.5)}).verdict == "contradicted"
    assert _law_judge(exp, {"learned": records(9.0, 1.0)}).verdict == "contradicted"
    assert _law_judge(exp, {"cpu": records(3.1, 1.0)}).verdict == "untested"
    # B1r judges the repeat runs alone: copy runs that follow the law do not count for it
    b1r = next(c for c in exp.claims if c.id == "B1r")
    assert b1r.judge(exp, {"learned": records(3.1, 1.0)}).verdict == "untested"

    def as_repeat(recs):
        return [dict(r, analysis=dict(r["analysis"], task="repeat")) for r in recs]

    v = b1r.judge(exp, {"learned": records(3.1, 1.0) + as_repeat(records(3.1, 0.1))})
    assert v.verdict == "contradicted" and "the 9 of 9 repeat runs" in v.evidence
    assert b1r.judge(exp, {"learned": as_repeat(records(3.1, 1.0))}).verdict == "reproduced"
