"""The campaigns' default corpus: TinyShakespeare through tensorflow-datasets (kept as a text
file), offline from a manual dir (``--tfds-manual-dir`` / ``$MOPE_JAX_TFDS_MANUAL_DIR``), or
``--corpus``; never a folder beside the clone. Every test here runs without the network: each
connection attempt either fails as offline or raises an error nothing retries."""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import socket
import urllib.request
from pathlib import Path

import pytest

from mope_jax import campaign
from mope_jax.campaign.configs import config_diff, corpus_diff
from mope_jax.campaign.records import read_record
from mope_jax.cli import main
from mope_jax.data import tfds_source

REPO = Path(__file__).resolve().parents[1]

# a text campaign on the default corpus (no ``data=``) and a block-task one
SHAK = """
from mope_jax.campaign import Experiment, Row, Scale

EXPERIMENT = Experiment(
    name="shak",
    title="default corpus",
    rows=(Row("base", "learned"),),
    scales=(
        Scale(
            "t",
            model=dict(block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0),
            train=dict(batch_size=4, max_steps=4, lr=1e-2, warmup_steps=1, eval_interval=2,
                       eval_batches=1, log_interval=2, checkpoint_interval=2),
            seeds=1,
        ),
    ),
    baseline="base",
    claim="the default corpus",
    audit=False,
)
"""
BLOCKY = SHAK.replace('name="shak"', 'name="blocky"').replace(
    "    audit=False,\n", '    audit=False,\n    data=dict(source="blocks", num_tokens=3000),\n'
)


def make_root(path: Path) -> Path:
    (path / "experiments").mkdir(parents=True)
    (path / "experiments" / "__init__.py").write_text('CAMPAIGNS = ("shak", "blocky")\n')
    (path / "experiments" / "shak.py").write_text(SHAK)
    (path / "experiments" / "blocky.py").write_text(BLOCKY)
    return path


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No manual dir, an empty cache and tfds data dir, and no network: the probe's connection
    fails as offline, any other attempt (a download) raises RuntimeError, which urllib3 does
    not retry. Yields the attempted connections, ("probe" | "download", where)."""
    attempts = []

    def unreachable(address, *args, **kwargs):
        attempts.append(("probe", address))
        raise OSError(f"offline: {address}")

    def refuse(*args, **kwargs):
        attempts.append(("download", args))
        raise RuntimeError(f"network access attempted: {args!r:.200}")

    monkeypatch.delenv(tfds_source.MANUAL_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("TFDS_DATA_DIR", str(tmp_path / "tfds"))
    monkeypatch.setattr(urllib.request, "getproxies", lambda: {})
    monkeypatch.setattr(socket, "create_connection", unreachable)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield attempts


def _one_error_line(capsys) -> str:
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), cap.err
    assert "Traceback" not in cap.err and not cap.out.strip(), cap
    return err[0]


def test_no_corpus_anywhere_is_one_line_naming_both_ways(offline, tmp_path, capsys):
    root = make_root(tmp_path / "repo")
    for action in ("status", "run"):
        assert main(["campaign", action, "shak", "--scale", "t", "--root", str(root)]) == 2
        line = _one_error_line(capsys)
        assert "TinyShakespeare is not available" in line, line
        for way in ("--corpus PATH", "--tfds-manual-dir DIR", "MOPE_JAX_TFDS_MANUAL_DIR=DIR"):
            assert way in line, (way, line)
        assert "input.txt" in line and "shared" not in line, line
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.txt"))
    assert all(kind == "probe" for kind, _ in offline), offline

    # a manual dir without the file names the option it came from and --corpus
    (tmp_path / "empty").mkdir()
    argv = ["campaign", "status", "shak", "--scale", "t", "--root", str(root)]
    assert main([*argv, "--tfds-manual-dir", str(tmp_path / "empty")]) == 2
    line = _one_error_line(capsys)
    assert "--tfds-manual-dir" in line and "holds no input.txt" in line and "--corpus" in line
    assert main([*argv, "--tfds-manual-dir", "x", "--corpus", "y"]) == 2
    assert "give one of them" in _one_error_line(capsys)

    # a campaign on other data never looks for the corpus
    assert main(["campaign", "status", "blocky", "--scale", "t", "--root", str(root)]) == 0
    assert "total: 0 of 1 runs done, 1 missing" in capsys.readouterr().out


def _assert_records_current(c) -> None:
    """Every committed record of ``c`` is done, none stale, checked both through ``plan`` and
    through config_diff / corpus_diff of one record directly."""
    plans = campaign.plan(c)
    assert plans and all(not p.stale and not p.missing for p in plans), [
        (p.row.name, p.stale, p.missing) for p in plans
    ]
    row = c.rows[0]
    rec = read_record(c.record_path(row.name, 0))
    cfg, corpus = c.prepared(row)
    assert corpus.meta["sha256"] == tfds_source.SHA256 == rec["corpus"]["sha256"]
    assert config_diff(rec["config"], c.expected(row, 0)) == []
    assert corpus_diff(rec["corpus"], corpus.meta) == []


def test_manual_dir_gives_the_committed_records_corpus(
    offline, shakespeare_path, tmp_path, monkeypatch
):
    """The manual dir's input.txt is the corpus (a copy elsewhere than the shared folder, whose
    path is all that differs from the one the records name)."""
    folder = tmp_path / "manual"
    folder.mkdir()
    shutil.copyfile(shakespeare_path, folder / "input.txt")
    c = campaign.Campaign.open("paper_a", "mid", REPO, tfds_manual_dir=str(folder))
    assert c.data == {"source": "text", "path": str(folder / "input.txt")}
    _assert_records_current(c)
    monkeypatch.setenv(tfds_source.MANUAL_DIR_ENV, str(folder))
    assert campaign.Campaign.open("paper_a", "mid", REPO).data == c.data
    assert offline == []  # nothing was downloaded or probed


def test_tfds_text_is_kept_as_a_file_and_read_back(
    offline, shakespeare_path, tmp_path, monkeypatch
):
    """The text tfds gives (here handed over by a stand-in for its download) is written once to
    the cache; later opens read the file; a damaged copy is replaced."""
    calls = []

    def tfds_text(*, data_dir="", manual_dir=""):
        calls.append((data_dir, manual_dir))
        return shakespeare_path.read_text(encoding="utf-8")

    monkeypatch.setattr(tfds_source, "tiny_shakespeare_text", tfds_text)
    cached = tmp_path / "cache" / "mope_jax" / "tinyshakespeare" / "input.txt"
    c = campaign.Campaign.open("paper_a", "mid", REPO)
    assert c.data == {"source": "text", "path": str(cached)}
    assert calls == [(str(tmp_path / "tfds"), "")]
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == tfds_source.SHA256
    _assert_records_current(c)
    assert campaign.Campaign.open("paper_a", "mid", REPO).data == c.data and len(calls) == 1
    cached.write_text("damaged")
    assert tfds_source.tiny_shakespeare_file() == cached and len(calls) == 2
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == tfds_source.SHA256


@pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="building tfds tiny_shakespeare needs TensorFlow (pip install 'mope-jax[tfds]')",
)
def test_a_tfds_build_is_used_without_the_network(offline, shakespeare_path, tmp_path):
    """tiny_shakespeare built once (here from the manual dir), then, with no manual dir and no
    network, the default corpus is tfds's text: the same bytes, written to the cache."""
    tfds_source.tiny_shakespeare_text(
        data_dir=str(tmp_path / "tfds"), manual_dir=str(shakespeare_path.parent)
    )
    path = tfds_source.tiny_shakespeare_file()
    assert path == tmp_path / "cache" / "mope_jax" / "tinyshakespeare" / "input.txt"
    assert path.read_bytes() == shakespeare_path.read_bytes()
    assert offline == []
