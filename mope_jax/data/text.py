"""Character-level text corpora, the ``Corpus`` every data source returns, and ``DataError``.

A character corpus follows karpathy/nanoGPT ``shakespeare_char``: the vocabulary is the sorted
set of characters of the WHOLE text (so val never meets an unknown character), token i is
``vocab[i]``, and the first ``train_fraction`` of the characters are train, the rest val.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mope_jax.errors import DataError  # re-exported: mope_jax.data.DataError


@dataclass(frozen=True, eq=False)
class Corpus:
    """Token ids of a train and a val split and the vocabulary that maps them to text.

    Attributes:
      name: short label (file name, "tinyshakespeare", "blocks").
      train: (N_train,) int32 token ids, read-only.
      val: (N_val,) int32 token ids, read-only.
      vocab: token i is ``vocab[i]``; for text the characters, sorted; for synthetic data the
        token names "0", "1", ...
      meta: provenance (source, path, sha256, split, num_chars, ...); JSON-friendly values.
      separator: what ``decode`` puts between tokens ("" for characters, " " for named tokens);
        ``encode`` splits on whitespace when it is not "".

    ``eq=False``: comparing two corpora field by field would compare arrays, which has no
    single truth value; corpora compare (and hash) by identity.
    """

    name: str
    train: np.ndarray
    val: np.ndarray
    vocab: tuple[str, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    separator: str = ""

    def __post_init__(self):
        for split in ("train", "val"):
            ids = getattr(self, split)
            if not (isinstance(ids, np.ndarray) and ids.dtype == np.int32 and ids.ndim == 1):
                raise TypeError(f"Corpus.{split} must be a 1-D int32 numpy array, got {ids!r:.80}")
            ids.setflags(write=False)
        if not (isinstance(self.vocab, tuple) and self.vocab):
            raise TypeError(
                f"Corpus.vocab must be a non-empty tuple of str, got {self.vocab!r:.80}"
            )

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def encode(self, text: str) -> np.ndarray:
        """text -> (N,) int32 ids; DataError naming any symbol not in the vocabulary."""
        if self.separator:
            index = {s: i for i, s in enumerate(self.vocab)}
            pieces = text.split()
            unknown = sorted({p for p in pieces if p not in index})
            if unknown:
                raise DataError(
                    f"tokens {_preview(unknown)} are not in the {self.name} vocabulary "
                    f"({_preview(self.vocab)}); use only these token names"
                )
            return np.array([index[p] for p in pieces], dtype=np.int32)
        return _encode_chars(text, self.vocab, name=self.name)

    def decode(self, ids) -> str:
        """(N,) ids (numpy, jax or list) -> text; tokens joined by ``separator``."""
        ids = np.asarray(ids)
        if ids.ndim != 1:
            raise DataError(
                f"decode takes a 1-D sequence of ids, got shape {ids.shape}; "
                "decode one row at a time"
            )
        bad = ids[(ids < 0) | (ids >= self.vocab_size)]
        if bad.size:
            raise DataError(
                f"ids {_preview(sorted(set(bad.tolist())))} are outside the vocabulary "
                f"0..{self.vocab_size - 1}; decode ids produced with this corpus"
            )
        return self.separator.join(self.vocab[i] for i in ids.tolist())


def _preview(items, limit: int = 8) -> str:
    items = list(items)
    shown = ", ".join(repr(x) for x in items[:limit])
    return f"{shown}, ... ({len(items)} in all)" if len(items) > limit else shown


def _encode_chars(text: str, vocab: tuple[str, ...], *, name: str) -> np.ndarray:
    """Vectorised char -> id: binary search of the code points in the sorted vocabulary."""
    codes = np.array([ord(c) for c in vocab], dtype=np.uint32)  # sorted since vocab is
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    ids = np.minimum(np.searchsorted(codes, points), len(codes) - 1)
    known = codes[ids] == points
    if not known.all():
        unknown = sorted({chr(p) for p in points[~known].tolist()})
        raise DataError(
            f"characters {_preview(unknown)} are not in the {name} vocabulary of {len(vocab)} "
            "characters; encode text made of the corpus's characters only"
        )
    return ids.astype(np.int32)


def read_text_file(path: str | Path, *, option: str = "data.path") -> str:
    """The exact text of a UTF-8 file (bytes decoded, no newline translation).

    Raises DataError when ``path`` is missing, a directory, empty, or not UTF-8 text (a decode
    error or NUL bytes, which text never holds and binary files nearly always do).
    ``option``: how the command names the file (``data.path``, ``--data``, ``--corpus``), so
    the message names an option of the command that printed it.
    """
    flag = option_text(option, "input.txt")
    hint = f"give a path to a UTF-8 text file, e.g. {flag}"
    p = Path(path).expanduser()
    given = option_text(option, path)
    if not str(path):
        raise DataError(f"{option} is empty; {hint}")
    if not p.exists():
        raise DataError(f"{given} does not exist; {hint}")
    if p.is_dir():
        raise DataError(f"{given} is a directory; {hint} inside it")
    if not p.is_file():  # /dev/zero, a FIFO, a socket: reading would never end, or block
        raise DataError(f"{given} is not a regular file (a device, pipe or socket); {hint}")
    from mope_jax import memory

    size = p.stat().st_size
    avail, where = memory.host_available()
    if avail is not None and memory.TEXT_BYTES_PER_BYTE * size > avail:
        raise DataError(
            f"{given} is {memory.gib(size)}; reading it as characters needs about "
            f"{memory.gib(memory.TEXT_BYTES_PER_BYTE * size)}, more than the {memory.gib(avail)} "
            f"of memory available on this machine ({where}); give a smaller text file"
        )
    raw = p.read_bytes()
    if not raw:
        raise DataError(f"{given} is empty; {hint} that holds some text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{given} is not UTF-8 text (byte {e.start} is invalid); {hint}") from None
    nul = text.find("\x00")
    if nul >= 0:
        raise DataError(f"{given} looks binary (NUL byte at offset {nul}); {hint}")
    return text


def option_text(option: str, value) -> str:
    """``data.path=x`` for a config key, ``--data x`` for a command-line option."""
    return f"{option} {value}" if option.startswith("-") else f"{option}={value}"


def sha256_text(text: str) -> str:
    """sha256 of the UTF-8 bytes; equals the file's sha256 for text from read_text_file."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def char_corpus(
    text: str, *, name: str, train_fraction: float = 0.9, meta: dict[str, Any] | None = None
) -> Corpus:
    """Character-level corpus: vocab from the whole text, first ``int(train_fraction N)`` train.

    ``meta`` is extended with split, train_fraction, num_chars and sha256.
    """
    if not 0.0 < train_fraction < 1.0:
        raise DataError(
            f"data.train_fraction={train_fraction} must lie strictly between 0 and 1; "
            "use e.g. data.train_fraction=0.9"
        )
    if not text:
        raise DataError(f"the {name} text is empty; give a corpus with some text")
    vocab = tuple(sorted(set(text)))
    ids = _encode_chars(text, vocab, name=name)
    n_train = int(train_fraction * len(ids))
    meta = {
        **(meta or {}),
        "split": "paper",
        "train_fraction": train_fraction,
        "num_chars": len(text),
        "sha256": sha256_text(text),
    }
    return Corpus(
        name=name, train=ids[:n_train].copy(), val=ids[n_train:].copy(), vocab=vocab, meta=meta
    )
