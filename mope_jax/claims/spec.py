"""What a claim is: the verdict vocabulary, the rule's margins, and the declarations an
experiment writes (:class:`Claim`, :class:`Analysis`) and a judge returns (:class:`Verdict`,
:class:`Effect`). The rule that gives a verdict is :mod:`mope_jax.claims.rule`'s docstring."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

VERDICTS = (
    "reproduced",
    "contradicted",
    "inconclusive",
    "untestable here",
    "leak",
    "produced by the setup",
    "untested",
    "description",
)
MIN_SEEDS = 3  # common seeds (or clusters) a comparison needs before it gets a verdict
# the one materiality margin of each metric, for positive and negative claims alike: an effect
# smaller than this is not material (mope_jax.claims.rule's docstring)
MARGINS = {
    "nats": 0.02,  # a val-loss difference
    "accuracy": 0.05,  # an accuracy difference (five points: what 500 problems resolve)
    "fraction": 0.05,  # a fraction of filters (e.g. on omega sigma = 5)
    "slope": 0.1,  # a power law's exponent
}
MARGIN_NATS = MARGINS["nats"]
FALLING_NATS = MARGIN_NATS  # an effect that moved more than this over the last quarter
CHANCE_MARGIN = MARGINS["accuracy"]  # an accuracy whose interval reaches below chance + this
ALPHA = 0.05  # every interval is 95%; a Holm-adjusted p at or above this decides nothing
BASELINE_GAP_NATS = 0.1  # a baseline farther than this from the paper's own loss is "far"


@dataclass(frozen=True)
class Effect:
    """One compared quantity behind a verdict, for the ledger's forest plot: a difference (or a
    slope, a fraction) with its 95% interval, the paper's value on the same footing where the
    paper gives one, and whether every row behind it is causal (declared and audited)."""

    label: str  # e.g. "a-ega-morlet-causal - a-baseline"
    mean: float
    ci_low: float
    ci_high: float
    n: int
    paper: float | None = None
    causal: bool = True
    unit: str = "nats"  # what the axis measures: "nats" (a val-loss difference), "slope", ...
    verdict: str = ""  # this comparison's own verdict by the rule ("" when it has none)
    terms: tuple[tuple[str, float], ...] = ()  # (row, coefficient): a - b is ((a, 1), (b, -1))
    scale: str = ""  # filled by the ledger: the scale whose records gave it


@dataclass(frozen=True)
class Verdict:
    """A claim's verdict. ``scale`` and ``rows`` name the records that decided it (the ledger
    states their parameters, training tokens, seeds and convergence from them; rows may be
    fnmatch patterns such as ``copy-B*``); ``effects`` are the compared quantities, drawn in the
    ledger's forest plot."""

    verdict: str
    evidence: str = ""  # mean, 95% CI, n and scale of what decided it
    causality: str = ""  # of the rows involved
    scale: str = ""
    rows: tuple[str, ...] = ()
    effects: tuple[Effect, ...] = ()
    headline: str = ""  # the one-line evidence of the ledger's table ("" = the first effect)
    aside: str = ""  # a few words the bottom line adds after the verdict (what else holds)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "effects", tuple(self.effects))


def effect(
    t,
    label: str,
    paper: float | None = None,
    causal: bool = True,
    unit: str = "nats",
    *,
    verdict: str = "",
    terms=(),
):
    """An :class:`Effect` from a Paired (mean, ci_low, ci_high, n)."""
    return Effect(
        label,
        float(t.mean),
        float(t.ci_low),
        float(t.ci_high),
        int(t.n),
        paper,
        causal,
        unit,
        verdict,
        tuple((str(r), float(c)) for r, c in terms),
    )


def diff_effect(t, a: str, b: str, paper=None, causal=True, *, verdict="", unit="nats"):
    """The :class:`Effect` of the paired difference ``a - b`` of two rows."""
    return effect(t, f"{a} - {b}", paper, causal, unit, verdict=verdict, terms=((a, 1), (b, -1)))


@dataclass(frozen=True)
class Claim:
    """``judge(experiment, records_by_scale)``: records_by_scale maps each scale name that has
    records to them (as :func:`mope_jax.campaign.read_records` returns them)."""

    id: str
    text: str
    paper_value: str
    judge: Callable[..., Verdict]
    test: str  # what would test it: shown while the verdict is untested
    short: str = ""  # a few words for the bottom line (the text when empty)
    ours: bool = False  # our own question beyond the paper: listed under "Ours"
    across_scales: bool = False  # the judge reads every scale at once (a description of a trend)


@dataclass(frozen=True)
class Analysis:
    """The claims of a study without campaign records, judged from its results JSON.

    Declared as ``ANALYSIS = Analysis(...)`` in ``experiments/<name>.py``; ``results`` is the
    JSON's path relative to ``experiments/results/`` (``paper_b/self_similarity.json``) and each
    claim's judge is ``judge(analysis, payload) -> Verdict``, payload the parsed JSON (a missing
    file is a :class:`mope_jax.errors.ClaimsError` naming it, not an untested claim)."""

    name: str
    results: str
    claims: tuple[Claim, ...]


PAPERS = {
    "A": "Paper A (MOPE, energy-gated attention)",
    "B": "Paper B (data shape RoPE frequency use)",
    "C": "Paper C (FourierQK)",
    "R": "Ours, beyond the papers",
}
