"""The files of ``experiments.device_campaigns``: the --out and --compile-cache folders checked
(creating nothing) and then made, the campaign records found under the repository and those a
call made, and the archives the loan brings back (``records.tar.gz``, ``jax_cache.tar.gz``)."""

from __future__ import annotations

import tarfile
from pathlib import Path

RESULTS = Path("experiments") / "results"
CACHE_ARCHIVE_MAX_BYTES = 48 * 2**20  # what fits the next loan's 64 MiB of carried files


def check_folder(path: Path, option: str) -> None:
    """UsageError unless ``path`` is a folder this process can write, or one it can make;
    creates nothing."""
    from mope_jax.errors import UsageError
    from mope_jax.rundir import unwritable

    try:
        why = unwritable(path.expanduser().absolute())
    except OSError as e:
        why = f"{e.filename or path}: {e.strerror or type(e).__name__}"
    if why:
        raise UsageError(f"{option} {path}: {why}; give a writable folder (new or existing)")


def make_folder(path: Path, option: str) -> Path:
    """Make ``path`` (with its parents) and write a file in it; UsageError, and the folders made
    here removed again, when it cannot."""
    from mope_jax.errors import UsageError

    path = path.expanduser().resolve()
    made: list[Path] = []
    try:
        missing = [p for p in [path, *path.parents] if not p.exists()]
        for p in reversed(missing):
            p.mkdir()
            made.append(p)
        probe = path / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        for p in reversed(made):
            try:
                p.rmdir()
            except OSError:
                pass
        raise UsageError(
            f"{option} {path}: cannot write there ({e.strerror or type(e).__name__}); give a "
            "writable folder (new or existing)"
        ) from None
    return path


def record_files(root: Path) -> dict[str, int]:
    """{path relative to root: mtime in ns} of every campaign record under root."""
    base = root / RESULTS
    return {
        str(p.relative_to(root)): p.stat().st_mtime_ns
        for p in sorted(base.glob("*/*/records/*/*.json"))
    }


def changed(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """Record paths that are new or rewritten since ``before``."""
    return sorted(p for p, t in after.items() if before.get(p) != t)


def pack(root: Path, paths: list[str], out: Path) -> Path:
    """Write ``out`` (a .tar.gz) holding ``paths`` relative to ``root`` (through a temporary
    file: a call killed while packing leaves the previous archive whole)."""
    tmp = out.with_name(out.name + ".tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        for p in paths:
            tar.add(root / p, arcname=p)
    tmp.replace(out)
    return out


def cache_archive(cache: Path, out: Path) -> str:
    """Pack the compilation cache into ``out/jax_cache.tar.gz`` if it fits the next loan's
    carried files; returns what was done."""
    files = [p for p in cache.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    if size > CACHE_ARCHIVE_MAX_BYTES:
        return f"compilation cache {size / 2**20:.0f} MiB: too large to carry, not packed"
    with tarfile.open(out / "jax_cache.tar.gz", "w:gz") as tar:
        for p in files:
            tar.add(p, arcname=str(p.relative_to(cache)))
    return f"compilation cache: {len(files)} files, {size / 2**20:.1f} MiB in jax_cache.tar.gz"
