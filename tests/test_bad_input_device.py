"""experiments/device_campaigns.py refuses every spec it cannot run before anything starts: one
``error:`` line on stderr naming the option or file and the fix, exit status 2, no traceback,
no --out folder made and no job run; and a job that fails once started ends the call with a
non-zero status and one ``error:`` line naming the log. Nothing here trains."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import device_campaigns as dc
from mope_jax.errors import TrainingError

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    """A repository root with this checkout's experiments and no results."""
    root = tmp_path_factory.mktemp("device") / "repo"
    shutil.copytree(
        REPO / "experiments", root / "experiments", ignore=shutil.ignore_patterns("results")
    )
    return root


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "input.txt"
    path.write_text("To be, or not to be, that is the question.\n" * 200)
    return path


def _nothing_may_run(*args):
    pytest.fail("a refused spec started a job")


def refused(capsys, argv: list[str]) -> str:
    """Run main(argv), which must refuse: exit 2, one ``error:`` line on stderr and no
    traceback. Returns the line."""
    with pytest.raises(SystemExit) as e:
        dc.main(argv, runner=_nothing_may_run)
    out, err = capsys.readouterr()
    assert e.value.code == 2, (e.value.code, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in out + err
    assert str(e.value) == lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "spec, says",
    [
        (["nonexistent:smoke"], "unknown experiment 'nonexistent'"),
        (["paper_a:huge"], "no scale 'huge'"),
        (["paper_a:smoke:a-nothing:1"], "no row 'a-nothing'"),
        (["paper_a:smoke:a-baseline,a-nothing"], "no row 'a-nothing'"),
        (["paper_a:smoke", "paper_a:huge"], "no scale 'huge'"),  # the second job, up front
        (["--queue", "paper_a", "--scale", "huge"], "no scale 'huge'"),
        (["--queue", "nope"], "invalid choice: 'nope'"),
        (["--minutes", "nan", "paper_a:smoke"], "--minutes nan must be a finite number > 0"),
        (["--minutes", "inf", "paper_a:smoke"], "--minutes inf must be a finite number > 0"),
        (["--minutes", "0", "paper_a:smoke"], "--minutes 0.0 must be a finite number > 0"),
        (["--minutes", "-3", "paper_a:smoke"], "--minutes -3.0 must be a finite number > 0"),
        (["--minutes", "soon", "paper_a:smoke"], "argument --minutes: invalid float value"),
        (["paper_a:smoke:a-baseline:0"], "seeds must be a whole number >= 1, not '0'"),
        (["paper_a:smoke:a-baseline:-2"], "seeds must be a whole number >= 1, not '-2'"),
        (["paper_a:smoke:a-baseline:\u00b2"], "seeds must be a whole number >= 1"),
        (["--queue", "paper_a", "paper_a:smoke"], "either --queue NAME or jobs"),
        ([], "either --queue NAME or jobs"),
        (["--scale", "smoke", "paper_a:smoke"], "--scale goes with --queue"),
    ],
)
def test_a_spec_it_cannot_run_is_one_line_exit_2_and_nothing_made(
    capsys, tmp_path, root, corpus, spec, says
):
    out = tmp_path / "new" / "out"
    argv = ["--out", str(out), "--root", str(root), "--corpus", str(corpus)]
    if "--minutes" not in spec:
        argv += ["--minutes", "5"]
    line = refused(capsys, argv + spec)
    assert says in line, line
    assert not (tmp_path / "new").exists()  # --out is made only once every job is checked
    assert not (root / "experiments" / "results").exists()
    assert not (root / "runs").exists()


@pytest.mark.parametrize("corpus_kind", ["missing", "folder", "empty"])
def test_a_corpus_it_cannot_read_is_named_before_anything_starts(
    capsys, tmp_path, root, corpus_kind
):
    path = {"missing": tmp_path / "no.txt", "folder": tmp_path, "empty": tmp_path / "e.txt"}
    path["empty"].write_text("")
    out = tmp_path / "out"
    argv = ["--out", str(out), "--minutes", "5", "--root", str(root)]
    line = refused(capsys, argv + ["--corpus", str(path[corpus_kind]), "paper_a:smoke"])
    assert line.startswith(f"error: --corpus {path[corpus_kind]}"), line
    assert not out.exists()


def test_seeds_below_one_say_seeds_must_be_at_least_one(capsys, tmp_path):
    line = refused(capsys, ["--out", str(tmp_path / "o"), "--minutes", "5", "paper_a:mid:a-mope:0"])
    assert ">= 1" in line and "not '0'" in line and "paper_a:mid:a-mope:3" in line, line


@pytest.mark.parametrize(
    "where", ["under_a_file", "a_file", "immutable", "under_immutable", "read_only"]
)
def test_an_out_it_cannot_make_or_write_is_one_line(capsys, tmp_path, root, corpus, where):
    blocker = tmp_path / "file"
    blocker.write_text("")
    locked = tmp_path / "locked"
    locked.mkdir()
    out = {
        "under_a_file": blocker / "sub",
        "a_file": blocker,
        "immutable": locked,
        "under_immutable": locked / "a" / "b",
        "read_only": locked / "a",
    }[where]
    chattr = shutil.which("chattr")
    if "immutable" in where and (
        not chattr or subprocess.run([chattr, "+i", str(locked)], capture_output=True).returncode
    ):
        pytest.skip("chattr +i is not available here")
    if where == "read_only":
        if os.geteuid() == 0:
            pytest.skip("root writes in a read-only folder (the immutable cases cover root)")
        locked.chmod(0o500)
    try:
        argv = ["--out", str(out), "--minutes", "5", "--root", str(root), "--corpus", str(corpus)]
        line = refused(capsys, argv + ["paper_a:smoke:a-baseline:1"])
        assert line.startswith(f"error: --out {out}:") and "writable folder" in line, line
        assert blocker.read_text() == "" and os.listdir(locked) == []
        assert not (root / "experiments" / "results").exists()
    finally:
        if "immutable" in where:
            subprocess.run([chattr, "-i", str(locked)], check=True)
        locked.chmod(0o700)


def test_a_compile_cache_that_is_a_file_is_one_line(capsys, tmp_path, root, corpus):
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = tmp_path / "out"
    argv = ["--out", str(out), "--minutes", "5", "--root", str(root), "--corpus", str(corpus)]
    line = refused(capsys, argv + ["--compile-cache", str(blocker), "paper_a:smoke"])
    assert line.startswith(f"error: --compile-cache {blocker}:"), line
    assert not out.exists()


@pytest.mark.parametrize(
    "args, says",
    [
        (["paper_a:huge"], "error: experiment paper_a has no scale 'huge'"),
        (["--minutes", "nan", "paper_a:smoke"], "error: --minutes nan must be a finite"),
        (["--queue", "nope"], "error: argument --queue: invalid choice"),
    ],
)
def test_the_command_itself_exits_2_with_one_line(tmp_path, root, args, says):
    """As a loan runs it: ``python -m experiments.device_campaigns``, its real exit status."""
    out = tmp_path / "out"
    argv = ["--out", str(out), "--root", str(root)]
    argv += [] if "--minutes" in args else ["--minutes", "5"]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    p = subprocess.run(
        [sys.executable, "-m", "experiments.device_campaigns", *argv, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.splitlines() == [p.stderr.strip()] and p.stderr.startswith(says), p.stderr
    assert "Traceback" not in p.stdout + p.stderr and p.stdout == ""
    assert not out.exists()


def test_a_job_that_fails_once_started_is_a_non_zero_exit_naming_the_log(
    capsys, tmp_path, monkeypatch
):
    """The queue goes on past a failed job; the call then exits 1 with one ``error:`` line that
    names the failed jobs and the log (a traceback for an unexpected error is in the log)."""
    ran = []

    def fake_plan(campaigns, kind=None):
        return [
            {"job": str(j), "missing": {"r": [0]}, "estimate_s": 1.0, "estimate_source": "test"}
            | {"_estimate": None}
            for j, _ in campaigns
        ]

    def runner(root, c, left, est, log, row_done):
        ran.append(c)
        if c == 0:
            raise TrainingError("non-finite loss at step 3; lower the learning rate")
        if c == 1:
            raise RuntimeError("device lost")
        return {"trained": ["r seed 0"], "left": [], "stopped": None}

    monkeypatch.setattr(
        dc, "open_jobs", lambda root, jobs, corpus: [(j, i) for i, j in enumerate(jobs)]
    )
    monkeypatch.setattr(dc, "plan_rows", fake_plan)
    out = tmp_path / "o"
    jobs = ["paper_a:mid:a-baseline:1", "paper_a:mid:a-mope:1", "paper_a:mid:a-ega1:1"]
    with pytest.raises(SystemExit) as e:
        dc.main(
            ["--out", str(out), "--minutes", "5", "--root", str(tmp_path), *jobs], runner=runner
        )
    assert e.value.code == 1
    assert ran == [0, 1, 2]  # the queue went on after the failed jobs
    err_lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error")]
    log = out / "device_campaigns.log"
    assert err_lines == [
        f"error: 2 of 3 jobs failed ({jobs[0]}; {jobs[1]}); their errors are in {log}"
    ]
    text = log.read_text()
    assert f"error in {jobs[0]}: non-finite loss at step 3" in text
    assert f"error in {jobs[1]}: RuntimeError: device lost" in text
    assert "Traceback" in text and text.rstrip().endswith(err_lines[0])
    summary = json.loads((out / "device_campaigns.json").read_text())
    assert summary["failed"] == jobs[:2]
    assert [("error" in d) for d in summary["ran"]] == [True, True, False]


def test_a_call_whose_jobs_all_succeed_returns_its_summary(tmp_path, monkeypatch):
    monkeypatch.setattr(dc, "open_jobs", lambda root, jobs, corpus: [(j, None) for j in jobs])
    monkeypatch.setattr(
        dc,
        "plan_rows",
        lambda campaigns, kind=None: [
            {"job": str(j), "missing": {"r": [0]}, "estimate_s": 1.0, "estimate_source": "t"}
            | {"_estimate": None}
            for j, _ in campaigns
        ],
    )
    summary = dc.main(
        ["--out", str(tmp_path / "o"), "--minutes", "5", "--root", str(tmp_path), "paper_a:mid"],
        runner=lambda *a: {"trained": [], "left": [], "stopped": None},
    )
    assert summary["failed"] == [] and len(summary["ran"]) == 1
