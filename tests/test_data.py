"""mope_jax.data: corpora, splits, errors, the block-copy task, batches and offline tfds."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import math
import shutil
import socket
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mope_jax.data as data_lib
from mope_jax.config import DataConfig
from mope_jax.data import (
    DataError,
    block_copy_corpus,
    block_copy_optimal_loss,
    block_copy_stream,
    char_corpus,
    check_vocab,
    load_corpus,
    sample_batch,
    tfds_source,
)

SHAKESPEARE_CHARS = 1_115_394

requires_tf = pytest.mark.skipif(
    importlib.util.find_spec("tensorflow") is None,
    reason="TensorFlow is not installed, and building tfds tiny_shakespeare needs it "
    "(pip install 'mope-jax[tfds]')",
)


def _one_line_error(excinfo) -> str:
    msg = str(excinfo.value)
    assert "\n" not in msg, msg
    return msg


# ---------------------------------------------------------------- character corpora


def test_char_round_trip():
    text = "To be, or not to be:\nthat is the question.\n"
    corpus = char_corpus(text, name="hamlet", train_fraction=0.75)
    assert corpus.vocab == tuple(sorted(set(text)))
    assert corpus.vocab_size == len(set(text))
    ids = corpus.encode(text)
    assert ids.dtype == np.int32 and ids.shape == (len(text),)
    np.testing.assert_array_equal(ids, [corpus.vocab.index(c) for c in text])
    assert corpus.decode(ids) == text
    assert corpus.decode(jnp.asarray(ids)) == text
    np.testing.assert_array_equal(np.concatenate([corpus.train, corpus.val]), ids)


def test_encode_names_unknown_chars():
    corpus = char_corpus("abcabc", name="abc", train_fraction=0.5)
    with pytest.raises(DataError, match=r"'x', 'z'") as e:
        corpus.encode("abxcz")
    _one_line_error(e)


@pytest.mark.parametrize("n, fraction", [(10, 0.9), (1001, 0.9), (777, 0.5), (100, 0.33)])
def test_paper_split_sizes(n, fraction):
    text = "".join(chr(ord("a") + (i * 7) % 13) for i in range(n - 1)) + "Z"  # 'Z' only at the end
    corpus = char_corpus(text, name="t", train_fraction=fraction)
    n_train = int(fraction * n)
    assert len(corpus.train) == n_train and len(corpus.val) == n - n_train
    assert corpus.decode(corpus.train) == text[:n_train]
    assert corpus.decode(corpus.val) == text[n_train:]
    assert "Z" in corpus.vocab  # vocabulary from the whole text, not train only


def test_corpus_arrays_are_read_only():
    corpus = char_corpus("abcdabcd", name="t")
    with pytest.raises(ValueError):
        corpus.train[0] = 1


def test_tinyshakespeare_text_file(shakespeare_path):
    corpus = load_corpus(DataConfig(source="text", path=str(shakespeare_path)), block_size=256)
    assert corpus.meta["num_chars"] == SHAKESPEARE_CHARS
    assert corpus.vocab_size == 65
    assert len(corpus.train) == int(0.9 * SHAKESPEARE_CHARS) == 1_003_854
    assert len(corpus.val) == SHAKESPEARE_CHARS - 1_003_854
    assert corpus.meta["sha256"] == tfds_source.SHA256
    assert corpus.decode(corpus.train[:14]) == "First Citizen:"
    assert corpus.vocab[:3] == ("\n", " ", "!")


# ---------------------------------------------------------------- every bad input names the fix


def _write(path: Path, content: bytes) -> Path:
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(
    "make_path, match",
    [
        (lambda d: d / "nope.txt", r"does not exist; give a path to a UTF-8 text file"),
        (lambda d: d, r"is a directory; give a path to a UTF-8 text file"),
        (lambda d: _write(d / "empty.txt", b""), r"is empty; give a path"),
        (
            lambda d: _write(d / "latin1.txt", "caf\xe9 cr\xe8me".encode("latin-1")),
            r"not UTF-8 text .*give a path",
        ),
        (
            lambda d: _write(d / "blob.bin", b"abc\x00\x01\x02def" * 10),
            r"looks binary .*give a path",
        ),
    ],
    ids=["missing", "directory", "empty", "not-utf8", "nul-bytes"],
)
def test_bad_text_file(tmp_path, make_path, match):
    path = make_path(tmp_path)
    with pytest.raises(DataError, match=match) as e:
        load_corpus(DataConfig(source="text", path=str(path)), block_size=4)
    assert f"data.path={path}" in _one_line_error(e)


@pytest.mark.parametrize(
    "cfg, match",
    [
        (
            DataConfig(source="wikitext"),
            r"data.source='wikitext' is unknown; .*blocks\|text\|tinyshakespeare",
        ),
        (DataConfig(source="text"), r"give data.path=FILE"),
        (
            DataConfig(source="blocks", split="random"),
            r"data.split='random' is unknown; .*paper\|tfds",
        ),
        (
            DataConfig(source="blocks", split="tfds"),
            r"only for data.source=tinyshakespeare.*use data.split=paper",
        ),
        (
            DataConfig(source="blocks", block_len=2),
            r"data.block_len=2 .*use data.block_len=3 or more",
        ),
        (DataConfig(source="blocks", train_fraction=1.0), None),  # blocks ignore train_fraction
    ],
)
def test_bad_config(cfg, match):
    if match is None:
        load_corpus(cfg, block_size=8)
        return
    with pytest.raises(DataError, match=match) as e:
        load_corpus(cfg, block_size=8)
    _one_line_error(e)


def test_text_split_tfds_rejected(tmp_path):
    path = _write(tmp_path / "a.txt", b"hello world " * 20)
    with pytest.raises(DataError, match=r"use data.split=paper"):
        load_corpus(DataConfig(source="text", path=str(path), split="tfds"), block_size=4)


def test_corpus_shorter_than_window(tmp_path):
    path = _write(tmp_path / "short.txt", b"abcdefghijklmnopqrst")  # 20 chars: 18 train, 2 val
    cfg = DataConfig(source="text", path=str(path))
    corpus = load_corpus(cfg, block_size=1)  # val holds exactly one window of 2 tokens
    assert len(corpus.val) == 2
    with pytest.raises(
        DataError,
        match=r"val split .* has 2 tokens, fewer than .* = 3 .*model.block_size=1 or less",
    ) as e:
        load_corpus(cfg, block_size=2)
    _one_line_error(e)
    with pytest.raises(DataError, match=r"train split of blocks .*larger data.num_tokens"):
        load_corpus(DataConfig(source="blocks", num_tokens=100, block_len=4), block_size=100)


def test_check_vocab():
    check_vocab(("a", "b"), ("a", "b"))
    with pytest.raises(DataError) as e:
        check_vocab(
            ("\n", "a", "b"), ("\n", "a", "b", "c"), trained_on="data.source=text, data.path=x.txt"
        )
    msg = _one_line_error(e)
    assert "vocabulary of 4 symbols" in msg and "this corpus has 3" in msg and "'c'" in msg
    assert msg.endswith(
        "evaluate with the corpus the checkpoint was trained on (data.source=text, data.path=x.txt)"
    )
    with pytest.raises(DataError, match="another order"):
        check_vocab(("b", "a"), ("a", "b"))


# ---------------------------------------------------------------- synthetic block-copy data


def test_block_stream_is_deterministic_per_seed():
    rules = {"block_len": 8, "num_symbols": 5}
    a = block_copy_stream(1000, **rules, seed=3)
    np.testing.assert_array_equal(a, block_copy_stream(1000, **rules, seed=3))
    assert (a != block_copy_stream(1000, **rules, seed=4)).mean() > 0.5
    assert a.dtype == np.int32 and a.shape == (1000,)


@pytest.mark.parametrize("block_len, num_symbols", [(3, 2), (8, 5), (16, 16)])
def test_block_stream_copy_rule(block_len, num_symbols):
    n_blocks = 300
    blocks = block_copy_stream(
        n_blocks * block_len, block_len=block_len, num_symbols=num_symbols, seed=0
    ).reshape(n_blocks, block_len)
    assert (blocks[:, 0] == 0).all()
    np.testing.assert_array_equal(blocks[:, -1], blocks[:, 1])
    inner = blocks[:, 1:-1]
    assert inner.min() == 1 and inner.max() == num_symbols  # all symbols used, no marker inside
    # a truncated stream is a prefix cut at any length
    cut = block_copy_stream(5 * block_len + 2, block_len=block_len, num_symbols=num_symbols, seed=0)
    np.testing.assert_array_equal(cut, blocks.reshape(-1)[: len(cut)])


def _oracle_nll(stream: np.ndarray, block_len: int, symbol_probs: dict[int, float]) -> np.ndarray:
    """NLL of each stream[t+1] given stream[:t+1], for a predictor that knows the block rules.

    The phase comes from the last marker in the context; a certain prediction that is wrong
    costs inf; everything else is predicted with ``symbol_probs``.
    """
    nll = np.empty(len(stream) - 1)
    last_marker = None
    for t in range(len(stream) - 1):
        if stream[t] == 0:
            last_marker = t
        offset = t + 1 - last_marker  # of the target inside its block
        if offset == block_len:
            predicted = {0: 1.0}
        elif offset == block_len - 1:
            predicted = {int(stream[last_marker + 1]): 1.0}
        else:
            predicted = symbol_probs
        p = predicted.get(int(stream[t + 1]), 0.0)
        nll[t] = -math.log(p) if p > 0 else math.inf
    return nll


@pytest.mark.parametrize("block_len, num_symbols", [(3, 4), (8, 5), (12, 16)])
def test_block_copy_optimal_loss_matches_oracle(block_len, num_symbols):
    rules = {"block_len": block_len, "num_symbols": num_symbols}
    # the oracle's symbol frequencies come from a separate stream (counts + 1)
    fit = block_copy_stream(20_000, **rules, seed=1)
    counts = np.bincount(fit[fit > 0], minlength=num_symbols + 1)[1:] + 1
    probs = {s + 1: c / counts.sum() for s, c in enumerate(counts)}
    n_blocks = 2000
    stream = block_copy_stream(n_blocks * block_len + 1, **rules, seed=0)  # targets: whole periods
    empirical = _oracle_nll(stream, block_len, probs).mean()
    expected = block_copy_optimal_loss(block_len, num_symbols)
    assert expected == pytest.approx((block_len - 2) / block_len * math.log(num_symbols), rel=1e-12)
    # tolerance: the oracle's fitted frequencies are off by ~1/sqrt(20000), a ~1e-4 nat excess
    assert empirical == pytest.approx(expected, rel=2e-3)


def test_block_copy_corpus():
    cfg = DataConfig(source="blocks", block_len=6, num_symbols=3, num_tokens=600, data_seed=7)
    corpus = load_corpus(cfg, block_size=32)
    assert corpus.vocab == ("0", "1", "2", "3") and corpus.vocab_size == 4
    assert len(corpus.train) == 600 and len(corpus.val) == 64 * 6  # at least 64 val blocks
    np.testing.assert_array_equal(
        corpus.train, block_copy_stream(600, block_len=6, num_symbols=3, seed=7)
    )
    assert (corpus.train[: len(corpus.val)] != corpus.val).any()  # val is drawn independently
    assert corpus.meta["optimal_loss"] == block_copy_optimal_loss(6, 3)
    text = corpus.decode(corpus.train[:7])
    assert text.startswith("0 ") and len(text.split()) == 7
    np.testing.assert_array_equal(corpus.encode(text), corpus.train[:7])
    with pytest.raises(DataError, match=r"'9'"):
        corpus.encode("0 9 1")
    big = block_copy_corpus(DataConfig(num_tokens=100_000, block_len=4))
    assert len(big.val) == 10_000


# ---------------------------------------------------------------- batches


def test_sample_batch_under_jit():
    n, t = 12, 4
    data = 300 + 3 * jnp.arange(n, dtype=jnp.int32)  # distinct values: the start is readable
    sample = jax.jit(sample_batch, static_argnames=("batch_size", "block_size"))
    key = jax.random.PRNGKey(0)
    x, y = sample(key, data, batch_size=2048, block_size=t)
    assert x.shape == y.shape == (2048, t) and x.dtype == y.dtype == jnp.int32
    x, y = np.asarray(x), np.asarray(y)
    starts = (x[:, 0] - 300) // 3
    window = starts[:, None] + np.arange(t)  # (B, T)
    np.testing.assert_array_equal(x, np.asarray(data)[window])
    np.testing.assert_array_equal(y, np.asarray(data)[window + 1])
    np.testing.assert_array_equal(y[:, :-1], x[:, 1:])
    assert set(starts.tolist()) == set(range(n - t))  # 0..N-T-1, every one reachable
    # uniform: 256 expected per start, std 15; a clamped out-of-range start would double one
    counts = np.bincount(starts, minlength=n - t)
    assert counts.max() < 1.3 * 2048 / (n - t) and counts.min() > 0.7 * 2048 / (n - t)
    # data is an argument, not a compiled-in constant; eager equals jit
    x2, _ = sample(key, data + 1000, batch_size=2048, block_size=t)
    np.testing.assert_array_equal(np.asarray(x2), x + 1000)
    xe, ye = sample_batch(key, data, 2048, t)
    np.testing.assert_array_equal(np.asarray(xe), x)
    np.testing.assert_array_equal(np.asarray(ye), y)


def test_sample_batch_too_short():
    with pytest.raises(DataError, match=r"model.block_size=4 or less"):
        sample_batch(jax.random.PRNGKey(0), jnp.arange(5, dtype=jnp.int32), 2, 5)


# ---------------------------------------------------------------- tfds, offline


@contextlib.contextmanager
def _no_network():
    """Every connection attempt is recorded and fails with an error urllib3 does not retry."""
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise RuntimeError(f"network access attempted: {args!r:.200}")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", refuse)
        mp.setattr(socket.socket, "connect_ex", refuse)
        mp.setattr(socket, "getaddrinfo", refuse)
        mp.setattr(socket, "create_connection", refuse)
        yield attempts


def test_tfds_wrong_checksum_rejected_first(tmp_path, monkeypatch):
    def tensorflow_must_not_be_asked():
        raise AssertionError("the checksum is checked before anything else")

    monkeypatch.setattr(tfds_source, "_has_tensorflow", tensorflow_must_not_be_asked)
    _write(tmp_path / "input.txt", b"Not Shakespeare.\n")
    with pytest.raises(
        DataError, match=r"input.txt has sha256 .*, not TinyShakespeare's 86c4e6aa9db7"
    ) as e:
        tfds_source.load_tiny_shakespeare(data_dir=str(tmp_path / "tfds"), manual_dir=str(tmp_path))
    _one_line_error(e)
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"holds no input.txt"):
        tfds_source.load_tiny_shakespeare(manual_dir=str(tmp_path / "empty"))
    cfg = DataConfig(source="tinyshakespeare", tfds_manual_dir=str(tmp_path / "missing"))
    with pytest.raises(DataError, match=r"data.tfds_manual_dir=.*missing is not a folder"):
        load_corpus(cfg, block_size=8)


def test_tfds_without_tensorflow_names_the_fix(monkeypatch):
    monkeypatch.setattr(tfds_source, "_has_tensorflow", lambda: False)
    with pytest.raises(DataError, match=r"needs TensorFlow; pip install 'mope-jax\[tfds\]'") as e:
        load_corpus(DataConfig(source="tinyshakespeare"), block_size=8)
    assert "data.source=text data.path=input.txt" in _one_line_error(e)


@pytest.fixture(scope="session")
def tfds_dirs(tmp_path_factory, shakespeare_path):
    """A temporary manual_dir holding a copy of input.txt and a data_dir built from it offline."""
    if importlib.util.find_spec("tensorflow") is None:
        pytest.skip("TensorFlow is not installed (pip install 'mope-jax[tfds]')")
    root = tmp_path_factory.mktemp("tfds")
    manual = root / "manual"
    manual.mkdir()
    shutil.copyfile(shakespeare_path, manual / "input.txt")
    dirs = {"data_dir": str(root / "data"), "manual_dir": str(manual)}
    with _no_network() as attempts:
        texts = tfds_source.load_tiny_shakespeare(**dirs)
    assert attempts == []
    return dirs, texts


@requires_tf
def test_tfds_offline_build_equals_file(tfds_dirs, shakespeare_path):
    dirs, texts = tfds_dirs
    file_text = shakespeare_path.read_text(encoding="utf-8")
    assert [len(texts[s]) for s in tfds_source.SPLITS] == [1_003_854, 55_770, 55_770]
    assert texts["train"] + texts["validation"] + texts["test"] == file_text
    with _no_network() as attempts:  # the prepared data_dir is reused, still offline
        assert tfds_source.tiny_shakespeare_text(**dirs) == file_text
    assert attempts == []
    assert not list(Path(dirs["data_dir"]).glob("downloads/**/*.tmp.*"))  # no download begun


@requires_tf
def test_tfds_corpus_splits(tfds_dirs, shakespeare_path):
    dirs, texts = tfds_dirs
    common = {
        "source": "tinyshakespeare",
        "tfds_data_dir": dirs["data_dir"],
        "tfds_manual_dir": dirs["manual_dir"],
    }
    with _no_network() as attempts:
        paper = load_corpus(DataConfig(**common, split="paper"), block_size=256)
        tfds_split = load_corpus(DataConfig(**common, split="tfds"), block_size=256)
    assert attempts == []
    from_file = load_corpus(DataConfig(source="text", path=str(shakespeare_path)), block_size=256)
    assert paper.vocab == tfds_split.vocab == from_file.vocab and paper.vocab_size == 65
    np.testing.assert_array_equal(paper.train, from_file.train)
    np.testing.assert_array_equal(paper.val, from_file.val)
    # tfds's train is the paper train; its validation is the first half of the paper val
    np.testing.assert_array_equal(tfds_split.train, paper.train)
    np.testing.assert_array_equal(tfds_split.val, paper.val[: len(texts["validation"])])
    assert tfds_split.meta["split"] == "tfds"


# ---------------------------------------------------------------- layering


def test_data_package_imports_no_flax_or_optax():
    for path in Path(data_lib.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            assert not {n.split(".")[0] for n in names} & {"flax", "optax"}, f"{path.name}: {names}"
