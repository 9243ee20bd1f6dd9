"""The claims ledger: each paper claim, the paper's number, and our verdict, from records.

An experiment declares its claims (``Experiment.claims``); each :class:`Claim` has a
``judge(experiment, records_by_scale) -> Verdict`` that reads only campaign records, so the
ledger is regenerated, never typed: ``mope-jax report --regenerate experiments/results``
writes ``experiments/results/CLAIMS.md`` and the block of README.md between the markers
``<!-- claims ledger -->`` and ``<!-- end claims ledger -->``.

Verdicts: ``reproduced``, ``not reproduced``, ``produced by the setup``, ``leak`` (the effect
appears only in a row that sees future tokens) and ``untested`` (no records that could decide
it; the ledger says what would test it). A verdict is given at the largest declared scale whose
records hold every row the claim needs, with at least two common seeds (``smoke``, a pipeline
check, never decides).
"""

from __future__ import annotations

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


# --------------------------------------------------------------------------- judging helpers


def decisive_scale(experiment, records_by_scale: dict, rows: Sequence[str]) -> str | None:
    """The largest declared scale whose records hold every row in ``rows`` with at least two
    seeds in common (None if none does)."""
    from mope_jax.campaign import by_row

    best = None
    for sc in experiment.scales:  # declared smallest to largest
        if sc.name == "smoke":  # a pipeline check, never evidence
            continue
        recs = by_row(records_by_scale.get(sc.name, []))
        seeds = [{int(r["seed"]) for r in recs.get(row, [])} for row in rows]
        if seeds and len(set.intersection(*seeds)) >= 2:
            best = sc.name
    return best


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
            v = claim.judge(exp, by_scale)
            evidence = v.evidence or ("what would test it: " + claim.test)
            lines.append(
                f"| {claim.id}: {claim.text} | {claim.paper_value} | **{v.verdict}** | "
                f"{evidence} | {v.causality or '-'} |"
            )
    return "\n".join(lines)


def render(root: str | Path) -> dict[Path, str]:
    """``experiments/results/CLAIMS.md`` and README.md with its ledger block replaced (only
    when the README has the markers); nothing when no experiment declares claims."""
    root = Path(root)
    if not experiments_with_claims(root):
        return {}
    table = ledger(root)
    doc = "\n".join(
        [
            "# Claims ledger",
            "",
            "Generated by `mope-jax report --regenerate experiments/results` from the campaign "
            "records under `experiments/results/<experiment>/<scale>/records/` (the judges are "
            "the `claims` of each `experiments/<name>.py`). Do not edit by hand.",
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
