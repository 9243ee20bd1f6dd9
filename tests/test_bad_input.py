"""Every bad input is refused with exactly one ``error:`` line on stderr, no traceback, exit 2.

Table-driven over train / eval / sample / sweep / report / audit / demo / campaign /
rope-advice. Each case of ``CASES`` fails during argument, config, record or run-directory
checks, before anything is compiled, so the CLI's ``main(argv)`` runs in-process; the cases of
``RUN_CASES`` need a trained run (one smoke run of 10 steps, shared) or a sweep's checkpoint.
A few cases run as real subprocesses to prove the process exit status.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
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
    (root / "one_char").write_text("a")
    bad_records = {  # a repository root per bad record, at records/base/seed0.json
        "rec_config": {"config": "x"},
        "rec_row": {"row": "other"},
        "rec_seed": {"seed": 1},
        "rec_nan": {"final_val_loss": float("nan")},
    }
    for name, change in bad_records.items():
        rec = {"row": "base", "seed": 0, "config": {"model": {}, "train": {}, "data": {}}}
        path = make_campaign_root(root / name) / RECORDS / "base" / "seed0.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(rec | change))
    make_campaign_root(root / "campaign")
    return {p.name: str(p) for p in root.iterdir()} | {
        "root": str(root),
        "missing": str(root / "nope"),
        "under_file": str(root / "a_file" / "run"),
    }


TINY = """
from mope_jax.campaign import Experiment, Row, Scale

EXPERIMENT = Experiment(
    name="tiny",
    title="Tiny",
    rows=(Row("base", "learned"), Row("other", "learned", ("train.lr=2e-2",))),
    scales=(
        Scale(
            "t",
            model=dict(block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0),
            train=dict(batch_size=4, max_steps=4, eval_interval=2, eval_batches=1,
                       log_interval=2, checkpoint_interval=2),
            seeds=1,
        ),
    ),
    baseline="base",
    data=dict(source="blocks", num_tokens=3000),
)
"""
RECORDS = Path("experiments", "results", "tiny", "t", "records")


def make_campaign_root(root: Path) -> Path:
    """A repository root declaring the campaign ``tiny`` (2 rows, 1 seed, no records)."""
    (root / "experiments").mkdir(parents=True)
    (root / "experiments" / "__init__.py").write_text('CAMPAIGNS = ("tiny",)\n')
    (root / "experiments" / "tiny.py").write_text(TINY)
    return root


CAMPAIGN = ["campaign", "status", "tiny", "--scale", "t", "--root"]

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
    # train: seeds are integers in [0, 2**32 - 1], what jax.random.PRNGKey keeps unwrapped
    (TRAIN + ["train.seed=99999999999999999999"], "train.seed=99999999999999999999 is invalid"),
    (TRAIN + ["train.seed=-1"], "seeds are integers in [0, 4294967295]"),
    (TRAIN + ["train.seed=4294967296"], "train.seed=4294967296 is invalid"),
    # train: data that would train silently wrong
    (TRAIN + ["data.block_len=300000"], "is longer than the corpus (data.num_tokens=5000)"),
    (TRAIN + ["model.vocab_size=5"], "model.vocab_size=5 is smaller than the 17 symbols"),
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
    (SWEEP + ["--first-seed", "99999999999999999999"], "seeds are integers in [0, 4294967295]"),
    (SWEEP + ["--first-seed", "4294967295"], "reaches seed 4294967296"),
    (SWEEP + ["--grid", "train.lr=1e-3,1e-3", "--run-dir", "{missing}"], "repeats 0.001"),
    (
        SWEEP + ["--grid", "train.lr=1e-3", "--grid", "lr=3e-3", "--run-dir", "{missing}"],
        "sweep the same field",
    ),
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
    # campaign: records, wherever they are read, are checked (the file, what, the fix)
    (CAMPAIGN + ["{rec_config}"], "seed0.json: its config is not an object holding model"),
    (CAMPAIGN + ["{rec_seed}"], "move it to records/base/seed1.json or delete it"),
    (CAMPAIGN + ["{rec_nan}"], "its final_val_loss is nan, not a finite number"),
    (
        ["report", "--regenerate", "{rec_row}/experiments/results"],
        "the record is row other seed 0, its path says row base seed0; move it to "
        "records/other/seed0.json",
    ),
    # campaign: what to run, and hints that name the campaign's own options
    (CAMPAIGN + ["{campaign}", "--rows", ","], "--rows ',' names no row"),
    (CAMPAIGN + ["{campaign}", "--rows", ""], "--rows '' names no row"),
    (CAMPAIGN + ["{campaign}", "--corpus", "{missing}"], "--corpus {missing} does not exist"),
    (
        ["campaign", "estimate", "tiny", "--scale", "t", "--root", "{campaign}"]
        + ["--corpus", "{one_char}"],
        "give a longer --corpus",
    ),
    (
        ["campaign", "run", "tiny", "--scale", "t", "--root", "{campaign}"]
        + ["--work-dir", "{a_file}"],
        "is a file, not a folder; give a writable --work-dir",
    ),
    (
        ["campaign", "run", "tiny", "--scale", "t", "--root", "{campaign}"]
        + ["--no-measure", "--budget-minutes", "5"],
        "--no-measure with --budget-minutes: a budget needs each row's pace",
    ),
    # rope-advice names its own option
    (["rope-advice", "--data", "{one_char}"], "give --data a longer corpus"),
    (["rope-advice", "--data", "blocks:B=10,N=5"], "B=10 is longer than the stream (N=5)"),
    # audit
    (["audit", "--slot", "nosuch"], "--slot 'nosuch' is not a slot"),
    (["audit", "--seq-len", "-4"], "--seq-len"),
    (["audit", "--seq-len", "0"], "--seq-len"),
    # demo and the command itself
    (["demo", "--steps", "0"], "--steps"),
    (["nosuch"], "invalid choice"),
]


SMOKE_RUN = TRAIN + ["train.max_steps=10"]

# cases that need `made`: a trained run, its corpus, another corpus, a sweep's checkpoint
RUN_CASES = [
    (["eval", "--run-dir", "{trained}", "--data", "{other}"], "is not the corpus this run was"),
    (["eval", "--run-dir", "{trained}", "--data", "{one_char}"], "give --data the corpus"),
    (["eval", "--run-dir", "{sweep}"], "holds a sweep of 2 runs (seeds 0, 1)"),
    (["sample", "--run-dir", "{sweep}/seed0"], "is one run of the sweep in"),
    (TRAIN + ["--run-dir", "{sweep}"], "holds a sweep of 2 runs, not one run"),
    (SMOKE_RUN + ["--data", "{corpus}", "--run-dir", "{emptied}"], "lines are missing"),
]


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A finished smoke run trained on a text file named relative to the working directory,
    that run with its metrics.jsonl emptied, another corpus, and a sweep's checkpoint (a
    stand-in state: it is refused from its meta, before any array is read)."""
    from mope_jax.checkpoint import Checkpointer
    from mope_jax.presets import get_preset

    root = tmp_path_factory.mktemp("made")
    (root / "corpus.txt").write_text("to be, or not to be: that is the question. " * 40)
    (root / "other.txt").write_text("whether 'tis nobler in the mind to suffer " * 40)
    cwd = os.getcwd()
    os.chdir(root)
    try:
        argv = SMOKE_RUN + ["--data", "corpus.txt", "--run-dir", "trained"]
        assert main(argv) == 0
    finally:
        os.chdir(cwd)
    shutil.copytree(root / "trained", root / "emptied")
    (root / "emptied" / "metrics.jsonl").write_text("")
    meta = {"config": get_preset("smoke").to_dict(), "runs": [[{}, 0], [{}, 1]], "seeds": [0, 1]}
    with Checkpointer(root / "sweep" / "checkpoints") as ck:
        ck.save(2, {"w": np.ones(3, np.float32)}, meta | {"vocab": ["a", "b"]})
    (root / "sweep" / "seed0").mkdir()
    return {p.name.removesuffix(".txt"): str(p) for p in root.iterdir()} | {"root": str(root)}


def run_main(argv) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse exits on its own errors
        return e.code


def one_error_line(argv, fragment, where, capsys) -> None:
    argv = [a.format(**where) for a in argv]
    with RunLock(where["locked"]):  # held as another process would hold it
        code = run_main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert fragment.format(**where) in lines[0], lines[0]


@pytest.mark.parametrize("argv,fragment", CASES, ids=[" ".join(a) for a, _ in CASES])
def test_bad_input_is_one_error_line_and_exit_2(argv, fragment, places, capsys):
    one_error_line(argv, fragment, places, capsys)


@pytest.mark.parametrize("argv,fragment", RUN_CASES, ids=[" ".join(a) for a, _ in RUN_CASES])
def test_bad_input_about_a_run_is_one_error_line(argv, fragment, places, made, capsys):
    one_error_line(argv, fragment, places | made, capsys)


def test_a_run_finds_its_corpus_from_anywhere_and_samples_without_it(
    made, tmp_path, monkeypatch, capsys
):
    """The run was trained on ``corpus.txt`` typed relative to its folder: its stored config
    holds the absolute path (and its checkpoint the sha256); eval works from elsewhere, points
    at a moved corpus with --data, and sample needs only the checkpoint's vocabulary."""
    run_dir, corpus = made["trained"], Path(made["corpus"])
    cfg = json.loads((Path(run_dir) / "config.json").read_text())
    assert cfg["data"]["path"] == str(corpus.resolve())
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--run-dir", run_dir]) == 0
    moved = tmp_path / "moved.txt"
    corpus.rename(moved)
    try:
        capsys.readouterr()
        assert main(["eval", "--run-dir", run_dir]) == 2
        assert "is gone (moved or deleted); point eval at it with --data PATH" in (
            capsys.readouterr().err
        )
        assert main(["eval", "--run-dir", run_dir, "--data", str(moved)]) == 0
        assert '"step": 10' in capsys.readouterr().out
        code = main(["sample", "--run-dir", run_dir, "--prompt", "to be", "--tokens", "8"])
        out = capsys.readouterr()
        assert code == 0 and out.out.startswith("to be") and "vocabulary alone" in out.err
    finally:
        moved.rename(corpus)


def user_access(monkeypatch) -> None:
    """As root, every folder is writable: judge the owner's write bit, as for a user."""
    real = os.access

    def access(path, mode, *args, **kwargs):
        if mode & os.W_OK and not os.stat(path).st_mode & stat.S_IWUSR:
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


def test_a_finished_run_in_a_read_only_folder_reports_its_record(
    made, tmp_path, monkeypatch, capsys
):
    run_dir = tmp_path / "read-only"
    shutil.copytree(made["trained"], run_dir)
    user_access(monkeypatch)
    run_dir.chmod(0o555)
    try:
        code = main(SMOKE_RUN + ["--data", made["corpus"], "--run-dir", str(run_dir)])
    finally:
        run_dir.chmod(0o755)
    out = capsys.readouterr()
    assert code == 0 and "error" not in out.err, out.err
    assert "read-only and holds this run, finished" in out.out and "done: 10 steps" in out.out


def test_campaign_run_refuses_read_only_records_before_training(places, monkeypatch, capsys):
    root = Path(places["root"]) / "read_only_campaign"
    records = make_campaign_root(root) / RECORDS
    records.mkdir(parents=True)
    user_access(monkeypatch)
    records.chmod(0o555)
    try:
        code = run_main(["campaign", "run", "tiny", "--scale", "t", "--root", str(root)])
    finally:
        records.chmod(0o755)
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, lines
    assert "cannot write the records and table in" in lines[0] and "is not writable" in lines[0]
    assert not (root / "runs").exists()  # nothing was trained


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


# Absurd sizes are refused by the memory estimate (mope_jax.memory), before anything
# is allocated; sizes far beyond any machine, so the refusal does not depend on this one's
ABSURD = [
    (TRAIN + ["train.batch_size=1000000000"], "lower train.batch_size"),
    (TRAIN + ["train.eval_batches=100000000000"], "lower train.eval_batches"),
    (TRAIN + ["model.n_embd=1000000"], "lower model.n_embd"),
    (TRAIN + ["model.n_layer=10000000"], "model.n_layer"),
    (SWEEP + ["--seeds", "1000000000"], "lower --seeds"),
    (["rope-advice", "--data", "repeat:W=8,N=100000000000"], "lower N"),
    (["rope-advice", "--data", "/dev/zero"], "is not a file"),
    (TRAIN + ["--data", "/dev/zero"], "is not a regular file"),
]


@pytest.mark.parametrize("argv,fragment", ABSURD, ids=[" ".join(a) for a, _ in ABSURD])
def test_absurd_sizes_are_refused_by_the_estimate(argv, fragment, places, capsys, monkeypatch):
    import time

    import jax

    def no_alloc(*a, **k):
        raise AssertionError("an allocation was attempted")

    monkeypatch.setattr(jax, "jit", no_alloc)  # refused before any program is built
    t0 = time.monotonic()
    argv = [*argv, "--run-dir", places["missing"]] if argv[0] in ("train", "sweep") else argv
    one_error_line(argv, fragment, places, capsys)
    assert time.monotonic() - t0 < 5


def test_a_fifo_is_refused_as_a_corpus(places, tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    one_error_line(TRAIN + ["--data", str(fifo)], "is not a regular file", places, capsys)


def test_out_of_memory_where_it_still_happens_is_one_line(monkeypatch, capsys):
    import mope_jax.cli as cli

    def oom(args):
        raise (getattr(np, "_core", None) or np.core)._exceptions._ArrayMemoryError(
            (10**12,), np.dtype(np.float32)
        )

    monkeypatch.setattr(cli, "cmd_presets", oom)
    assert main(["presets"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: out of memory") and "lower" in err
