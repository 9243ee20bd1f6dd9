"""Campaigns (mope_jax.campaign, `mope-jax campaign`): plan and status, training only what has
no record, stale records refused, the budget stop, the table as a pure function of the
records, and the acceptance test: a campaign killed with SIGKILL, continued from its committed
records in a fresh clone, renders the same table as an uninterrupted one, bitwise.

The tiny experiment lives in a tmp repository root (``experiments/__init__.py`` +
``experiments/tiny.py``): synthetic block data, 1 layer, E=16, T=16, 12 steps, 2 rows x 2
seeds. Campaign runs that train go through the CLI in subprocesses sharing one persistent JAX
compilation cache (the same programs compile once per test session; a cached executable is
the program a fresh compile would give, so bitwise claims are unaffected).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mope_jax import campaign
from mope_jax.results import regenerate
from mope_jax.cli import main
from mope_jax.errors import CampaignError

REPO = Path(__file__).resolve().parents[1]

TINY = """
from mope_jax.campaign import Comparison, Experiment, Row, Scale

EXPERIMENT = Experiment(
    name="tiny",
    title="Tiny campaign",
    rows=(
        Row("base", "learned", label="learned table"),
        Row("fast", "learned", overrides=("train.lr=2e-2",), label="larger lr"),
    ),
    scales=(
        Scale(
            "t",
            model=dict(block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0),
            train=dict(batch_size=4, max_steps=12, lr=1e-2, warmup_steps=2, eval_interval=6,
                       eval_batches=2, log_interval=6, checkpoint_interval=6),
            seeds=2,
        ),
    ),
    baseline="base",
    comparisons=(Comparison("fast", "base", "lr 2e-2 instead of 1e-2"),),
    claim="a tiny test",
    audit=AUDIT,
    data=dict(source="blocks", num_tokens=3000),
)
"""


def make_root(path: Path, audit: bool = True) -> Path:
    (path / "experiments").mkdir(parents=True, exist_ok=True)
    (path / "experiments" / "__init__.py").write_text('CAMPAIGNS = ("tiny",)\n')
    (path / "experiments" / "tiny.py").write_text(TINY.replace("AUDIT", str(audit)))
    return path


def records_dir(root: Path) -> Path:
    return root / "experiments" / "results" / "tiny" / "t" / "records"


def record_files(root: Path) -> list[Path]:
    return sorted(records_dir(root).glob("*/seed*.json"))


@pytest.fixture(scope="session")
def env(tmp_path_factory):
    cache = tmp_path_factory.mktemp("jax-cache")
    return os.environ | {
        "JAX_COMPILATION_CACHE_DIR": str(cache),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
    }


def cli(env, root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "mope_jax", "campaign", *args, "--root", str(root)]
    if args[0] == "run":
        cmd.append("--no-progress")
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


@pytest.fixture(scope="module")
def done(tmp_path_factory, env) -> Path:
    """An uninterrupted campaign (both rows, both seeds, strategy map)."""
    root = make_root(tmp_path_factory.mktemp("done"))
    out = cli(env, root, "run", "tiny", "--scale", "t", "--strategy", "map")
    assert "training seeds 0, 1" in out.stdout and len(record_files(root)) == 4
    return root


# --------------------------------------------------------------------------- no training


def test_plan_status_and_bad_input(tmp_path, capsys):
    root = make_root(tmp_path / "repo")
    assert main(["campaign", "status", "tiny", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "base  done 0/2, missing seeds 0, 1" in out
    assert "total: 0 of 4 runs done, 4 missing" in out
    c = campaign.Campaign.open("tiny", "t", root, rows=["fast"], seeds=3)
    (p,) = campaign.plan(c)
    assert p.missing == (0, 1, 2) and p.done == () and p.declared_causal
    assert c.config(p.row).train.lr == 2e-2  # the row's override
    cases = [
        (["status", "nope", "--root", str(root)], "unknown experiment 'nope'; the campaigns in"),
        (["status", "tiny", "--scale", "big", "--root", str(root)], "no scale 'big'"),
        (["run", "tiny", "--scale", "t", "--rows", "base,x", "--root", str(root)], "no row 'x'"),
        (["status", "tiny", "--root", str(tmp_path)], "has no experiments/__init__.py"),
        (["run", "tiny", "--root", str(root)], "campaign run needs --scale"),
    ]
    for args, msg in cases:
        assert main(["campaign", *args]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and msg in err[0], err


def test_estimate_measures_each_row_with_missing_seeds(tmp_path, capsys):
    root = make_root(tmp_path / "repo", audit=False)
    assert main(["campaign", "estimate", "tiny", "--scale", "t", "--root", str(root)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    rows = {
        line.split()[0]: line.split()
        for line in out
        if line.startswith("  ") and "ms/step" not in line
    }
    assert set(rows) == {"base", "fast"} and all(float(r[1]) > 0 for r in rows.values())
    assert all(r[-3] == "2" for r in rows.values())  # two missing seeds per row
    assert out[-1].startswith("total: 4 runs, ~")
    assert not list((root / "experiments" / "results").glob("**/*.json"))  # nothing recorded
    assert main(["campaign", "estimate", "tiny", "--root", str(root)]) == 2  # needs --scale


def test_noncausal_rows_are_allowed_and_labelled():
    exp = campaign.Experiment(
        name="x",
        title="x",
        rows=(campaign.Row("b", "learned"), campaign.Row("g", "a-ega1")),
        scales=(campaign.Scale("s", dict(block_size=16, n_layer=1, n_head=2, n_embd=16), {}, 2),),
        baseline="b",
    )
    sc = exp.scale("s")
    cfg = campaign.row_config(exp, sc, exp.row("g"))
    assert cfg.train.allow_noncausal and not campaign.declared_causal(exp, sc, exp.row("g"))
    assert not campaign.row_config(exp, sc, exp.row("b")).train.allow_noncausal
    text = campaign.render_campaign(exp, "s", [])
    assert "| `g` | a-ega1 (NON-CAUSAL) | **NON-CAUSAL** | 0 |" in text
    with pytest.raises(CampaignError, match="baseline 'z' is not one of its rows"):
        campaign.Experiment("x", "x", exp.rows, exp.scales, baseline="z")


def test_scale_row_overrides_apply_to_that_row_at_that_scale_only():
    model = dict(block_size=16, n_layer=1, n_head=2, n_embd=16)
    rows = (campaign.Row("a", "learned"), campaign.Row("b", "learned", ("train.lr=2e-2",)))
    exp = campaign.Experiment(
        name="x",
        title="x",
        rows=rows,
        scales=(
            campaign.Scale("s", model, dict(max_steps=10), 1),
            campaign.Scale(
                "l",
                model,
                dict(max_steps=10),
                1,
                row_overrides={"b": ("train.max_steps=30", "data.path=/x/y/z.txt")},
            ),
        ),
        baseline="a",
    )
    cfg = {(s, r): campaign.row_config(exp, exp.scale(s), exp.row(r)) for s in "sl" for r in "ab"}
    assert [cfg[k].train.max_steps for k in [("s", "a"), ("s", "b"), ("l", "a"), ("l", "b")]] == [
        10,
        10,
        10,
        30,
    ]
    assert cfg[("l", "b")].train.lr == 2e-2  # after the row's own overrides
    text = campaign.render_campaign(exp, "l", [])
    assert "At this scale also: `b`: train.max_steps=30, data.path=z.txt." in text  # no folders
    assert "At this scale also" not in campaign.render_campaign(exp, "s", [])
    bad = campaign.Scale("z", model, {}, 1, row_overrides={"c": ("train.lr=1",)})
    with pytest.raises(CampaignError, match=r"scale z row_overrides name no row \['c'\]"):
        campaign.Experiment("x", "x", rows, (bad,), baseline="a")


def test_scale_rows_plan_and_table_only_the_rows_of_that_scale(tmp_path):
    """Scale.rows: a grid whose points depend on the scale plans, tables and Holm-adjusts only
    the rows listed at that scale; other rows' records are ignored there."""
    small = dict(block_size=16, n_layer=1, n_head=2, n_embd=16)
    rows = tuple(
        campaign.Row(n, "learned", (f"train.lr={lr}",))
        for n, lr in (("b", 1e-3), ("x", 2e-3), ("y", 3e-3))
    )
    exp = campaign.Experiment(
        name="x",
        title="X",
        rows=rows,
        scales=(
            campaign.Scale("s", small, {}, 2, rows=("x", "b")),
            campaign.Scale("t", small, {}, 2),
        ),
        baseline="b",
        comparisons=(campaign.Comparison("y", "x", "only at t"),),
    )
    assert [r.name for r in exp.rows_at(exp.scale("s"))] == ["x", "b"]  # the scale's order
    assert exp.rows_at(exp.scale("t")) == rows
    (root := tmp_path / "r" / "experiments").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    c = campaign.Campaign.open(exp, "s", root.parent)
    assert [r.name for r in c.rows] == ["x", "b"]
    with pytest.raises(CampaignError, match=r"rows \['y'\] are not planned at scale s"):
        campaign.Campaign.open(exp, "s", root.parent, rows=["y"])
    recs = fake_records({"b": [2.0, 2.1], "x": [1.9, 2.05], "y": [1.0, 1.1]})
    text = campaign.render_campaign(exp, "s", recs)
    assert "| `x` |" in text and "| `y` |" not in text and "## Comparisons" not in text
    assert "Holm p adjusts over the 1 comparisons" in text
    full = campaign.render_campaign(exp, "t", recs)
    assert "| `y` |" in full and "Holm p adjusts over the 3 comparisons" in full
    with pytest.raises(CampaignError, match="unknown rows"):
        campaign.Experiment("x", "x", rows, (campaign.Scale("s", small, {}, 1, rows=("q",)),), "b")
    with pytest.raises(CampaignError, match="does not list the baseline"):
        campaign.Experiment("x", "x", rows, (campaign.Scale("s", small, {}, 1, rows=("x",)),), "b")


def test_scale_row_seeds_plan_more_seeds_for_some_rows(tmp_path):
    """Scale.row_seeds: the rows behind a headline verdict can plan more seeds than the others;
    status counts them, an explicit --seeds applies to every row, and a row the scale does
    not plan (or a seed count below 1) is refused."""
    small = dict(block_size=16, n_layer=1, n_head=2, n_embd=16)
    rows = (campaign.Row("b", "learned"), campaign.Row("x", "learned", ("train.lr=2e-3",)))
    exp = campaign.Experiment(
        "x", "X", rows, (campaign.Scale("s", small, {}, 2, row_seeds={"b": 4}),), "b"
    )
    (root := tmp_path / "r" / "experiments").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    c = campaign.Campaign.open(exp, "s", root.parent)
    assert c.seeds_of(rows[0]) == [0, 1, 2, 3] and c.seeds_of(rows[1]) == [0, 1]
    plans = {p.row.name: p for p in campaign.plan(c)}
    assert plans["b"].missing == (0, 1, 2, 3) and plans["x"].missing == (0, 1)
    text = campaign.format_plan(c, list(plans.values()))
    assert "2 rows x 2 seeds (0, 1), b 4;" in text and "done 0/4, missing seeds 0, 1, 2, 3" in text
    assert "total: 0 of 6 runs done, 6 missing" in text
    assert "2 seeds planned, 4 for `b`." in campaign.render_campaign(exp, "s", [])
    explicit = campaign.Campaign.open(exp, "s", root.parent, seeds=3)
    assert explicit.seeds_of(rows[0]) == explicit.seeds_of(rows[1]) == [0, 1, 2]
    with pytest.raises(CampaignError, match=r"row_seeds name rows it does not plan \['x'\]"):
        campaign.Experiment(
            "x",
            "X",
            rows,
            (campaign.Scale("s", small, {}, 1, rows=("b",), row_seeds={"x": 3}),),
            "b",
        )
    with pytest.raises(CampaignError, match="row_seeds need at least one seed"):
        campaign.Experiment(
            "x", "X", rows, (campaign.Scale("s", small, {}, 1, row_seeds={"x": 0}),), "b"
        )


def fake_records(values: dict[str, list[float | None]]) -> list[dict]:
    recs = []
    for i, (row, vals) in enumerate(values.items()):
        for seed, v in enumerate(vals):
            if v is None:
                continue
            recs.append(
                {
                    "row": row,
                    "seed": seed,
                    "final_val_loss": v,
                    "config": {"data": {"source": "blocks"}},
                    "env": {"processor": "p", "cpu_count": 2, "backend": "cpu", "git_commit": "c"},
                    "date_utc": f"2026-01-0{i + 1}T00:00:00Z",
                    "command": "mope-jax campaign run x --scale s",
                    "train_seconds": 1.0,
                }
            )
    return recs


def test_render_is_a_pure_function_of_the_records():
    """Same records (in any order, made anywhere, any time) -> the same text above Provenance;
    the paired-t p and Holm p are the independently computed ones."""
    scipy_stats = pytest.importorskip("scipy.stats")
    exp = campaign.Experiment(
        name="x",
        title="X",
        rows=(
            campaign.Row("b", "learned"),
            campaign.Row("r", "rope"),
            campaign.Row("n", "nope"),
            campaign.Row("g", "a-ega1"),
        ),
        scales=(campaign.Scale("s", dict(block_size=16, n_layer=1, n_head=2, n_embd=16), {}, 4),),
        baseline="b",
        comparisons=(
            campaign.Comparison("r", "n", "rope vs none"),
            campaign.Comparison("b", "r", "asked twice: the same hypothesis as r - b"),
        ),
    )
    vals = {
        "b": [2.0, 2.1, 2.05, 2.2],
        "r": [1.9, 2.05, 1.97, 2.08],
        "n": [2.3, 2.31, 2.5, None],  # seed 3 missing: paired over seeds 0-2
        "g": [1.5, 1.52, 1.49, 1.55],
    }
    recs = fake_records(vals)
    text = campaign.render_campaign(exp, "s", recs)
    assert text == campaign.render_campaign(exp, exp.scale("s"), list(reversed(recs)))
    moved = [r | {"env": {"processor": "q"}, "date_utc": "2030-01-01T00:00:00Z"} for r in recs]
    other = campaign.render_campaign(exp, "s", moved)
    assert other != text
    assert campaign.above_provenance(other) == campaign.above_provenance(text)
    # independent: scipy's paired t-test, Holm by hand over the 4 distinct hypotheses
    fam = {
        ("r", "b"): scipy_stats.ttest_rel(vals["r"], vals["b"]).pvalue,
        ("n", "b"): scipy_stats.ttest_rel(vals["n"][:3], vals["b"][:3]).pvalue,
        ("g", "b"): scipy_stats.ttest_rel(vals["g"], vals["b"]).pvalue,
        ("r", "n"): scipy_stats.ttest_rel(vals["r"][:3], vals["n"][:3]).pvalue,
    }
    order = sorted(fam, key=fam.get)
    holm, running = {}, 0.0
    for k, key in enumerate(order):
        running = max(running, min(1.0, (len(fam) - k) * fam[key]))
        holm[key] = running
    fmt = lambda p: f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"  # noqa: E731
    lines = text.splitlines()
    for (a, b), p in fam.items():
        if b == "b":
            (line,) = [x for x in lines if x.startswith(f"| `{a}` |")]
            cells = [c.strip() for c in line.split("|")]
            assert cells[9:11] == [fmt(p), fmt(holm[(a, b)])], line
            d = [x - y for x, y in zip(vals[a], vals[b]) if x is not None]
            assert cells[8].startswith(f"{sum(d) / len(d):+.4f} [")
    (line,) = [x for x in lines if x.startswith("| r - n |")]
    assert line.split("|")[-3].strip() == fmt(fam[("r", "n")])
    assert line.split("|")[-2].strip() == fmt(holm[("r", "n")])
    (line,) = [x for x in lines if x.startswith("| b - r |")]  # the flipped pair: same p
    assert line.split("|")[-2].strip() == fmt(holm[("r", "b")])
    assert "Holm p adjusts over the 4 comparisons" in text
    assert "| `g` | a-ega1 (NON-CAUSAL) | **NON-CAUSAL** | 4 |" in text
    assert "| `n` | nope | declared causal | 3 | 2.3700 |" in text
    assert f"| `b` | learned | declared causal | 4 | {2.0875:.4f} |" in text
    assert "- records: 15" in text and "- dates (UTC): 2026-01-01T00:00:00Z to 2026-01-04" in text


def test_interaction_contrast_is_a_one_sample_t_over_common_seeds():
    """(a - b) - (c - d) per seed, over the seeds all four rows have, tested against 0 like
    scipy's one-sample t-test, and counted once in the Holm family."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rows = [campaign.Row(n, v) for n, v in (("b", "learned"), ("r", "rope"), ("n", "nope"))]
    rows.append(campaign.Row("g", "a-ega1"))
    exp = campaign.Experiment(
        name="x",
        title="X",
        rows=tuple(rows),
        scales=(campaign.Scale("s", dict(block_size=16, n_layer=1, n_head=2, n_embd=16), {}, 4),),
        baseline="b",
        comparisons=(campaign.Comparison("g", "b", "gate on b, minus on r", c="n", d="r"),),
    )
    vals = {
        "b": [2.0, 2.1, 2.05, 2.2],
        "r": [1.9, 2.05, 1.97, 2.08],
        "n": [2.3, 2.31, 2.5, None],
        "g": [1.5, 1.52, 1.49, 1.55],
    }
    text = campaign.render_campaign(exp, "s", fake_records(vals))
    per = [(g - b) - (n - r) for g, b, n, r in zip(vals["g"], vals["b"], vals["n"], vals["r"])
           if n is not None]  # fmt: skip
    p = scipy_stats.ttest_1samp(per, 0.0).pvalue
    (line,) = [x for x in text.splitlines() if x.startswith("| (g (NON-CAUSAL) - b) - (n - r) |")]
    cells = [c.strip() for c in line.split("|")]
    assert cells[3] == "3" and cells[4].startswith(f"{np.mean(per):+.4f} [")
    assert cells[5] == ", ".join(f"{x:+.4f}" for x in per)
    assert abs(float(cells[6]) - p) <= 5e-4 or cells[6] == f"{p:.1e}"
    assert "Holm p adjusts over the 4 comparisons" in text  # 3 vs baseline + 1 interaction
    with pytest.raises(CampaignError, match="both c and d"):
        campaign.Comparison("g", "b", "half", c="n")


def test_budget_stop_at_a_run_boundary(tmp_path, capsys):
    """With an estimate of 1000 s per run and 1500 s of budget, the first row's group of two
    does not fit: its first seed does, is trained alone, and the campaign stops there."""
    root = make_root(tmp_path / "repo", audit=False)
    c = campaign.Campaign.open("tiny", "t", root)
    est = campaign.Estimate({"base": 1000.0, "fast": 1000.0}, 0.0, "test")
    res = campaign.run_campaign(c, budget_s=1500, estimate=est, progress=False, strategy="map")
    out = capsys.readouterr().out
    assert res.trained == [("base", 0)] and res.stopped == "budget"
    assert res.left == [("base", 1), ("fast", 0), ("fast", 1)]
    assert [p.name for p in record_files(root)] == ["seed0.json"]
    assert "enough for 1 of the 2 missing seeds of base" in out
    assert "left: 3 runs (base: seeds 1; fast: seeds 0, 1); continue with: " in out
    assert "mope-jax campaign run tiny --scale t" in out
    rec = json.loads(campaign.Campaign.open("tiny", "t", root).record_path("base", 0).read_text())
    assert rec["row"] == "base" and rec["campaign"]["group_seeds"] == [0] and "audit" not in rec
    # nothing fits: stop before the next group, train nothing
    res = campaign.run_campaign(c, budget_s=900, estimate=est, progress=False)
    assert res.trained == [] and res.stopped == "budget"
    assert "stopping before it" in capsys.readouterr().out


def test_budget_estimate_follows_what_this_call_measured(tmp_path, monkeypatch, capsys):
    """The records' estimate is rescaled by the row groups trained in this call: a pessimistic
    one (runs ten times faster than estimated) no longer stops the campaign early, an optimistic
    one (ten times slower) stops it before a group that would overrun. The table is rendered
    after each group."""
    root = make_root(tmp_path / "repo", audit=False)
    c = campaign.Campaign.open("tiny", "t", root)
    clock = [0.0]
    monkeypatch.setattr(campaign.run.time, "monotonic", lambda: clock[0])

    table = root / "experiments" / "results" / "tiny" / "t" / "table.md"
    table_before = []  # whether the table was on disk when each group started

    def fake_group(c, row, seeds, *args):  # 100 s per seed, no training
        table_before.append(table.is_file())
        clock[0] += 100.0 * len(seeds)
        return list(seeds)

    monkeypatch.setattr(campaign.run, "_train_group", fake_group)
    # estimated 1000 s per run, 2100 s of budget: after base (200 s) 1900 s are left, less than
    # the 2000 s the records estimate for fast, but fast needs 200 s at the measured pace
    est = campaign.Estimate({"base": 1000.0, "fast": 1000.0}, 0.0, "test")
    res = campaign.run_campaign(c, budget_s=2100, estimate=est, progress=False)
    assert res.trained == [("base", 0), ("base", 1), ("fast", 0), ("fast", 1)]
    assert res.stopped is None
    assert "this call's runs took 0.10x the estimate" in capsys.readouterr().out
    assert table_before == [False, True]  # rendered after each group, not only at the end
    # estimated 10 s per run, 250 s of budget: base takes 200 s, so fast (200 s at this pace)
    # does not fit in the 50 s left, nor does one seed of it
    clock[0] = 0.0
    est = campaign.Estimate({"base": 10.0, "fast": 10.0}, 0.0, "test")
    res = campaign.run_campaign(c, budget_s=250, estimate=est, progress=False)
    assert res.trained == [("base", 0), ("base", 1)] and res.stopped == "budget"
    out = capsys.readouterr().out
    assert "this call's runs took 10.00x the estimate" in out and "stopping before it" in out


def test_estimate_counts_resumed_runs_whole_and_measures_rows_without_records(
    tmp_path, monkeypatch, capsys
):
    """A resumed run's wall time is only its last call's: its training time (longer) is used.
    A row with no record is not given the median of other rows (maybe another model): the
    first such row is measured and the others take its pace."""
    root = make_root(tmp_path / "repo", audit=False)
    c = campaign.Campaign.open("tiny", "t", root)
    # base: one group of 2 seeds, resumed (wall 100 s in its last call, 600 s of training)
    rec = {"row": "base", "env": {}, "train_seconds": 600.0}
    rec["campaign"] = {"group_seeds": [0, 1], "group_wall_s": 100.0}
    recs = [rec, dict(rec)]
    monkeypatch.setattr(campaign.estimate, "read_records", lambda d, rows=None: recs)
    est = campaign.estimate_from_records(c, {})
    assert est.per_run["base"] == 300.0 and est.guessed == {"fast"}
    assert est.per_run["fast"] == 300.0  # the median, until measured

    measured_rows = []

    def fake_measure(c, row):
        measured_rows.append(row.name)
        return campaign.Estimate({r.name: 50.0 for r in c.rows}, 0.0, f"measured on {row.name}")

    monkeypatch.setattr(campaign.run, "estimate_by_measuring", fake_measure)
    both = est.measured_for_guessed(fake_measure(c, c.experiment.row("fast")), "fast")
    assert both.per_run == {"base": 300.0, "fast": 50.0} and both.guessed == set()
    assert both.scaled(2.0, "x").per_run == {"base": 600.0, "fast": 100.0}
    # run_campaign measures the first row without records, once
    measured_rows.clear()
    monkeypatch.undo()  # the real records (none) for the plan; the estimate is faked instead
    monkeypatch.setattr(campaign.run, "estimate_by_measuring", fake_measure)
    monkeypatch.setattr(campaign.run, "estimate_from_records", lambda c, env: est)
    monkeypatch.setattr(campaign.run, "_train_group", lambda c, row, seeds, *a: list(seeds))
    campaign.run_campaign(c, progress=False, budget_s=1e9)  # a budget: the estimate is needed
    assert measured_rows == ["fast"]
    assert "rows without one: measured on fast" in capsys.readouterr().out


def test_budget_measures_each_row_whose_pace_is_a_guess(tmp_path, monkeypatch, capsys):
    """With no records, the first row is measured and the others take its pace; under a budget
    each of them is measured again before its group, so a row several times slower than the
    first (Morlet-RoPE after sin/cos at mid) is not started when it cannot finish."""
    root = make_root(tmp_path / "repo", audit=False)
    c = campaign.Campaign.open("tiny", "t", root)
    pace = {"base": 50.0, "fast": 5000.0}  # seconds per run, measured
    measured_rows = []

    def fake_measure(c, row):
        measured_rows.append(row.name)
        per = {r.name: pace[row.name] for r in c.rows}
        return campaign.Estimate(per, 0.0, f"m {row.name}", frozenset(per) - {row.name})

    monkeypatch.setattr(campaign.run, "estimate_from_records", lambda c, env: None)
    monkeypatch.setattr(campaign.run, "estimate_by_measuring", fake_measure)
    monkeypatch.setattr(campaign.run, "_train_group", lambda c, row, seeds, *a: list(seeds))
    res = campaign.run_campaign(c, progress=False, budget_s=1000)
    assert measured_rows == ["base", "fast"]
    # at base's pace fast's two seeds (100 s) would fit; at its own (10000 s) not one does
    assert res.trained == [("base", 0), ("base", 1)] and res.stopped == "budget"
    assert "fast seeds 0, 1 need" in capsys.readouterr().out
    # with records (no guesses) nothing is measured again
    measured_rows.clear()
    est = campaign.Estimate({"base": 50.0, "fast": 50.0}, 0.0, "records")
    res = campaign.run_campaign(c, progress=False, budget_s=1000, estimate=est)
    assert measured_rows == [] and res.stopped is None


def test_a_measured_rows_compiles_count_beside_a_pace_from_records(tmp_path):
    """A pace from records holds its row group's compiles (the group's wall time); a measured
    step does not, so a row measured beside records keeps its measured compile overhead (on a
    GPU, minutes of compile for a run of a few minutes: without it a budget starts a run that
    cannot finish; seen rehearsing experiments/device_campaigns.py)."""
    est = campaign.Estimate({"base": 300.0, "fast": 300.0}, 0.0, "records", frozenset({"fast"}))
    measured = campaign.Estimate({"base": 50.0, "fast": 50.0}, 90.0, "measured on fast")
    both = est.measured_for_guessed(measured, "fast")
    assert both.seconds("fast", 2) == 90.0 + 2 * 50.0 and both.seconds("base", 2) == 600.0
    own = est.with_measured("fast", measured)
    assert own.seconds("fast", 1) == 140.0 and own.seconds("base", 1) == 300.0
    assert own.scaled(2.0, "x").seconds("fast", 1) == 280.0
    assert both.seconds("fast", 0) == 0.0


def test_short_runs_without_a_budget_are_not_measured(tmp_path, monkeypatch, capsys):
    """Measuring costs a compile and 6 steps: for runs of a few steps (4 runs x 12 steps here)
    and no budget to plan, run_campaign prints why there is no ETA instead; long runs (or any
    with a budget) are measured."""
    root = make_root(tmp_path / "repo", audit=False)
    c = campaign.Campaign.open("tiny", "t", root)
    measured_rows = []

    def fake_measure(c, row):
        measured_rows.append(row.name)
        return campaign.Estimate({r.name: 50.0 for r in c.rows}, 0.0, f"measured on {row.name}")

    monkeypatch.setattr(campaign.run, "estimate_by_measuring", fake_measure)
    monkeypatch.setattr(campaign.run, "_train_group", lambda c, row, seeds, *a: list(seeds))
    campaign.run_campaign(c, progress=False)
    out = capsys.readouterr().out
    assert measured_rows == [] and "ETA not measured: 4 runs, 48 training steps in all" in out
    monkeypatch.setattr(campaign.run, "MEASURE_MIN_STEPS", 48)
    campaign.run_campaign(c, progress=False, measure=False)  # --no-measure: a lease of minutes
    out = capsys.readouterr().out
    assert measured_rows == [] and "(--no-measure)" in out
    with pytest.raises(campaign.CampaignError, match="a budget needs each row's pace"):
        campaign.run_campaign(c, progress=False, measure=False, budget_s=60.0)
    campaign.run_campaign(c, progress=False)
    assert measured_rows == ["base"] and "ETA ~" in capsys.readouterr().out


# --------------------------------------------------------------------------- with training


def test_second_run_trains_nothing_and_status_counts(done, capsys):
    before = {p: p.read_bytes() for p in record_files(done)}
    table = (done / "experiments/results/tiny/t/table.md").read_text()
    assert main(["campaign", "run", "tiny", "--scale", "t", "--root", str(done)]) == 0
    out = capsys.readouterr().out
    assert "nothing to train" in out and "total: 4 of 4 runs done, 0 missing" in out
    assert {p: p.read_bytes() for p in record_files(done)} == before
    assert (done / "experiments/results/tiny/t/table.md").read_text() == table
    rec = json.loads(campaign.Campaign.open("tiny", "t", done).record_path("fast", 1).read_text())
    for key in ("final_val_loss", "curve", "tokens_per_s", "train_seconds", "num_params", "env"):
        assert key in rec
    assert (rec["row"], rec["experiment"], rec["scale"], rec["seed"]) == ("fast", "tiny", "t", 1)
    assert rec["config"]["train"]["lr"] == 2e-2 and rec["config"]["train"]["seed"] == 1
    assert rec["audit"]["causal"] and rec["causality"]["declared_causal"]
    assert rec["command"] == "mope-jax campaign run tiny --scale t --strategy map"
    assert "declared causal; audit (jacobian): causal, max rel. leak" in table


def test_status_lists_records_whose_analysis_the_experiment_declares_outdated(
    done, tmp_path, capsys
):
    """Experiment.outdated: such records stay done (nothing is trained, nothing is stale) and
    status names them and why."""
    root = tmp_path / "repo"
    shutil.copytree(done / "experiments", root / "experiments")
    mod = root / "experiments" / "tiny.py"
    mod.write_text(
        mod.read_text().replace(
            "    data=dict(",
            '    outdated=lambda r: "old probe" if (r["row"], r["seed"]) == ("fast", 1) else None,'
            "\n    data=dict(",
        )
    )
    assert main(["campaign", "status", "tiny", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "done 2/2, outdated analysis in seeds 1 (old probe)" in out
    assert "total: 4 of 4 runs done, 0 missing; 1 with an outdated analysis" in out
    assert out.count("outdated analysis in seeds") == 1  # the base row is current
    assert (
        main(["campaign", "run", "tiny", "--scale", "t", "--root", str(root), "--no-progress"]) == 0
    )
    assert "nothing to train" in capsys.readouterr().out


def test_status_gives_the_eta_of_the_missing_runs_from_the_records(done, tmp_path, capsys):
    root = tmp_path / "repo"
    shutil.copytree(done / "experiments", root / "experiments")
    assert main(["campaign", "status", "tiny", "--root", str(root)]) == 0
    assert "ETA" not in capsys.readouterr().out  # nothing missing
    (records_dir(root) / "fast" / "seed1.json").unlink()
    assert main(["campaign", "status", "tiny", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "for the 1 missing runs at the pace from 3 records of this campaign" in out
    walls = [json.loads(p.read_text())["campaign"] for p in record_files(root) if "fast" in str(p)]
    per_run = walls[0]["group_wall_s"] / len(walls[0]["group_seeds"])  # fast's own pace
    assert f"ETA ~{campaign.minutes(per_run)} " in out and "a guess" not in out
    for p in (records_dir(root) / "fast").glob("seed*.json"):  # fast: no record of its own
        p.unlink()
    assert main(["campaign", "status", "tiny", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "fast: no record of its own, taken at the other rows' median pace: a guess" in out


def test_stale_record_is_shown_and_refused(done, tmp_path, capsys):
    root = make_root(tmp_path / "repo")
    shutil.copytree(done / "experiments" / "results", root / "experiments" / "results")
    path = records_dir(root) / "base" / "seed1.json"
    rec = json.loads(path.read_text())
    rec["config"]["model"]["n_embd"] = 32
    path.write_text(json.dumps(rec))
    assert main(["campaign", "status", "tiny", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "STALE seed 1 (model.n_embd: 32 -> 16)" in out and "1 stale" in out
    assert main(["campaign", "run", "tiny", "--scale", "t", "--root", str(root)]) == 2
    (err,) = capsys.readouterr().err.strip().splitlines()
    assert "base/seed1.json was made with another config" in err
    assert "model.n_embd: 32 -> 16" in err and "delete the stale records or restore" in err


def test_reaudit_redoes_sampled_audits_from_the_local_checkpoints(done, tmp_path, capsys):
    root = tmp_path / "repo"
    shutil.copytree(done, root)
    recs = records_dir(root)
    fake = {"leak": 1e-4, "scale": 1.0, "causal": False, "first_leak": [3, 9], "tol": 1e-05}
    fake |= {"method": "perturb", "leak_rel": 1e-4}  # a rounding 'leak' of finite differences
    probed = fake | {"method": "jvp", "leak": 0.0, "leak_rel": 0.0, "causal": True}
    probed["first_leak"] = None  # derivatives at sampled positions only: blind elsewhere
    for row, seed, audit in (("base", 0, fake), ("fast", 0, fake), ("base", 1, probed)):
        path = recs / row / f"seed{seed}.json"
        rec = json.loads(path.read_text())
        path.write_text(json.dumps(rec | {"audit": audit}))
    path = recs / "base" / "seed1.json"  # its jvp audit had itself replaced a perturb one
    path.write_text(json.dumps(json.loads(path.read_text()) | {"audit_superseded": fake}))
    shutil.rmtree(root / "runs" / "campaigns" / "tiny" / "t" / "fast")  # no checkpoint here
    untouched = (recs / "fast" / "seed1.json").read_bytes()
    table = root / "experiments" / "results" / "tiny" / "t" / "table.md"
    assert main(["campaign", "reaudit", "tiny", "--scale", "t", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "base seed 0: audit perturb leak_rel 0.0001 (LEAKS) -> jacobian" in out
    assert "base seed 1: audit jvp leak_rel 0 (causal) -> jacobian" in out
    assert "fast seed 0: no checkpoint under runs/campaigns/tiny/t; audit left as it is" in out
    assert "2 records re-audited" in out
    for seed, was in ((0, "perturb"), (1, "jvp")):
        rec = json.loads((recs / "base" / f"seed{seed}.json").read_text())
        assert rec["audit"]["method"] == "jacobian" and rec["audit"]["causal"]
        superseded = rec["audit_superseded"]
        assert superseded["method"] == was and "replaced_utc" in superseded
    chain = json.loads((recs / "base" / "seed1.json").read_text())["audit_superseded"]
    assert chain["audit_superseded"] == fake  # the older audit is kept inside, not dropped
    assert json.loads((recs / "fast" / "seed0.json").read_text())["audit"] == fake
    assert (recs / "fast" / "seed1.json").read_bytes() == untouched  # jacobian already
    md = table.read_text()
    assert "declared causal; audit (jacobian): causal" in md  # base
    assert "audit (jacobian/perturb): LEAKS (1/2 seeds)" in md  # fast, left as it was
    assert regenerate([root / "experiments" / "results"], check=True) == []


def test_regenerate_rerenders_campaign_tables(done, tmp_path, capsys):
    root = tmp_path / "repo"
    shutil.copytree(done / "experiments", root / "experiments")
    results = root / "experiments" / "results"
    table = results / "tiny" / "t" / "table.md"
    good = table.read_text()
    assert regenerate([results], check=True) == []
    table.write_text(good.replace("| `base` |", "| `base` (typed) |"))
    assert main(["report", "--regenerate", "--check", str(results)]) == 1
    assert "table.md differs" in capsys.readouterr().out
    assert main(["report", "--regenerate", str(results / "tiny")]) == 0
    assert table.read_text() == good


def test_killed_campaign_continues_elsewhere_with_the_same_table(done, tmp_path, env):
    """SIGKILL mid-campaign (some records written, not all); a fresh clone holding only the
    committed records continues with --strategy map, another with sequential, and the killed
    root itself (with its local checkpoints) too: each trains only the missing runs, and the
    table above Provenance equals the uninterrupted one."""
    killed = make_root(tmp_path / "killed")
    cmd = [sys.executable, "-m", "mope_jax", "campaign", "run", "tiny", "--scale", "t"]
    cmd += ["--root", str(killed), "--no-progress", "--strategy", "map"]
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 240
    while not record_files(killed) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    have = record_files(killed)
    assert 1 <= len(have) < 4, f"the kill did not land mid-campaign: {have}"
    complete = {p.parent.name for p in have if len(list(p.parent.glob("seed*.json"))) == 2}
    reference = (done / "experiments/results/tiny/t/table.md").read_text()
    for strategy in ("map", "sequential", "same machine"):
        if strategy == "same machine":  # the killed root itself: its local checkpoints resume
            clone, strategy = killed, "map"
        else:
            clone = make_root(tmp_path / f"clone-{strategy}")
            shutil.copytree(records_dir(killed), records_dir(clone))
        committed = {p.relative_to(clone): p.read_bytes() for p in record_files(clone)}
        status = cli(env, clone, "status", "tiny").stdout
        assert f"{4 - len(have)} missing" in status
        out = cli(env, clone, "run", "tiny", "--scale", "t", "--strategy", strategy).stdout
        assert len(record_files(clone)) == 4
        for rel, data in committed.items():  # the committed records were not retrained
            assert (clone / rel).read_bytes() == data
        assert out.count("training seeds") == 2 - len(complete)  # one program per missing row
        table = (clone / "experiments/results/tiny/t/table.md").read_text()
        assert campaign.above_provenance(table) == campaign.above_provenance(reference)
        for p in record_files(clone):  # the numbers, bitwise
            a = json.loads(p.read_text())
            b = json.loads((done / p.relative_to(clone)).read_text())
            assert a["final_val_loss"] == b["final_val_loss"] and a["curve"] == b["curve"]
            assert a["audit"]["leak"] == b["audit"]["leak"] or math.isnan(a["audit"]["leak"])


def test_paper_a_is_declared_as_a_campaign():
    """experiments/paper_a/: ten rows, smoke and cpu as the earlier script ran them, mid,
    the EGA/MOPE pairs, audited; its committed smoke table is what its records render, with the
    learned MOPE spectra from the records' summaries."""
    exp = campaign.load_experiment("paper_a", REPO)
    assert len(exp.rows) == 10 and exp.baseline == "a-baseline" and exp.audit
    assert [s.name for s in exp.scales] == ["smoke", "cpu", "mid", "reference-f32", "reference"]
    smoke, cpu, mid = exp.scale("smoke"), exp.scale("cpu"), exp.scale("mid")
    assert cpu.model == dict(block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0)
    assert cpu.train == dict(
        batch_size=16, max_steps=300, lr=2e-3, warmup_steps=30, eval_batches=20,
        eval_interval=300, checkpoint_interval=300, log_interval=300,
    )  # fmt: skip
    assert (smoke.seeds, cpu.seeds, mid.seeds) == (2, 3, 3)
    # mid: the papers' T and dropout, 4 x 128, batch 16, ~2000 steps
    assert mid.model == dict(block_size=256, n_layer=4, n_head=4, n_embd=128, dropout=0.1)
    assert {k: mid.train[k] for k in ("batch_size", "max_steps", "lr", "warmup_steps")} == dict(
        batch_size=16, max_steps=2000, lr=1e-3, warmup_steps=120
    )
    assert len(exp.comparisons) == 11  # 7 gains, 2 gate differences, 2 EGA x MOPE interactions
    assert sum(c.c is not None for c in exp.comparisons) == 2
    noncausal = [r.name for r in exp.rows if not campaign.declared_causal(exp, smoke, r)]
    assert noncausal == ["a-ega1", "a-ega-morlet"]
    results = REPO / "experiments" / "results" / "paper_a" / "smoke"
    records = campaign.read_records(results / "records")
    text = campaign.render_campaign(exp, "smoke", records)
    assert text == (results / "table.md").read_text()
    assert "## Learned MOPE spectra" in text and "| `a-mope` | 2 |" in text


def test_a_field_added_later_at_its_default_keeps_old_records_valid():
    from mope_jax.campaign import config_diff
    from mope_jax.config import Config

    new = Config().to_dict()
    old = json.loads(json.dumps(new))
    del old["model"]["attn_layout"]  # a record written before the field existed
    assert config_diff(old, new) == []
    new["model"]["attn_layout"] = "bhtd"  # not the default: a different computation
    assert config_diff(old, new) == ["model.attn_layout: None -> 'bhtd'"]
    old["model"]["n_layer"] = 99  # a field both have still compares as before
    assert "model.n_layer: 99 -> 6" in config_diff(old, Config().to_dict())
