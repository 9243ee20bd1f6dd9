"""experiments/device_campaigns.py: the budget is shared in order, and exactly the records the
campaigns wrote come back in one archive (the campaign itself is stubbed: its own tests train)."""

from __future__ import annotations

import json
import tarfile

import pytest

from experiments import device_campaigns as dc


def _record(root, exp, scale, row, seed, value):
    p = root / "experiments" / "results" / exp / scale / "records" / row / f"seed{seed}.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"row": row, "seed": seed, "final_val_loss": value}))
    return p


def test_new_records_are_packed_and_old_ones_left_out(tmp_path):
    root, out = tmp_path / "repo", tmp_path / "out"
    _record(root, "paper_a", "mid", "a-baseline", 0, 1.9)  # committed before the call
    calls = []

    def runner(root_, name, scale, minutes, log, corpus):
        calls.append((name, scale, round(minutes, 1), corpus))
        _record(root_, name, scale, "a-mope", len(calls), 2.0)
        return 0

    summary = dc.main(
        ["--out", str(out), "--minutes", "5", "--root", str(root), "paper_a:mid", "fourierqk:mid"],
        runner=runner,
    )
    assert [c[:2] for c in calls] == [("paper_a", "mid"), ("fourierqk", "mid")]
    assert calls[0][2] == 5.0 and calls[1][2] <= 5.0 and calls[0][3] is None
    with tarfile.open(out / "records.tar.gz") as tar:
        names = sorted(tar.getnames())
    assert names == [
        "experiments/results/fourierqk/mid/records/a-mope/seed2.json",
        "experiments/results/paper_a/mid/records/a-mope/seed1.json",
    ]
    assert summary["records"] == names
    assert json.loads((out / "device_campaigns.json").read_text())["ran"][1]["returncode"] == 0


def test_no_time_left_runs_nothing(tmp_path, monkeypatch):
    ticks = iter([0.0, 1e6])  # the first campaign would start after the budget is spent
    monkeypatch.setattr(dc.time, "monotonic", lambda: next(ticks, 1e6))
    summary = dc.main(
        ["--out", str(tmp_path / "o"), "--minutes", "1", "--root", str(tmp_path), "paper_a:mid"],
        runner=lambda *a: pytest.fail("nothing should run"),
    )
    assert summary["ran"] == [] and summary["records"] == []
    assert not (tmp_path / "o" / "records.tar.gz").exists()


@pytest.mark.parametrize("bad", ["paper_a", "paper_a:", ":mid"])
def test_a_job_that_is_not_experiment_colon_scale_is_one_error(bad, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        dc.main(["--out", str(tmp_path), "--minutes", "1", bad])
    assert "is not EXPERIMENT:SCALE" in str(e.value)
