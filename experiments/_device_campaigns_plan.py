"""The jobs of ``experiments.device_campaigns`` as ``mope_jax.campaign`` campaigns, before
anything trains: each opened and checked (rows, corpus, stale records, the folders it writes),
and the plan of what the time buys (the runs missing and their estimated seconds), printed first.
"""

from __future__ import annotations

from pathlib import Path

from experiments._device_campaigns_jobs import Job


def open_jobs(root: Path, jobs: list[Job], corpus: Path | None):
    """Every job as a Campaign: its experiment, scale and rows resolved, its rows' configs and
    corpus, its records (none stale) and the folders ``campaign run`` writes checked; a
    MopeError (one line, the fix) for the first it cannot run. Nothing is trained or written."""
    from mope_jax.campaign import Campaign
    from mope_jax.campaign.status import plan, rel, stale_message
    from mope_jax.errors import CampaignError
    from mope_jax.rundir import unwritable

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
        msg = stale_message(c, plan(c))
        if msg:
            raise CampaignError(f"{job}: {msg}")
        work = c.root / "runs" / "campaigns" / c.experiment.name / c.scale.name
        for d in (c.records_dir, work):  # what run_campaign writes (its default work dir)
            why = unwritable(d)
            if why:
                raise CampaignError(
                    f"{job}: cannot write in {rel(d, c.root)}: {why}; make it writable, or "
                    "give --root a writable copy of the repository"
                )
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
