"""The numbers claims A5 and A5g are judged on, shared by the judges and the forest figure:
per cell, the count of (omega, sigma) on omega sigma = 5 per seed, and the cell's fraction with
its Wilson interval (seeds as clusters) and its own verdict against the claim's 1."""

from __future__ import annotations

from mope_jax import claims as cl
from mope_jax.campaign import by_row

from .rows import PREFIX, cell_rows

CLAIM_VALUE = 1.0  # "every pair": the fraction on omega sigma = 5 the claim states
UNIT = "fraction"  # its margin: cl.MARGINS["fraction"] (0.05)
WHAT = {"mope": "MOPE pairs", "ega-m": "EGA-M filters"}


def boundary_counts(records: list[dict], model: str = "mope") -> dict[str, tuple[list, list]]:
    """{cell row: (hits per seed, items per seed)} of ``model``'s cells with records: the
    (omega, sigma) pairs (MOPE's pairs, EGA-M's filters) on omega sigma = 5 of each seed,
    round(summary ``<prefix>_on_boundary_frac`` x N), N = len(analysis ``omega``)."""
    recs = by_row(records)
    key = f"{PREFIX[model]}_on_boundary_frac"
    out = {}
    for row in cell_rows(model):
        hits, totals = [], []
        for r in sorted(recs.get(row, []), key=lambda r: int(r["seed"])):
            where = f"{row} seed {r.get('seed')}"
            omega = (r.get("analysis") or {}).get("omega")
            if not omega:
                raise ValueError(
                    f"{where}: the record has no analysis['omega'], so the count N of "
                    f"{WHAT[model]} behind {key} is unknown (mope-jax campaign analyze "
                    "omega_sigma_control adds it from the run's checkpoint)"
                )
            if key not in (r.get("summary") or {}):
                raise ValueError(f"{where}: the record's summary has no {key}")
            n = len(omega)
            x = float(r["summary"][key]) * n
            if abs(x - round(x)) > 1e-6 * n:
                raise ValueError(f"{where}: {key} x {n} = {x} is not a count")
            hits.append(int(round(x)))
            totals.append(n)
        if totals:
            out[row] = (hits, totals)
    return out


def boundary_fractions(records: list[dict], model: str = "mope") -> dict[str, dict]:
    """Per cell row of ``model`` with records: the fraction of its (omega, sigma) pairs on
    omega sigma = 5 over every seed's pairs, its Wilson interval with the seeds as clusters
    (``cl.fraction_interval``) and its own verdict against the claim's 1 +- 0.05
    (``cl.judge_value``; untested below 3 seeds): {"frac", "lo", "hi", "n_eff", "n" (seeds),
    "hits", "totals", "verdict", "note"}."""
    out = {}
    for row, (hits, totals) in boundary_counts(records, model).items():
        frac, lo, hi, n_eff = cl.fraction_interval(hits, totals)
        verdict, note = cl.judge_value(
            frac,
            lo,
            hi,
            CLAIM_VALUE,
            UNIT,
            len(totals),
            what=f"{WHAT[model]} on omega sigma = 5, `{row}`",
        )
        out[row] = dict(
            frac=frac,
            lo=lo,
            hi=hi,
            n_eff=n_eff,
            n=len(totals),
            hits=hits,
            totals=totals,
            verdict=verdict,
            note=note,
        )
    return out
