"""The plan of a campaign (``mope-jax campaign status``): per selected row, which planned seeds
have a current record, which are missing, which records are stale (made with another config
than the row has now: ``run`` refuses to mix them in), and which done records carry an analysis
the experiment declares outdated (``Experiment.outdated``: kept, listed, replaced only by
re-training)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mope_jax.campaign.configs import config_diff, corpus_diff, declared_causal
from mope_jax.campaign.records import Campaign, by_row, read_record, read_records
from mope_jax.campaign.render import display
from mope_jax.campaign.spec import Row


@dataclass(frozen=True)
class RowPlan:
    row: Row
    declared_causal: bool
    done: tuple[int, ...]
    missing: tuple[int, ...]
    stale: tuple[tuple[int, str], ...]  # (seed, what differs)
    extra: tuple[int, ...]  # records of seeds outside this plan (kept; rendered too)
    outdated: tuple[tuple[int, str], ...] = ()  # (seed, why) among done: Experiment.outdated


def plan(c: Campaign) -> list[RowPlan]:
    """Per selected row: which planned seeds have a (current) record, which are missing, which
    records are stale. Every record under the campaign's folder is read and checked first
    (:func:`read_records`), so a damaged record of any row is named before anything is planned."""
    every = by_row(read_records(c.records_dir, [r.name for r in c.experiment.rows]))
    out = []
    for row in c.rows:
        done, missing, stale, outdated = [], [], [], []
        for s in c.seeds_of(row):
            path = c.record_path(row.name, s)
            if not path.is_file():
                missing.append(s)
                continue
            rec = read_record(path)
            diff = config_diff(rec["config"], c.expected(row, s))
            _, corpus = c.prepared(row)
            diff += corpus_diff(rec.get("corpus"), corpus.meta)
            (stale.append((s, "; ".join(diff))) if diff else done.append(s))
            why = None if diff or c.experiment.outdated is None else c.experiment.outdated(rec)
            if why:
                outdated.append((s, why))
        have = {int(r["seed"]) for r in every.get(row.name, [])}
        extra = sorted(have - set(c.seeds_of(row)))
        out.append(
            RowPlan(
                row,
                declared_causal(c.experiment, c.scale, row),
                tuple(done),
                tuple(missing),
                tuple(stale),
                tuple(extra),
                tuple(outdated),
            )
        )
    return out


def format_plan(c: Campaign, plans: list[RowPlan]) -> str:
    n_rows = len(plans)
    others = [(p.row.name, len(c.seeds_of(p.row))) for p in plans if p.row.name in c.row_seeds]
    lines = [
        f"campaign {c.experiment.name}, scale {c.scale.name}: {n_rows} rows x "
        f"{len(c.seeds)} seeds ({seeds_text(c.seeds)})"
        + "".join(f", {r} {k}" for r, k in others)
        + f"; records in {rel(c.records_dir, c.root)}"
    ]
    width = max(len(display(p.row, p.declared_causal)) for p in plans)
    for p in plans:
        parts = [f"done {len(p.done)}/{len(c.seeds_of(p.row))}"]
        if p.missing:
            parts.append(f"missing seeds {seeds_text(p.missing)}")
        if p.stale:
            parts.append("STALE " + "; ".join(f"seed {s} ({d})" for s, d in p.stale))
        if p.extra:
            parts.append(f"also seeds {seeds_text(p.extra)}")
        for why in dict.fromkeys(w for _, w in p.outdated):
            seeds = [s for s, w in p.outdated if w == why]
            parts.append(f"outdated analysis in seeds {seeds_text(seeds)} ({why})")
        lines.append(f"  {display(p.row, p.declared_causal):<{width}}  " + ", ".join(parts))
    total = sum(len(c.seeds_of(p.row)) for p in plans)
    missing = sum(len(p.missing) for p in plans)
    stale = sum(len(p.stale) for p in plans)
    outdated = sum(len(p.outdated) for p in plans)
    lines.append(
        f"total: {total - missing - stale} of {total} runs done, {missing} missing"
        + (f", {stale} stale" if stale else "")
        + (f"; {outdated} with an outdated analysis (re-train to replace)" if outdated else "")
    )
    return "\n".join(lines)


def stale_message(c: Campaign, plans: list[RowPlan]) -> str | None:
    bad = [(p.row.name, s, d) for p in plans for s, d in p.stale]
    if not bad:
        return None
    row, seed, diff = bad[0]
    more = f" (and {len(bad) - 1} more stale records)" if len(bad) > 1 else ""
    return (
        f"{rel(c.record_path(row, seed), c.root)} was made with another config than row "
        f"{row} has now ({diff}){more}; delete the stale records or restore the row/scale, "
        f"then run again (mope-jax campaign status {c.experiment.name} --scale {c.scale.name} "
        "lists them)"
    )


def seeds_text(seeds: Sequence[int]) -> str:
    return ", ".join(str(s) for s in seeds)


def rel(path: Path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(path)
