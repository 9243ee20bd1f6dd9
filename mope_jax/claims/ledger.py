"""The ledger's text: CLAIMS.md (bottom line, then every claim), the README's ledger and
bottom-line blocks, and the forest figure, from the judged claims (:mod:`mope_jax.claims.judge`)."""

from __future__ import annotations

from pathlib import Path

from mope_jax.claims.judge import (
    Judged,
    analyses_with_claims,
    experiments_with_claims,
    holm_family,
    judge_all,
)
from mope_jax.claims.rule import millions
from mope_jax.claims.spec import MARGINS, MIN_SEEDS, PAPERS

BEGIN, END = "<!-- claims ledger -->", "<!-- end claims ledger -->"
BOTTOM_BEGIN, BOTTOM_END = "<!-- bottom line -->", "<!-- end bottom line -->"
# the bottom line's groups of verdicts, in the order a reader wants them
GROUPS = (
    ("holds", ("reproduced",)),
    ("contradicted", ("contradicted",)),
    ("a leak or produced by the setup", ("leak", "produced by the setup")),
    ("open", ("inconclusive", "untestable here", "untested")),
    ("described, no verdict", ("description",)),
)


def _n_of(v) -> int | None:
    ns = [e.n for e in v.effects if e.n]
    return max(ns) if ns else None


def _reading_word(r) -> str:
    if r.judged:
        return f"{r.verdict.verdict} at `{r.scale}`"
    n = _n_of(r.verdict)
    return f"`{r.scale}`: n {n}, not judged" if n else f"`{r.scale}`: not judged"


def _fmt_effect(e) -> str:
    import math

    if e.n >= 2 and math.isfinite(e.ci_low):
        text = f"{e.label} {e.mean:+.4f} [{e.ci_low:+.4f}, {e.ci_high:+.4f}], n {e.n}"
    else:
        text = f"{e.label} {e.mean:+.4f}, n {e.n}"
    return text + (f": {e.verdict}" if e.verdict else "")


def headline(j: Judged) -> str:
    """The ledger's one-line evidence: the judge's own headline, else the first comparison whose
    verdict is the claim's, else the first comparison, else the evidence's first clause."""
    v = j.verdict
    if v.headline:
        return v.headline
    if v.effects:
        same = [e for e in v.effects if e.verdict == v.verdict]
        same = sorted(same, key=lambda e: not e.causal)  # a causal comparison first
        return _fmt_effect((same or list(v.effects))[0])
    if v.evidence:
        first = v.evidence.split("; ")[0]
        return first if len(first) <= 160 else first[:157] + "..."
    return "what would test it: " + j.claim.test


def _verdict_cell(j: Judged) -> str:
    if j.verdict.verdict == "description":
        return "**description** (no verdict)"
    cell = f"**{j.verdict.verdict}**" + (f" at `{j.verdict.scale}`" if j.verdict.scale else "")
    extra = [_reading_word(r) for r in j.differs + j.shown_only]
    return cell + (f" ({'; '.join(extra)})" if extra else "")


def _anchor(j: Judged) -> str:
    return j.claim.id.lower()


def ledger(root: str | Path, judged: list[Judged] | None = None) -> str:
    """The scannable claims table: claim, the paper's number, our verdict with its scale (and
    the other scales' readings), one line of evidence; the full evidence is in :func:`details`."""
    judged = judge_all(root) if judged is None else judged
    lines = [
        "| claim | paper's number | our verdict | evidence (one line; details in CLAIMS.md) |",
        "|---|---|---|---|",
    ]
    for j in judged:
        c = j.claim
        ours = " (ours)" if c.ours else ""
        lines.append(
            f"| [{c.id}](experiments/results/CLAIMS.md#{_anchor(j)}){ours}: {c.short or c.text} "
            f"| {c.paper_value} | {_verdict_cell(j)} | {headline(j)} |"
        )
    return "\n".join(lines)


def details(judged: list[Judged]) -> str:
    """Every claim in full: its evidence at the deciding scale, the readings at the other
    scales, scale and convergence, causality, and what the Holm adjustment changed."""
    out = []
    for j in judged:
        c, v = j.claim, j.verdict
        out += [
            f'<a id="{_anchor(j)}"></a>',
            "",
            f"### {c.id}: {c.text}" + (" (ours)" if c.ours else ""),
            "",
            f"- paper's number: {c.paper_value}",
            f"- verdict: **{j.label}**",
            f"- evidence: {v.evidence or 'what would test it: ' + c.test}",
        ]
        for r in j.others:
            kind = "supporting, unadjusted" if r.judged else "shown, not judged"
            out.append(f"- at `{r.scale}` ({kind}): **{r.verdict.verdict}**; {r.verdict.evidence}")
        out.append(f"- scale: {j.scale}")
        out.append(f"- causality of the rows: {v.causality or '-'}")
        for t, adj in j.flipped:
            out.append(
                f"- Holm over the ledger: {t.what or 'a comparison'} p {t.p:.2g} -> {adj:.2g}: "
                f"{t.verdict} -> inconclusive"
            )
        out.append("")
    return "\n".join(out)


def _short(j: Judged) -> str:
    return f"{j.claim.id} {j.claim.short or j.claim.text}"


def bottom_line(judged: list[Judged]) -> str:
    """For each paper, its claims grouped as: holds, contradicted, a leak or produced by the
    setup, open (inconclusive, untestable here, untested), described, each claim with the scale
    that decided it; then where a verdict differs between scales, what is shown without a
    verdict, what the ledger-wide Holm adjustment changed, and each scale's budget: generated
    from the ledger, never typed."""
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
            show_word = name in ("open",) or name.startswith("a leak")
            parts = []
            for j in hits:
                where = f" at `{j.verdict.scale}`" if j.verdict.scale else ""
                if j.verdict.verdict == "description":
                    where = ""
                word = f"*{j.verdict.verdict}*{where}" if show_word else where.strip()
                if j.verdict.aside:
                    word = f"{word}; {j.verdict.aside}" if word else j.verdict.aside
                parts.append(f"{_short(j)}" + (f" ({word})" if word else ""))
            lines.append(f"- {name}: {'; '.join(parts)}")
        differs = [j for j in mine if j.differs]
        if differs:
            lines.append(
                "- differs between scales: "
                + "; ".join(
                    f"{j.claim.id} {j.label}, " + ", ".join(_reading_word(r) for r in j.differs)
                    for j in differs
                )
            )
        shown = {}
        for j in mine:
            for r in j.shown_only:
                shown.setdefault((r.scale, _n_of(r.verdict)), []).append(j.claim.id)
        for (sc, n), ids in shown.items():
            lines.append(
                f"- shown, not judged (fewer than {MIN_SEEDS} seeds): {', '.join(ids)} at `{sc}`"
                + (f" (n {n})" if n else "")
            )
        changed = [j for j in mine if j.unadjusted and j.unadjusted != j.verdict.verdict]
        if changed:
            lines.append(
                "- verdicts the ledger-wide Holm adjustment changed: "
                + "; ".join(f"{j.claim.id} {j.unadjusted} -> {j.verdict.verdict}" for j in changed)
            )
        kept = [j for j in mine if j.flipped and j not in changed]
        if kept:
            lines.append(
                "- comparisons it left unresolved, the claim's verdict unchanged: "
                + "; ".join(
                    f"{j.claim.id} "
                    + ", ".join(f"{t.what or 'a comparison'} ({t.verdict})" for t, _ in j.flipped)
                    for j in kept
                )
            )
        lines += _scale_lines(mine)
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _scale_lines(judged: list[Judged]) -> list[str]:
    """'- at `mid` (A0-A5): 0.8-0.84M params, ... (the paper: ...); effects still moving in ...'
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
        moving = [j for j in js if j.facts.moving]
        if moving:
            worst = max(abs(d) for j in moving for _, d, _ in j.facts.moving)
            text += (
                f"; effects still moving over the last quarter of training in "
                f"{', '.join(j.claim.id for j in moving)} (by up to {worst:.3f})"
            )
        far = {(r, round(h, 3), p) for j in js for r, h, p in j.facts.far_baselines}
        if far:
            text += "; baseline far from the paper's: " + ", ".join(
                f"`{r}` {h:.3f} (paper {p:.3f})" for r, h, p in sorted(far)
            )
        out.append(text)
    return out


def holm_section(judged: list[Judged]) -> str:
    """CLAIMS.md's multiplicity section: the family's size, every flipped verdict, and the
    claims whose tests carry no p (not in the family)."""
    fam = holm_family(judged)
    flips = [(j.claim.id, t, a) for j in judged for t, a in j.flipped]
    changed = [j for j in judged if j.unadjusted and j.unadjusted != j.verdict.verdict]
    lines = [
        f"One Holm family over the whole ledger: {len(fam)} tests (each paired-t or line-fit "
        "comparison at a claim's deciding scale, once, against its margin boundary). "
        + (
            "Verdicts it flipped: "
            + "; ".join(
                f"{cid} {t.what or 'comparison'}: {t.verdict} -> inconclusive "
                f"(p {t.p:.2g} -> {a:.2g})"
                for cid, t, a in flips
            )
            + "."
            if flips
            else "It flipped no comparison."
        )
    ]
    if changed:
        lines.append(
            "Claims whose verdict it changed: "
            + "; ".join(f"{j.claim.id} {j.unadjusted} -> {j.verdict.verdict}" for j in changed)
            + "."
        )
    none = [
        j.claim.id
        for j in judged
        if j.verdict.verdict not in ("untested", "description")
        and not any(r.tests for r in j.readings if r.decisive)
    ]
    if none:
        lines.append(
            "Not in the family (their intervals carry no p: fractions' Wilson intervals, "
            f"bootstrap intervals): {', '.join(none)}."
        )
    return " ".join(lines)


PRECISION_FIELDS = ("compute_dtype", "matmul_precision")


def precision_twins(experiment) -> list[tuple]:
    """Pairs of declared scales that differ only in precision (the model's compute dtype or
    matmul precision; everything else equal)."""
    from dataclasses import replace as _replace

    def strip(sc):
        model = {k: v for k, v in sc.model.items() if k not in PRECISION_FIELDS}
        return _replace(sc, name="", model=model)

    scales = [sc for sc in experiment.scales if sc.name != "smoke"]
    return [
        (a, b)
        for i, a in enumerate(scales)
        for b in scales[i + 1 :]
        if strip(a) == strip(b) and a.model != b.model
    ]


def precision_section(root: str | Path) -> str:
    """CLAIMS.md's pooling section: for each pair of precision twins, what
    :func:`mope_jax.claims.precision_pooling` finds (the rule, written before any pair)."""
    from mope_jax.campaign import read_records
    from mope_jax.claims.rule import precision_pooling

    lines = []
    for exp in experiments_with_claims(Path(root)):
        results = Path(root) / "experiments" / "results" / exp.name
        for a, b in precision_twins(exp):
            ra, rb = (
                read_records(results / sc.name / "records", [r.name for r in exp.rows])
                for sc in (a, b)
            )
            got = precision_pooling(ra, rb, exp.metric)
            pairs = "; ".join(
                f"{row} seed {seed} {d:+.4f}" + (f" (seed sd {sd:.4f})" if sd is not None else "")
                for row, seed, d, sd in got["pairs"]
            )
            lines.append(
                f"- {exp.name} `{a.name}` vs `{b.name}`: "
                + (
                    "negligible, may be pooled (the ledger still reads each scale apart)"
                    if got["negligible"]
                    else "kept apart"
                )
                + f": {got['why']}"
                + (f" ({pairs})" if pairs else "")
            )
    if not lines:
        return ""
    return (
        "Records of two precisions are never pooled in one row; two scales that differ only in "
        "precision are pooled only when the rule (`mope_jax/claims/rule.py`, *Pooling "
        "precisions*) finds the difference negligible: the same seed at both precisions within "
        "0.01 nats and half the seed spread, in at least 3 rows.\n\n" + "\n".join(lines)
    )


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
            "each experiment; the rule is `mope_jax/claims/rule.py`'s docstring: at least "
            f"{MIN_SEEDS} seeds for a verdict, one materiality margin per metric, one Holm family "
            "over the ledger, every verdict with its scale). Do not edit by hand.",
            "",
            "## Bottom line",
            "",
            bottom,
            "## Every claim",
            "",
            table.replace("(experiments/results/CLAIMS.md#", "(#"),
            "",
            "## Multiple comparisons",
            "",
            holm_section(judged),
            "",
            "## Pooling precisions",
            "",
            precision_section(root)
            or "No experiment declares two scales that differ only in precision.",
            "",
            "## Details",
            "",
            details(judged),
        ]
    )
    files = {root / "experiments" / "results" / "CLAIMS.md": doc}
    from mope_jax.analysis.figures import ledger_forest

    files[root / "experiments" / "results" / "claims_forest.png"] = ledger_forest(judged, MARGINS)
    readme = root / "README.md"
    if readme.is_file():
        text = readme.read_text()
        if BEGIN in text and END in text:
            text = _replace_block(text, BEGIN, END, table)
            if BOTTOM_BEGIN in text and BOTTOM_END in text:
                text = _replace_block(text, BOTTOM_BEGIN, BOTTOM_END, bottom.rstrip("\n"))
            files[readme] = text
    return files
