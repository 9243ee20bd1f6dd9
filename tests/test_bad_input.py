"""Every bad input is refused with exactly one ``error:`` line on stderr, no traceback, exit 2.

Table-driven over train / eval / sample / sweep / report / audit / demo (there is no
``campaign`` subcommand). Each case fails during argument, config or run-directory checks,
before anything is compiled, so the CLI's ``main(argv)`` runs in-process; a few cases run as
real subprocesses to prove the process exit status.
"""

import os
import subprocess
import sys

import pytest

from mope_jax.cli import main
from mope_jax.rundir import RunLock

TRAIN = ["train", "--preset", "smoke", "--no-progress"]
SWEEP = ["sweep", "--preset", "smoke", "--no-progress", "--seeds", "2"]


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Files and folders the cases point at: {name: path}."""
    root = tmp_path_factory.mktemp("bad")
    (root / "a_file").write_text("not a folder")
    (root / "empty_ckpts" / "checkpoints").mkdir(parents=True)
    (root / "corrupt" / "seed0").mkdir(parents=True)
    (root / "corrupt" / "seed0" / "final.json").write_text('{"name": "x", "seed": 0, "final_val')
    (root / "not_record" / "seed0").mkdir(parents=True)
    (root / "not_record" / "seed0" / "final.json").write_text("[1, 2]")
    (root / "no_records").mkdir()
    (root / "locked").mkdir()
    return {p.name: str(p) for p in root.iterdir()} | {
        "root": str(root),
        "missing": str(root / "nope"),
        "under_file": str(root / "a_file" / "run"),
    }


# (argv with {placeholders}, a fragment the one line must contain: the key, the fix)
CASES = [
    # train: config values, refused when the config is built
    (TRAIN + ["train.lr=-1"], "train.lr=-1.0 is invalid"),
    (TRAIN + ["train.lr=nan"], "train.lr=nan"),
    (TRAIN + ["model.dropout=2"], "model.dropout"),
    (TRAIN + ["train.eval_batches=0"], "train.eval_batches"),
    (TRAIN + ["train.max_steps=0"], "train.max_steps"),
    (TRAIN + ["train.keep_checkpoints=0"], "train.keep_checkpoints"),
    (TRAIN + ["train.warmup_steps=-1"], "train.warmup_steps"),
    (TRAIN + ["train.grad_clip=-1"], "train.grad_clip"),
    (TRAIN + ["train.batch_size=-4"], "train.batch_size"),
    (TRAIN + ["model.n_head=0"], "model.n_head"),
    (TRAIN + ["model.n_head=3"], "not divisible by n_head=3"),
    (TRAIN + ["data.train_fraction=1.5"], "data.train_fraction"),
    (TRAIN + ["model.pos_encoding=nosuch"], "model.pos_encoding='nosuch' is unknown"),
    (TRAIN + ["model.qk_filter=nosuch"], "model.qk_filter='nosuch' is unknown"),
    (TRAIN + ["train.decay_group=some"], "train.decay_group"),
    (TRAIN + ["model.rope_scaling=nosuch"], "model.rope_scaling='nosuch' is unknown"),
    (TRAIN + ["model.mope_constraint=nosuch"], "model.mope_constraint='nosuch' is unknown"),
    (TRAIN + ["model.mixer=nosuch"], "model.mixer='nosuch' is unknown"),
    (
        TRAIN + ["--variant", "causal-freq-qk", "model.filter_phase=phase_rand"],
        "model.filter_phase=phase_rand is not read by qk_filter 'causal-freq'",
    ),
    (TRAIN + ["train.eval_interval=0"], "train.eval_interval"),
    (TRAIN + ["train.lr=abc"], "train.lr=1"),
    (TRAIN + ["train.nosuch=1"], "valid keys"),
    (TRAIN + ["lr"], "key=value"),
    (TRAIN + ["--preset", "nosuch"], "mope-jax presets"),
    (TRAIN + ["--variant", "nosuch"], "mope-jax presets"),
    # train: command-line values and run directories
    (TRAIN + ["--stop-after", "-1"], "--stop-after"),
    (TRAIN + ["--stop-after", "0"], "--stop-after"),
    (TRAIN + ["--stop-after", "abc"], "not an integer"),
    (TRAIN + ["--data", ""], "--data"),
    (TRAIN + ["--data", "{missing}"], "does not exist"),
    (TRAIN + ["--run-dir", "{a_file}"], "is a file, not a folder"),
    (TRAIN + ["--run-dir", "{under_file}"], "cannot create run dir"),
    (TRAIN + ["--run-dir", "{locked}"], "in use by another process"),
    (TRAIN + ["--no-such-flag"], "unrecognized arguments"),
    # eval
    (["eval", "--run-dir", "{empty_ckpts}"], "has no checkpoints"),
    (["eval", "--run-dir", "{missing}"], "has no checkpoints"),
    (["eval", "--run-dir", "{root}", "--batches", "0"], "--batches"),
    (["eval", "--run-dir", "{root}", "--data", ""], "--data"),
    (["eval"], "--run-dir"),
    # sample
    (["sample", "--run-dir", "{root}", "--tokens", "-5"], "--tokens"),
    (["sample", "--run-dir", "{root}", "--tokens", "0"], "--tokens"),
    (["sample", "--run-dir", "{root}", "--temperature", "-1"], "--temperature"),
    (["sample", "--run-dir", "{root}", "--temperature", "nan"], "--temperature"),
    (["sample", "--run-dir", "{root}", "--top-k", "-1"], "--top-k"),
    (["sample", "--run-dir", "{empty_ckpts}"], "has no checkpoints"),
    # sweep
    (SWEEP + ["train.max_steps=0"], "train.max_steps"),
    (SWEEP + ["--seeds", "0"], "--seeds"),
    (SWEEP + ["--first-seed", "-1"], "--first-seed"),
    (SWEEP + ["--data-parallel", "0"], "--data-parallel"),
    (SWEEP + ["--stop-after", "-3"], "--stop-after"),
    (SWEEP + ["--strategy", "pmapp", "--run-dir", "{missing}"], "unknown sweep strategy"),
    (SWEEP + ["--grid", "train.lr=abc", "--run-dir", "{missing}"], "values must be numbers"),
    (
        SWEEP + ["--grid", "train.lr=-1,1e-3", "--run-dir", "{missing}", "--strategy", "map"],
        "train.lr=-1.0 is invalid",
    ),
    (SWEEP + ["--grid", "train.batch_size=4,8", "--run-dir", "{missing}"], "cannot sweep"),
    (SWEEP + ["--run-dir", "{a_file}"], "is a file, not a folder"),
    # report
    (["report", "{missing}", "--out", "{root}/t.md"], "no such file or folder"),
    (
        ["report", "{corrupt}", "--out", "{root}/t.md"],
        "corrupt/seed0/final.json: not a readable run record",
    ),
    (
        ["report", "{not_record}", "--out", "{root}/t.md"],
        "not_record/seed0/final.json: not a run record",
    ),
    (["report", "{no_records}", "--out", "{root}/t.md"], "no final.json records"),
    (["report", "{no_records}"], "needs run folders and --out"),
    (["report", "--regenerate", "--out", "{root}/t.md"], "--regenerate re-renders"),
    # audit
    (["audit", "--slot", "nosuch"], "--slot 'nosuch' is not a slot"),
    (["audit", "--seq-len", "-4"], "--seq-len"),
    (["audit", "--seq-len", "0"], "--seq-len"),
    # demo and the command itself
    (["demo", "--steps", "0"], "--steps"),
    (["nosuch"], "invalid choice"),
]


def run_main(argv) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse exits on its own errors
        return e.code


@pytest.mark.parametrize("argv,fragment", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_error_line_and_exit_2(argv, fragment, places, capsys):
    argv = [a.format(**places) for a in argv]
    with RunLock(places["locked"]):  # held as another process would hold it
        code = run_main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert fragment.format(**places) in lines[0], lines[0]


def test_the_table_is_wide():
    commands = {a[0] for a, _ in CASES}
    assert len(CASES) >= 40 and commands >= {"train", "eval", "sample", "sweep", "report", "audit"}


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (TRAIN + ["train.lr=-1"], "train.lr"),
        (["audit", "--slot", "nosuch"], "not a slot"),
        (["sample", "--run-dir", "x", "--temperature", "nan"], "--temperature"),
    ],
)
def test_real_process_exit_status_is_2(argv, fragment):
    proc = subprocess.run(
        [sys.executable, "-m", "mope_jax", *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=120,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert (
        proc.returncode == 2
        and len(lines) == 1
        and lines[0].startswith("error: ")
        and fragment in lines[0]
    ), proc.stderr


def test_an_internal_bug_keeps_its_traceback(monkeypatch):
    import mope_jax.cli as cli

    def bug(args):
        raise KeyError("internal")

    monkeypatch.setattr(cli, "cmd_presets", bug)
    with pytest.raises(KeyError):  # not turned into an "error:" line that blames the input
        main(["presets"])
