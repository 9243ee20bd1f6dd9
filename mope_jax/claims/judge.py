"""Judging every claim under a checkout: find the experiments and analyses that declare
claims, read their records (or results JSON) and call each claim's judge, in ledger order."""

from __future__ import annotations

import contextvars
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

from mope_jax.claims.rule import ScaleFacts, collecting, scale_facts, scale_note
from mope_jax.claims.spec import ALPHA, PAPERS, Analysis, Claim, Verdict
from mope_jax.errors import ClaimsError


def experiments_with_claims(root: Path) -> list:
    from mope_jax.campaign import available, load_experiment

    out = []
    for name in available(root):
        exp = load_experiment(name, root)
        if getattr(exp, "claims", ()):
            out.append(exp)
    return out


def analyses_with_claims(root: Path) -> list[Analysis]:
    """``ANALYSIS`` of every module the registry (``experiments/__init__.py``) lists under
    ``ANALYSES``, imported by module name."""
    from mope_jax.campaign.discover import analyses, load_analysis

    return [a for a in (load_analysis(n, root) for n in analyses(root)) if a.claims]


_ROOT: contextvars.ContextVar = contextvars.ContextVar("claims_root", default=None)


def records_of(experiment: str, scale: str) -> list[dict]:
    """The committed records of another experiment at ``scale`` under the checkout being judged
    (a judge that cites a row of another campaign, e.g. RoPE beside paper C's kernels); [] when
    none or outside :func:`judge_all`."""
    from mope_jax.campaign import read_records

    root = _ROOT.get()
    if root is None:
        return []
    return read_records(Path(root) / "experiments" / "results" / experiment / scale / "records")


@dataclass(frozen=True)
class Reading:
    """A claim judged from one scale's records alone (the rule: every scale is read)."""

    scale: str
    verdict: Verdict
    facts: ScaleFacts | None = None
    tests: tuple = ()
    decisive: bool = False

    @property
    def judged(self) -> bool:
        return self.verdict.verdict != "untested"


@dataclass(frozen=True)
class Judged:
    """One ledger row: the claim, its verdict (the deciding reading's, after the ledger's Holm
    adjustment), the scale text of what decided it, and every scale's reading."""

    claim: Claim
    verdict: Verdict
    scale: str
    facts: ScaleFacts | None = None
    readings: tuple[Reading, ...] = ()
    flipped: tuple = ()  # (Test, adjusted p) whose verdict the ledger-wide Holm changed
    unadjusted: str = ""  # the claim's verdict before the ledger-wide Holm adjustment

    @property
    def paper(self) -> str:
        if self.claim.ours:
            return "R"
        return self.claim.id[:1] if self.claim.id[:1] in PAPERS else "R"

    @property
    def label(self) -> str:
        """'contradicted at `mid`' (the verdict with its scale; no scale: the verdict alone)."""
        v = self.verdict
        if v.verdict == "description":
            return "description, no verdict"
        return f"{v.verdict} at `{v.scale}`" if v.scale else v.verdict

    @property
    def others(self) -> tuple[Reading, ...]:
        return tuple(r for r in self.readings if not r.decisive)

    @property
    def differs(self) -> tuple[Reading, ...]:
        """Judged readings at other scales whose verdict differs from the deciding one."""
        return tuple(
            r for r in self.others if r.judged and r.verdict.verdict != self.verdict.verdict
        )

    @property
    def shown_only(self) -> tuple[Reading, ...]:
        """Readings at other scales with too few seeds for a verdict."""
        return tuple(r for r in self.others if not r.judged and r.verdict.evidence)


def claim_order(claim_id: str) -> tuple:
    """A0 < A1 < ... < A5 < A5g < B1 < B1r < B2 < ... < C5 < R1: paper, number, suffix."""
    import re

    m = re.match(r"([A-Z]+)(\d*)(.*)", claim_id)
    letter, num, rest = m.groups() if m else (claim_id, "", "")
    papers = list(PAPERS)
    return (papers.index(letter) if letter in papers else len(papers), int(num or 0), rest)


def _readings(exp, claim: Claim, by_scale: dict) -> list[Reading]:
    """The claim judged at every scale with records (never smoke), smallest first; a
    description across scales reads once."""
    from mope_jax.campaign.records import blame_record

    if claim.across_scales:
        tests: list = []
        with collecting(tests):
            v = claim.judge(exp, by_scale)
        return [Reading(v.scale, v, scale_facts(exp, by_scale, v), tuple(tests))]
    out = []
    for sc in exp.scales:
        if sc.name == "smoke" or not by_scale.get(sc.name):
            continue
        tests = []
        with collecting(tests):
            v = blame_record(
                lambda rs, sc=sc: claim.judge(exp, {sc.name: rs}),
                by_scale[sc.name],
                f"the judge of claim {claim.id}",
            )
        if v.verdict == "untested" and not v.effects:
            continue  # nothing of this claim measured at this scale
        out.append(Reading(sc.name, v, scale_facts(exp, by_scale, v), tuple(tests)))
    return out


def _decisive(readings: list[Reading]) -> int | None:
    """Index of the largest scale's reading that gives a verdict (else the largest shown)."""
    judged = [i for i, r in enumerate(readings) if r.judged]
    if judged:
        return judged[-1]
    return len(readings) - 1 if readings else None


def judge_all(root: str | Path) -> list[Judged]:
    """Every claim of every experiment and analysis under ``root``, judged by the rule at every
    scale, the deciding readings adjusted by one ledger-wide Holm family, in ledger order
    (paper A, B, C, then ours; by number within a paper)."""
    from mope_jax.analysis.stats import holm
    from mope_jax.campaign import read_records

    root = Path(root)
    token = _ROOT.set(root)
    try:
        pending = []  # (claim, rejudge(adjusted) -> Verdict, readings, index, by_scale, exp)
        for exp in experiments_with_claims(root):
            results = root / "experiments" / "results" / exp.name
            by_scale = {}
            for sc in exp.scales:
                recs = read_records(results / sc.name / "records", [r.name for r in exp.rows])
                if recs:
                    by_scale[sc.name] = recs
            for claim in exp.claims:
                rs = _readings(exp, claim, by_scale)
                pending.append((claim, exp, by_scale, rs, _decisive(rs)))
        for analysis in analyses_with_claims(root):
            path = root / "experiments" / "results" / analysis.results
            if not path.is_file():
                ids = ", ".join(c.id for c in analysis.claims)
                raise ClaimsError(
                    f"{path.relative_to(root)} is missing: it holds what {analysis.name} judges "
                    f"{ids} from; restore it (git checkout -- {path.relative_to(root)}) or make "
                    "it again with the analysis's own command"
                )
            try:
                payload = json.loads(path.read_text())
            except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
                raise ClaimsError(
                    f"{path.relative_to(root)}: not readable as JSON ({type(e).__name__}); "
                    f"restore it (git checkout -- {path.relative_to(root)})"
                ) from None
            for claim in analysis.claims:
                tests: list = []
                with collecting(tests):
                    v = claim.judge(analysis, payload)
                pending.append(
                    (claim, analysis, payload, [Reading(v.scale, v, None, tuple(tests))], 0)
                )
        family: dict = {}
        for _, _, _, rs, i in pending:
            if i is None:
                continue
            for t in rs[i].tests:
                if not math.isnan(t.p):
                    family.setdefault(t.key, t)
        keys = list(family)
        adj = holm([family[k].p for k in keys])
        adjusted = {k: (a, len(keys)) for k, a in zip(keys, adj)}
        out = []
        for claim, exp, data, rs, i in pending:
            if i is None:
                v = Verdict("untested")
                out.append(Judged(claim, v, scale_note(None, v)))
                continue
            tests = []
            with collecting(tests, adjusted):
                if isinstance(exp, Analysis):
                    v = claim.judge(exp, data)
                elif claim.across_scales:
                    v = claim.judge(exp, data)
                else:
                    v = claim.judge(exp, {rs[i].scale: data[rs[i].scale]})
            v = _scaled(v)
            if isinstance(exp, Analysis):
                facts = None
                note = f"`{v.scale}`" if v.scale else "no training (statistics of corpora)"
            else:
                facts = scale_facts(exp, data, v)
                note = scale_note(facts, v)
            readings = tuple(
                replace(r, decisive=(j == i), verdict=v if j == i else _scaled(r.verdict))
                for j, r in enumerate(rs)
            )
            flipped = tuple(
                (t, adjusted[t.key][0])
                for t in rs[i].tests
                if t.verdict in ("reproduced", "contradicted")
                and t.key in adjusted
                and adjusted[t.key][0] >= ALPHA
            )
            out.append(Judged(claim, v, note, facts, readings, flipped, rs[i].verdict.verdict))
        return sorted(out, key=lambda j: claim_order(j.claim.id))
    finally:
        _ROOT.reset(token)


def _scaled(v: Verdict) -> Verdict:
    """``v`` with each effect naming the scale that gave it."""
    return replace(v, effects=tuple(replace(e, scale=v.scale) for e in v.effects))


def holm_family(judged: list[Judged]) -> list:
    """The ledger's Holm family: (claim id, Test) of every deciding reading, first claim that
    holds a test naming it."""
    seen, out = set(), []
    for j in judged:
        for r in j.readings:
            if not r.decisive:
                continue
            for t in r.tests:
                if not math.isnan(t.p) and t.key not in seen:
                    seen.add(t.key)
                    out.append((j.claim.id, t))
    return out
