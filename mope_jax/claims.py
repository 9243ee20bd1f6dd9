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

Scale and convergence (every row of the ledger): the records that decided a verdict
(``Verdict.scale`` and ``Verdict.rows``) give its parameters, training tokens per run (steps x
batch x T) and seeds, stated beside the paper's own budget (``Experiment.paper_scale``). A row is
*still falling* when its val loss fell by more than :data:`FALLING_NATS` (0.02 nats, the
equivalence margin) over the last quarter of training (least-squares line through the evals
from 3/4 of the steps on, or through the last two evals when fewer lie there, times a quarter of
the steps; mean over seeds, :func:`last_quarter_change`); an effect measured on a row that is
still falling is flagged, since more training could move it by about as much as that change.

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
FALLING_NATS = 0.02  # a row whose val loss still fell more than this over its last quarter
CHANCE_MARGIN = 0.05  # an accuracy whose interval reaches below chance + this is at chance
BEGIN, END = "<!-- claims ledger -->", "<!-- end claims ledger -->"


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


def is_causal(experiment, scale: str, records: list[dict], rows: Sequence[str]) -> bool:
    """Whether every row is declared causal and no audit of its records found a leak."""
    from mope_jax.campaign import by_row, declared_causal

    recs = by_row(records)
    for name in rows:
        if not declared_causal(experiment, experiment.scale(scale), experiment.row(name)):
            return False
        if any(r.get("audit") and not r["audit"]["causal"] for r in recs.get(name, [])):
            return False
    return True


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


# --------------------------------------------------------------------------- scale and convergence


def last_quarter_change(record: dict) -> float | None:
    """The change of val loss over the last quarter of a run's training (negative: still
    falling): the least-squares slope through the evals at step >= 3/4 of the run's steps (the
    last two evals when fewer than two lie there) times a quarter of the steps; None without two
    evals."""
    import numpy as np

    pts = [
        (float(p["step"]), float(p["val"]))
        for p in record.get("curve") or []
        if p.get("val") is not None and p.get("step") is not None
    ]
    if len(pts) < 2:
        return None
    total = float(record.get("steps") or pts[-1][0])
    late = [p for p in pts if p[0] >= 0.75 * total]
    if len(late) < 2:
        late = pts[-2:]
    x, y = np.array(late).T
    if np.ptp(x) == 0:
        return None
    slope = np.polyfit(x, y, 1)[0]
    return float(slope * 0.25 * total)


def matching(records: list[dict], rows: Sequence[str]) -> dict[str, list[dict]]:
    """{row: its records} for every record whose row matches one of ``rows`` (fnmatch
    patterns), in the order of ``rows``."""
    from fnmatch import fnmatchcase

    out: dict[str, list[dict]] = {}
    for pat in rows:
        for r in records:
            if fnmatchcase(str(r.get("row")), pat):
                out.setdefault(str(r["row"]), []).append(r)
    return out


def _millions(values: Sequence[float]) -> str:
    lo, hi = min(values) / 1e6, max(values) / 1e6

    def f(x):
        return f"{x:.2g}" if x < 1 else f"{x:.3g}"

    return f"{f(lo)}M" if f(lo) == f(hi) else f"{f(lo)}-{f(hi)}M"


def run_tokens(record: dict) -> int | None:
    """Training tokens of one run: steps x batch x T, from its config."""
    cfg = record.get("config") or {}
    try:
        return int(
            cfg["train"]["max_steps"] * cfg["train"]["batch_size"] * cfg["model"]["block_size"]
        )
    except (KeyError, TypeError):
        return None


@dataclass(frozen=True)
class ScaleFacts:
    """What the records behind a verdict say about its scale (:func:`scale_facts`)."""

    scale: str
    paper: str  # the paper's own budget in words
    params: tuple[int, ...] = ()  # per run
    tokens: tuple[int, ...] = ()  # per run
    seeds: int | None = None  # seeds common to the rows (None for row patterns)
    runs: int = 0
    rows: int = 0
    falling: tuple[tuple[str, float], ...] = ()  # (row, mean last-quarter change), steepest first
    convergence_known: bool = False

    def budget(self) -> str:
        """'0.8-0.84M params, 8.19M tokens a run, 5 seeds'."""
        parts = []
        if self.params:
            parts.append(f"{_millions(self.params)} params")
        if self.tokens:
            parts.append(f"{_millions(self.tokens)} tokens a run")
        if self.seeds is None:
            parts.append(f"{self.runs} runs over {self.rows} rows")
        else:
            parts.append(f"{self.seeds} seeds")
        return ", ".join(parts)

    def convergence(self) -> str:
        if self.falling:
            shown = self.falling[:4]
            more = f" and {len(self.falling) - 4} more" if len(self.falling) > 4 else ""
            return (
                "**still falling** (val change over the last quarter): "
                + ", ".join(f"`{r}` {c:+.3f}" for r, c in shown)
                + more
            )
        if not self.convergence_known:
            return "convergence unknown (fewer than two evals)"
        return f"converged (every row's last-quarter change within {FALLING_NATS:g})"


def scale_facts(experiment, records_by_scale: dict, v: Verdict) -> ScaleFacts | None:
    """The parameters, tokens, seeds and convergence of the records that decided ``v`` (None
    when it names no scale or no record matches its rows)."""
    paper = getattr(experiment, "paper_scale", "") or "not stated"
    if not v.scale:
        return None
    found = matching(records_by_scale.get(v.scale, []), v.rows)
    if not found:
        return ScaleFacts(v.scale, paper)
    recs = [r for rs in found.values() for r in rs]
    common = set.intersection(*({int(r["seed"]) for r in rs} for rs in found.values()))
    patterned = any("*" in p or "?" in p for p in v.rows)
    falling, known = [], False
    for row, rs in found.items():
        ch = [c for c in map(last_quarter_change, rs) if c is not None]
        known = known or bool(ch)
        if ch and sum(ch) / len(ch) < -FALLING_NATS:
            falling.append((row, sum(ch) / len(ch)))
    return ScaleFacts(
        v.scale,
        paper,
        tuple(r["num_params"] for r in recs if r.get("num_params")),
        tuple(t for t in map(run_tokens, recs) if t),
        None if patterned else len(common),
        len(recs),
        len(found),
        tuple(sorted(falling, key=lambda rc: rc[1])),
        known,
    )


def scale_note(facts: ScaleFacts | None, v: Verdict) -> str:
    """'`mid`: 0.83M params, 8.19M tokens a run, 5 seeds (paper: ...); convergence'."""
    if facts is None:
        return "-" if v.verdict == "untested" else (f"`{v.scale}`" if v.scale else "-")
    if not facts.runs:
        return f"`{facts.scale}` (paper: {facts.paper})"
    return f"`{facts.scale}`: {facts.budget()} (paper: {facts.paper}); {facts.convergence()}"


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


PAPERS = {
    "A": "Paper A (MOPE, energy-gated attention)",
    "B": "Paper B (data shape RoPE frequency use)",
    "C": "Paper C (FourierQK)",
    "R": "Ours, beyond the papers",
}
BOTTOM_BEGIN, BOTTOM_END = "<!-- bottom line -->", "<!-- end bottom line -->"
# the bottom line's groups of verdicts, in the order a reader wants them
GROUPS = (
    ("holds", ("reproduced",)),
    ("contradicted", ("contradicted",)),
    ("a leak or produced by the setup", ("leak", "produced by the setup")),
    ("open", ("inconclusive", "untestable here", "untested")),
)


@dataclass(frozen=True)
class Judged:
    """One ledger row: the claim, its verdict, and the scale text of what decided it."""

    claim: Claim
    verdict: Verdict
    scale: str
    facts: ScaleFacts | None = None

    @property
    def paper(self) -> str:
        return self.claim.id[:1] if self.claim.id[:1] in PAPERS else "R"


def _claim_order(claim_id: str) -> tuple:
    """A0 < A1 < ... < A5 < A5g < B1 < B1r < B2 < ... < C5 < R1: paper, number, suffix."""
    import re

    m = re.match(r"([A-Z]+)(\d*)(.*)", claim_id)
    letter, num, rest = m.groups() if m else (claim_id, "", "")
    papers = list(PAPERS)
    return (papers.index(letter) if letter in papers else len(papers), int(num or 0), rest)


def judge_all(root: str | Path) -> list[Judged]:
    """Every claim of every experiment and analysis under ``root``, judged, in ledger order
    (paper A, B, C, then ours; by number within a paper)."""
    from mope_jax.campaign import read_records

    root = Path(root)
    out = []
    for exp in experiments_with_claims(root):
        results = root / "experiments" / "results" / exp.name
        by_scale = {}
        for sc in exp.scales:
            recs = read_records(results / sc.name / "records")
            if recs:
                by_scale[sc.name] = recs
        for claim in exp.claims:
            v = claim.judge(exp, by_scale)
            facts = scale_facts(exp, by_scale, v)
            out.append(Judged(claim, v, scale_note(facts, v), facts))
    for analysis in analyses_with_claims(root):
        path = root / "experiments" / "results" / analysis.results
        payload = json.loads(path.read_text()) if path.is_file() else None
        for claim in analysis.claims:
            v = claim.judge(analysis, payload)
            note = f"`{v.scale}`" if v.scale else "no training (statistics of corpora)"
            out.append(Judged(claim, v, note))
    return sorted(out, key=lambda j: _claim_order(j.claim.id))


def _row(j: Judged) -> str:
    claim, v = j.claim, j.verdict
    evidence = v.evidence or ("what would test it: " + claim.test)
    return (
        f"| {claim.id}: {claim.text} | {claim.paper_value} | **{v.verdict}** | "
        f"{evidence} | {j.scale} | {v.causality or '-'} |"
    )


def ledger(root: str | Path, judged: list[Judged] | None = None) -> str:
    """The claims table of every experiment under ``root/experiments`` (markdown)."""
    judged = judge_all(root) if judged is None else judged
    lines = [
        "| claim | paper's number | our verdict | evidence (mean, 95% CI, n, scale) | "
        "scale: ours (the paper's); convergence | causality of the rows |",
        "|---|---|---|---|---|---|",
    ]
    return "\n".join(lines + [_row(j) for j in judged])


def _short(j: Judged) -> str:
    return f"{j.claim.id} {j.claim.short or j.claim.text}"


def bottom_line(judged: list[Judged]) -> str:
    """For each paper, its claims grouped as: holds, contradicted, a leak or produced by the
    setup, open (inconclusive, untestable here, untested), each claim with the scale that
    decided it: generated from the ledger, never typed."""
    lines = []
    for paper, title in PAPERS.items():
        mine = [j for j in judged if j.paper == paper]
        if not mine:
            continue
        lines.append(f"**{title}**")
        lines.append("")
        for name, verdicts in GROUPS:
            hits = [j for j in mine if j.verdict.verdict in verdicts]
            if not hits:
                continue
            if name == "open":
                text = "; ".join(f"{_short(j)} (*{j.verdict.verdict}*)" for j in hits)
            elif name.startswith("a leak"):
                text = "; ".join(f"{_short(j)} (*{j.verdict.verdict}*)" for j in hits)
            else:
                text = "; ".join(_short(j) for j in hits)
            lines.append(f"- {name}: {text}")
        lines += _scale_lines(mine)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _scale_lines(judged: list[Judged]) -> list[str]:
    """'- at `mid` (A0-A5): 0.8-0.84M params, ... (the paper: ...); still falling in ...'
    for each scale that decided some of ``judged``."""
    out = []
    scales = dict.fromkeys(j.facts.scale for j in judged if j.facts and j.facts.runs)
    for sc in scales:
        js = [j for j in judged if j.facts and j.facts.runs and j.facts.scale == sc]
        params = [p for j in js for p in j.facts.params]
        tokens = [t for j in js for t in j.facts.tokens]
        seeds = sorted({j.facts.seeds for j in js if j.facts.seeds is not None})
        budget = []
        if params:
            budget.append(f"{_millions(params)} params")
        if tokens:
            budget.append(f"{_millions(tokens)} tokens a run")
        if seeds:
            budget.append(
                f"{seeds[0]}{'-' + str(seeds[-1]) if seeds[-1] != seeds[0] else ''} seeds"
            )
        ids = ", ".join(j.claim.id for j in js)
        paper = js[0].facts.paper
        theirs = "" if paper.startswith("no paper") else f" (the paper: {paper})"
        text = f"- at `{sc}` ({ids}): {', '.join(budget)}{theirs}"
        falling = [j for j in js if j.facts.falling]
        if falling:
            worst = min(c for j in falling for _, c in j.facts.falling)
            text += (
                f"; compared models still falling in {', '.join(j.claim.id for j in falling)} "
                f"(val loss down by up to {-worst:.3f} nats over the last quarter of training)"
            )
        out.append(text)
    return out


def _replace_block(text: str, begin: str, end: str, body: str) -> str:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def render(root: str | Path) -> dict[Path, str]:
    """``experiments/results/CLAIMS.md`` and README.md with its ledger block and its bottom-line
    block replaced (each only when the README has its markers); nothing when no experiment
    declares claims."""
    root = Path(root)
    if not experiments_with_claims(root) and not analyses_with_claims(root):
        return {}
    judged = judge_all(root)
    table = ledger(root, judged)
    bottom = bottom_line(judged)
    doc = "\n".join(
        [
            "# Claims ledger",
            "",
            "Generated by `mope-jax report --regenerate experiments/results` from the campaign "
            "records under `experiments/results/<experiment>/<scale>/records/` and, for studies "
            "that train nothing, their committed results JSON (the judges are the `claims` of "
            "each `experiments/<name>.py`; the rule is `mope_jax/claims.py`'s docstring). Do "
            "not edit by hand.",
            "",
            "## Bottom line",
            "",
            bottom,
            "## Every claim",
            "",
            table,
            "",
        ]
    )
    files = {root / "experiments" / "results" / "CLAIMS.md": doc}
    from mope_jax.analysis.figures import ledger_forest

    files[root / "experiments" / "results" / "claims_forest.png"] = ledger_forest(judged)
    readme = root / "README.md"
    if readme.is_file():
        text = readme.read_text()
        if BEGIN in text and END in text:
            text = _replace_block(text, BEGIN, END, table)
            if BOTTOM_BEGIN in text and BOTTOM_END in text:
                text = _replace_block(text, BOTTOM_BEGIN, BOTTOM_END, bottom.rstrip("\n"))
            files[readme] = text
    return files
