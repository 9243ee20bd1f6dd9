"""The command line end to end on the smoke preset: train, kill, resume, eval, sample, errors."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mope_jax.cli import main

ENV = {**os.environ, "JAX_PLATFORMS": "cpu"}


def cli(*args, check=True, timeout=300):
    proc = subprocess.run(
        [sys.executable, "-m", "mope_jax", *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def final(run_dir: Path) -> dict:
    return json.loads((run_dir / "final.json").read_text())


def wait_for_checkpoint(run_dir: Path, proc, timeout=120):
    t0 = time.time()
    while time.time() - t0 < timeout:
        ck = run_dir / "checkpoints"
        if ck.exists() and any(p.name.isdigit() for p in ck.iterdir()):
            return
        if proc.poll() is not None:
            raise AssertionError(f"training ended before a checkpoint: {proc.communicate()}")
        time.sleep(0.05)
    raise AssertionError("no checkpoint appeared")


TRAIN = ["train", "--preset", "smoke", "--no-progress", "train.max_steps=40"]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("cli") / "full"
    out = cli(*TRAIN, "--run-dir", str(run_dir))
    assert "tokens/s" in out.stdout and "val loss" in out.stdout
    return run_dir


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_run_resumes_to_the_same_numbers(tmp_path, uninterrupted, sig):
    run_dir = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mope_jax", *TRAIN, "--run-dir", str(run_dir)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    wait_for_checkpoint(run_dir, proc)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    if sig == signal.SIGTERM and not (run_dir / "final.json").exists():  # it landed mid-run
        # 143 (saved first) when it landed in the training loop; -15 only in the instant after
        # the loop, before final.json (the default handler is back by then)
        assert proc.returncode in (143, -signal.SIGTERM), (proc.returncode, out, err)
        assert proc.returncode != 143 or "SIGTERM: saved step" in out + err
    resumed = cli(*TRAIN, "--run-dir", str(run_dir))
    a, b = final(uninterrupted), final(run_dir)
    assert b["steps"] == 40
    assert a["final_val_loss"] == b["final_val_loss"] and a["curve"] == b["curve"]
    if not (proc.returncode == 0 and "done:" in out):  # the kill landed mid-run
        assert "resuming" in resumed.stdout


def test_eval_and_sample(uninterrupted):
    ev = json.loads(cli("eval", "--run-dir", str(uninterrupted)).stdout.strip().splitlines()[-1])
    assert ev["step"] == 40 and ev["val"] == pytest.approx(
        final(uninterrupted)["final_val_loss"], rel=1e-6
    )
    out = cli(
        "sample", "--run-dir", str(uninterrupted), "--prompt", "0 3 5", "--tokens", "12"
    ).stdout
    assert out.startswith("0 3 5") and len(out.split()) >= 3 + 12


def test_presets_lists_sizes_and_causality(capsys):
    assert main(["presets"]) == 0
    out = capsys.readouterr().out
    assert "reference" in out and "4.82M" in out and "rope" in out and "causal" in out


def one_error_line(proc) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    "args,fix",
    [
        (["--data", "/no/such/file.txt"], "does not exist"),
        (["--preset", "nosuch"], "mope-jax presets"),
        (["--variant", "nosuch"], "mope-jax presets"),
        (["train.lr=abc"], "train.lr=1"),
        (["train.nosuch=1"], "valid keys"),
        (["lr"], "key=value"),
    ],
)
def test_bad_input_one_line_nonzero(args, fix):
    line = one_error_line(
        cli(
            "train",
            "--preset",
            "smoke",
            "--no-progress",
            "--run-dir",
            "/tmp/never",
            *args,
            check=False,
        )
    )
    assert fix in line


def test_bad_files_one_line_nonzero(tmp_path, uninterrupted):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)) * 10)
    short = tmp_path / "short.txt"
    short.write_text("to be or not")
    for path, fix in [(empty, "empty"), (binary, "UTF-8"), (short, "block_size")]:
        proc = cli(
            "train",
            "--preset",
            "smoke",
            "--data",
            str(path),
            "--run-dir",
            str(tmp_path / "x"),
            check=False,
        )
        assert fix.lower() in one_error_line(proc).lower()
    # a corpus whose vocabulary differs from the checkpoint's
    text = tmp_path / "t.txt"
    text.write_text("abcdefgh" * 200)
    line = one_error_line(
        cli("eval", "--run-dir", str(uninterrupted), "--data", str(text), check=False)
    )
    assert "vocabulary" in line


def test_demo_runs_and_compares(tmp_path, capsys):
    assert main(["demo", "--steps", "12", "--run-root", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    rows = json.loads((tmp_path / "comparison.json").read_text())["rows"]
    assert set(rows) == {"learned", "fourier-qk", "causal-freq-qk"} and "Bayes-optimal" in out
    declared = {n: r["causality"]["declared_causal"] for n, r in rows.items()}
    assert declared == {"learned": True, "fourier-qk": False, "causal-freq-qk": True}
    audited = {n: r["audit"]["causal"] for n, r in rows.items()}  # measured on trained params
    assert audited == declared
    assert "| fourier-qk | NON-CAUSAL | LEAKS" in out


def test_sweep_four_seeds_then_report(tmp_path):
    # the "done when": mope-jax sweep --preset ... --seeds 4, then the report of its records
    env_xla = {**ENV, "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}
    run_dir = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mope_jax",
            "sweep",
            "--preset",
            "smoke",
            "--seeds",
            "4",
            "--run-dir",
            str(run_dir),
            "--no-progress",
            "train.max_steps=10",
        ],
        capture_output=True,
        text=True,
        env=env_xla,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "with strategy shard" in proc.stdout  # auto on 2 devices, 4 seeds
    recs = [json.loads((run_dir / f"seed{s}" / "final.json").read_text()) for s in range(4)]
    assert [r["seed"] for r in recs] == [0, 1, 2, 3] and len(
        {r["final_val_loss"] for r in recs}
    ) == 4
    out = cli("report", str(run_dir), "--out", str(tmp_path / "table.md"))
    assert "| smoke/learned | 4 |" in out.stdout and (tmp_path / "table.json").exists()
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "mope_jax",
            "sweep",
            "--preset",
            "smoke",
            "--seeds",
            "2",
            "--data-parallel",
            "3",
            "--run-dir",
            str(tmp_path / "bad"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env_xla,
        timeout=120,
    )
    assert bad.returncode == 2 and bad.stderr.strip().splitlines()[-1].startswith(
        "error: --data-parallel 3"
    )


def test_campaign_script_alias_runs_the_campaign_of_its_file(monkeypatch, tmp_path):
    """``python experiments/<name>.py ARGS`` == ``mope-jax campaign run <name> --root R ARGS``."""
    from mope_jax import cli

    seen = []
    monkeypatch.setattr(cli, "main", lambda argv: seen.append(argv) or 0)
    f = tmp_path / "repo" / "experiments" / "my_study.py"
    assert cli.campaign_script(str(f), ["--scale", "cpu"]) == 0
    assert seen == [
        ["campaign", "run", "my_study", "--root", str(tmp_path / "repo"), "--scale", "cpu"]
    ]
