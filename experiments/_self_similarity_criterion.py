"""The criterion of ``experiments.self_similarity`` applied (the docstring there fixes it): the
verdict on one corpus of the results JSON, and claim B4's judge, which reads the same verdicts
from the committed JSON."""

from __future__ import annotations

import numpy as np

from mope_jax import claims as cl
from mope_jax.analysis import stats

SELF_SIMILAR, NOT_SELF_SIMILAR, UNDECIDED = "self-similar", "not self-similar", "undecided"


def verdict(res: dict, criterion: dict) -> tuple[str, str]:
    """(verdict, the numbers that decided it) of one corpus of the results JSON under the
    criterion (``experiments.self_similarity`` docstring); ``res`` needs
    ``collapse.power_law`` and ``bootstrap.alpha``."""
    fits = res["collapse"]["power_law"]
    alphas = np.array(list(res["bootstrap"]["alpha"].values()))  # (G, B)
    spread = alphas.max(0) - alphas.min(0)
    lo, hi = stats.percentile_interval(spread, criterion["confidence"])
    point = max(f["alpha"] for f in fits.values()) - min(f["alpha"] for f in fits.values())
    worst = min(fits, key=lambda g: fits[g]["r2"])
    y = criterion["max_alpha_spread"]
    why = (
        f"alpha spread {point:.2f} [{lo:.2f}, {hi:.2f}] vs {y:g}; "
        f"min R^2 {fits[worst]['r2']:.2f} ({worst}) vs {criterion['min_r2']:g}"
    )
    if fits[worst]["r2"] < criterion["min_r2"] or lo > y:
        return NOT_SELF_SIMILAR, why
    if hi < y:
        return SELF_SIMILAR, why
    return UNDECIDED, why


def claim_b4(analysis, payload) -> cl.Verdict:
    """B4 from the committed cpu JSON: untested until it holds the bootstrap."""
    corpora = (payload or {}).get("corpora", {})
    names = ("tinyshakespeare", "igsm_arithmetic")
    if (
        payload is None
        or payload.get("scale") != "cpu"
        or not all("bootstrap" in corpora.get(n, {}) for n in names)
    ):
        return cl.untested()
    got = {n: verdict(corpora[n], payload["criterion"]) for n in names}
    # mope_jax.claims' rule: each corpus's verdict by the criterion is resolved for or against
    # the paper, or undecided (its bootstrap interval holds the criterion's threshold)
    want = {names[0]: SELF_SIMILAR, names[1]: NOT_SELF_SIMILAR}
    each = [
        "reproduced" if v == want[n] else ("inconclusive" if v == UNDECIDED else "contradicted")
        for n, (v, _) in got.items()
    ]
    boot = corpora[names[0]]["bootstrap"]
    evidence = "; ".join(f"{n}: {v} ({why})" for n, (v, why) in got.items())
    evidence += (
        f"; block bootstrap ({boot['resamples']} resamples, {boot['block_chars']}-char blocks), "
        f"scale `cpu`, `{analysis.results}`"
    )
    if "inconclusive" in each and "contradicted" not in each:
        evidence += (
            "; undecided: the bootstrap interval holds the criterion's threshold (the paper gives "
            "no effect size)"
        )
    effects = []
    for n, v in zip(names, each):
        fits = corpora[n]["collapse"]["power_law"]
        alphas = np.array(list(corpora[n]["bootstrap"]["alpha"].values()))
        spread = alphas.max(0) - alphas.min(0)
        lo, hi = stats.percentile_interval(spread, payload["criterion"]["confidence"])
        point = max(f["alpha"] for f in fits.values()) - min(f["alpha"] for f in fits.values())
        effects.append(
            cl.Effect(
                f"{n}: alpha spread (threshold {payload['criterion']['max_alpha_spread']:g})",
                float(point),
                float(lo),
                float(hi),
                int(spread.shape[0]),
                None,
                unit="spread of power-law exponents",
                verdict=v,
            )
        )
    return cl.Verdict(cl.combine(each), evidence, scale="cpu", effects=effects)
