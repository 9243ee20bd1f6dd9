"""Judging every claim under a checkout: find the experiments and analyses that declare
claims, read their records (or results JSON) and call each claim's judge, in ledger order."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mope_jax.claims.rule import ScaleFacts, scale_facts, scale_note
from mope_jax.claims.spec import PAPERS, Analysis, Claim, Verdict


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


def claim_order(claim_id: str) -> tuple:
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
    return sorted(out, key=lambda j: claim_order(j.claim.id))
