"""Sizes and names that used to hang, run out of memory or end in a traceback are refused with
exactly one ``error:`` line naming the option, exit 2, before anything is loaded or created.

Every case runs ``mope_jax.cli.main`` in-process from an empty working directory (where a
default run dir, runs/..., would appear) and checks that the directory is still empty
afterwards; no case trains.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mope_jax.cli import SAMPLE_TOKENS_MAX, _sample_tokens, main

TRAIN = ["train", "--preset", "smoke", "--no-progress"]
SWEEP = ["sweep", "--preset", "smoke", "--no-progress", "--seeds", "2"]
LONG_NAME = "a" * 300  # over the 255-byte file-name limit
LONG_PATH = "/".join(["b" * 100] * 50)  # 5049 bytes, over the 4096-byte path limit


def run_main(argv) -> int:
    try:
        return main(argv)
    except SystemExit as e:  # argparse's own errors
        return e.code


@pytest.fixture
def cwd(tmp_path, monkeypatch) -> Path:
    """An empty working directory: where a default run dir (runs/...) would be created."""
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


def refused(argv, fragments, cwd, capsys) -> str:
    """Run ``argv``; assert exit 2, one ``error:`` line holding every fragment, no traceback,
    and nothing created in the working directory. Returns the line."""
    code = run_main(argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert "Traceback" not in err, err
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert list(cwd.iterdir()) == [], list(cwd.iterdir())
    return lines[0]


# --------------------------------------------------------------------------- sample --tokens

TOKENS = [
    ("100000000", ["--tokens", f"{SAMPLE_TOKENS_MAX:,}", f"--tokens {SAMPLE_TOKENS_MAX} or"]),
    ("1000000000000", ["--tokens", "TinyShakespeare"]),
    (str(SAMPLE_TOKENS_MAX + 1), ["--tokens", f"{SAMPLE_TOKENS_MAX:,}"]),
    ("1e12", ["--tokens", "not an integer"]),
    ("0", ["--tokens", "at least 1"]),
]


@pytest.mark.parametrize("tokens,fragments", TOKENS, ids=[t for t, _ in TOKENS])
def test_sample_tokens_out_of_range_is_refused_before_the_model_loads(
    tokens, fragments, cwd, capsys, monkeypatch
):
    import mope_jax.train

    def no_load(*a, **k):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(mope_jax.train, "load_run", no_load)
    argv = ["sample", "--run-dir", str(cwd / "run"), "--tokens", tokens]
    refused(argv, fragments, cwd, capsys)


def test_sample_tokens_cap_is_inclusive():
    assert _sample_tokens(str(SAMPLE_TOKENS_MAX)) == SAMPLE_TOKENS_MAX
    assert _sample_tokens("1") == 1


def test_sample_of_absurd_length_exits_at_once_as_a_process(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "mope_jax", "sample", "--run-dir", str(tmp_path / "r")]
        + ["--tokens", "100000000"],
        capture_output=True,
        text=True,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        timeout=60,
    )
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert proc.returncode == 2 and len(lines) == 1 and "--tokens" in lines[0], proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_long_generation_reports_progress():
    """``generate`` tells how far it is (here at every step: log_every_s=0)."""
    import jax
    import numpy as np

    from mope_jax.model import init_params
    from mope_jax.presets import get_preset
    from mope_jax.train import generate

    cfg = get_preset("smoke")
    params = init_params(cfg.model, jax.random.PRNGKey(0))
    lines: list[str] = []
    ids = generate(
        cfg, params, np.array([1, 2]), 4, jax.random.PRNGKey(0), log=lines.append, log_every_s=0
    )
    assert ids.shape == (4,)
    assert len(lines) == 4 and lines[-1].startswith("sampling: 4/4 tokens"), lines


# --------------------------------------------------------------------------- long names, paths

LONG = [
    (TRAIN + ["--run-dir", LONG_NAME], ["--run-dir", "300 bytes", "file-name limit of 255"]),
    (TRAIN + ["--run-dir", LONG_PATH], ["--run-dir", "path limit of", "shorter --run-dir"]),
    (SWEEP + ["--run-dir", LONG_NAME], ["--run-dir", "file-name limit of 255"]),
    (["sample", "--run-dir", LONG_PATH], ["--run-dir", "path limit of"]),
    (["eval", "--run-dir", LONG_NAME], ["--run-dir", "file-name limit of 255"]),
    (["report", ".", "--out", LONG_PATH + "/t.md"], ["--out", "path limit of", "shorter --out"]),
    (["report", ".", "--out", LONG_NAME + ".md"], ["--out", "file-name limit of 255"]),
    (TRAIN + [f"name={LONG_NAME}"], ["name=", "300 bytes", "file-name limit", "name=my-run"]),
    (SWEEP + [f"name={LONG_NAME}"], ["name=", "300 bytes", "file-name limit"]),
]


@pytest.mark.parametrize("argv,fragments", LONG, ids=[" ".join(a)[:60] for a, _ in LONG])
def test_too_long_run_dir_name_or_path_is_refused(argv, fragments, cwd, capsys):
    line = refused(argv, fragments, cwd, capsys)
    assert len(line) < 400  # the long value is shortened, not printed whole


def test_default_run_dir_too_deep_names_name_and_run_dir(tmp_path, monkeypatch, capsys):
    """The default run dir, runs/<name>-..., in a working directory so deep that its absolute
    path leaves no room for the checkpoints under it."""
    deep = tmp_path.joinpath(*["d" * 200] * ((4096 - len(str(tmp_path)) - 100) // 201))
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    refused(TRAIN, ["default run dir", "path limit", "shorter name= or a --run-dir"], deep, capsys)


# --------------------------------------------------------------------------- bad names

NAMES = ["", "   ", "a/b", "../up", "a\\b", "a\nb", " lead", "zero\u200bwidth"]


@pytest.mark.parametrize("command", [TRAIN, SWEEP], ids=["train", "sweep"])
@pytest.mark.parametrize("name", NAMES, ids=[repr(n) for n in NAMES])
def test_bad_run_name_is_refused(command, name, cwd, capsys):
    line = refused(command + [f"name={name}"], ["name=", "is invalid", "name=my-run"], cwd, capsys)
    assert "-blocks-s0" not in line


# --------------------------------------------------------------------------- rope-advice

ADVICE = [
    ("blocks:seed=-1", ["--data", "seed=-1", "[0, 4294967295]"]),
    ("repeat:W=8,seed=4294967296", ["--data", "seed=4294967296", "[0, 4294967295]"]),
    ("blocks:K=1", ["--data", "K=1 symbols is too few", "K=4 or more", "r=16"]),
    ("repeat:W=8,K=1", ["--data", "K=1 symbols is too few", "K=2 or more", "r=17"]),
    ("blocks:B=16,K=3", ["--data", "K=3", "K=4 or more", "carries nothing"]),
    ("blocks:B=3,K=5", ["--data", "K=6 or more"]),
]


@pytest.mark.parametrize("data,fragments", ADVICE, ids=[d for d, _ in ADVICE])
def test_rope_advice_seed_and_symbols_are_checked(data, fragments, cwd, capsys, monkeypatch):
    import mope_jax.analysis.rope_advice as ra

    def no_kernel(*a, **k):
        raise AssertionError("the kernel was measured")

    monkeypatch.setattr(ra, "measure_kernel", no_kernel)
    refused(["rope-advice", "--data", data], fragments, cwd, capsys)


def test_rope_advice_bounds_are_inclusive():
    from mope_jax.analysis.rope_advice import load_tokens

    assert load_tokens("blocks:B=16,K=4,N=1000,seed=4294967295").vocab_size == 5
    assert load_tokens("repeat:W=8,K=2,N=1000,seed=0").vocab_size == 3


def test_min_symbols_is_where_the_measured_width_turns_into_the_period():
    """At K = min_symbols the kernel reads the copy's distance; one symbol fewer, the block
    period (the expectation behind the bound, seen on a 200,000-token stream)."""
    from mope_jax.analysis.rope_advice import measure_kernel, min_symbols
    from mope_jax.data.synthetic import block_copy_stream

    k = min_symbols("blocks", 16)
    assert k == 4

    def width(symbols):
        ids = block_copy_stream(200_000, block_len=16, num_symbols=symbols, seed=0)
        return measure_kernel(ids, 40, kind="match").width

    assert width(k) == 14 and width(k - 1) == 16
