"""The campaign's ``forest.png`` (in place of the library's): the claims' comparisons pi - none
at FT_FACTOR L with their margins, each point coloured by its own verdict as the ledger reads
it; and the ledger's reading of this experiment's claims, judged once per state of the
checkout."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from experiments.context_extension.budget import _ft_budget, _ft_words
from experiments.context_extension.claims import CLAIM_PROTOCOL, ZERO_PROTOCOL
from experiments.context_extension.settings import FT_FACTOR
from mope_jax.campaign import Experiment, by_row


# what each claim says of its pi - none comparisons (the figure's row labels)
CLAIM_SIDES = {
    ("B3", "nats"): "claim < 0",
    ("B5", "accuracy"): "claim < 0",
    ("B6", "nats"): "claim < 0",
    ("B6", "accuracy"): "claim not > 0",
}


def _effect_numbers(effects) -> list[tuple]:
    return [
        (e.label, e.unit, e.n, *(f"{x:.9g}" for x in (e.mean, e.ci_low, e.ci_high)))
        for e in effects
    ]


def _ledger_effects(experiment: Experiment) -> dict:
    """{(claim id, scale): effects} of this experiment's claims as the ledger reads them from the
    records under this checkout (the deciding scale's verdicts after the ledger-wide Holm
    adjustment, the others' as judged there); {} without results here."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "experiments" / "results" / experiment.name).is_dir():
        return {}
    ids = frozenset(c.id for c in experiment.claims)
    return dict(_judged_effects(root, ids, _fingerprint(root)))


def _fingerprint(root: Path) -> tuple:
    """(path, size, mtime) of every file the ledger reads under ``root``: the experiments' code
    (modules and packages' submodules alike), the campaign records and the results JSON; a new
    record or an edit changes it."""
    out = []
    for pattern in ("experiments/**/*.py", "experiments/results/**/*.json"):
        for p in sorted(root.glob(pattern)):
            if "__pycache__" in p.parts:
                continue
            st = p.stat()
            out.append((str(p), st.st_size, st.st_mtime_ns))
    return tuple(out)


@functools.lru_cache(maxsize=4)
def _judged_effects(root: Path, ids: frozenset, fingerprint: tuple) -> tuple:
    """The ledger's effects of the claims ``ids``, judged once per state of the checkout (the
    ledger itself and this figure read the same records in one ``report --regenerate``)."""
    from mope_jax.claims import judge_all

    return tuple(
        ((j.claim.id, r.scale), r.verdict.effects)
        for j in judge_all(root)
        if j.claim.id in ids
        for r in j.readings
    )


def claims_forest(experiment: Experiment, by_scale: dict):
    """The campaign's ``forest.png`` (in place of the library's, which shows only each
    fine-tuned row against ``language``): the claims' comparisons at every scale with records
    (smoke excluded), one row of panels a protocol (zero-shot, fine-tuned), the loss (B3, B6)
    and the accuracy (B5, B6) in separate panels, each pi - none at FT_FACTOR L with its 95%
    t-interval, the margin of its unit shaded (mope_jax.claims.MARGINS), each point coloured by
    its own comparison's verdict: the ledger's (after its Holm adjustment at the deciding scale)
    where the ledger's records are these, else by the rule at that scale alone. None without a
    comparison."""
    from mope_jax import claims as cl
    from mope_jax.analysis.figures import VERDICT_COLORS, FigureData

    ledger = _ledger_effects(experiment)
    quantity = {
        "nats": ("loss", "val loss pi - none (nats/char)"),
        "accuracy": ("accuracy", "forced result accuracy pi - none"),
    }
    panels, as_ledger = [], True
    for sc in experiment.scales:
        recs = by_scale.get(sc.name)
        if sc.name == "smoke" or not recs:
            continue
        found = []
        for claim in experiment.claims:
            effects = claim.judge(experiment, {sc.name: recs}).effects
            theirs = ledger.get((claim.id, sc.name))
            if theirs is not None and _effect_numbers(theirs) == _effect_numbers(effects):
                effects = theirs
            elif effects:
                as_ledger = False
            found += [(claim.id, e) for e in effects]
        rows = by_row(recs)
        for protocol in (ZERO_PROTOCOL, CLAIM_PROTOCOL):
            for unit, (word, axis) in quantity.items():
                its = [(c, e) for c, e in found if e.unit == unit and f" {protocol}:" in e.label]
                if not its:
                    continue
                tasks = list(dict.fromkeys(e.label.split(" ")[0] for _, e in its))
                if protocol == CLAIM_PROTOCOL:
                    words = {
                        t: _ft_words(_ft_budget(experiment, sc.name, rows, t), short=True)
                        for t in tasks
                    }
                    how = (
                        next(iter(words.values()))
                        if len(set(words.values())) == 1
                        else "; ".join(f"{t}: {w}" for t, w in words.items())
                    )
                else:
                    how = "PI vs plain extrapolation, same checkpoint"
                items = []
                for i, (_, e) in enumerate(its):
                    ok = e.n >= 2 and np.isfinite(e.ci_low) and np.isfinite(e.ci_high)
                    items.append(
                        {
                            "row": i,
                            "mean": e.mean,
                            "ci_low": e.ci_low if ok else None,
                            "ci_high": e.ci_high if ok else None,
                            "n": e.n,
                            "verdict": e.verdict or "untested",
                            "causal": e.causal,
                            "paper": e.paper,
                        }
                    )
                m = cl.MARGINS[unit]
                panels.append(
                    {
                        "title": f"`{sc.name}`, {word}, {protocol}: {how}",
                        "xlabel": f"{axis} at {FT_FACTOR}L (margin +-{m:g})",
                        "margin": m,
                        "labels": [
                            f"{c} {e.label.split(' ')[0]}, {CLAIM_SIDES.get((c, unit), '')}: "
                            f"{e.verdict or 'untested'}"
                            for c, e in its
                        ],
                        "items": items,
                    }
                )
    if not panels:
        return None
    return FigureData(
        "margin_forest",
        {
            "title": f"{experiment.title}: the claims' comparisons pi - none at {FT_FACTOR}L (B3, "
            "B5, B6), 95% t-interval over seeds, each coloured by its own verdict "
            + (
                "(as the ledger reads it: at the deciding scale after its Holm adjustment)"
                if as_ledger
                else "(by the rule at that scale alone, before the ledger's Holm adjustment)"
            ),
            "source": "experiments/results/CLAIMS.md (claims B3, B5, B6 of "
            "experiments/context_extension.py)",
            "margin_label": "the margin of the unit (mope_jax.claims.MARGINS): a difference "
            "within it is negligible",
            "verdicts": dict(VERDICT_COLORS),
            "ncols": 2,
            "panels": panels,
        },
    )
