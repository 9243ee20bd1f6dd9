"""Campaigns on a borrowed accelerator: run several campaigns under one time budget and bring
their new records back as one archive (for a GPU/TPU lent for minutes, not hours).

Command (on the accelerator machine, in a checkout of this repository):
          python -m experiments.device_campaigns --out DIR --minutes 9 \\
              [--corpus .corpus/input.txt] paper_a:mid fourierqk:mid omega_sigma_control:mid
          python -m experiments.device_campaigns --out DIR --minutes 8 \\
              paper_a:reference:a-baseline:1 paper_a:reference:a-ega-morlet:1
          then here: tar -xzf DIR/records.tar.gz && mope-jax report --regenerate experiments/results
Writes:   DIR/records.tar.gz (every record file the campaigns wrote or changed, paths relative to
          the repository root), DIR/device_campaigns.log (each campaign's output) and
          DIR/device_campaigns.json (the plan, what ran, the device and versions).

Each ``EXPERIMENT:SCALE`` is ``mope-jax campaign run EXPERIMENT --scale SCALE`` with the budget
that is left (``--budget-minutes``: a campaign stops at a run boundary, so a record is either
complete or absent); the campaigns run in the order given, until the budget is spent.
With ``--no-estimate`` a job gets no budget, so nothing is measured before it trains (on a lease of
minutes a measurement is a compile, ~1 min at ``reference``): size the jobs by hand, from the
records' wall times. ``EXPERIMENT:SCALE:ROWS[:SEEDS]`` adds ``--rows ROWS`` (comma-separated) and
``--seeds SEEDS`` (seeds 0..SEEDS-1): a few minutes of an accelerator then go to seed 0 of each
headline row in turn rather than to every seed of the first row. The archive is rewritten after each
job, so a call killed at its time limit still returns the records of the jobs that finished. The
records are ordinary campaign records: ``mope-jax campaign status`` and ``report`` treat them like
records trained here, and their provenance names the device. ``../shared`` does not travel to a
borrowed machine: copy TinyShakespeare into a git-ignored folder of the checkout (never commit it),
carry it, and pass ``--corpus``; records identify the corpus by content, not path.

Provenance: a copy of the working tree sent to a device may carry no .git or an older one;
start the command with ``MOPE_JAX_GIT_COMMIT=<the commit sent>`` (``git rev-parse HEAD`` here)
so that the records name the code that ran.

Numerics: float32 matmuls run at full float32 precision (``JAX_DEFAULT_MATMUL_PRECISION=highest``
unless already set): on GPUs JAX's default is TF32 for float32 matmuls, which would make a
device record a lower-precision model than the CPU records beside it. Records from another
backend are not bitwise equal to CPU ones (different kernels); a seed is one run on one
machine, so a row may mix machines, and each record says which.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path("experiments") / "results"


@dataclass(frozen=True)
class Job:
    """One ``mope-jax campaign run``: an experiment at a scale, optionally some rows and seeds."""

    experiment: str
    scale: str
    rows: tuple[str, ...] = ()
    seeds: int | None = None

    def __str__(self) -> str:
        parts = [self.experiment, self.scale]
        if self.rows or self.seeds is not None:
            parts.append(",".join(self.rows))
        if self.seeds is not None:
            parts.append(str(self.seeds))
        return ":".join(parts)

    def options(self) -> list[str]:
        """The ``campaign run`` options beyond the experiment and scale."""
        opts = ["--rows", ",".join(self.rows)] if self.rows else []
        return opts + (["--seeds", str(self.seeds)] if self.seeds is not None else [])


def parse_jobs(items: list[str]) -> list[Job]:
    """``EXPERIMENT:SCALE[:ROWS[:SEEDS]]`` -> Job; one clear error for anything else."""
    jobs = []
    for item in items:
        parts = item.split(":")
        rows = tuple(r for r in parts[2].split(",") if r) if len(parts) > 2 else ()
        seeds = parts[3] if len(parts) > 3 else None
        if (
            not 2 <= len(parts) <= 4
            or not all(parts[:2])
            or (len(parts) > 2 and not rows)
            or (seeds is not None and not (seeds.isdigit() and int(seeds) >= 1))
        ):
            raise SystemExit(
                f"error: {item!r} is not EXPERIMENT:SCALE[:ROWS[:SEEDS]] (e.g. paper_a:mid or "
                "paper_a:reference:a-baseline,a-mope:1); `mope-jax campaign status EXPERIMENT "
                "--scale S` lists what a campaign plans"
            )
        jobs.append(Job(parts[0], parts[1], rows, None if seeds is None else int(seeds)))
    return jobs


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
    """Write ``out`` (a .tar.gz) holding ``paths`` relative to ``root``."""
    with tarfile.open(out, "w:gz") as tar:
        for p in paths:
            tar.add(root / p, arcname=p)
    return out


def run_campaign(
    root: Path, job: Job, minutes: float, log, corpus=None, *, runner=subprocess.run
) -> int:
    """``mope-jax campaign run`` in a child process (its output appended to ``log``)."""
    cmd = [sys.executable, "-m", "mope_jax", "campaign", "run", job.experiment]
    cmd += ["--scale", job.scale, *job.options()]
    cmd += ["--root", str(root), "--no-progress"]
    # None (--no-estimate): no budget and no step measurement
    cmd += ["--no-measure"] if minutes is None else ["--budget-minutes", f"{minutes:.2f}"]
    if corpus is not None:
        cmd += ["--corpus", str(corpus)]
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    return runner(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT).returncode


def device_summary() -> dict:
    import jax

    return {
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
        "jax": jax.__version__,
        "matmul_precision": os.environ.get("JAX_DEFAULT_MATMUL_PRECISION"),
    }


def main(argv=None, *, runner=run_campaign) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jobs", nargs="+", help="EXPERIMENT:SCALE[:ROWS[:SEEDS]], run in this order")
    ap.add_argument("--out", required=True, type=Path, help="folder for the archive and log")
    ap.add_argument("--minutes", type=float, required=True, help="budget for all campaigns")
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root")
    ap.add_argument("--corpus", type=Path, help="TinyShakespeare's input.txt, if not in ../shared")
    ap.add_argument(
        "--no-estimate",
        action="store_true",
        help="run each job without a campaign budget: no step measurement (about one compile, "
        "~1 min at reference, saved per row without a record on this machine); the call's own "
        "time limit is the guard, and a run it kills is lost",
    )
    args = ap.parse_args(argv)
    jobs = parse_jobs(args.jobs)
    if args.minutes <= 0:
        raise SystemExit("error: --minutes must be > 0")
    os.environ.setdefault("JAX_DEFAULT_MATMUL_PRECISION", "highest")
    root = args.root.resolve()
    args.out.mkdir(parents=True, exist_ok=True)
    before = record_files(root)
    t0, done, new = time.monotonic(), [], []
    # no jax in this process until the campaigns are done: on a GPU the first backend to start
    # takes most of its memory, and the campaigns run in child processes
    summary = {"jobs": [str(j) for j in jobs], "ran": done}

    def write_summary(device=False):
        summary.update(minutes=round((time.monotonic() - t0) / 60, 2), records=new)
        if device:
            summary["device"] = device_summary()
        (args.out / "device_campaigns.json").write_text(json.dumps(summary, indent=1) + "\n")

    with open(args.out / "device_campaigns.log", "a") as log:
        for job in jobs:
            left = args.minutes - (time.monotonic() - t0) / 60
            if left <= 0.5:
                break
            t_job = time.monotonic()
            rc = runner(root, job, None if args.no_estimate else left, log, args.corpus)
            done.append(
                {
                    "job": str(job),
                    "experiment": job.experiment,
                    "scale": job.scale,
                    "returncode": rc,
                    "minutes": round((time.monotonic() - t_job) / 60, 2),
                }
            )
            new = changed(before, record_files(root))
            if new:  # after every job: a call killed later still brings these back
                pack(root, new, args.out / "records.tar.gz")
            write_summary()
    write_summary(device=True)
    print(
        f"{len(new)} records in {args.out / 'records.tar.gz'} after {summary['minutes']} min"
        if new
        else f"no new records after {summary['minutes']} min"
    )
    return summary


if __name__ == "__main__":
    main()
