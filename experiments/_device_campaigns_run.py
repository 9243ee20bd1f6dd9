"""One job of ``experiments.device_campaigns`` run under the clock (the default runner of its
``main``), and what a call reports after: the device it ran on and a line per row of new
records (final val losses, minutes, tokens/s and MFU)."""

from __future__ import annotations

import json
from pathlib import Path


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
