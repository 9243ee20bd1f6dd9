"""The ``figures`` hook of the context-extension campaign (``mope-jax report --regenerate``):
``<scale>/extension.png``, the loss and accuracy against the eval length per rule, and the
claims' ``forest.png`` (:func:`experiments.context_extension.forest.claims_forest`)."""

from __future__ import annotations

from experiments.context_extension.forest import claims_forest
from experiments.context_extension.settings import FACTORS, FT_FACTOR, FT_RULES, METHODS, ft_name
from experiments.context_extension.summary import _bases, _per_seed, summarise
from mope_jax.campaign import Experiment, by_row


def figures(experiment: Experiment, by_scale: dict) -> dict:
    """``mope-jax report --regenerate``'s figures beyond the library's (mope_jax.analysis.figures):
    ``<scale>/extension.png`` at each scale with records (smoke excluded): per base row, the
    loss (and the answer or retrieval accuracy) at 1x, 2x and 4x the training length under each
    rule, mean and 95% t-interval over seeds (the numbers of the extension section), with the
    rows fine-tuned at FT_FACTOR L beside the zero-shot points (squares); and ``forest.png``
    in place of the library's: the claims' comparisons (:func:`claims_forest`)."""
    from mope_jax.analysis.figures import TAB20, FigureData

    def series(label, xs, cis, color, marker="o", line=True):
        ok = [(x, c) for x, c in zip(xs, cis) if c is not None]
        return {
            "kind": "errorbar",
            "x": [x for x, _ in ok],
            "y": [c["mean"] for x, c in ok],
            "yerr": [c["mean"] - c["lo"] if c["n"] > 1 else None for _, c in ok],
            "fmt": marker + ("-" if line else ""),
            "label": label,
            "color": color,
        }

    out = {}
    for sc in experiment.scales:
        recs = {
            k: [r for r in v if r.get("analysis")]
            for k, v in by_row(by_scale.get(sc.name, [])).items()
        }
        if sc.name == "smoke" or not any(recs.values()):
            continue
        panels = []
        for row in _bases(experiment):
            rs = recs.get(row.name) or []
            if not rs:
                continue
            per_seed = _per_seed(rs)
            summ = summarise(per_seed)
            L = per_seed[0]["train_length"]
            tuned = {
                rule: summarise(
                    [
                        {
                            "loss": {"ft": r["analysis"]["loss"]},
                            **(
                                {"answer": {"ft": r["analysis"]["answer"]}}
                                if "answer" in r["analysis"]
                                else {}
                            ),
                            **(
                                {"retrieval": {"ft": r["analysis"]["retrieval"]}}
                                if "retrieval" in r["analysis"]
                                else {}
                            ),
                        }
                        for r in recs.get(ft_name(row.name, rule)) or []
                    ]
                )
                if recs.get(ft_name(row.name, rule))
                else None
                for rule in FT_RULES
            }
            quantities = [("loss", "val loss (nats/char)")]
            if summ["accuracy"]:
                quantities.append(("accuracy", "answer accuracy (greedy)"))
            if summ["retrieval"]:
                quantities.append(("retrieval", "retrieval accuracy"))
            for q, ylabel in quantities:
                lines = []
                for i, m in enumerate(METHODS):
                    xs = [s * (1 + 0.04 * (i - 1.5)) for s in FACTORS]
                    lines.append(
                        series(m, xs, [summ[q].get(f"{m}@{s}") for s in FACTORS], TAB20[i])
                    )
                for rule, t in tuned.items():
                    if t is not None and t[q].get("ft") is not None:
                        i = METHODS.index(rule)
                        x = FT_FACTOR * (1 + 0.04 * (i - 1.5)) * 1.12
                        lines.append(
                            series(
                                f"{rule}, fine-tuned at {FT_FACTOR}L",
                                [x],
                                [t[q]["ft"]],
                                TAB20[i],
                                marker="s",
                                line=False,
                            )
                        )
                panels.append(
                    {
                        "title": f"{row.name} (trained at L = {L}, {len(rs)} seeds)",
                        "ylabel": ylabel,
                        "xticks": list(FACTORS),
                        "series": lines,
                    }
                )
        if panels:
            out[f"{sc.name}/extension.png"] = FigureData(
                "xy",
                {
                    "title": f"{experiment.title}, scale `{sc.name}`: eval-time extension, "
                    "mean and 95% t-interval over seeds",
                    "ncols": min(3, len(panels)),
                    "legend": "figure",
                    "xscale": "log",
                    "xlabel": "eval length / train length",
                    "panel_size": [3.4, 2.8],
                    "panels": panels,
                },
            )
    forest = claims_forest(experiment, by_scale)
    if forest is not None:
        out["forest.png"] = forest
    return out
