"""A campaign's ``table.md`` from its records alone: per row n, mean, std and 95% t-interval
of the experiment's metric, the paired difference against the baseline, the declared comparisons
(Holm-adjusted over the campaign's family of tests), the experiment's own sections, and the
provenance. :func:`render_campaign` is a pure function of the records: everything above
``## Provenance`` depends only on their numbers (no clock, no machine), so tables from an
interrupted and an uninterrupted campaign are equal."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

from mope_jax.campaign.configs import declared_causal, row_config
from mope_jax.campaign.records import blame_record, by_row
from mope_jax.campaign.spec import Comparison, Experiment, Row, Scale
from mope_jax.config import LOCATION_FIELDS
from mope_jax.provenance import cpu_text


def display(row: Row, causal: bool) -> str:
    return row.name + ("" if causal else " (NON-CAUSAL)")


def fmt(x, nd: int = 4, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"


def _p(p: float) -> str:
    if p is None or math.isnan(p):
        return "n/a"
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def _ci(lo: float, hi: float, sign: bool = False) -> str:
    if math.isnan(lo):
        return "n/a"
    return f"[{fmt(lo, sign=sign)}, {fmt(hi, sign=sign)}]"


def paired(recs: dict[str, list[dict]], a: str, b: str, metric: str):
    """(seeds, paired_t) of a - b over the seeds both rows have (None if no common seed)."""
    from mope_jax.analysis.stats import paired_t

    va = {int(r["seed"]): r[metric] for r in recs.get(a, []) if r.get(metric) is not None}
    vb = {int(r["seed"]): r[metric] for r in recs.get(b, []) if r.get(metric) is not None}
    seeds = sorted(set(va) & set(vb))
    if not seeds:
        return seeds, None
    return seeds, paired_t([va[s] for s in seeds], [vb[s] for s in seeds])


def contrast(recs: dict[str, list[dict]], terms, metric: str):
    """(seeds, per-seed values, paired_t against 0) of sum_i coef_i row_i over the seeds every
    row has (None if there is no such seed)."""
    from mope_jax.analysis.stats import paired_t

    vals = [
        {int(r["seed"]): r[metric] for r in recs.get(row, []) if r.get(metric) is not None}
        for row, _ in terms
    ]
    seeds = sorted(set.intersection(*(set(v) for v in vals)))
    if not seeds:
        return seeds, [], None
    per = [sum(coef * v[s] for (_, coef), v in zip(terms, vals)) for s in seeds]
    return seeds, per, paired_t(per, [0.0] * len(per))


def comparisons_at(experiment: Experiment, scale: Scale | None = None) -> list[Comparison]:
    """The declared comparisons whose rows are all planned at ``scale``."""
    at = experiment.rows if scale is None else experiment.rows_at(scale)
    names = {r.name for r in at}
    return [c for c in experiment.comparisons if all(row in names for row, _ in c.terms)]


def same_data(experiment: Experiment, scale: Scale | None, a: str, b: str) -> bool:
    """Whether rows a and b train on the same data at ``scale`` (their whole ``DataConfig``,
    the row's own data overrides included; the experiment's and the scale's data are common to
    every row). A paired difference of two rows' losses means something only then: on other
    data (another block size, another task) it is a difference between data sets."""
    if scale is None:  # no scale: the rows' own data overrides decide

        def own(name):
            return sorted(o for o in experiment.row(name).overrides if o.startswith("data."))

        return own(a) == own(b)
    ca = row_config(experiment, scale, experiment.row(a))
    cb = row_config(experiment, scale, experiment.row(b))
    return ca.data == cb.data


def comparison_family(experiment: Experiment, scale: Scale | None = None) -> list[tuple[str, ...]]:
    """Every hypothesis Holm adjusts over: each row (planned at ``scale``) on the baseline's
    data against the baseline, then the declared comparisons of rows at ``scale`` (pairs
    (a, b), interactions (a, b, c, d)); a pair asked twice ((a, b) or (b, a)) counts once."""
    keys, seen = [], set()
    at = experiment.rows if scale is None else experiment.rows_at(scale)
    base = experiment.baseline
    cands = [
        (r.name, base) for r in at if r.name != base and same_data(experiment, scale, r.name, base)
    ]
    cands += [c.key for c in comparisons_at(experiment, scale)]
    for key in cands:
        norm = tuple(sorted(key)) if len(key) == 2 else key
        if norm not in seen:
            seen.add(norm)
            keys.append(key)
    return keys


def render_campaign(experiment: Experiment, scale: Scale | str, records: list[dict]) -> str:
    """The campaign's table.md from its records alone (see the module docstring)."""
    from mope_jax.analysis.stats import holm, summarize

    sc = experiment.scale(scale) if isinstance(scale, str) else scale
    metric = experiment.metric
    at = experiment.rows_at(sc)
    rows = {r.name: r for r in at}
    recs = {k: v for k, v in by_row(records).items() if k in rows}
    causal = {r.name: declared_causal(experiment, sc, r) for r in at}
    family = comparison_family(experiment, sc)
    comparisons = comparisons_at(experiment, sc)
    tests, interactions = {}, {}
    for key in family:
        if len(key) == 2:
            tests[key] = paired(recs, *key, metric)
        else:
            comp = next(c for c in comparisons if c.key == key)
            seeds, per, t = contrast(recs, comp.terms, metric)
            tests[key], interactions[key] = (seeds, t), per
    pvals = [t.p if t is not None else float("nan") for _, t in tests.values()]
    adjusted = dict(zip(tests, holm(pvals)))

    def lookup(a, b):
        if (a, b) in tests:
            seeds, t = tests[(a, b)]
            return seeds, t, adjusted[(a, b)]
        seeds, t = tests[(b, a)]  # the same hypothesis, the other sign
        if t is None:
            return seeds, None, adjusted[(b, a)]
        flipped = dataclasses.replace(t, mean=-t.mean, ci_low=-t.ci_high, ci_high=-t.ci_low, t=-t.t)
        return seeds, flipped, adjusted[(b, a)]

    n_tests = sum(1 for p in pvals if not math.isnan(p))
    lines = [f"# {experiment.title} (scale `{sc.name}`)", ""]
    if experiment.claim:
        lines += [f"Claim: {experiment.claim}", ""]
    lines += [
        f"Campaign: `mope-jax campaign run {experiment.name} --scale {sc.name}` "
        f"(records in `records/<row>/seed<s>.json`; re-render with "
        f"`mope-jax report --regenerate experiments/results`).",
        "",
        _describe(sc, recs, experiment),
        "",
        f"`{metric}` per row: n seeds, mean, std (ddof 1), 95% t-interval; the paired difference "
        f"row - `{experiment.baseline}` over the seeds both have, its 95% t-interval and paired-t "
        f"two-sided p (only for rows trained on `{experiment.baseline}`'s data: 'other data' "
        "marks a row whose data differ, where the difference would compare data sets); Holm p "
        f"adjusts over the {n_tests} comparisons of this campaign that have a test (against the "
        "baseline and declared). NON-CAUSAL rows see future tokens: their losses are not "
        "causal-LM losses.",
        "",
    ]
    has_paper = any(r.paper is not None for r in at)
    head = (
        "| row | label | causality | n | mean | std | 95% CI | "
        f"diff vs `{experiment.baseline}` [95% CI] | p | Holm p |"
    )
    lines += [head + (" paper |" if has_paper else ""), "|---" * (10 + has_paper) + "|"]
    for row in at:
        rs = recs.get(row.name, [])
        vals = [r[metric] for r in rs if r.get(metric) is not None]
        caus = _causality_cell(causal[row.name], rs, experiment.audit)
        label = (row.label or row.variant) + ("" if causal[row.name] else " (NON-CAUSAL)")
        cells = [f"`{row.name}`", label, caus, str(len(vals))]
        if vals:
            s = summarize(vals)
            cells += [fmt(s.mean), fmt(s.std) if s.n > 1 else "n/a", _ci(s.ci_low, s.ci_high)]
        else:
            cells += ["", "", ""]
        if row.name == experiment.baseline or not vals:
            cells += ["", "", ""]
        elif not same_data(experiment, sc, row.name, experiment.baseline):
            cells += ["other data", "", ""]
        else:
            seeds, t, hp = lookup(row.name, experiment.baseline)
            if t is None:
                cells += ["no common seed", "", ""]
            else:
                cells += [
                    f"{fmt(t.mean, sign=True)} {_ci(t.ci_low, t.ci_high, sign=True)} (n {t.n})",
                    _p(t.p),
                    _p(hp),
                ]
        if has_paper:
            cells.append("" if row.paper is None else fmt(row.paper))
        lines.append("| " + " | ".join(cells) + " |")
    if comparisons:
        lines += [
            "",
            "## Comparisons",
            "",
            f"Paired `{metric}` differences a - b over the seeds both rows have "
            "(negative: a lower)"
            + (
                "; an interaction (a - b) - (c - d) over the seeds all four rows have."
                if any(c.c is not None for c in comparisons)
                else "."
            ),
            "",
            "| a - b | what differs | n | mean [95% CI] | per seed | p | Holm p |",
            "|---|---|---|---|---|---|---|",
        ]
        for comp in comparisons:

            def shown(x: str) -> str:
                return display(rows[x], causal[x])

            name = f"{shown(comp.a)} - {shown(comp.b)}"
            if comp.c is not None:
                name = f"({name}) - ({shown(comp.c)} - {shown(comp.d)})"
                seeds, t = tests[comp.key]
                hp, values = adjusted[comp.key], interactions[comp.key]
            else:
                seeds, t, hp = lookup(comp.a, comp.b)
            if t is None:
                lines.append(f"| {name} | {comp.what} | 0 |  |  |  |  |")
                continue
            if comp.c is None:
                va = {int(r["seed"]): r[metric] for r in recs[comp.a]}
                vb = {int(r["seed"]): r[metric] for r in recs[comp.b]}
                values = [va[s] - vb[s] for s in seeds]
            per = ", ".join(fmt(x, sign=True) for x in values)
            lines.append(
                f"| {name} | {comp.what} | {t.n} | {fmt(t.mean, sign=True)} "
                f"{_ci(t.ci_low, t.ci_high, sign=True)} | {per} | {_p(t.p)} | {_p(hp)} |"
            )
    for section in experiment.sections:
        text = blame_record(
            lambda rs, section=section: section(experiment, sc, rs),
            [r for r in records if r.get("row") in rows],
            f"section {getattr(section, '__name__', section)} of {experiment.name}",
        ).strip()
        if text:
            lines += ["", text]
    lines += ["", _provenance(records)]
    return "\n".join(lines) + "\n"


def _causality_cell(causal: bool, rs: list[dict], audited: bool) -> str:
    cell = "declared causal" if causal else "**NON-CAUSAL**"
    audits = [r["audit"] for r in rs if r.get("audit")]
    if audited and audits:
        leaks = sum(1 for a in audits if not a["causal"])
        worst = max(float(a["leak_rel"]) for a in audits)
        verdict = "causal" if not leaks else f"LEAKS ({leaks}/{len(audits)} seeds)"
        methods = "/".join(sorted({str(a.get("method")) for a in audits}))
        cell += f"; audit ({methods}): {verdict}, max rel. leak {worst:.1e}"
    return cell


# model.precision (mope_jax.config.ModelConfig.precision) in the words of a table
PRECISION_WORDS = {
    "f32": "f32 (float32 matmuls at full precision)",
    "tf32": "tf32 (float32 matmuls through TensorFloat-32 units)",
    "bf16": "bf16 (mixed: bf16 matmul inputs, float32 weights, accumulation and softmax)",
}


def _describe(sc: Scale, recs: dict[str, list[dict]], experiment: Experiment) -> str:
    """The scale in one sentence, from the declaration and the records' data (no paths)."""
    from mope_jax.config import ModelConfig, TrainConfig

    m, t = ModelConfig(**sc.model), TrainConfig(**sc.train)
    text = (
        f"Scale `{sc.name}`: T={m.block_size}, E={m.n_embd}, {m.n_layer} layers x {m.n_head} "
        f"heads, dropout {m.dropout}; {t.max_steps} steps x {t.batch_size} windows, AdamW lr "
        f"{t.lr:g} (warmup {t.warmup_steps}, cosine), weight decay {t.weight_decay:g}; "
        f"{t.eval_batches} eval batches per split; precision {PRECISION_WORDS[m.precision]}; "
        f"{sc.seeds} seeds planned"
        + "".join(f", {k} for `{r}`" for r, k in (sc.row_seeds or {}).items())
        + "."
    )
    if sc.row_overrides:
        text += (
            " At this scale also: "
            + "; ".join(
                f"`{r}`: {', '.join(_no_location(x) for x in o)}"
                for r, o in sc.row_overrides.items()
                if o
            )
            + "."
        )
    any_rec = next((rs[0] for rs in recs.values() if rs), None)
    if any_rec is not None:
        d = any_rec.get("config", {}).get("data", {})
        src = d.get("source", "?")
        what = f"`{Path(d['path']).name}`" if src == "text" and d.get("path") else src
        sha = (any_rec.get("corpus") or {}).get("sha256")
        text += f" Data: {what}" + (f" (sha256 {sha[:12]})" if sha else "") + "."
    return text


def _no_location(override: str) -> str:
    """``data.path=/a/b/c.txt`` -> ``data.path=c.txt``: the table names no machine's folders."""
    key, _, value = override.partition("=")
    if key.strip().split(".")[-1] in LOCATION_FIELDS and value:
        return f"{key}={Path(value).name}"
    return override


def _provenance(records: list[dict]) -> str:
    """The only part of the table that depends on where and when the runs were made."""
    if not records:
        return "## Provenance\n\nNo records yet."
    env = [r.get("env") or {} for r in records]
    machines = sorted(
        {
            f"{cpu_text(e)}, {e.get('cpu_count', '?')} CPUs, "
            f"{e.get('backend', '?')} ({e.get('device', '?')})"
            for e in env
        }
    )
    commits = sorted({str(e.get("git_commit", "unknown")) for e in env})
    dates = sorted(str(r.get("date_utc", "?")) for r in records)
    commands = sorted({str(r.get("command", "?")) for r in records})
    train_s = sum(float(r.get("train_seconds") or 0.0) / _group_size(r) for r in records)
    wall_s = sum(
        float((r.get("campaign") or {}).get("group_wall_s") or 0.0) / _group_size(r)
        for r in records
    )
    return "\n".join(
        [
            "## Provenance",
            "",
            f"- records: {len(records)}",
            f"- machines: {'; '.join(machines)}",
            f"- commits: {', '.join(commits)}",
            f"- dates (UTC): {dates[0]} to {dates[-1]}",
            f"- training: {train_s:.0f} s (every session of a resumed run); wall time of the "
            f"calls that finished the runs, with compilation, evaluation and audit: {wall_s:.0f} s"
            + (" (less than the training: some runs were resumed)" if wall_s < train_s else ""),
            f"- commands: {'; '.join(f'`{c}`' for c in commands)}",
        ]
    )


def _group_size(rec: dict) -> int:
    """Seeds trained in the record's program: its train_seconds and wall time are theirs."""
    return max(1, len((rec.get("campaign") or {}).get("group_seeds") or [None]))


def above_provenance(text: str) -> str:
    """The part of a rendered table that must not depend on how the campaign was run."""
    return text.split("\n## Provenance", 1)[0]
