"""The claims ledger: each paper claim, the paper's number, and our verdict, from records.

An experiment declares its claims (``Experiment.claims``); each :class:`Claim` has a
``judge(experiment, records_by_scale) -> Verdict`` that reads only campaign records, so the
ledger is regenerated, never typed: ``mope-jax report --regenerate experiments/results``
writes ``experiments/results/CLAIMS.md`` and the block of README.md between the markers
``<!-- claims ledger -->`` and ``<!-- end claims ledger -->``.

A study that trains nothing (``experiments/self_similarity.py``: statistics of corpora) has no
records; it declares ``ANALYSIS = Analysis(name, results, claims)`` instead, and each of its
claims is judged by ``judge(analysis, payload)`` from the committed results JSON it names
(``payload`` None when that file is missing), so its verdict is as regenerated as the rest.

Verdicts (:data:`VERDICTS`), every one given by a committed rule, the one below, applied by
:func:`judge_difference` (and :func:`combine`, :func:`at_chance`) in every judge:

  * ``reproduced``: the 95% interval (paired t over seeds, or the judge's stated interval)
    lies wholly on the paper's side of 0 (or of the rule's threshold, where the judge states
    one);
  * ``contradicted``: the interval lies wholly on the other side: resolved against the paper;
  * ``inconclusive``: the interval includes 0 (or the threshold). The evidence then states the
    smallest effect the data could have resolved (the interval's half-width: a mean farther
    from 0 than that would have been resolved) and the seeds needed to resolve the paper's own
    effect size at the observed spread: the smallest n >= 2 with
    t_{0.975, n-1} * sd / sqrt(n) < |paper effect| (:func:`seeds_needed`, computed, with the
    sd of the per-seed differences), or that the paper gives no effect size;
  * a *negative* claim ("X does not beat the baseline") is an equivalence test with a margin
    the rule states (:data:`MARGIN_NATS` = 0.02 nats on a loss unless the judge states
    another): ``reproduced`` only when the interval excludes every beat larger than the margin
    (never on non-significance alone), ``contradicted`` when the interval lies wholly beyond the
    margin (X resolved to beat it by more), ``inconclusive`` otherwise;
  * a claim of a value (a law's slope, a constant) is ``reproduced`` when the interval holds
    the paper's value and ``contradicted`` when it excludes it;
  * a claim that needs several comparisons to hold together is ``contradicted`` if one of them
    is, ``reproduced`` if all are, ``inconclusive`` otherwise (:func:`combine`);
  * ``untestable here``: the metric is at its floor or at chance, or the model did not learn the
    task the claim is about, so no difference could show. An accuracy is *at chance* when the
    95% interval of its mean over seeds reaches below chance + :data:`CHANCE_MARGIN` (0.05,
    five points: what 500 problems resolve) (:func:`at_chance`); an arm whose compared accuracy
    (the one the claimed change must move away from) is at chance is untestable here;
  * ``leak``: the effect is resolved in the paper's direction only in a row that sees future
    tokens (declared NON-CAUSAL or audited LEAKS), never in its causal twin;
  * ``produced by the setup``: the effect follows from a choice of the setup (an init, a
    clamp), not from training;
  * ``untested``: no records that could decide it; the ledger says what would test it.

A claim with several protocols (paper B: zero-shot and fine-tuned) gives each protocol its own
verdict in the evidence and names the protocol the paper's claim is about; the row's verdict
is that protocol's. A verdict is given at the largest declared scale whose records hold every
row the claim needs, with at least two common seeds (``smoke``, a pipeline check, never
decides).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

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
CHANCE_MARGIN = 0.05  # an accuracy whose interval reaches below chance + this is at chance
BEGIN, END = "<!-- claims ledger -->", "<!-- end claims ledger -->"


@dataclass(frozen=True)
class Verdict:
    verdict: str
    evidence: str = ""  # mean, 95% CI, n and scale of what decided it
    causality: str = ""  # of the rows involved

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")


@dataclass(frozen=True)
class Claim:
    """``judge(experiment, records_by_scale)``: records_by_scale maps each scale name that has
    records to them (as :func:`mope_jax.campaign.read_records` returns them)."""

    id: str
    text: str
    paper_value: str
    judge: Callable[..., Verdict]
    test: str  # what would test it: shown while the verdict is untested


@dataclass(frozen=True)
class Analysis:
    """The claims of a study without campaign records, judged from its results JSON.

    Declared as ``ANALYSIS = Analysis(...)`` in ``experiments/<name>.py``; ``results`` is the
    JSON's path relative to ``experiments/results/`` (``paper_b/self_similarity.json``) and each
    claim's judge is ``judge(analysis, payload) -> Verdict``, payload the parsed JSON or None."""

    name: str
    results: str
    claims: tuple[Claim, ...]


# --------------------------------------------------------------------------- judging helpers


def decisive_scale(experiment, records_by_scale: dict, rows: Sequence[str]) -> str | None:
    """The largest declared scale whose records hold every row in ``rows`` with at least two
    seeds in common (None if none does)."""
    best = None
    for sc in experiment.scales:  # declared smallest to largest
        if holds(records_by_scale, sc.name, rows):
            best = sc.name
    return best


def holds(records_by_scale: dict, scale: str, rows: Sequence[str]) -> bool:
    """Whether the records of ``scale`` (never smoke: a pipeline check, not evidence) hold every
    row in ``rows`` with at least two seeds in common."""
    from mope_jax.campaign import by_row

    if scale == "smoke":
        return False
    recs = by_row(records_by_scale.get(scale, []))
    seeds = [{int(r["seed"]) for r in recs.get(row, [])} for row in rows]
    return bool(seeds) and len(set.intersection(*seeds)) >= 2


def difference(experiment, records: list[dict], a: str, b: str):
    """paired_t of a - b over the common seeds, on the experiment's metric."""
    from mope_jax.campaign import by_row, paired

    return paired(by_row(records), a, b, experiment.metric)[1]


def describe(t, scale: str, what: str) -> str:
    return f"{what} {t.mean:+.4f} [{t.ci_low:+.4f}, {t.ci_high:+.4f}], n {t.n}, scale `{scale}`"


def causality(experiment, scale: str, records: list[dict], rows: Sequence[str]) -> str:
    """'row: declared causal / NON-CAUSAL (audit: causal|LEAKS)' for each row."""
    from mope_jax.campaign import by_row, declared_causal

    recs, out = by_row(records), []
    for name in rows:
        row = experiment.row(name)
        text = (
            "causal"
            if declared_causal(experiment, experiment.scale(scale), row)
            else ("NON-CAUSAL")
        )
        audits = [r["audit"]["causal"] for r in recs.get(name, []) if r.get("audit")]
        if audits:
            text += f", audit {'causal' if all(audits) else 'LEAKS'}"
        out.append(f"`{name}` {text}")
    return "; ".join(out)


def seeds_needed(sd: float, effect: float | None, max_n: int = 100_000) -> int | None:
    """The smallest n >= 2 with t_{0.975, n-1} * sd / sqrt(n) < |effect|: the seeds a paired
    95% interval needs to resolve ``effect`` at the spread ``sd`` (None without an effect, or
    beyond ``max_n``)."""
    import math

    from mope_jax.analysis.stats import t_quantile

    if effect is None or not effect or sd is None or math.isnan(sd):
        return None
    if sd == 0:
        return 2
    for n in range(2, max_n + 1):
        if t_quantile(0.975, n - 1) * sd / math.sqrt(n) < abs(effect):
            return n
    return None


def _as_paired(diffs):
    """A Paired (mean, std, interval, n) from a Paired or a sequence of per-seed differences."""
    if hasattr(diffs, "ci_low"):
        return diffs
    from mope_jax.analysis.stats import paired_t

    d = [float(x) for x in diffs]
    return paired_t(d, [0.0] * len(d))


def judge_difference(
    diffs,
    paper_effect: float | None,
    direction: int,
    margin: float | None = None,
    *,
    negative: bool = False,
) -> tuple[str, str]:
    """(verdict, evidence note) of one difference by the module's rule.

    ``diffs``: a Paired (``mope_jax.analysis.stats.paired_t``) or the per-seed differences.
    ``direction``: -1 if the paper says the difference is below 0 (a lower loss), +1 above.
    Positive claim: reproduced if the interval lies wholly beyond ``margin`` (0 if None) in
    ``direction``, contradicted if wholly short of it (on the other side of 0 when the margin
    is 0), inconclusive otherwise. ``negative=True`` (the claim "no effect in ``direction``"):
    the equivalence rule with ``margin`` (MARGIN_NATS if None): reproduced if the interval
    excludes every effect beyond the margin in ``direction``, contradicted if it lies wholly
    beyond it, inconclusive otherwise. The note is empty unless inconclusive, then it states the
    smallest resolvable effect (the half-width) and :func:`seeds_needed` for ``paper_effect``."""
    t = _as_paired(diffs)
    if direction not in (-1, 1):
        raise ValueError("direction must be -1 or +1")
    if negative:
        m = MARGIN_NATS if margin is None else margin
        near, far = sorted((direction * t.ci_low, direction * t.ci_high))
        if far < m:
            return "reproduced", f"every effect beyond the margin {m:g} excluded"
        if near > m:
            return "contradicted", f"resolved beyond the margin {m:g}"
    else:
        m = 0.0 if margin is None else margin
        near, far = sorted((direction * t.ci_low, direction * t.ci_high))
        if near > m:
            return "reproduced", ""
        if far < m:
            return "contradicted", ""
    return "inconclusive", inconclusive_note(t, paper_effect)


def inconclusive_note(t, paper_effect: float | None) -> str:
    """'smallest resolvable effect +-h (n n); seeds to resolve the paper's effect e at sd s: N'."""
    h = (t.ci_high - t.ci_low) / 2
    note = f"smallest resolvable effect +-{h:.4f} at n {t.n}"
    if paper_effect is None:
        return note + "; the paper gives no effect size"
    need = seeds_needed(t.std, paper_effect)
    excluded = not (t.ci_low <= paper_effect <= t.ci_high)
    return (
        note
        + f"; seeds to resolve the paper's {paper_effect:+.4g} at sd {t.std:.4f}: "
        + (f"{need}" if need is not None else "more than 100000")
        + (" (the interval excludes the paper's effect size)" if excluded else "")
    )


def combine(verdicts: Sequence[str]) -> str:
    """Comparisons that must hold together: contradicted if one is, reproduced if all are,
    untestable here if one is (and none contradicted), inconclusive otherwise."""
    if "contradicted" in verdicts:
        return "contradicted"
    if verdicts and all(v == "reproduced" for v in verdicts):
        return "reproduced"
    if "untestable here" in verdicts:
        return "untestable here"
    return "inconclusive"


def at_chance(values: Sequence[float], chance: float, margin: float = CHANCE_MARGIN) -> bool:
    """Whether an accuracy (one value per seed) is at chance: the 95% interval of its mean
    reaches below chance + margin (its mean, with one seed)."""
    import math

    from mope_jax.analysis.stats import summarize

    s = summarize(list(values))
    low = s.mean if s.n < 2 or math.isnan(s.ci_low) else s.ci_low
    return low < chance + margin


def describe_verdict(t, scale: str, what: str, verdict: str, note: str = "") -> str:
    """describe() followed by ': verdict' and the rule's note."""
    return f"{describe(t, scale, what)}: {verdict}" + (f" ({note})" if note else "")


def untested() -> Verdict:
    return Verdict("untested")


# --------------------------------------------------------------------------- the ledger


def experiments_with_claims(root: Path) -> list:
    from mope_jax.campaign import available, load_experiment

    out = []
    for name in available(root):
        exp = load_experiment(name, root)
        if getattr(exp, "claims", ()):
            out.append(exp)
    return out


def analyses_with_claims(root: Path) -> list[Analysis]:
    """``ANALYSIS`` of every module ``experiments/<name>.py`` that declares one (found by its
    text, then imported by module name)."""
    import re

    from mope_jax.campaign import import_experiment_module

    out = []
    for p in sorted((Path(root) / "experiments").glob("*.py")):
        if p.stem.startswith("_") or not re.search(r"^ANALYSIS\b", p.read_text(), re.M):
            continue
        analysis = getattr(import_experiment_module(p.stem, Path(root)), "ANALYSIS", None)
        if not isinstance(analysis, Analysis):
            raise TypeError(f"{p}: ANALYSIS must be a mope_jax.claims.Analysis")
        if analysis.claims:
            out.append(analysis)
    return out


def _row(claim: Claim, v: Verdict) -> str:
    evidence = v.evidence or ("what would test it: " + claim.test)
    return (
        f"| {claim.id}: {claim.text} | {claim.paper_value} | **{v.verdict}** | "
        f"{evidence} | {v.causality or '-'} |"
    )


def ledger(root: str | Path) -> str:
    """The claims table of every experiment under ``root/experiments`` (markdown)."""
    from mope_jax.campaign import read_records

    root = Path(root)
    lines = [
        "| claim | paper's number | our verdict | evidence (mean, 95% CI, n, scale) | "
        "causality of the rows |",
        "|---|---|---|---|---|",
    ]
    for exp in experiments_with_claims(root):
        results = root / "experiments" / "results" / exp.name
        by_scale = {}
        for sc in exp.scales:
            recs = read_records(results / sc.name / "records")
            if recs:
                by_scale[sc.name] = recs
        for claim in exp.claims:
            lines.append(_row(claim, claim.judge(exp, by_scale)))
    for analysis in analyses_with_claims(root):
        path = root / "experiments" / "results" / analysis.results
        payload = json.loads(path.read_text()) if path.is_file() else None
        for claim in analysis.claims:
            lines.append(_row(claim, claim.judge(analysis, payload)))
    return "\n".join(lines)


def render(root: str | Path) -> dict[Path, str]:
    """``experiments/results/CLAIMS.md`` and README.md with its ledger block replaced (only
    when the README has the markers); nothing when no experiment declares claims."""
    root = Path(root)
    if not experiments_with_claims(root) and not analyses_with_claims(root):
        return {}
    table = ledger(root)
    doc = "\n".join(
        [
            "# Claims ledger",
            "",
            "Generated by `mope-jax report --regenerate experiments/results` from the campaign "
            "records under `experiments/results/<experiment>/<scale>/records/` and, for studies "
            "that train nothing, their committed results JSON (the judges are the `claims` of "
            "each `experiments/<name>.py`). Do not edit by hand.",
            "",
            table,
            "",
        ]
    )
    files = {root / "experiments" / "results" / "CLAIMS.md": doc}
    readme = root / "README.md"
    if readme.is_file():
        text = readme.read_text()
        if BEGIN in text and END in text:
            head, rest = text.split(BEGIN, 1)
            _, tail = rest.split(END, 1)
            files[readme] = f"{head}{BEGIN}\n{table}\n{END}{tail}"
    return files
