"""The campaign's figures hook (``mope-jax report --regenerate``): ``<scale>/fit.png``,
theta_eff against W per task, beside the library's figures (mope_jax.analysis.figures)."""

from __future__ import annotations

import math

import numpy as np

from mope_jax.campaign import Experiment

from .fits import LEARNED, fit_law, runs_of


def figures(experiment: Experiment, by_scale: dict) -> dict:
    """``mope-jax report --regenerate``'s figures beyond the library's (mope_jax.analysis.figures):
    ``<scale>/fit.png``, theta_eff against W per task at each scale with records (smoke
    excluded): every run (hollow: its copy was not learned), the free-slope fit and the
    slope-free c / W of :func:`fit_law` over the runs that learned the copy (as B1/B1r are
    judged), and the law with the paper's c = 3.02 and with pi."""
    from mope_jax.analysis.figures import FigureData

    out = {}
    for sc in experiment.scales:
        recs = [r for r in by_scale.get(sc.name, []) if r.get("analysis")]
        if sc.name == "smoke" or not recs:
            continue
        panels = []
        for task, runs in runs_of(recs).items():
            learned = [r for r in runs if r["copy_accuracy"] >= LEARNED]
            series = []
            for ok, label, hollow in ((True, "learned the copy", False), (False, "did not", True)):
                pts = [r for r in runs if (r["copy_accuracy"] >= LEARNED) == ok]
                if pts:
                    series.append(
                        {
                            "kind": "points",
                            "x": [r["W"] for r in pts],
                            "y": [math.exp(r["log_theta_eff"]) for r in pts],
                            "label": f"runs that {label} (accuracy >= {LEARNED:g})"
                            if ok
                            else f"runs that {label}",
                            "color": "#1f77b4",
                            "hollow": hollow,
                            "size": 16,
                        }
                    )
            ws = sorted({r["W"] for r in runs})
            grid = np.geomspace(min(ws) / 1.2, max(ws) * 1.2, 50).tolist()
            if len(learned) >= 2 and len({r["W"] for r in learned}) >= 2:
                f = fit_law(learned)["log_theta_eff"]
                series.append(
                    {
                        "kind": "line",
                        "x": grid,
                        "y": [f["c"] / w for w in grid],
                        "label": f"c / W, c = {f['c']:.2f} (slope-free fit)",
                        "color": "#1f77b4",
                    }
                )
                if "slope" in f:
                    series.append(
                        {
                            "kind": "line",
                            "x": grid,
                            "y": [math.exp(f["intercept"]) * w ** -f["slope"] for w in grid],
                            "label": f"free slope {f['slope']:.2f} "
                            f"[{f['slope_lo']:.2f}, {f['slope_hi']:.2f}]",
                            "color": "#ff7f0e",
                        }
                    )
            for c, label, color in (
                (3.02, "paper: 3.02 / W", "#000000"),
                (math.pi, "pi / W", "#7f7f7f"),
            ):
                series.append(
                    {
                        "kind": "line",
                        "x": grid,
                        "y": [c / w for w in grid],
                        "label": label,
                        "color": color,
                        "linestyle": ":",
                    }
                )
            panels.append(
                {
                    "title": f"{task} task: {len(runs)} runs, {len(learned)} learned the copy",
                    "series": series,
                }
            )
        if panels:
            out[f"{sc.name}/fit.png"] = FigureData(
                "xy",
                {
                    "title": f"{experiment.title}, scale `{sc.name}`: theta_eff against W",
                    "ncols": len(panels),
                    "legend": "each",
                    "xscale": "log",
                    "yscale": "log",
                    "xlabel": "W (copy distance, tokens)",
                    "ylabel": "theta_eff (rad/token)",
                    "panel_size": [4.2, 3.4],
                    "panels": panels,
                },
            )
    return out
