"""The figures hook: ``forest.png``, every cell's fraction of (omega, sigma) on omega sigma = 5
with its Wilson interval, MOPE and EGA-M side by side (in place of the generic val-loss forest)."""

from __future__ import annotations

from mope_jax import claims as cl
from mope_jax.campaign import Experiment

from .boundary import CLAIM_VALUE, UNIT, boundary_fractions
from .rows import CELLS, LABEL, MODELS, paper_cell, row_name


def _cell_label(wd: str, init: str, constraint: str) -> str:
    paper = (wd, init, constraint) == ("on", "boundary", "clamp")
    return f"wd {wd}, init {init}, {constraint}" + (" (paper's setup)" if paper else "")


def figures(experiment: Experiment, by_scale: dict) -> dict:
    """``mope-jax report --regenerate``'s ``forest.png`` in place of the generic forest (val
    loss against the MOPE cell, which is not what A5 is about): per scale with records (smoke
    excluded), every cell's fraction of (omega, sigma) on omega sigma = 5 with its Wilson 95%
    interval, seeds as clusters (:func:`boundary_fractions`, the numbers claims A5 and A5g are
    judged on), the claim's 1 +- 0.05 shaded, MOPE and EGA-M side by side, each point coloured
    by its cell's own verdict (``cl.judge_value``; untested below 3 seeds)."""
    from mope_jax.analysis.figures import VERDICT_COLORS, FigureData

    lo_edge = CLAIM_VALUE - cl.MARGINS[UNIT]
    panels = []
    for sc in experiment.scales:
        recs = by_scale.get(sc.name) or []
        if sc.name == "smoke" or not recs:
            continue
        per_model = {m: boundary_fractions(recs, m) for m in MODELS}
        if not any(per_model.values()):
            continue
        for model in MODELS:
            items = []
            for i, (row, c) in enumerate(
                (row_name(model, *cell), per_model[model].get(row_name(model, *cell)))
                for cell in CELLS
            ):
                if c is None:
                    continue
                items.append(
                    {
                        "row": i,
                        "cell": row,
                        "mean": min(1.0, max(0.0, c["frac"])),
                        "ci_low": min(1.0, max(0.0, c["lo"])),
                        "ci_high": min(1.0, max(0.0, c["hi"])),
                        "n": c["n"],
                        "hits": sum(c["hits"]),
                        "total": sum(c["totals"]),
                        "verdict": c["verdict"],
                        "paper": CLAIM_VALUE if row == paper_cell(model) else None,
                        "causal": cl.is_causal(experiment, sc.name, recs, [row]),
                    }
                )
            seeds = sorted({it["n"] for it in items})
            if not seeds:
                n_text = "no records"
            elif len(seeds) == 1:
                n_text = f"{seeds[0]} seed{'s' if seeds[0] != 1 else ''} a cell"
            else:
                n_text = f"{seeds[0]}-{seeds[-1]} seeds a cell"
            panels.append({"title": f"{LABEL[model]}, scale `{sc.name}`: {n_text}", "items": items})
    if not panels:
        return {}
    used = {it["verdict"] for p in panels for it in p["items"]}
    return {
        "forest.png": FigureData(
            "fraction_forest",
            {
                "title": f"{experiment.title}: fraction of (omega, sigma) on omega sigma = 5 "
                "per cell, Wilson 95% interval with the seeds as clusters; each point coloured "
                "by its cell's own verdict against the claim's 1 (claims A5, A5g; untested "
                f"below {cl.MIN_SEEDS} seeds)",
                "labels": [_cell_label(*cell) for cell in CELLS],
                "xlabel": "fraction of the cell's (omega, sigma) with |omega sigma - 5| < 1e-3 "
                "(MOPE: pairs; EGA-M: filters)",
                "band": [lo_edge, CLAIM_VALUE],
                "band_label": f"the claim's {CLAIM_VALUE:g} +- {cl.MARGINS[UNIT]:g} (margin)",
                "xlim": [-0.03, 1.13],
                "ncols": len(MODELS),
                "verdicts": {w: c for w, c in VERDICT_COLORS.items() if w in used},
                "source": f"experiments/results/{experiment.name}/<scale>/records (summary "
                "<model>_on_boundary_frac x len(analysis omega), per seed)",
                "panels": panels,
            },
        )
    }
