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

What runs, in order: every job is checked before anything trains (experiment, scale, rows, the
corpus: one line and a non-zero exit for anything it cannot run, before any training); the plan
is printed; then each row: a clock guard (a row whose estimate does not fit the time left is not
started, and the queue stops there: a row boundary), one training program for its seeds
(``vmap`` on an accelerator), the audit, summaries and analysis compiled once for the row, its
records written and ``records.tar.gz`` rewritten at once, and a line with its minutes, tokens/s
and MFU. ``device_campaigns.json`` holds the plan, what ran and the device; ``device_campaigns.log``
every line. The records are ordinary campaign records (``campaign status`` and ``report`` treat
them as records made here; their ``perf`` and ``env`` name the device and the precision).

Numerics: each row runs at its scale's precision (``model.matmul_precision`` and
``model.compute_dtype``, stored in every record's config): nothing here sets a process-wide
precision. ``../shared`` does not travel: pass ``--corpus``; records identify the corpus by
content, not path. A copy of the working tree may carry no .git or an older one: start with
``MOPE_JAX_GIT_COMMIT=<the commit sent>`` so that the records name the code that ran.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path("experiments") / "results"
CACHE_ARCHIVE_MAX_BYTES = 48 * 2**20  # what fits the next loan's 64 MiB of carried files

QUEUES = {
    "paper_a": (
        "paper_a",
        "reference",
        (
            "a-baseline",
            "a-ega-morlet-causal",
            "a-ega-morlet",
            "a-mope",
            "a-ega1-causal",
            "a-ega1",
        ),
        3,
    ),
    "paper_c": (
        "fourierqk",
        "reference-tf32",
        ("learned", "causal-morlet", "causal-gauss", "fourier-qk", "multifourier-qk", "random-qk"),
        3,
    ),
}


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
                f"error: {item!r} is not EXPERIMENT:SCALE[:ROWS[:SEEDS]] with SEEDS >= 1 (e.g. "
                "paper_a:mid or paper_a:reference:a-baseline,a-mope:1); `mope-jax campaign "
                "status EXPERIMENT --scale S` lists what a campaign plans"
            )
        jobs.append(Job(parts[0], parts[1], rows, None if seeds is None else int(seeds)))
    return jobs


def queue_jobs(name: str, scale: str | None = None) -> list[Job]:
    """The queue's rows in priority order, one job a row (so the clock guard and the archive act
    at every row boundary)."""
    if name not in QUEUES:
        raise SystemExit(f"error: no queue {name!r}; use one of {', '.join(QUEUES)}")
    experiment, default_scale, rows, seeds = QUEUES[name]
    return [Job(experiment, scale or default_scale, (r,), seeds) for r in rows]


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


def open_jobs(root: Path, jobs: list[Job], corpus: Path | None):
    """Every job as a Campaign, its rows' configs and corpus checked; CampaignError (one line,
    the fix) for the first it cannot run. Nothing is trained."""
    from mope_jax.campaign import Campaign

    out = []
    for job in jobs:
        c = Campaign.open(
            job.experiment,
            job.scale,
            root,
            rows=list(job.rows) or None,
            seeds=job.seeds,
            corpus=corpus,
        )
        for r in c.rows:
            c.prepared(r)  # its config and corpus
        out.append((job, c))
    return out


def plan_rows(campaigns, kind: str | None = None) -> list[dict]:
    """Per job: the runs missing and the estimated seconds (``estimate_for_lease``: this device's
    records, else the FLOP count at an assumed MFU; None where neither is known)."""
    from mope_jax.campaign.estimate import estimate_for_lease
    from mope_jax.campaign.status import plan
    from mope_jax.provenance import environment

    env = environment()
    rows = []
    for job, c in campaigns:
        est = estimate_for_lease(c, env, kind)
        missing = [(p.row.name, list(p.missing)) for p in plan(c) if p.missing]
        secs = None if est is None else sum(est.seconds(r, len(s)) for r, s in missing)
        rows.append(
            {
                "job": str(job),
                "missing": {r: s for r, s in missing},
                "estimate_s": secs,
                "estimate_source": None if est is None else est.source,
                "_estimate": est,
            }
        )
    return rows


def format_plan(rows: list[dict], minutes: float) -> str:
    lines = [f"plan for {minutes:.1f} min (estimates: the source named per job):"]
    total = 0.0
    for r in rows:
        n = sum(len(s) for s in r["missing"].values())
        if not n:
            lines.append(f"  {r['job']:<55} nothing missing")
            continue
        if r["estimate_s"] is None:
            lines.append(f"  {r['job']:<55} {n} runs, no estimate on this device")
            continue
        total += r["estimate_s"]
        fits = "fits" if total <= minutes * 60 else "does not fit"
        lines.append(
            f"  {r['job']:<55} {n} runs ~{r['estimate_s'] / 60:5.1f} min, "
            f"cumulative {total / 60:5.1f} min: {fits}"
        )
    sources = sorted({r["estimate_source"] for r in rows if r["estimate_source"]})
    lines += [f"  estimate: {s}" for s in sources]
    return "\n".join(lines)


def run_job(root: Path, c, budget_s: float, estimate, log, row_done) -> dict:
    """One campaign in this process, under the clock (``budget_s``) with ``estimate`` (no step
    is measured); ``row_done`` after each row's records are written."""
    from mope_jax.campaign.run import run_campaign

    res = run_campaign(
        c,
        budget_s=None if estimate is None else budget_s,
        estimate=estimate,
        measure=False,
        progress=False,
        log=log,
        row_done=row_done,
    )
    return {
        "trained": [f"{r} seed {s}" for r, s in res.trained],
        "left": [f"{r} seed {s}" for r, s in res.left],
        "stopped": res.stopped,
    }


def device_summary() -> dict:
    import jax

    from mope_jax.device import device_kind

    return {
        "backend": jax.default_backend(),
        "device_kind": device_kind(),
        "devices": [str(d) for d in jax.devices()],
        "jax": jax.__version__,
    }


def row_lines(root: Path, paths: list[str]) -> list[str]:
    """'row: n seeds, final val a, b, c; tokens/s, MFU' for the records at ``paths``."""
    from mope_jax.device import perf_text

    by_row: dict[str, list[dict]] = {}
    for p in paths:
        rec = json.loads((root / p).read_text())
        by_row.setdefault(
            f"{rec.get('experiment')}:{rec.get('scale')}:{rec.get('row')}", []
        ).append(rec)
    out = []
    for name, recs in by_row.items():
        vals = ", ".join(f"{r.get('final_val_loss', float('nan')):.4f}" for r in recs)
        camp = recs[0].get("campaign") or {}
        out.append(
            f"  {name}: {len(recs)} seeds, final val {vals}; "
            f"{camp.get('group_wall_s', 0) / 60:.1f} min; {perf_text(recs[0].get('perf') or {})}"
        )
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


def main(argv=None, *, runner: Callable = run_job) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jobs", nargs="*", help="EXPERIMENT:SCALE[:ROWS[:SEEDS]], run in this order")
    ap.add_argument("--queue", choices=sorted(QUEUES), help="a prepared queue (module docstring)")
    ap.add_argument("--scale", help="with --queue: this scale instead of the queue's (e.g. smoke)")
    ap.add_argument("--out", required=True, type=Path, help="folder for the archive and log")
    ap.add_argument("--minutes", type=float, required=True, help="the clock for every job")
    ap.add_argument("--root", type=Path, default=ROOT, help="repository root")
    ap.add_argument("--corpus", type=Path, help="TinyShakespeare's input.txt, if not in ../shared")
    ap.add_argument(
        "--compile-cache",
        type=Path,
        help="JAX's persistent compilation cache folder (packed into jax_cache.tar.gz at the end "
        "when it fits a later loan's carried files)",
    )
    args = ap.parse_args(argv)
    if bool(args.queue) == bool(args.jobs):
        raise SystemExit("error: give either --queue NAME or jobs EXPERIMENT:SCALE[...], not both")
    if args.scale and not args.queue:
        raise SystemExit("error: --scale goes with --queue (a job names its own scale)")
    if not (math.isfinite(args.minutes) and args.minutes > 0):
        raise SystemExit(f"error: --minutes {args.minutes} must be a finite number > 0")
    jobs = queue_jobs(args.queue, args.scale) if args.queue else parse_jobs(args.jobs)
    root = args.root.resolve()
    t0 = time.monotonic()
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / ".write-test").write_text("")
        (args.out / ".write-test").unlink()
    except OSError as e:
        raise SystemExit(
            f"error: --out {args.out}: cannot write there ({e.strerror}); give a writable folder"
        ) from None

    from mope_jax.errors import MopeError

    if args.compile_cache is not None:
        from mope_jax.device import use_compilation_cache

        use_compilation_cache(args.compile_cache)
    try:  # every job checked before any device time goes to training
        campaigns = open_jobs(root, jobs, args.corpus)
    except MopeError as e:
        raise SystemExit(f"error: {e}") from None
    planned = plan_rows(campaigns)
    logf = open(args.out / "device_campaigns.log", "a")

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
            outcome = {"error": str(e)}
            log(f"error in {job}: {e}")
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
    logf.close()
    if any("error" in d for d in done):
        sys.exit(1)
    return summary


if __name__ == "__main__":
    main()
