"""The figures of a campaign's results folder, built from its records (drawn by
:mod:`mope_jax.analysis.figures`, checked by ``mope-jax report --regenerate --check``).

What :func:`for_campaign` draws for an experiment's results folder ``results/<experiment>/``
(every declared scale that has records, ``smoke`` excluded):

    forest.png                 each test of the campaign's table: declared comparisons a - b
                               (and interactions), then each row against the baseline, with the
                               95% t-interval over seeds (``mope_jax.campaign.paired`` /
                               ``contrast``, the numbers of ``table.md``), the paper's a - b,
                               NON-CAUSAL (declared or audit LEAKS) hollow red; one panel a scale
    curves.png                 val loss against step per row, mean over seeds, one panel a scale
    <scale>/omega_sigma.png    learned (omega, sigma) pairs (MOPE and EGA-M) per row, beside
                               their init where the record holds it, with omega sigma = bound
    <scale>/spectra.png        learned Q/K filter periods or kernel scales per layer (FourierQK)

and whatever the experiment module's own ``figures(experiment, records_by_scale) ->
{path under results/<experiment>/: FigureData}`` adds
(e.g. ``experiments/freq_matching/fit_figure.py``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from mope_jax.analysis.figures import MAX_LINES, TAB20, FigureData
from mope_jax.campaign.configs import declared_causal
from mope_jax.campaign.records import by_row, read_records
from mope_jax.campaign.render import comparisons_at, contrast, paired, same_data


def _unit(records: Iterable[dict]) -> str:
    """nats/char when every record trained on a text corpus (character level), else nats/token."""
    srcs = {((r.get("config") or {}).get("data") or {}).get("source") for r in records}
    return "nats/char" if srcs == {"text"} else "nats/token"


def _metric_words(metric: str) -> str:
    return metric.replace("_", " ")


def _row_causal(experiment, scale, row, rs: list[dict]) -> bool:
    """Declared causal and no audit of its records LEAKS (how table.md's causality reads)."""

    if not declared_causal(experiment, scale, row):
        return False
    return not any(r.get("audit") and not r["audit"].get("causal", True) for r in rs)


def _scales_with_records(experiment, records_by_scale: dict[str, list[dict]]):
    """The declared scales (in declared order) that have records, smoke excluded."""
    return [sc for sc in experiment.scales if sc.name != "smoke" and records_by_scale.get(sc.name)]


def _test_result(t) -> dict:
    ci = t.n >= 2 and math.isfinite(t.ci_low) and math.isfinite(t.ci_high)
    return {
        "mean": t.mean,
        "ci_low": t.ci_low if ci else None,
        "ci_high": t.ci_high if ci else None,
        "n": t.n,
    }


def forest_data(experiment, records_by_scale: dict[str, list[dict]]) -> FigureData | None:
    """The campaign's forest plot: per scale with records (smoke excluded), every test of its
    table: each declared comparison a - b (an interaction (a - b) - (c - d)) over the seeds its
    rows share, then each row on the baseline's data against the baseline (those not already
    declared), with the paired t-interval (``mope_jax.campaign.paired`` / ``contrast``: the
    numbers of ``table.md``). ``paper``: the paper's a - b where every row involved has a
    ``paper`` number; ``causal``: every row involved declared causal and no audit LEAKS. None
    when no scale has a comparison with a common seed."""

    metric = experiment.metric
    base = experiment.baseline
    noncausal: set[str] = set()
    panels, labels, groups = [], {}, {}
    for sc in _scales_with_records(experiment, records_by_scale):
        at = experiment.rows_at(sc)
        rows = {r.name: r for r in at}
        recs = {k: v for k, v in by_row(records_by_scale[sc.name]).items() if k in rows}
        causal = {n: _row_causal(experiment, sc, r, recs.get(n, [])) for n, r in rows.items()}
        noncausal |= {n for n, c in causal.items() if not c}
        tests: list[tuple[tuple[str, ...], str, str, Any]] = []
        declared = comparisons_at(experiment, sc)
        seen = set()
        for comp in declared:
            if comp.c is None:
                _, t = paired(recs, comp.a, comp.b, metric)
            else:
                _, _, t = contrast(recs, comp.terms, metric)
            tests.append((comp.key, comp.what, "declared", t))
            if comp.c is None:
                seen.add(tuple(sorted(comp.key)))
        for row in at:
            key = (row.name, base)
            if row.name == base or tuple(sorted(key)) in seen:
                continue
            if not same_data(experiment, sc, row.name, base):
                continue
            _, t = paired(recs, row.name, base, metric)
            tests.append((key, f"{row.label or row.variant} in place of {base}", "vs baseline", t))
        items = []
        for key, what, group, t in tests:
            if t is None:  # no common seed: nothing to draw
                continue
            papers = [rows[n].paper for n in key]
            paper = None
            if all(p is not None for p in papers):
                paper = papers[0] - papers[1]
                if len(key) == 4:
                    paper -= papers[2] - papers[3]
            labels.setdefault(key, None)
            groups.setdefault(key, group)
            items.append(
                {
                    "key": list(key),
                    "what": what,
                    "group": group,
                    "paper": paper,
                    "causal": all(causal[n] for n in key),
                    **_test_result(t),
                }
            )
        if items:
            panels.append({"title": f"scale `{sc.name}`", "items": items})
    if not panels:
        return None

    def shown(name: str) -> str:
        return name + (" (NON-CAUSAL)" if name in noncausal else "")

    def label(key: tuple[str, ...]) -> str:
        text = f"{shown(key[0])} - {shown(key[1])}"
        if len(key) == 4:
            text = f"({text}) - ({shown(key[2])} - {shown(key[3])})"
        return text

    # declared comparisons in their declared order, then rows against the baseline in row order
    rank = {c.key: i for i, c in enumerate(experiment.comparisons)}
    for i, r in enumerate(experiment.rows):
        rank.setdefault((r.name, base), len(experiment.comparisons) + i)
    order = sorted(labels, key=lambda k: (groups[k] == "vs baseline", rank.get(k, len(rank))))
    for p in panels:
        for it in p["items"]:
            it["row"] = order.index(tuple(it.pop("key")))
    recs_all = [
        r
        for sc in _scales_with_records(experiment, records_by_scale)
        for r in records_by_scale[sc.name]
    ]
    unit = _unit(recs_all) if metric.endswith("loss") else ""
    return FigureData(
        "forest",
        {
            "title": f"{experiment.title}: paired differences a - b, 95% t-interval over seeds",
            "labels": [label(k) for k in order],
            "first_vs_baseline": next(
                (i for i, k in enumerate(order) if groups[k] == "vs baseline"), None
            ),
            "xlabel": f"paired difference in {_metric_words(metric)}"
            + (f" ({unit})" if unit else "")
            + ", a - b; negative = a lower",
            "source": f"experiments/results/{experiment.name}/<scale>/table.md (tests of the "
            "table: declared comparisons, then rows against the baseline)",
            "panels": panels,
        },
    )


def _mean_curve(rs: list[dict], key: str = "val") -> tuple[list, list, int] | None:
    """(steps, mean over seeds, seeds) of the records' curves on the first seed's steps (seeds
    whose curve lacks a step are left out); None with fewer than two points."""
    curves = [r.get("curve") or [] for r in rs]
    curves = [c for c in curves if len(c) >= 2]
    if not curves:
        return None
    steps = [int(p["step"]) for p in curves[0]]
    vals = []
    for c in curves:
        by = {int(p["step"]): p.get(key) for p in c}
        if all(by.get(s) is not None for s in steps):
            vals.append([float(by[s]) for s in steps])
    if not vals:
        return None
    return steps, np.mean(np.asarray(vals), axis=0).tolist(), len(vals)


def _n_seeds(n: int) -> str:
    return f"{n} seed" + ("" if n == 1 else "s")


def _seeds_text(ns: list[int]) -> str:
    lo, hi = min(ns), max(ns)
    return f"{lo} seed{'s' if hi > 1 else ''} a row" if lo == hi else f"{lo}-{hi} seeds a row"


def curves_data(experiment, records_by_scale: dict[str, list[dict]]) -> FigureData | None:
    """Val loss against step per row (mean over the seeds with a curve), one panel a scale with
    records (smoke excluded) where some row has two or more evals. A scale with more than
    :data:`MAX_LINES` such rows keeps those also run at the largest such scale, or is left out."""

    scales = _scales_with_records(experiment, records_by_scale)
    per_scale = {}
    for sc in scales:
        rows = {r.name: r for r in experiment.rows_at(sc)}
        recs = by_row(records_by_scale[sc.name])
        lines = {}
        for name, row in rows.items():
            c = _mean_curve(recs.get(name, []))
            if c is not None:
                lines[name] = (row, c, _row_causal(experiment, sc, row, recs.get(name, [])))
        if lines:
            per_scale[sc.name] = lines
    if not per_scale:
        return None
    largest = list(per_scale)[-1]
    colors: dict[str, str] = {}
    panels = []
    for name, lines in per_scale.items():
        note = ""
        if len(lines) > MAX_LINES:
            if name != largest and len(set(lines) & set(per_scale[largest])) <= MAX_LINES:
                lines = {k: v for k, v in lines.items() if k in per_scale[largest]}
                note = f" (the rows also run at `{largest}`)"
            else:
                continue
        series = []
        for row_name, (row, (steps, mean, n), causal) in lines.items():
            color = colors.setdefault(row_name, TAB20[len(colors) % len(TAB20)])
            series.append(
                {
                    "kind": "line",
                    "x": steps,
                    "y": mean,
                    "label": f"{row_name}{'' if causal else ' (NON-CAUSAL)'}",
                    "color": color,
                    "linestyle": "-" if causal else "--",
                    "marker": "o" if len(steps) <= 12 else "",
                }
            )
        panels.append(
            {
                "title": f"scale `{name}`{note}: "
                + _seeds_text([c[2] for _, c, _ in lines.values()]),
                "xlabel": "step",
                "ylabel": "val loss (" + _unit(records_by_scale[name]) + ")",
                "series": series,
            }
        )
    if not panels:
        return None
    return FigureData(
        "xy",
        {
            "title": f"{experiment.title}: val loss per row, mean over seeds"
            + (
                " (dashed: NON-CAUSAL, its loss is not a causal-LM loss)"
                if any(s["linestyle"] == "--" for p in panels for s in p["series"])
                else ""
            ),
            "legend": "figure",
            "ncols": len(panels),
            "panel_size": [4.6, 3.4],
            "panels": panels,
        },
    )


def _omega_sigma_of(rec: dict) -> tuple[list, list, list | None, list | None] | None:
    """(omega, sigma, init omega, init sigma) of a record: its ``analysis`` (omega_sigma_control
    stores them beside their init), else its MOPE spectra (no init)."""
    a = rec.get("analysis") or {}
    if a.get("omega") is not None and a.get("sigma") is not None:
        return (
            np.ravel(a["omega"]).tolist(),
            np.ravel(a["sigma"]).tolist(),
            np.ravel(a["init_omega"]).tolist() if a.get("init_omega") is not None else None,
            np.ravel(a["init_sigma"]).tolist() if a.get("init_sigma") is not None else None,
        )
    s = rec.get("spectra") or {}
    for pre in ("mope", "ega_m"):
        if s.get(f"{pre}_omega") is not None and s.get(f"{pre}_sigma") is not None:
            om, sg = np.ravel(s[f"{pre}_omega"]), np.ravel(s[f"{pre}_sigma"])
            if om.shape == sg.shape:
                return om.tolist(), sg.tolist(), None, None
    return None


def omega_sigma_data(experiment, scale, records: list[dict]) -> FigureData | None:
    """Learned (omega, sigma) of every row at ``scale`` that has them (MOPE pairs, EGA-M
    filters; all seeds pooled), one panel a row, grey rings at the init where the record holds
    it, red where |omega sigma - bound| < 1e-3, the hyperbola omega sigma = bound; None when no
    record holds (omega, sigma)."""
    from mope_jax.analysis.spectra import BOUNDARY_TOL

    recs = by_row(records)
    panels = []
    bounds = set()
    for row in experiment.rows_at(scale):
        rs = [(r, _omega_sigma_of(r)) for r in recs.get(row.name, [])]
        rs = [(r, v) for r, v in rs if v is not None]
        if not rs:
            continue
        bound = float(((rs[0][0].get("config") or {}).get("model") or {}).get("mope_bound", 5.0))
        bounds.add(bound)
        om = np.concatenate([np.asarray(v[0], np.float64) for _, v in rs])
        sg = np.concatenate([np.asarray(v[1], np.float64) for _, v in rs])
        on = np.abs(om * sg - bound) < BOUNDARY_TOL
        series = []
        init = rs[0][1]
        if init[2] is not None and init[3] is not None:
            series.append(
                {
                    "kind": "points",
                    "x": init[2],
                    "y": init[3],
                    "label": "init",
                    "color": "#999999",
                    "hollow": True,
                    "size": 14,
                }
            )
        for mask, label, color in (
            (on, "on omega sigma = bound", "#d62728"),
            (~on, "off it", "#1f77b4"),
        ):
            if mask.any():
                series.append(
                    {
                        "kind": "points",
                        "x": om[mask].tolist(),
                        "y": sg[mask].tolist(),
                        "label": label,
                        "color": color,
                        "size": 7,
                    }
                )
        causal = _row_causal(experiment, scale, row, recs.get(row.name, []))
        panels.append(
            {
                "title": f"{row.name}\n{_n_seeds(len(rs))}, {int(on.sum())}/{len(on)} on the bound"
                + ("" if causal else "\nNON-CAUSAL"),
                "series": series,
                "hyperbola": bound,
            }
        )
    if not panels:
        return None
    ncols = min(6 if len(panels) > 12 else 4, len(panels))
    return FigureData(
        "xy",
        {
            "title": f"{experiment.title}, scale `{scale.name}`: learned (omega, sigma), all "
            f"seeds; dashed: omega sigma = {', '.join(f'{b:g}' for b in sorted(bounds))}",
            "ncols": ncols,
            "legend": "figure",
            "xscale": "log",
            "yscale": "log",
            "xlabel": "omega (rad/token)",
            "ylabel": "sigma (tokens)",
            "panel_size": [2.3, 2.1] if len(panels) > 4 else [3.0, 2.9],
            "panels": panels,
        },
    )


# learned Q/K filter quantities in a record's spectra: key -> (what, shape is (L, K, H) or (L, H))
PERIOD_KEYS = (
    ("qk_period", "learned window period T/f (tokens)"),
    ("qk_mexhat_period", "Mexican-hat peak period (tokens)"),
    ("qk_freq_period", "learned frequency period (tokens)"),
    ("qk_kernel_scale", "causal kernel scale a (tokens)"),
)


def spectra_data(experiment, scale, records: list[dict]) -> FigureData | None:
    """Learned Q/K filter periods or kernel scales (records' ``spectra``) against the layer, one
    panel a row, every head and seed, one colour a band; None when no record holds one."""

    recs = by_row(records)
    panels = []
    for row in experiment.rows_at(scale):
        rs = recs.get(row.name, [])
        key = next(
            (k for k, _ in PERIOD_KEYS if rs and all((r.get("spectra") or {}).get(k) for r in rs)),
            None,
        )
        if key is None:
            continue
        what = dict(PERIOD_KEYS)[key]
        arrs = []
        for r in rs:
            a = np.asarray(r["spectra"][key], np.float64)
            arrs.append(a[:, None, :] if a.ndim == 2 else a)  # (L, K, H)
        n_layers, n_bands, n_heads = arrs[0].shape
        series = []
        for k in range(n_bands):
            xs, ys = [], []
            for si, a in enumerate(arrs):
                for layer in range(a.shape[0]):
                    for h in range(a.shape[2]):
                        jitter = (h + si * n_heads) / max(1, len(arrs) * n_heads) * 0.6 - 0.3
                        xs.append(layer + jitter)
                        ys.append(float(a[layer, k, h]))
            series.append(
                {
                    "kind": "points",
                    "x": xs,
                    "y": ys,
                    "label": f"band {k}" if n_bands > 1 else None,
                    "color": TAB20[k % 10],
                    "size": 9,
                }
            )
        causal = _row_causal(experiment, scale, row, rs)
        panels.append(
            {
                "title": f"{row.name}{'' if causal else ' (NON-CAUSAL)'}: {_n_seeds(len(rs))}",
                "ylabel": what,
                "xticks": list(range(n_layers)),
                "series": series,
            }
        )
    if not panels:
        return None
    return FigureData(
        "xy",
        {
            "title": f"{experiment.title}, scale `{scale.name}`: learned Q/K filter periods "
            "per layer (each head and seed a point)",
            "ncols": min(4, len(panels)),
            "legend": "figure",
            "yscale": "log",
            "xlabel": "layer",
            "panel_size": [3.2, 2.6],
            "panels": panels,
        },
    )


def records_by_scale(experiment, results_dir: str | Path) -> dict[str, list[dict]]:
    """{scale name: records} of every declared scale under ``results/<experiment>/``."""

    out = {}
    for sc in experiment.scales:
        recs = read_records(
            Path(results_dir) / sc.name / "records", [r.name for r in experiment.rows]
        )
        if recs:
            out[sc.name] = recs
    return out


def for_campaign(
    experiment, results_dir: str | Path, hook: Callable | None = None
) -> dict[Path, FigureData]:
    """Every figure of one experiment's results folder ``results/<experiment>/`` (see the module
    docstring), from the records of all its scales; ``hook`` is the experiment module's own
    ``figures(experiment, records_by_scale)``, if it has one."""
    results_dir = Path(results_dir)
    by_scale = records_by_scale(experiment, results_dir)
    out: dict[Path, FigureData] = {}
    fig = forest_data(experiment, by_scale)
    if fig is not None:
        out[results_dir / "forest.png"] = fig
    fig = curves_data(experiment, by_scale)
    if fig is not None:
        out[results_dir / "curves.png"] = fig
    for sc in _scales_with_records(experiment, by_scale):
        for name, build in (("omega_sigma.png", omega_sigma_data), ("spectra.png", spectra_data)):
            fig = build(experiment, sc, by_scale[sc.name])
            if fig is not None:
                out[results_dir / sc.name / name] = fig
    if hook is not None:
        for rel, fig in (hook(experiment, by_scale) or {}).items():
            if Path(rel).is_absolute() or ".." in Path(rel).parts:
                raise ValueError(f"{experiment.name}: figure {rel!r} is not under its results")
            out[results_dir / rel] = fig
    return out


def campaign_figures(experiment, results_dir: str | Path) -> dict:
    """{PNG path: FigureData} of one experiment's results folder (:func:`for_campaign`), with
    the figures of the experiment's own ``figures`` hook where it declares one."""
    return for_campaign(experiment, results_dir, experiment.figures)
