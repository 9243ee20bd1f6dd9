"""TinyShakespeare through tensorflow-datasets, offline when given karpathy's ``input.txt``.

How nothing is downloaded: tfds's registered checksum for tiny_shakespeare
(``tensorflow_datasets/datasets/tiny_shakespeare/checksums.tsv``) records the URL, size,
sha256 AND a file name, ``input.txt``. ``DownloadManager._download_or_get_cache`` first looks
for ``<manual_dir>/<that file name>``; when it exists it is used in place of the download
(its checksum is still validated against the registered one), before any cache lookup or
network access. So ``DownloadConfig(manual_dir=folder holding input.txt)`` is all it takes;
we check the sha256 ourselves first so that a wrong file fails with a one-line DataError
rather than tfds's NonMatchingChecksumError. (Placing the file in the downloads folder
under its url-hashed name, ``raw.gith.com_karp_char-rnn_mast_tiny_inpu<hash>.txt``, would
also work but depends on tfds's private naming.) GCS metadata lookups are off by default in
tfds 4.9.10 (``gcs_utils._is_gcs_disabled``). Without a manual_dir and with no network,
tfds retries the download for minutes before failing.

Splits: tfds's builder reads the file as one str and cuts it at i = int(0.9 N) (train) and
then halves the rest (validation, test), one example per split. So train + validation +
test is the file exactly (checked: sha256 equal, tfds 4.9.10), tfds's train equals the
"paper" train (first int(0.9 N) characters), and the paper val is validation + test.

As a file (:func:`tiny_shakespeare_file`, the campaigns' default corpus): the manual dir's
input.txt where one is given (or named by ``$MOPE_JAX_TFDS_MANUAL_DIR``), else a copy of the text
tfds builds, written once to ``$XDG_CACHE_HOME/mope_jax/tinyshakespeare/input.txt`` (default
``~/.cache``). Each is the same bytes (sha256 checked), so a config holding either path trains on
the same corpus; where the file lives is a location field, never part of what a run is.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

from mope_jax.data.text import DataError, sha256_text

SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
SPLITS = ("train", "validation", "test")
# a folder holding karpathy's input.txt, where no manual dir is given
MANUAL_DIR_ENV = "MOPE_JAX_TFDS_MANUAL_DIR"
_DATA_FIX = "use data.source=text data.path=input.txt"


def _has_tensorflow() -> bool:
    return importlib.util.find_spec("tensorflow") is not None


def _can_download(timeout: float = 5.0) -> bool:
    """Whether the download's host takes a connection (True behind a proxy, not probed): tfds
    retries a failing download for minutes, this answers in seconds."""
    if urllib.request.getproxies().get("https"):
        return True
    try:
        with socket.create_connection((urlsplit(URL).hostname, 443), timeout=timeout):
            return True
    except OSError:
        return False


def env_manual_dir() -> str:
    """``$MOPE_JAX_TFDS_MANUAL_DIR``, "" when unset."""
    return os.environ.get(MANUAL_DIR_ENV, "").strip()


def cache_file() -> Path:
    """Where :func:`tiny_shakespeare_file` keeps the text tfds built."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base).expanduser() / "mope_jax" / "tinyshakespeare" / "input.txt"


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify_manual_dir(
    manual_dir: str | Path, *, option: str = "data.tfds_manual_dir", fix: str = _DATA_FIX
) -> Path:
    """``manual_dir/input.txt`` if it is karpathy's file (sha256 checked), else DataError.
    option and fix word the message: where the folder was named, the other way to a corpus."""
    folder = Path(manual_dir).expanduser()
    path = folder / "input.txt"
    fix = f"put karpathy's input.txt ({URL}) there, or {fix}"
    if not folder.is_dir():
        raise DataError(f"{option}={manual_dir} is not a folder; {fix}")
    if not path.is_file():
        raise DataError(f"{option}={manual_dir} holds no input.txt; {fix}")
    digest = _file_sha256(path)
    if digest != SHA256:
        raise DataError(
            f"{option}={manual_dir}: input.txt has sha256 {digest[:12]}..., not "
            f"TinyShakespeare's {SHA256[:12]}...; {fix}"
        )
    return path


def load_tiny_shakespeare(*, data_dir: str = "", manual_dir: str = "") -> dict[str, str]:
    """The text of each tfds split, {"train", "validation", "test"} -> str.

    Builds ``tiny_shakespeare`` into ``data_dir`` (tfds's default when "") on first use.
    ``manual_dir``: a folder holding karpathy's input.txt; its sha256 is checked before
    anything else and tfds then builds from it with no network access.
    """
    if manual_dir:
        verify_manual_dir(manual_dir)
    if not _has_tensorflow():
        raise DataError(
            "building tfds tiny_shakespeare needs TensorFlow; pip install 'mope-jax[tfds]' "
            "(tensorflow-cpu), or use data.source=text data.path=input.txt"
        )
    import tensorflow_datasets as tfds  # slow import, only here

    builder = tfds.builder("tiny_shakespeare", data_dir=data_dir or None)
    if not manual_dir and not builder.is_prepared() and not _can_download():
        raise DataError(
            f"tfds has no tiny_shakespeare in {builder.data_dir_root} and cannot download it "
            f"({urlsplit(URL).hostname} unreachable); give data.tfds_manual_dir=FOLDER holding "
            "karpathy's input.txt, or use data.source=text data.path=input.txt"
        )
    config = tfds.download.DownloadConfig(manual_dir=manual_dir or None)
    try:
        builder.download_and_prepare(download_config=config)
    except OSError as e:  # requests' ConnectionError is an OSError
        raise DataError(
            f"tfds could not download tiny_shakespeare ({type(e).__name__}); give "
            "data.tfds_manual_dir=FOLDER holding karpathy's input.txt, or use data.source=text "
            "data.path=input.txt"
        ) from e
    texts = {}
    for split in SPLITS:
        examples = tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False))
        texts[split] = b"".join(ex["text"] for ex in examples).decode("utf-8")
    return texts


def tiny_shakespeare_text(*, data_dir: str = "", manual_dir: str = "") -> str:
    """The whole of TinyShakespeare, train + validation + test = karpathy's input.txt.

    The concatenation's sha256 is checked against the file's (a changed tfds builder that
    dropped or reordered text fails here with a DataError instead of training on it).
    """
    texts = load_tiny_shakespeare(data_dir=data_dir, manual_dir=manual_dir)
    text = "".join(texts[s] for s in SPLITS)
    if sha256_text(text) != SHA256:
        raise DataError(
            "tfds's tiny_shakespeare splits do not concatenate to karpathy's input.txt; "
            "use data.source=text data.path=input.txt"
        )
    return text


def tiny_shakespeare_file(
    *,
    manual_dir: str = "",
    data_dir: str = "",
    option: str = "data.tfds_manual_dir",
    fix: str = _DATA_FIX,
) -> Path:
    """karpathy's input.txt as a file, its sha256 checked: ``manual_dir``'s (else the folder
    ``$MOPE_JAX_TFDS_MANUAL_DIR`` names), else :func:`cache_file` once it holds the text, else
    the text tfds builds into ``data_dir`` (else ``$TFDS_DATA_DIR``, else tfds's default),
    downloading where it must, written to :func:`cache_file` first.

    DataError (one line) where none can be had: ``option`` names the manual dir as the caller's
    command does and ``fix`` the other way to a corpus, e.g. ``give --corpus PATH``.
    """
    if not manual_dir and env_manual_dir():
        manual_dir, option = env_manual_dir(), MANUAL_DIR_ENV
    if manual_dir:
        return verify_manual_dir(manual_dir, option=option, fix=fix)
    cached = cache_file()
    if cached.is_file() and _file_sha256(cached) == SHA256:
        return cached
    data_dir = data_dir or os.environ.get("TFDS_DATA_DIR", "").strip()
    try:
        text = tiny_shakespeare_text(data_dir=data_dir)
    except DataError as e:
        why = str(e).split("; ")[0]
        raise DataError(
            f"TinyShakespeare is not available ({why}); {fix}, or put karpathy's input.txt "
            f"({URL}) in a folder DIR and give {option} DIR or set {MANUAL_DIR_ENV}=DIR"
        ) from None
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        part = cached.with_name(f".{cached.name}.{os.getpid()}.part")
        part.write_bytes(text.encode("utf-8"))
        os.replace(part, cached)
    except OSError as e:
        raise DataError(
            f"cannot write TinyShakespeare to {cached} ({type(e).__name__}); set XDG_CACHE_HOME "
            f"to a writable folder, or put karpathy's input.txt ({URL}) in a folder DIR and give "
            f"{option} DIR or set {MANUAL_DIR_ENV}=DIR"
        ) from None
    return cached
