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

Verdicts: ``reproduced``, ``not reproduced``, ``produced by the setup``, ``leak`` (the effect
appears only in a row that sees future tokens) and ``untested`` (no records that could decide
it; the ledger says what would test it). A verdict is given at the largest declared scale whose
records hold every row the claim needs, with at least two common seeds (``smoke``, a pipeline
check, never decides).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

VERDICTS = ("reproduced", "not reproduced", "produced by the setup", "leak", "untested")
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
