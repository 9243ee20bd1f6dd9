"""Reliability: no run is left unrecoverable, no checkpoint is trusted blindly.

Kill windows are simulated in-process and deterministically (a hook raises at the exact
moment), corruptions are applied to a copy of one finished run, and every resume is compared
with the uninterrupted run. One smoke MOPE run (learned spectra in its record) is trained once
per module and copied; each test trains at most one more short run.
"""

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

import mope_jax.loop as loop_mod
from mope_jax.checkpoint import DIGEST_KEY, SKIPPED_DIR, Checkpointer
from mope_jax.cli import EXIT_INTERRUPTED, EXIT_KEYBOARD, INTERRUPTED_MESSAGE, main
from mope_jax.config import apply_overrides
from mope_jax.errors import CheckpointError, RunLockedError, TrainingError
from mope_jax.presets import get_preset
from mope_jax.rundir import RunLock, atomic_write_text, read_jsonl
from mope_jax.train import load_run, run

# After a failed read of a damaged checkpoint, tensorstore callbacks reach Orbax's closed event
# loop and Orbax's read coroutines are abandoned; Python reports each as an unraisable
# exception, possibly during a later test (the CLI silences exactly these two kinds).
pytestmark = [
    pytest.mark.filterwarnings(
        r"ignore:(?s).*Event loop is closed:pytest.PytestUnraisableExceptionWarning"
    ),
    pytest.mark.filterwarnings(
        r"ignore:(?s).*_read_array_index_and_device_put:pytest.PytestUnraisableExceptionWarning"
    ),
]

MOPE = ["model.pos_encoding=morlet"]  # a model whose record carries learned spectra (omega, sigma)


def smoke(*overrides):
    return apply_overrides(get_preset("smoke"), [*MOPE, *overrides])


def leaves_equal(a, b) -> bool:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return len(la) == len(lb) and all(
        np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb)
    )


class Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing in the library may catch it."""


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """An uninterrupted smoke run: 20 steps, checkpoints at 10 and 20 (keep 2)."""
    run_dir = tmp_path_factory.mktemp("rel") / "full"
    res = run(smoke(), run_dir, progress=False, log=lambda m: None)
    assert res.final["spectra"]["mope_omega"] and res.final["tokens_per_s"]
    return res


def copy_run(full, tmp_path, name="copy") -> Path:
    dst = tmp_path / name
    shutil.copytree(full.run_dir, dst, ignore=shutil.ignore_patterns(".lock*"))
    return dst


def same_record(a: dict, b: dict) -> None:
    """Equal except wall-clock fields (rates and seconds are measured, not computed)."""
    drop = ("tokens_per_s", "train_seconds", "env")
    assert {k: v for k, v in a.items() if k not in drop} == {
        k: v for k, v in b.items() if k not in drop
    }
    assert isinstance(b["tokens_per_s"], float) and b["tokens_per_s"] > 0


# --------------------------------------------------------------------------- 1. kill windows


def test_kill_after_final_save_before_record_resumes_into_the_full_record(
    tmp_path, monkeypatch, full
):
    def kill(path):
        raise Killed

    monkeypatch.setattr(loop_mod, "record_hook", kill)
    with pytest.raises(Killed):
        run(smoke(), tmp_path / "r", progress=False, log=lambda m: None)
    assert not (tmp_path / "r" / "final.json").exists()
    monkeypatch.undo()
    logs = []
    again = run(
        smoke(), tmp_path / "r", progress=False, log=logs.append
    )  # used to crash on tokens_per_s None
    assert any("from step 20" in m for m in logs)
    same_record(full.final, again.final)  # spectra recomputed from the restored state
    assert again.final["spectra"] == full.final["spectra"] and again.final["spectra"]
    assert json.loads((tmp_path / "r" / "final.json").read_text()) == json.loads(
        json.dumps(again.final)
    )
    assert (
        main(
            [
                "train",
                "--preset",
                "smoke",
                "--no-progress",
                "--run-dir",
                str(tmp_path / "r"),
                *MOPE,
                "name=smoke",
            ]
        )
        == 0
    )


def test_kill_during_record_write_leaves_no_half_record(tmp_path, monkeypatch, full):
    run_dir = copy_run(full, tmp_path)
    (run_dir / "final.json").unlink()
    real_replace = os.replace

    def killed_replace(src, dst):
        if Path(dst).name == "final.json":
            raise Killed
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", killed_replace)
    with pytest.raises(Killed):
        run(smoke(), run_dir, progress=False, log=lambda m: None)
    monkeypatch.undo()
    assert not (run_dir / "final.json").exists() and not list(run_dir.glob(".final.json.tmp*"))
    again = run(smoke(), run_dir, progress=False, log=lambda m: None)
    same_record(full.final, again.final)


def test_half_written_record_is_rebuilt_and_a_complete_one_is_kept(tmp_path, full):
    run_dir = copy_run(full, tmp_path)
    text = (run_dir / "final.json").read_text()
    (run_dir / "final.json").write_text(text[: len(text) // 2])  # what a non-atomic writer left
    again = run(smoke(), run_dir, progress=False, log=lambda m: None)
    same_record(full.final, again.final)
    before = (run_dir / "final.json").read_bytes()
    run(smoke(), run_dir, progress=False, log=lambda m: None)
    assert (
        run_dir / "final.json"
    ).read_bytes() == before  # a finished run reopened keeps its record


def test_finished_sweep_rerun_keeps_and_rebuilds_records_with_spectra(tmp_path):
    from mope_jax.sweep import sweep

    cfg = smoke("train.max_steps=10", "train.checkpoint_interval=5")  # checkpoints at 5 and 10
    res = sweep(cfg, [0, 1], tmp_path / "s", strategy="map", progress=False, log=lambda m: None)
    files = [tmp_path / "s" / f"seed{s}" / "final.json" for s in (0, 1)]
    before = [f.read_bytes() for f in files]
    assert all(r["spectra"]["mope_omega"] for r in res.records)
    sweep(cfg, [0, 1], tmp_path / "s", strategy="map", progress=False, log=lambda m: None)
    assert [f.read_bytes() for f in files] == before  # not rewritten without spectra
    files[1].unlink()  # killed after the final save, before the second record
    again = sweep(cfg, [0, 1], tmp_path / "s", strategy="map", progress=False, log=lambda m: None)
    assert (
        again.records[1]["spectra"] == res.records[1]["spectra"]
        and again.records[1]["tokens_per_s"]
    )
    assert json.loads(files[1].read_text())["curve"] == res.records[1]["curve"]
    # a damaged newest sweep checkpoint: resume from step 5 to the same records, bitwise
    for f in files:
        f.unlink()
    CORRUPTIONS["flipped bytes in a data file"](tmp_path / "s" / "checkpoints" / "10")
    logs = []
    resumed = sweep(cfg, [0, 1], tmp_path / "s", strategy="map", progress=False, log=logs.append)
    assert any("step 10" in m and "skipped" in m for m in logs) and any(
        "from step 5" in m for m in logs
    )
    assert leaves_equal(resumed.states.params, res.states.params)
    for a, b in zip(res.records, resumed.records):
        assert (a["curve"], a["final_val_loss"], a["spectra"]) == (
            b["curve"],
            b["final_val_loss"],
            b["spectra"],
        )


# --------------------------------------------------------------------------- 3. damaged checkpoints


def _largest_data_file(step_dir: Path) -> Path:
    return max(
        (p for p in (step_dir / "state").rglob("*") if p.is_file() and p.parent.name == "d"),
        key=lambda p: p.stat().st_size,
    )


def _flip(path: Path) -> None:
    b = bytearray(path.read_bytes())
    for i in range(len(b) // 3, len(b) // 3 + 64):
        b[i] ^= 0xFF
    path.write_bytes(bytes(b))


def _retag_digest(step_dir: Path) -> None:
    meta = json.loads((step_dir / "meta" / "metadata").read_text())
    meta[DIGEST_KEY] = "0" * 64  # the arrays no longer match what was saved with them
    (step_dir / "meta" / "metadata").write_text(json.dumps(meta))


CORRUPTIONS = {
    "deleted data file": lambda s: _largest_data_file(s).unlink(),
    "truncated data file": lambda s: os.truncate(
        _largest_data_file(s), _largest_data_file(s).stat().st_size // 2
    ),
    "missing _METADATA": lambda s: (s / "state" / "_METADATA").unlink(),
    "missing meta item": lambda s: shutil.rmtree(s / "meta"),
    "emptied step dir": lambda s: [
        shutil.rmtree(p) if p.is_dir() else p.unlink() for p in list(s.iterdir())
    ],
    "garbage metadata": lambda s: (s / "meta" / "metadata").write_text("{not json"),
    "deleted manifest": lambda s: (s / "state" / "manifest.ocdbt").unlink(),
    "flipped bytes in a data file": lambda s: _flip(_largest_data_file(s)),
    "arrays differ from their digest": _retag_digest,
}


@pytest.mark.parametrize("kind", list(CORRUPTIONS))
def test_damaged_latest_checkpoint_falls_back_to_the_older_intact_one(tmp_path, capsys, full, kind):
    run_dir = copy_run(full, tmp_path)
    CORRUPTIONS[kind](run_dir / "checkpoints" / "20")
    _, state, _ = load_run(run_dir)
    assert int(state.step) == 10
    _, good, _ = load_run(full.run_dir, step=10)
    assert leaves_equal(state, good)
    err = capsys.readouterr().err
    assert "checkpoint step 20" in err and "skipped" in err, err


def test_resume_after_damage_and_a_partial_metrics_line_equals_uninterrupted(tmp_path, full):
    run_dir = copy_run(full, tmp_path)
    (run_dir / "final.json").unlink()
    CORRUPTIONS["truncated data file"](run_dir / "checkpoints" / "20")
    with (run_dir / "metrics.jsonl").open("a") as f:
        f.write('{"step": 25, "loss": 1.2')  # a kill during an append
    logs = []
    res = run(smoke(), run_dir, progress=False, log=logs.append)
    assert any("step 20" in m and "skipped" in m for m in logs) and any(
        "from step 10" in m for m in logs
    )
    assert leaves_equal(res.state.params, full.state.params) and leaves_equal(
        res.state.opt_state, full.state.opt_state
    )
    same_record(full.final, res.final)
    assert [p.name.split("-")[0] for p in (run_dir / SKIPPED_DIR).iterdir()] == ["20"]
    assert [r["step"] for r in read_jsonl(run_dir / "metrics.jsonl")] == list(range(5, 21, 5))


def test_no_intact_checkpoint_is_one_error_naming_every_step(tmp_path, full):
    run_dir = copy_run(full, tmp_path)
    for step in ("10", "20"):
        CORRUPTIONS["garbage metadata"](run_dir / "checkpoints" / step)
    with pytest.raises(CheckpointError, match=r"no intact checkpoint .*step 20: .*step 10: "):
        load_run(run_dir)


# --------------------------------------------------------------------------- 2. non-finite


def test_non_finite_parameters_are_never_saved_and_the_message_names_the_real_last_good(
    tmp_path, monkeypatch
):
    calls = []

    def finite_until_step_15(params, flag=None):
        calls.append(1)
        return len(calls) < 3  # chunks end at 5, 10, 15: the third state is "bad"

    monkeypatch.setattr(loop_mod, "params_finite", finite_until_step_15)
    with pytest.raises(
        TrainingError,
        match=r"parameters became non-finite by step 15; the last good checkpoint "
        r"\(step 10\)",
    ):
        run(smoke(), tmp_path / "r", progress=False, log=lambda m: None)
    with Checkpointer(tmp_path / "r" / "checkpoints", read_only=True) as ck:
        assert ck.all_steps() == [10]


def test_non_finite_before_any_checkpoint_says_none_exists(tmp_path):
    with pytest.raises(TrainingError) as e:
        run(
            smoke("train.lr=1e30", "train.grad_clip=1e30", "train.warmup_steps=1"),
            tmp_path / "nan",
            progress=False,
        )
    assert "no checkpoint was saved" in str(e.value) and "None" not in str(e.value)


# --------------------------------------------------------------------------- 4. lock


def test_second_process_on_a_run_dir_is_refused(tmp_path, full):
    run_dir = copy_run(full, tmp_path)
    with RunLock(run_dir):  # another open file description: flock conflicts like another process
        with pytest.raises(
            RunLockedError, match=f"in use by another process \\(pid {os.getpid()}\\)"
        ):
            run(smoke(), run_dir, progress=False)
    run(smoke(), run_dir, progress=False, log=lambda m: None)  # released: fine again


def test_lock_held_by_a_live_process_refuses_and_a_killed_holder_does_not_block(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time
        from mope_jax.rundir import RunLock
        RunLock({str(tmp_path)!r}).acquire()
        print("locked", flush=True)
        time.sleep(60)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunLockedError, match=f"pid {holder.pid}"):
            RunLock(tmp_path).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert (tmp_path / ".lock").read_text().strip() == str(holder.pid)  # stale file left behind...
    RunLock(
        tmp_path
    ).acquire().release()  # ...does not block: the OS dropped the dead process's flock


# --------------------------------------------------------------------------- 5. resume checks


def test_changed_model_config_is_refused_before_any_array_is_restored(tmp_path, monkeypatch, full):
    run_dir = copy_run(full, tmp_path)

    def no_restore(*a, **k):
        raise AssertionError("Orbax restore reached")

    monkeypatch.setattr(Checkpointer, "restore", no_restore)
    with pytest.raises(TrainingError, match=r"another config \(model.n_embd: 32 -> 64\)"):
        run(smoke("model.n_embd=64"), run_dir, progress=False)


def test_changed_corpus_is_refused_on_resume(tmp_path):
    rng = np.random.default_rng(0)
    text = tmp_path / "t.txt"
    text.write_text("".join(rng.choice(list("abcdefgh \n"), 3000)))
    cfg = smoke("data.source=text", f"data.path={text}", "train.max_steps=10")
    run(cfg, tmp_path / "r", progress=False, stop_after=5, log=lambda m: None)
    text.write_text("".join(rng.choice(list("abcdefgh \n"), 3000)))  # same vocabulary, other text
    with pytest.raises(TrainingError, match="the corpus changed since"):
        run(cfg, tmp_path / "r", progress=False)


# --------------------------------------------------------------------------- 7/8. exits and writes


def test_sigterm_exits_with_the_interrupted_code(tmp_path, monkeypatch):
    def enter(self):
        self.set, self._old = True, None  # as if SIGTERM arrived during the first chunk
        return self

    monkeypatch.setattr(loop_mod.SigtermFlag, "__enter__", enter)
    code = main(
        ["train", "--preset", "smoke", "--no-progress", "--run-dir", str(tmp_path / "r"), *MOPE]
    )
    assert code == EXIT_INTERRUPTED != 0
    with Checkpointer(tmp_path / "r" / "checkpoints", read_only=True) as ck:
        assert ck.all_steps() == [5]  # saved before exiting


def test_disk_full_during_save_is_one_line_saying_free_space(tmp_path, monkeypatch, capsys):
    import orbax.checkpoint as ocp

    def full_disk(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ocp.CheckpointManager, "save", full_disk)
    with (
        Checkpointer(tmp_path / "ck") as ck,
        pytest.raises(CheckpointError, match="disk full.*free space"),
    ):
        ck.save(3, {"w": np.ones(3, np.float32)}, {"config": {}})


def test_atomic_write_replaces_whole_files(tmp_path):
    p = tmp_path / "f.json"
    atomic_write_text(p, "old")
    atomic_write_text(p, "new")
    assert p.read_text() == "new" and [q.name for q in tmp_path.iterdir()] == ["f.json"]


def test_disk_full_while_writing_metrics_is_one_line(tmp_path, monkeypatch, full):
    run_dir = copy_run(full, tmp_path)
    (run_dir / "final.json").unlink()
    shutil.rmtree(
        run_dir / "checkpoints" / "20"
    )  # resume from 10: the next chunk appends a metrics line
    real_open = Path.open

    def full_disk(self, mode="r", *a, **k):
        if self.name == "metrics.jsonl" and mode == "a":
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_open(self, mode, *a, **k)

    monkeypatch.setattr(Path, "open", full_disk)
    with pytest.raises(TrainingError, match="disk full while writing in .*free space"):
        run(smoke(), run_dir, progress=False, log=lambda m: None)


# --------------------------------------------------------------------------- Ctrl-C


def _train_until_interrupted(tmp_path, when: str, delay: float = 0.0):
    """``mope-jax train`` in a subprocess, SIGINT ``delay`` s after ``when``: "start" (the run
    dir line: corpus, compilation of init and the first chunk are ahead) or "chunk" (the first
    metrics line: inside the chunk loop). Returns (exit code, stderr, run dir)."""
    import time

    run_dir = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mope_jax", "train", "--preset", "smoke", "--no-progress"]
        + ["--run-dir", str(run_dir), "train.max_steps=100000", "train.checkpoint_interval=1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout.readline().startswith("run dir:")
        if when == "chunk":
            deadline = time.monotonic() + 60
            while (
                not (run_dir / "metrics.jsonl").is_file()
                or not (run_dir / "metrics.jsonl").read_text()
            ):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.05)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err, run_dir


def _one_interrupted_line(code: int, err: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == EXIT_KEYBOARD == 130, (code, err)
    assert "Traceback" not in err and "Segmentation" not in err and "Exception" not in err, err
    assert lines == [INTERRUPTED_MESSAGE], err


def test_ctrl_c_before_the_loop_exits_130_with_one_line(tmp_path):
    """SIGINT while the corpus is built and init and the first chunk compile: no segfault at
    exit (unwinding while XLA works can segfault, so the process must not), exit 130, one line."""
    _one_interrupted_line(*_train_until_interrupted(tmp_path, "start")[:2])


def test_ctrl_c_inside_the_loop_saves_then_exits_130(tmp_path):
    code, err, run_dir = _train_until_interrupted(tmp_path, "chunk")
    _one_interrupted_line(code, err)
    with Checkpointer(run_dir / "checkpoints", read_only=True) as ck:
        assert ck.all_steps()  # saved at the chunk boundary after the Ctrl-C


@pytest.mark.slow
@pytest.mark.parametrize(
    "when,delay", [("start", 0.5), ("start", 1.5), ("start", 3.0), ("chunk", 1.0)]
)
def test_ctrl_c_at_early_moments_exits_130(tmp_path, when, delay):
    _one_interrupted_line(*_train_until_interrupted(tmp_path, when, delay)[:2])
