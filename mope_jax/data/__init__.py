"""Token data: text corpora, TinyShakespeare, synthetic tasks and batch sampling.

``load_corpus(cfg.data, cfg.model.block_size)`` is the entry point; every bad input raises
``DataError`` with a one-line message that names the fix. No flax or optax here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mope_jax.config import DataConfig
from mope_jax.data.batches import sample_batch
from mope_jax.data.synthetic import block_copy_corpus, block_copy_optimal_loss, block_copy_stream
from mope_jax.data.text import (
    Corpus,
    DataError,
    _preview,
    char_corpus,
    option_text,
    read_text_file,
    sha256_text,
)
from mope_jax.data.tfds_source import load_tiny_shakespeare, tiny_shakespeare_text

SOURCES = ("blocks", "text", "tinyshakespeare")
SPLITS = ("paper", "tfds")


def load_corpus(
    data_cfg: DataConfig, block_size: int, *, option: str = "data.path", longer: str | None = None
) -> Corpus:
    """The corpus named by ``data_cfg``, checked to hold a window of block_size + 1 tokens.

    option: how the command names the text file (``data.path``, ``--data``, ``--corpus``);
    longer: the fix a too-short corpus gets, for a command that cannot change the block size
    (default: a smaller ``model.block_size`` or a longer corpus). Both only word the messages.

    split "paper": first ``train_fraction`` of the characters train, the rest val, vocab from
    the whole text (nanoGPT shakespeare_char). split "tfds" (tinyshakespeare only): tfds's
    train and validation splits, vocab from train + validation + test. The block-copy source
    draws separate train and val streams (see ``block_copy_corpus``).
    """
    source, split = data_cfg.source, data_cfg.split
    if source not in SOURCES:
        raise DataError(
            f"data.source={source!r} is unknown; choose one of data.source={'|'.join(SOURCES)}"
        )
    if split not in SPLITS:
        raise DataError(
            f"data.split={split!r} is unknown; choose one of data.split={'|'.join(SPLITS)}"
        )
    if split == "tfds" and source != "tinyshakespeare":
        raise DataError(
            f"data.split=tfds exists only for data.source=tinyshakespeare, not {source}; "
            "use data.split=paper"
        )
    if block_size < 1:
        raise DataError(
            f"model.block_size={block_size} must be positive; use e.g. model.block_size=256"
        )

    if source == "blocks":
        corpus = block_copy_corpus(data_cfg)
    elif source == "text":
        if not data_cfg.path:
            raise DataError(
                "data.source=text needs a file; give data.path=FILE, e.g. data.path=input.txt"
            )
        text = read_text_file(data_cfg.path, option=option)
        meta = {"source": "text", "path": str(Path(data_cfg.path).expanduser().resolve())}
        corpus = char_corpus(
            text, name=Path(data_cfg.path).name, train_fraction=data_cfg.train_fraction, meta=meta
        )
    else:
        corpus = _tiny_shakespeare_corpus(data_cfg)
    _check_length(corpus, block_size, data_cfg, longer)
    return corpus


def _tiny_shakespeare_corpus(data_cfg: DataConfig) -> Corpus:
    where = {"data_dir": data_cfg.tfds_data_dir, "manual_dir": data_cfg.tfds_manual_dir}
    meta = {"source": "tinyshakespeare", "tfds_data_dir": data_cfg.tfds_data_dir}
    if data_cfg.split == "paper":
        text = tiny_shakespeare_text(**where)
        return char_corpus(
            text, name="tinyshakespeare", train_fraction=data_cfg.train_fraction, meta=meta
        )
    texts = load_tiny_shakespeare(**where)
    full = "".join(texts.values())
    # Vocab from all three splits, as for "paper", so both splits give the same token ids.
    base = char_corpus(full, name="tinyshakespeare", train_fraction=0.5, meta=meta)
    meta = {k: v for k, v in base.meta.items() if k != "train_fraction"}
    meta.update(split="tfds", num_test_chars=len(texts["test"]))
    return dataclasses.replace(
        base, train=base.encode(texts["train"]), val=base.encode(texts["validation"]), meta=meta
    )


def _check_length(
    corpus: Corpus, block_size: int, data_cfg: DataConfig, longer: str | None = None
) -> None:
    for split in ("train", "val"):
        n = len(getattr(corpus, split))
        if n < block_size + 1:
            if longer is None:
                more = (
                    "a larger data.num_tokens" if data_cfg.source == "blocks" else "a longer corpus"
                )
                smaller = (
                    f"model.block_size={n - 1} or less" if n > 1 else "a smaller model.block_size"
                )
                longer = f"use {smaller}, or {more}"
            raise DataError(
                f"the {split} split of {corpus.name} has {n} tokens, fewer than the "
                f"block size + 1 = {block_size + 1} a window needs; {longer}"
            )


def check_vocab(corpus_vocab, checkpoint_vocab, *, trained_on: str = "") -> None:
    """DataError unless the corpus maps ids to the same symbols as the checkpoint's corpus.

    ``trained_on``: how to get the checkpoint's corpus back, e.g.
    "data.source=text, data.path=input.txt" (from the config saved with the checkpoint).
    """
    ours, theirs = tuple(corpus_vocab), tuple(checkpoint_vocab)
    if ours == theirs:
        return
    only_theirs = sorted(set(theirs) - set(ours))
    only_ours = sorted(set(ours) - set(theirs))
    detail = []
    if only_theirs:
        detail.append(f"missing here: {_preview(only_theirs)}")
    if only_ours:
        detail.append(f"new here: {_preview(only_ours)}")
    if not detail:
        detail.append("the same symbols in another order")
    where = trained_on or "the data.source and data.path saved with the checkpoint"
    raise DataError(
        f"the checkpoint was trained on a vocabulary of {len(theirs)} symbols "
        f"({'; '.join(detail)}), this corpus has {len(ours)}; evaluate with the corpus the "
        f"checkpoint was trained on ({where})"
    )


__all__ = [
    "SOURCES",
    "SPLITS",
    "Corpus",
    "DataError",
    "block_copy_corpus",
    "block_copy_optimal_loss",
    "block_copy_stream",
    "char_corpus",
    "check_vocab",
    "load_corpus",
    "load_tiny_shakespeare",
    "option_text",
    "read_text_file",
    "sample_batch",
    "sha256_text",
    "tiny_shakespeare_text",
]
