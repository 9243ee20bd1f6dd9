"""The ledger's text: CLAIMS.md (bottom line, then every claim), the README's ledger and
bottom-line blocks, and the forest figure, from the judged claims (:mod:`mope_jax.claims.judge`)."""

from __future__ import annotations

from pathlib import Path

from mope_jax.claims.judge import Judged, analyses_with_claims, experiments_with_claims, judge_all
from mope_jax.claims.rule import millions
from mope_jax.claims.spec import PAPERS

BEGIN, END = "<!-- claims ledger -->", "<!-- end claims ledger -->"
BOTTOM_BEGIN, BOTTOM_END = "<!-- bottom line -->", "<!-- end bottom line -->"
# the bottom line's groups of verdicts, in the order a reader wants them
GROUPS = (
    ("holds", ("reproduced",)),
    ("contradicted", ("contradicted",)),
    ("a leak or produced by the setup", ("leak", "produced by the setup")),
    ("open", ("inconclusive", "untestable here", "untested")),
)


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
            budget.append(f"{millions(params)} params")
        if tokens:
            budget.append(f"{millions(tokens)} tokens a run")
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
            "each `experiments/<name>.py`; the rule is `mope_jax/claims/rule.py`'s docstring). Do "
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
