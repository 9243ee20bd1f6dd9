"""experiments/device_campaigns.py, the prepared command for a lent accelerator, rehearsed on the
CPU at smoke size: one training program per row and nothing compiled per seed after it (counted
with mope_jax.device.compile_log), the archive rewritten after every row, precision and speed in
every record, the clock guard at row boundaries, and every bad spec refused before training."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from experiments import device_campaigns as dc
from mope_jax.device import compile_log

REPO = Path(__file__).resolve().parents[1]


def _clone(tmp_path: Path) -> Path:
    """A repository root with this checkout's experiments and no results."""
    root = tmp_path / "repo"
    shutil.copytree(
        REPO / "experiments", root / "experiments", ignore=shutil.ignore_patterns("results")
    )
    return root


def test_the_paper_a_queue_rehearsed_at_smoke_size(tmp_path, shakespeare_path):
    root, out = _clone(tmp_path), tmp_path / "out"
    argv = ["--queue", "paper_a", "--scale", "smoke", "--out", str(out), "--minutes", "60"]
    argv += ["--root", str(root), "--corpus", str(shakespeare_path)]
    with compile_log() as log:
        summary = dc.main(argv)
    rows = dc.QUEUES["paper_a"][2]
    ega = [r for r in rows if "ega" in r]
    # one training program per row, whatever its 3 seeds; the audit once per row (its influence
    # program, and the prefix-invariance program of each row that reads no future token); the
    # other-gate re-evaluation twice per EGA row (own gate, other gate), never per seed
    leaking = [r for r in rows if r in ("a-ega-morlet", "a-ega1")]  # the paper's gate
    assert log.named("seeds_steps") == len(rows), log.by_name()
    assert log.named("audit_jacobian") == len(rows), log.by_name()
    assert log.named("audit_prefix") == len(rows) - len(leaking), log.by_name()
    assert log.named("evaluate") == 2 * len(ega), log.by_name()
    # the records of each row were packed as soon as it finished
    assert [p["row"] for p in summary["packed_after"]] == list(rows)
    assert [p["records"] for p in summary["packed_after"]] == [3 * (i + 1) for i in range(6)]
    with tarfile.open(out / "records.tar.gz") as tar:
        names = sorted(tar.getnames())
    assert len(names) == 18 and all("/paper_a/smoke/records/" in n for n in names)
    for name in names:
        rec = json.loads((root / name).read_text())
        perf = rec["perf"]
        assert perf["precision"] == "f32" and perf["runs_in_program"] == 3
        assert "mfu" in perf and perf["mfu"] is None  # no datasheet peak for a CPU
        assert perf["tokens_per_s"] > 0 and perf["flops_per_token"] > 0
        assert rec["campaign"]["compiles_training"] >= 1
    assert summary["stopped"] is None and summary["device"]["backend"] == "cpu"
    text = (out / "device_campaigns.log").read_text()
    assert text.startswith("plan for 60.0 min") and "tokens/s (3 runs)" in text


def test_the_clock_guard_stops_at_a_row_boundary(tmp_path, monkeypatch):
    """A row whose estimate does not fit the time left is not started, nor any row after it."""
    ran = []

    def fake_plan(campaigns, kind=None):
        return [
            {
                "job": str(j),
                "missing": {"r": [0]},
                "estimate_s": s,
                "estimate_source": "test",
                "_estimate": None,
            }
            for (j, _), s in zip(campaigns, (60.0, 10_000.0, 1.0))
        ]

    monkeypatch.setattr(dc, "open_jobs", lambda root, jobs, corpus: [(j, None) for j in jobs])
    monkeypatch.setattr(dc, "plan_rows", fake_plan)
    summary = dc.main(
        ["--out", str(tmp_path / "o"), "--minutes", "5", "--root", str(tmp_path)]
        + ["paper_a:mid:a-baseline:1", "paper_a:mid:a-mope:1", "paper_a:mid:a-ega1:1"],
        runner=lambda root, c, left, est, log, row_done: ran.append(left) or {},
    )
    assert len(ran) == 1 and ran[0] <= 300
    assert summary["stopped"].startswith("paper_a:mid:a-mope:1")
    assert [d["job"] for d in summary["ran"]] == ["paper_a:mid:a-baseline:1"]


@pytest.mark.parametrize(
    "args, says",
    [
        (["nonexistent:mid"], "nonexistent"),
        (["paper_a:huge"], "no scale 'huge'"),
        (["paper_a:smoke:a-nothing:1"], "no row 'a-nothing'"),
        (["--queue", "paper_a", "--scale", "huge"], "no scale 'huge'"),
    ],
)
def test_a_spec_it_cannot_run_fails_before_anything_trains(tmp_path, args, says):
    root = _clone(tmp_path)
    with pytest.raises(SystemExit) as e:
        dc.main(
            ["--out", str(tmp_path / "o"), "--minutes", "5", "--root", str(root), *args],
            runner=lambda *a: pytest.fail("nothing may train"),
        )
    assert str(e.value).startswith("error:") and says in str(e.value)
    assert not list((root / "experiments").glob("results/*/*/records/*/*.json"))


@pytest.mark.parametrize("minutes", ["nan", "inf", "0", "-1"])
def test_minutes_must_be_finite_and_positive(tmp_path, minutes):
    with pytest.raises(SystemExit) as e:
        dc.main(["--out", str(tmp_path), "--minutes", minutes, "paper_a:mid"])
    assert "--minutes" in str(e.value) and "finite" in str(e.value)


def test_an_out_folder_it_cannot_write_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(SystemExit) as e:
        dc.main(["--out", str(blocker / "sub"), "--minutes", "5", "paper_a:mid"])
    assert "--out" in str(e.value) and "writable" in str(e.value)


@pytest.mark.parametrize(
    "bad",
    [
        "paper_a",
        "paper_a:",
        ":mid",
        "paper_a:mid:",
        "paper_a:mid:,",
        "paper_a:mid:a-mope:0",
        "paper_a:mid:a-mope:x",
        "paper_a:mid:a-mope:1:2",
    ],
)
def test_a_job_that_is_not_experiment_colon_scale_is_one_error(bad, tmp_path):
    with pytest.raises(SystemExit) as e:
        dc.main(["--out", str(tmp_path), "--minutes", "1", bad])
    assert "is not EXPERIMENT:SCALE[:ROWS[:SEEDS]] with SEEDS >= 1" in str(e.value)


def test_queues_name_rows_their_campaigns_plan():
    """Each queue's rows exist at its scale, in the issue's priority order, 3 seeds each."""
    from mope_jax.campaign import load_experiment

    for name, (experiment, scale, rows, seeds) in dc.QUEUES.items():
        exp = load_experiment(experiment, REPO)
        planned = {r.name for r in exp.rows_at(exp.scale(scale))}
        assert set(rows) <= planned and seeds == 3, name
    assert dc.QUEUES["paper_a"][2][:3] == ("a-baseline", "a-ega-morlet-causal", "a-ega-morlet")
    assert [str(j) for j in dc.queue_jobs("paper_a")][0] == "paper_a:reference:a-baseline:3"
