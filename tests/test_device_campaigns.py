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

    def runner(root_, job, minutes, log, corpus):
        calls.append((job.experiment, job.scale, round(minutes, 1), corpus))
        _record(root_, job.experiment, job.scale, "a-mope", len(calls), 2.0)
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
def test_a_job_that_is_not_experiment_colon_scale_is_one_error(bad, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        dc.main(["--out", str(tmp_path), "--minutes", "1", bad])
    assert "is not EXPERIMENT:SCALE[:ROWS[:SEEDS]]" in str(e.value)


def test_rows_and_seeds_reach_the_campaign_command(tmp_path):
    """``paper_a:reference:a-baseline,a-mope:1`` runs ``campaign run paper_a --scale reference
    --rows a-baseline,a-mope --seeds 1``; the job reads back as written."""
    (job,) = dc.parse_jobs(["paper_a:reference:a-baseline,a-mope:1"])
    assert str(job) == "paper_a:reference:a-baseline,a-mope:1"
    assert job.options() == ["--rows", "a-baseline,a-mope", "--seeds", "1"]
    assert dc.parse_jobs(["paper_a:mid"])[0].options() == []
    assert dc.parse_jobs(["paper_a:mid:a-mope"])[0].options() == ["--rows", "a-mope"]
    log = _Log()
    seen = log.lines
    dc.run_campaign(tmp_path, job, 2.0, log, runner=lambda cmd, **kw: _Done())
    cmd = seen[0].split()
    assert cmd[cmd.index("--rows") + 1] == "a-baseline,a-mope"
    assert cmd[cmd.index("--seeds") + 1] == "1" and cmd[cmd.index("--scale") + 1] == "reference"


class _Done:
    returncode = 0


class _Log:
    """A log file that keeps what is written to it."""

    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        pass


def test_the_archive_is_written_after_each_job(tmp_path):
    """A call killed during the second job still has the first job's records in the archive."""
    root, out = tmp_path / "repo", tmp_path / "out"
    seen = []

    def runner(root_, job, minutes, log, corpus):
        _record(root_, job.experiment, job.scale, job.rows[0], 0, 2.0)
        if (out / "records.tar.gz").exists():
            with tarfile.open(out / "records.tar.gz") as tar:
                seen.append(sorted(tar.getnames()))
        return 0

    dc.main(
        [
            "--out",
            str(out),
            "--minutes",
            "5",
            "--root",
            str(root),
            "paper_a:reference:a-baseline:1",
            "paper_a:reference:a-mope:1",
        ],
        runner=runner,
    )
    assert seen == [["experiments/results/paper_a/reference/records/a-baseline/seed0.json"]]
    summary = json.loads((out / "device_campaigns.json").read_text())
    assert [r["job"] for r in summary["ran"]] == [
        "paper_a:reference:a-baseline:1",
        "paper_a:reference:a-mope:1",
    ]


def test_no_estimate_runs_a_job_without_a_budget(tmp_path):
    """``--no-estimate``: the campaign command carries no ``--budget-minutes`` (so it measures
    nothing); without it the budget that is left is passed."""
    for extra, expect_budget in (([], True), (["--no-estimate"], False)):
        calls = []

        def runner(root_, job, minutes, log, corpus):
            calls.append(minutes)
            return 0

        out = tmp_path / str(expect_budget)
        dc.main(
            ["--out", str(out), "--minutes", "5", "--root", str(tmp_path), *extra, "paper_a:mid"],
            runner=runner,
        )
        assert (calls[0] is not None) == expect_budget
    log = _Log()
    seen = log.lines
    (job,) = dc.parse_jobs(["paper_a:reference:a-mope:1"])
    dc.run_campaign(tmp_path, job, None, log, runner=lambda cmd, **kw: _Done())
    assert "--budget-minutes" not in seen[0] and "--no-measure" in seen[0]
    dc.run_campaign(tmp_path, job, 3.0, log, runner=lambda cmd, **kw: _Done())
    assert "--budget-minutes 3.00" in seen[1]
