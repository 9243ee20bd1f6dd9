"""Run-directory bookkeeping that must survive a kill at any moment: atomic writes, tolerant
reads of append-only logs, and a lock so that one process at a time owns a run directory.

No jax here; ``train`` and ``sweep`` use these for ``metrics.jsonl``, ``final.json`` and the lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from pathlib import Path
from typing import Any

from mope_jax.errors import RunLockedError, TrainingError

LOCK_NAME = ".lock"


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, fsync it, then ``os.replace``: a
    reader (or a rerun after a kill) sees the old file or the new one, never half of one."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The records of an append-only JSON-lines log. A line that does not parse is what a kill
    during an append leaves (only ever the last one): it and anything after it are dropped."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for ln in path.read_text().splitlines():
        if not ln.strip():
            continue
        try:
            rec = json.loads(ln)
        except json.JSONDecodeError:
            break
        if not isinstance(rec, dict):
            break
        out.append(rec)
    return out


def truncate_jsonl(path: str | Path, max_step: int) -> None:
    """Keep the records up to ``max_step`` (the checkpoint a run resumes from), atomically."""
    path = Path(path)
    if not path.exists():
        return
    keep = [r for r in read_jsonl(path) if r.get("step", 0) <= max_step]
    atomic_write_text(path, "".join(json.dumps(r) + "\n" for r in keep))


def read_record(path: str | Path) -> dict[str, Any] | None:
    """A ``final.json`` if it exists and is a complete JSON object, else None (a record left
    half-written by an older version, or by a kill, is rebuilt rather than trusted)."""
    path = Path(path)
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return rec if isinstance(rec, dict) else None


def is_disk_full(e: BaseException) -> bool:
    """True if ``e`` or anything in its cause/context chain is 'no space left on device'."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno == errno.ENOSPC:
            return True
        if "No space left on device" in str(e):
            return True
        e = e.__cause__ or e.__context__
    return False


NAME_MAX = 255  # bytes of one file-name component (Linux, macOS), when pathconf cannot say
PATH_MAX = 4096  # bytes of a whole path, NUL included (Linux), when pathconf cannot say
# what a run writes under its folder (checkpoints/<step>/... of Orbax): one more file name
RUN_DIR_ROOM = NAME_MAX
# what is written beside an output file: report's <stem>_spectra.png, atomic_write_text's
# .<name>.tmp-<pid>
BESIDE_ROOM = 24


def _limit(path: Path, name: str, default: int) -> int:
    """os.pathconf of the nearest existing folder of ``path``, else ``default``."""
    p = Path(os.path.abspath(path))
    while not os.path.isdir(p) and p.parent != p:  # isdir: False, not ENAMETOOLONG, when long
        p = p.parent
    try:
        v = os.pathconf(p, name)
    except (OSError, ValueError):
        return default
    return v if v and v > 0 else default


def _shown(text: str, n: int = 40) -> str:
    return repr(text if len(text) <= n else text[:n] + "...")


def path_too_long(path: str | Path, *, inside: int = 0, beside: int = 0) -> str | None:
    """Why ``path`` cannot be created or opened (a name over the file-name limit, or the
    absolute path over the path limit), or None. Pure string checks: nothing is touched but
    the ``os.pathconf`` of its nearest existing folder.

    inside: bytes kept free for what is written under it (a run dir: RUN_DIR_ROOM);
    beside: bytes kept free in its last name for the files written beside it (BESIDE_ROOM).
    """
    path = Path(path)
    name_max = _limit(path, "PC_NAME_MAX", NAME_MAX)
    parts = [p for p in path.parts if p not in ("/", "")]
    for i, part in enumerate(parts):
        room = beside if i == len(parts) - 1 else 0
        n = len(os.fsencode(part))
        if n + room > name_max:
            extra = f" (less {room} for the files written beside it)" if room else ""
            return (
                f"the name {_shown(part)} is {n} bytes, over the file-name limit of {name_max} "
                f"bytes{extra}"
            )
    path_max = _limit(path, "PC_PATH_MAX", PATH_MAX)
    n = len(os.fsencode(os.path.abspath(path)))
    if n + inside >= path_max:  # path_max counts the terminating NUL
        extra = f" (less {inside} for the files written inside it)" if inside else ""
        return (
            f"the path {_shown(str(path))} is {n} bytes as an absolute path, over the path "
            f"limit of {path_max} bytes{extra}"
        )
    return None


def make_run_dir(run_dir: Path) -> None:
    """Create ``run_dir`` (and parents), or raise one TrainingError line saying why not."""
    why = path_too_long(run_dir, inside=RUN_DIR_ROOM)
    if why:
        raise TrainingError(f"run dir: {why}; give a shorter --run-dir")
    if run_dir.exists() and not run_dir.is_dir():
        raise TrainingError(f"run dir {run_dir} is a file, not a folder; give another --run-dir")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise TrainingError(
            f"cannot create run dir {run_dir}: {e.strerror or e}; give a writable --run-dir"
        ) from None
    if not os.access(run_dir, os.W_OK | os.X_OK):
        raise TrainingError(f"run dir {run_dir} is not writable; give a writable --run-dir")


def unwritable(folder: str | Path) -> str | None:
    """Why files cannot be written in ``folder`` (made when missing, with its parents), or
    None: judged on the folder, or on its nearest existing parent."""
    p = Path(folder)
    while not p.exists() and p.parent != p:
        p = p.parent
    if not p.is_dir():
        return f"{p} is a file, not a folder"
    if not os.access(p, os.W_OK | os.X_OK):
        return f"{p} is not writable"
    return None


@contextlib.contextmanager
def environment_errors(run_dir: Path):
    """Inside: a full disk or a refused write (permissions, read-only file system) becomes one
    TrainingError line saying what to do; other errors pass through untouched."""
    try:
        yield
    except OSError as e:
        if is_disk_full(e):
            raise TrainingError(
                f"disk full while writing in {run_dir}: free space and run the same command again "
                "(the last complete checkpoint is kept)"
            ) from None
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise TrainingError(
                f"cannot write {e.filename or run_dir}: {e.strerror}; give a writable --run-dir"
            ) from None
        raise


class RunLock:
    """An exclusive ``fcntl.flock`` on ``run_dir/.lock`` (``.lock.<i>`` for process i > 0 of a
    multi-process run, so the processes of one sweep do not refuse each other).

    The operating system releases a flock when its process dies (even by kill -9), so a lock
    file left behind never blocks a later run; the PID written in it only names the holder.
    """

    def __init__(self, run_dir: str | Path, process_index: int = 0):
        name = LOCK_NAME if process_index == 0 else f"{LOCK_NAME}.{process_index}"
        self.path = Path(run_dir) / name
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise TrainingError(
                f"cannot write in run dir {self.path.parent}: {e.strerror or e}; "
                "give a writable --run-dir"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            os.close(fd)
            if e.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                who = f" (pid {holder})" if holder else ""
                raise RunLockedError(
                    f"run dir {self.path.parent} is in use by another process{who}; wait for "
                    "it to finish, or give another --run-dir"
                ) from None
            raise TrainingError(
                f"cannot lock run dir {self.path.parent}: {e.strerror or e}"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError:
            pass  # the PID is only informative
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
