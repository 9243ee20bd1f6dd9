"""Claims A5 (MOPE's pairs converge to omega sigma = 5) and A5g (the same in EGA-M's filters):
the judges of the ledger, by the rule for a claim of a value, on the cells' boundary fractions."""

from __future__ import annotations

from mope_jax import claims as cl
from mope_jax.campaign import Experiment

from .boundary import CLAIM_VALUE, UNIT, WHAT, boundary_fractions
from .rows import MOPE_ROWS, cell_rows, paper_cell

EFFECT_UNIT = "fraction on omega sigma = 5"


def is_foil(row: str) -> bool:
    """A cell without the clamp or without the boundary init (what could show the setup makes
    the boundary)."""
    return not (row.endswith("-clamp") and "-init_boundary-" in row)


def _cell_text(row: str, c: dict) -> str:
    return (
        f"`{row}` {c['frac']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}] ({sum(c['hits'])}/"
        f"{sum(c['totals'])} over {c['n']} seed{'s' if c['n'] != 1 else ''}): {c['verdict']} "
        f"({c['note']})"
    )


def _boundary_judge(exp: Experiment, by_scale: dict, model: str) -> cl.Verdict:
    """'Every pair converges to omega sigma = 5' for ``model``'s 12 cells, at the scale the
    ledger hands it, by the ledger's rule for a claim of a value (mope_jax.claims.rule).

    Each cell: the fraction of its pairs on omega sigma = 5 over every seed's pairs, with the
    Wilson 95% interval, seeds as clusters (``cl.fraction_interval``), judged against the
    claim's 1 with the fraction margin 0.05 (``cl.judge_value``): reproduced when the interval
    lies within [0.95, 1], contradicted when wholly below 0.95 (resolved far from the claim),
    inconclusive otherwise, untested below 3 seeds. A *foil* is a cell without the clamp or
    without the boundary init. The claim, in this order:

      * contradicted: the paper's cell (wd on, init on the boundary, clamp) is contradicted;
      * untested: the paper's cell has fewer than 3 seeds (or no records);
      * produced by the setup: the paper's cell is not contradicted (reproduced or
        inconclusive) and at least one foil is contradicted;
      * reproduced: all 12 cells are reproduced;
      * untested: a cell that could still decide it (a foil, or any cell for reproduced) has
        fewer than 3 seeds or no records;
      * inconclusive otherwise.

    Below 3 seeds the numbers are shown with the verdict untested (the ledger's "n 2, not
    judged"); ``cl.untested()`` without evidence only when the scale has none of the cells."""
    rows = cell_rows(model)
    paper = paper_cell(model)
    sc = cl.reading_scale(exp, by_scale, rows)
    if sc is None:
        return cl.untested()
    recs = by_scale[sc]
    cells = boundary_fractions(recs, model)
    if not cells:
        return cl.untested()
    foils = {row: c for row, c in cells.items() if is_foil(row)}
    lowest = min(foils, key=lambda r: (foils[r]["frac"], -foils[r]["n"])) if foils else None
    paper_v = cells[paper]["verdict"] if paper in cells else "untested"
    missing = [row for row in rows if row not in cells]
    undecided = missing + [row for row, c in cells.items() if c["verdict"] == "untested"]
    if paper_v == "contradicted":
        verdict = "contradicted"
    elif paper_v == "untested":
        verdict = "untested"
    elif any(c["verdict"] == "contradicted" for c in foils.values()):
        verdict = "produced by the setup"
    elif not missing and all(c["verdict"] == "reproduced" for c in cells.values()):
        verdict = "reproduced"
    elif undecided:
        verdict = "untested"
    else:
        verdict = "inconclusive"

    lo_edge = CLAIM_VALUE - cl.MARGINS[UNIT]
    within = sum(lo_edge <= c["lo"] and c["hi"] <= CLAIM_VALUE for c in cells.values())
    far = [row for row, c in foils.items() if c["verdict"] == "contradicted"]
    parts = [
        f"fraction of {WHAT[model]} with omega sigma = 5, Wilson 95% interval: paper's setup "
        + (_cell_text(paper, cells[paper]) if paper in cells else f"`{paper}` not run at `{sc}`")
    ]
    if lowest is not None:
        parts.append(
            f"lowest without the clamp or the boundary init {_cell_text(lowest, foils[lowest])}"
        )
        parts.append(f"{len(far)}/{len(foils)} such cells resolved below {lo_edge:g}")
    parts.append(
        f"{within}/{len(cells)} cells with the interval within {lo_edge:g}..{CLAIM_VALUE:g}"
        + (f" ({len(missing)} of the 12 not run)" if missing else "")
    )
    ns = sorted({c["n"] for c in cells.values()})
    n_text = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]} a cell"
    parts.append(f"seeds as clusters, n {n_text}, scale `{sc}`")

    effects, cited = [], [paper, lowest]
    for row in dict.fromkeys(r for r in cited if r is not None and r in cells):
        c = cells[row]
        label = "paper's setup" if row == paper else "lowest foil"
        effects.append(
            cl.Effect(
                f"{WHAT[model]}: {label} `{row}`",
                c["frac"],
                c["lo"],
                c["hi"],
                c["n"],
                CLAIM_VALUE if row == paper else None,
                cl.is_causal(exp, sc, recs, [row]),
                EFFECT_UNIT,
                verdict=c["verdict"],
            )
        )

    def short(row: str) -> str:
        c = cells[row]
        return f"{c['frac']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}], n {c['n']}: {c['verdict']}"

    headline = "; ".join(
        [f"paper's setup {short(paper)}" if paper in cells else "paper's setup not run"]
        + ([f"lowest foil `{lowest}` {short(lowest)}"] if lowest is not None else [])
    )
    return cl.Verdict(
        verdict,
        "; ".join(parts),
        cl.causality(exp, sc, recs, [r for r in (paper, lowest) if r is not None and r in cells]),
        scale=sc,
        rows=rows,
        effects=effects,
        headline=headline,
    )


def a5_judge(exp: Experiment, by_scale: dict) -> cl.Verdict:
    """Claim A5 on MOPE's 12 cells (:func:`_boundary_judge`)."""
    return _boundary_judge(exp, by_scale, "mope")


def a5g_judge(exp: Experiment, by_scale: dict) -> cl.Verdict:
    """Claim A5g on EGA-M's 12 cells (paper 1's gate, NON-CAUSAL full z-norm), by the same
    rule as A5 (:func:`_boundary_judge`): each cell's fraction on omega sigma = 5 against the
    claim's 1 within the fraction margin 0.05, its Wilson interval over the seeds as clusters.
    The claim is that the convergence recurs, so its value is A5's: 1."""
    return _boundary_judge(exp, by_scale, "ega-m")


CLAIMS = (
    cl.Claim(
        "A5",
        "every (omega, sigma) pair of MOPE converges to omega sigma = 5",
        "128/128 pairs at 5.000",
        a5_judge,
        f"mope-jax campaign run omega_sigma_control --scale mid --seeds 3 (the "
        f"{len(MOPE_ROWS)} `mope-*` cells; a cell needs 3 seeds for a verdict)",
        short="every MOPE pair ends on omega sigma = 5",
    ),
    cl.Claim(
        "A5g",
        "the convergence to omega sigma = 5 recurs in the separate energy-gate experiment "
        "(paper 1's EGA-M filters), a property of character-level language",
        "qualitative (observed in both experiments; no fraction given)",
        a5g_judge,
        "mope-jax campaign run omega_sigma_control --scale mid --seeds 3 (the 12 `ega-m-*` "
        "cells; a cell needs 3 seeds for a verdict)",
        short="the same in the EGA-M gate's filters",
    ),
)
