"""Campaigns on a lent accelerator: a priority queue of (row, seeds) trained under one clock, each
row's records packed the moment the row finishes, a plan of what the time buys printed first.

The prepared command for a loan (on the device machine, in the copy of this checkout):

    MOPE_JAX_GIT_COMMIT=<git rev-parse HEAD here> python -m experiments.device_campaigns \\
        --queue paper_a --out $OUT --minutes 12 --corpus .corpus/input.txt \\
        --compile-cache .jax_cache

    with ``carry``: [".corpus", ".jax_cache"] (a git-ignored copy of TinyShakespeare's input.txt,
    never committed; and the compilation cache a previous loan brought back, if any). The call's
    ``timeout_s`` is --minutes plus ~2 minutes (start-up, packing). Then here:
    ``tar -xzf <files_at>/records.tar.gz && mope-jax report --regenerate experiments/results``,
    ``mkdir -p .jax_cache && tar -xzf <files_at>/jax_cache.tar.gz -C .jax_cache`` for the next
    loan, and commit the records.

Queues (``--queue``; rows in priority order, each with 3 seeds trained as one program):
  * ``paper_a``: ``paper_a --scale reference`` (bf16 mixed precision, the authors' own): a-baseline,
    a-ega-morlet-causal, a-ega-morlet, a-mope, a-ega1-causal, a-ega1;
  * ``paper_c``: ``fourierqk --scale reference-tf32`` (TF32, its own scale: the authors ran float32,
    which at an H100's float32 rate does not fit a loan): learned, causal-morlet, causal-gauss,
    fourier-qk, multifourier-qk, random-qk.
``--scale`` replaces the queue's scale (``--scale smoke`` rehearses the same call on a CPU in
seconds: tests/test_device_campaigns.py). Explicit jobs ``EXPERIMENT:SCALE[:ROWS[:SEEDS]]`` may be
given instead of a queue; each is one ``mope-jax campaign run``, in this process.

Expected minutes a row (3 seeds, with its compiles): no loan has run this queue yet, so the plan
the command prints is a guess from the model FLOPs (``mope_jax.campaign.estimate.ASSUMED_MFU``:
15% of the bf16 or TF32 peak, 30% of the float32 peak, 90 s of compiles a row) until records of
the campaign exist on that kind of device, whose pace then replaces it. That guess, printed by
``plan_rows(open_jobs(...), "NVIDIA H200")`` (the same for an H100 SXM): 2.5 min a row of paper A at
``reference`` (bf16), 3.8 min a row of paper C at ``reference-tf32`` (its 200 eval batches a split),
so a 12-minute call buys 4 rows of A or 3 of C; the first loan's records say what it really buys.

What runs, in order: every job is checked before anything trains or is written (the options,
experiment, scale, rows and seeds, the corpus, stale records, --out and --compile-cache folders
it can make and write): anything it cannot run is one ``error:`` line on stderr naming the option
or file and the fix, and exit status 2 (the CLI's bad-input status), with nothing created; the plan
is printed; then each row: a clock guard (a row whose estimate does not fit the time left is not
started, and the queue stops there: a row boundary), one training program for its seeds
(``vmap`` on an accelerator), the audit, summaries and analysis compiled once for the row, its
records written and ``records.tar.gz`` rewritten at once, and a line with its minutes, tokens/s
and MFU. ``device_campaigns.json`` holds the plan, what ran and the device; ``device_campaigns.log``
every line. A job that fails once started (its error and any traceback in the log) does not stop
the queue; the call then ends with one ``error:`` line naming the failed jobs and the log, and exit
status 1. The records are ordinary campaign records (``campaign status`` and ``report`` treat
them as records made here; their ``perf`` and ``env`` name the device and the precision).

Numerics: each row runs at its scale's precision (``model.matmul_precision`` and
``model.compute_dtype``, stored in every record's config): nothing here sets a process-wide
precision. ``../shared`` does not travel: pass ``--corpus``; records identify the corpus by
content, not path. A copy of the working tree may carry no .git or an older one: start with
``MOPE_JAX_GIT_COMMIT=<the commit sent>`` so that the records name the code that ran.

Files: this module (the call: its options, every job checked before anything trains, the
clock guard and the packing after each row, ``main``), ``_device_campaigns_jobs.py`` (the
queues and the job specs), ``_device_campaigns_files.py`` (the folders, the records a call made,
the archives), ``_device_campaigns_plan.py`` (the jobs opened as campaigns and their plan),
``_device_campaigns_run.py`` (one job under the clock, the device and the rows' summary lines).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

from experiments._device_campaigns_files import (
    CACHE_ARCHIVE_MAX_BYTES,
    RESULTS,
    cache_archive,
    changed,
    check_folder,
    make_folder,
    pack,
    record_files,
)
from experiments._device_campaigns_jobs import JOB_FORMAT, QUEUES, Job, parse_jobs, queue_jobs
from experiments._device_campaigns_plan import format_plan, open_jobs, plan_rows
from experiments._device_campaigns_run import device_summary, row_lines, run_job

__all__ = [
    "CACHE_ARCHIVE_MAX_BYTES",
    "EXIT_BAD_INPUT",
    "EXIT_JOB_FAILED",
    "JOB_FORMAT",
    "QUEUES",
    "RESULTS",
    "ROOT",
    "Job",
    "Refused",
    "cache_archive",
    "changed",
    "check_folder",
    "checked",
    "device_summary",
    "format_plan",
    "main",
    "make_folder",
    "open_jobs",
    "pack",
    "parse_args",
    "parse_jobs",
    "plan_rows",
    "queue_jobs",
    "record_files",
    "refuse",
    "row_lines",
    "run_job",
]

ROOT = Path(__file__).resolve().parents[1]
EXIT_JOB_FAILED, EXIT_BAD_INPUT = 1, 2  # a job failed once started; a spec refused up front


class Refused(SystemExit):
    """A spec this script cannot run: exit status 2, its ``error:`` line already on stderr
    (``str()`` is that line, for a caller of :func:`main`)."""

    def __init__(self, line: str):
        super().__init__(EXIT_BAD_INPUT)
        self.line = line

    def __str__(self) -> str:
        return self.line


def refuse(message: str) -> Refused:
    """Print ``error: message`` as one line on stderr; the exception that ends the call."""
    line = "error: " + " ".join(str(message).split())
    print(line, file=sys.stderr, flush=True)
    return Refused(line)


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are a UsageError (one ``error:`` line, exit 2, no usage dump)."""

    def error(self, message: str):
        from mope_jax.errors import UsageError

        raise UsageError(f"{message}; see python -m experiments.device_campaigns --help")


def parse_args(argv=None) -> argparse.Namespace:
    ap = _Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jobs", nargs="*", help="EXPERIMENT:SCALE[:ROWS[:SEEDS]], run in this order")
    ap.add_argument("--queue", choices=sorted(QUEUES), help="a prepared queue (module docstring)")
    ap.add_argument("--scale", help="with --queue: this scale instead of the queue's (e.g. smoke)")
    ap.add_argument("--out", required=True, type=Path, help="folder for the archive and log")
    ap.add_argument("--minutes", type=float, required=True, help="the clock for every job")
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root")
    ap.add_argument(
        "--corpus",
        type=Path,
        help="TinyShakespeare's input.txt (default: the campaigns' default corpus, e.g. "
        "$MOPE_JAX_TFDS_MANUAL_DIR/input.txt; a device has no network)",
    )
    ap.add_argument(
        "--compile-cache",
        type=Path,
        help="JAX's persistent compilation cache folder (packed into jax_cache.tar.gz at the end "
        "when it fits a later loan's carried files)",
    )
    return ap.parse_args(argv)


def checked(argv=None):
    """(args, jobs, root, campaigns): the whole call checked before anything trains; a
    MopeError (one line: the option or file, and the fix) for the first thing it cannot run.
    Only when all is well are --out and --compile-cache made."""
    from mope_jax.errors import UsageError

    args = parse_args(argv)
    if bool(args.queue) == bool(args.jobs):
        raise UsageError("give either --queue NAME or jobs EXPERIMENT:SCALE[...], not both")
    if args.scale and not args.queue:
        raise UsageError("--scale goes with --queue (a job names its own scale)")
    if not (math.isfinite(args.minutes) and args.minutes > 0):
        raise UsageError(
            f"--minutes {args.minutes} must be a finite number > 0: the minutes the call may "
            "train (e.g. --minutes 12)"
        )
    jobs = queue_jobs(args.queue, args.scale) if args.queue else parse_jobs(args.jobs)
    check_folder(args.out, "--out")
    if args.compile_cache is not None:
        check_folder(args.compile_cache, "--compile-cache")
    root = args.root.resolve()
    campaigns = open_jobs(root, jobs, args.corpus)  # every job, before any device time
    make_folder(args.out, "--out")
    if args.compile_cache is not None:
        make_folder(args.compile_cache, "--compile-cache")
    return args, jobs, root, campaigns


def main(argv=None, *, runner: Callable = run_job) -> dict:
    """The call; a spec it cannot run ends it at once (:class:`Refused`: one ``error:`` line,
    exit 2), a job that fails once started ends it after the others (exit 1)."""
    from mope_jax.errors import MopeError

    t0 = time.monotonic()
    try:
        args, jobs, root, campaigns = checked(argv)
        if args.compile_cache is not None:
            from mope_jax.device import use_compilation_cache

            use_compilation_cache(args.compile_cache)
        planned = plan_rows(campaigns)
    except MopeError as e:
        raise refuse(str(e)) from None
    try:
        logf = open(args.out / "device_campaigns.log", "a")
    except OSError as e:
        raise refuse(
            f"--out {args.out}: cannot write device_campaigns.log there ({e.strerror}); give "
            "another writable folder"
        ) from None

    def log(msg: str) -> None:
        logf.write(msg + "\n")
        logf.flush()
        print(msg, flush=True)

    log(format_plan(planned, args.minutes))
    before = record_files(root)
    new: list[str] = []
    done: list[dict] = []
    summary = {
        "jobs": [str(j) for j in jobs],
        "minutes": args.minutes,
        "plan": [{k: v for k, v in p.items() if not k.startswith("_")} for p in planned],
        "ran": done,
        "records": new,
        "packed_after": [],
    }

    def write_summary() -> None:
        summary["wall_minutes"] = round((time.monotonic() - t0) / 60, 2)
        (args.out / "device_campaigns.json").write_text(json.dumps(summary, indent=1) + "\n")

    def row_done(row: str, seeds: list[int]) -> None:
        new[:] = changed(before, record_files(root))
        if new:
            pack(root, new, args.out / "records.tar.gz")
        summary["packed_after"].append({"row": row, "seeds": seeds, "records": len(new)})
        write_summary()

    stopped = None
    for (job, c), p in zip(campaigns, planned):
        left_s = args.minutes * 60 - (time.monotonic() - t0)
        if not any(p["missing"].values()):
            continue
        if p["estimate_s"] is not None and p["estimate_s"] > left_s:
            stopped = f"{job}: ~{p['estimate_s'] / 60:.1f} min needed, {left_s / 60:.1f} left"
            log(f"clock: {stopped}; stopping at this row boundary")
            break
        t_job = time.monotonic()
        try:
            outcome = runner(root, c, left_s, p["_estimate"], log, row_done)
        except MopeError as e:
            outcome = {"error": " ".join(str(e).split())}
            log(f"error in {job}: {outcome['error']}")
        except Exception as e:  # a bug or the device: its traceback in the log, the queue goes on
            outcome = {"error": f"{type(e).__name__}: {' '.join(str(e).split())}"}
            logf.write(traceback.format_exc())
            traceback.print_exc()
            log(f"error in {job}: {outcome['error']}")
        done.append(
            {"job": str(job), "minutes": round((time.monotonic() - t_job) / 60, 2)} | outcome
        )
        write_summary()
        if outcome.get("stopped"):
            stopped = f"{job}: {outcome['stopped']}"
            break
    summary["stopped"] = stopped
    summary["device"] = device_summary()
    new[:] = changed(before, record_files(root))
    if new:
        pack(root, new, args.out / "records.tar.gz")
    if args.compile_cache is not None:
        summary["compile_cache"] = cache_archive(args.compile_cache, args.out)
    write_summary()
    log(
        f"{len(new)} records in {args.out / 'records.tar.gz'} after {summary['wall_minutes']} min"
        if new
        else f"no new records after {summary['wall_minutes']} min"
    )
    for line in row_lines(root, new):
        log(line)
    ran = {d["job"] for d in done}
    left = [p["job"] for p in planned if any(p["missing"].values()) and p["job"] not in ran]
    if left:
        log("left for the next loan: " + "; ".join(left))
    failed = [d["job"] for d in done if "error" in d]
    summary["failed"] = failed
    write_summary()
    if failed:
        line = (
            f"error: {len(failed)} of {len(done)} jobs failed ({'; '.join(failed)}); their "
            f"errors are in {args.out / 'device_campaigns.log'}"
        )
        logf.write(line + "\n")
        logf.close()
        print(line, file=sys.stderr, flush=True)
        raise SystemExit(EXIT_JOB_FAILED)
    logf.close()
    return summary


if __name__ == "__main__":
    main()
