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
)
MARGIN_NATS = 0.02  # equivalence margin of a negative claim on a loss (nats)
FALLING_NATS = 0.02  # a row whose val loss still fell more than this over its last quarter
CHANCE_MARGIN = 0.05  # an accuracy whose interval reaches below chance + this is at chance


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

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "effects", tuple(self.effects))


def effect(t, label: str, paper: float | None = None, causal: bool = True, unit: str = "nats"):
    """An :class:`Effect` from a Paired (mean, ci_low, ci_high, n)."""
    return Effect(
        label, float(t.mean), float(t.ci_low), float(t.ci_high), int(t.n), paper, causal, unit
    )


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


@dataclass(frozen=True)
class Analysis:
    """The claims of a study without campaign records, judged from its results JSON.

    Declared as ``ANALYSIS = Analysis(...)`` in ``experiments/<name>.py``; ``results`` is the
    JSON's path relative to ``experiments/results/`` (``paper_b/self_similarity.json``) and each
    claim's judge is ``judge(analysis, payload) -> Verdict``, payload the parsed JSON or None."""

    name: str
    results: str
    claims: tuple[Claim, ...]


PAPERS = {
    "A": "Paper A (MOPE, energy-gated attention)",
    "B": "Paper B (data shape RoPE frequency use)",
    "C": "Paper C (FourierQK)",
    "R": "Ours, beyond the papers",
}
