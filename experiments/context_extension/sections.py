"""The table sections of the context-extension campaign (``Experiment.sections``), rendered
from the records into each scale's ``table.md``: the extension table (every method at s = 1, 2,
4), the paired differences to plain extrapolation, the fine-tunes at the new length and the
frequency energy."""

from __future__ import annotations

import numpy as np

from experiments.context_extension.budget import _ft_budget, _ft_words
from experiments.context_extension.settings import FACTORS, FT_FACTOR, FT_RULES, METHODS, ft_name
from experiments.context_extension.summary import _bases, fmt, _per_seed, summarise
from mope_jax.campaign import Experiment, Scale, by_row


def finetune_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Zero-shot extension vs a fine-tune at FT_FACTOR L, per task, from the records: the base
    row's ``none`` / ``pi`` at s = FT_FACTOR and the fine-tuned rows on the same windows (and
    problems), then the paired difference fine-tuned pi - fine-tuned none. Each task's heading
    states the fine-tune's steps, learning rate and tokens against the pretraining
    (:func:`_ft_budget`: not PI's brief low-rate fine-tune)."""
    from mope_jax.analysis.stats import paired_t

    recs = {k: [r for r in v if r.get("analysis")] for k, v in by_row(records).items()}
    s = FT_FACTOR
    lines = [
        "## Fine-tuned at the new length",
        "",
        f"Each seed's final parameters trained on at {s}L under each rule (fresh AdamW, 10 "
        "warmup steps, cosine to 0, half the batch; steps, learning rate and tokens in each "
        "heading: not PI's protocol, whose paper fine-tunes briefly at a low rate), then "
        f"evaluated at {s}L on the windows (and problems) of the zero-shot `{s}x` columns "
        "above. Cells: mean +- sd [95% t-interval] over seeds.",
        "",
    ]
    any_rows = False
    for base in _bases(experiment):
        zero = [r["analysis"] for r in recs.get(base.name) or []]
        tuned = {rule: recs.get(ft_name(base.name, rule)) or [] for rule in FT_RULES}
        if not any(tuned.values()):
            continue
        any_rows = True
        first = zero[0] if zero else next(v for v in tuned.values() if v)[0]["analysis"]
        arith, retr = "answer" in first, "retrieval" in first
        forced = arith and all(
            "forced_result" in (r["analysis"].get("answer") or {})
            for v in tuned.values()
            for r in v
        )
        budget = _ft_budget(experiment, scale.name, recs, base.name)
        lines += [
            f"### {base.name}: fine-tuned at {s}L, {_ft_words(budget)}",
            "",
            "| model at "
            + f"{s}L | n | loss | loss beyond L"
            + (" | answer acc | leaf acc" if arith else "")
            + (" | forced result acc" if forced else "")
            + (" | retrieval acc" if retr else "")
            + " |",
            "|---|---|---|---"
            + ("|---|---" if arith else "")
            + ("|---" if forced else "")
            + ("|---" if retr else "")
            + "|",
        ]

        def cells(values):
            per = [
                {
                    "loss": {"k": {"all": v["loss"]["all"], "beyond_L": v["loss"]["beyond_L"]}},
                    **({"answer": {"k": v["answer"]}} if arith else {}),
                    **({"retrieval": {"k": v["retrieval"]}} if retr else {}),
                }
                for v in values
            ]
            summ = summarise(per)
            out = [fmt(summ["loss"]["k"]), fmt(summ["loss_beyond_L"]["k"])]
            if arith:
                out += [fmt(summ["accuracy"]["k"]), fmt(summ["leaf_accuracy"]["k"])]
            if forced:
                out.append(fmt((summ.get("forced_result") or {}).get("k")))
            if retr:
                out.append(fmt(summ["retrieval"]["k"]))
            return " | ".join(out)

        for rule in FT_RULES:
            if zero:
                vals = [
                    {
                        "loss": a["loss"][f"{rule}@{s}"],
                        "answer": (a.get("answer") or {}).get(f"{rule}@{s}"),
                        "retrieval": (a.get("retrieval") or {}).get(f"{rule}@{s}"),
                    }
                    for a in zero
                ]
                lines.append(f"| zero-shot, {rule} | {len(vals)} | {cells(vals)} |")
        for rule in FT_RULES:
            vals = [r["analysis"] for r in tuned[rule]]
            if vals:
                lines.append(f"| fine-tuned, {rule} | {len(vals)} | {cells(vals)} |")
        a = {int(r["seed"]): r["analysis"] for r in tuned["pi"]}
        b = {int(r["seed"]): r["analysis"] for r in tuned["none"]}
        both = sorted(set(a) & set(b))
        if both:
            lines += ["", "Paired, fine-tuned pi - fine-tuned none (same seed's base model):"]
            qs = [("loss", lambda x: x["loss"]["all"])]
            if arith:
                qs.append(("answer acc", lambda x: x["answer"]["accuracy"]))
            if forced:
                qs.append(("forced result acc", lambda x: x["answer"]["forced_result"]))
            if retr:
                qs.append(("retrieval acc", lambda x: x["retrieval"]))
            for label, get in qs:
                t = paired_t([get(a[k]) for k in both], [get(b[k]) for k in both])
                ci = f"[{t.ci_low:+.3f}, {t.ci_high:+.3f}] (p {t.p:.3f})" if t.n > 1 else "(n/a)"
                lines.append(f"- {label}: {t.mean:+.3f} {ci}, n = {t.n}")
        lines.append("")
    return "\n".join(lines) if any_rows else ""


def extension_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """The extension table of each task (every method at s = 1, 2, 4), from the records."""
    recs = {k: [r for r in v if r.get("analysis")] for k, v in by_row(records).items()}
    lines = [
        "## Context extension",
        "",
        "Evaluation-time context extension of tiny RoPE models; no fine-tuning at the longer "
        "length. Cells: mean +- sd [95% t-interval] over seeds.",
        "",
    ]
    any_rows = False
    for row in _bases(experiment):
        rs = recs.get(row.name) or []
        if not rs:
            continue
        any_rows = True
        per_seed = _per_seed(rs)
        L, task = per_seed[0]["train_length"], per_seed[0]["task"]
        steps = rs[0]["config"]["train"]["max_steps"]
        what = "" if task == row.name else f" ({task} task)"
        lines.append(f"### {row.name}{what} (trained at L = {L}, {steps} steps, {len(rs)} seeds)\n")
        lines += _task_table(per_seed, L, task == "arithmetic", task == "retrieval")
        lines.append("")
    return "\n".join(lines) if any_rows else ""


def _task_table(per_seed: list[dict], L: int, answers: bool, retr: bool = False) -> list[str]:
    hdr = "| method | " + " | ".join(f"loss @ {s}x ({s * L})" for s in FACTORS)
    hdr += " | " + " | ".join(f"loss beyond L @ {s}x" for s in FACTORS[1:])
    if answers:
        hdr += " | " + " | ".join(f"answer acc @ {s}x" for s in FACTORS)
        hdr += " | " + " | ".join(f"leaf acc @ {s}x" for s in FACTORS)
    summ = summarise(per_seed)
    forced = answers and "forced_result" in summ
    if forced:
        hdr += " | " + " | ".join(f"forced result acc @ {s}x" for s in FACTORS)
    if retr:
        hdr += " | " + " | ".join(f"retrieval acc @ {s}x" for s in FACTORS)
    lines = [hdr + " |", "|" + "---|" * (hdr.count("|"))]
    for m in METHODS:
        row = f"| {m} | " + " | ".join(fmt(summ["loss"][f"{m}@{s}"]) for s in FACTORS)
        row += " | " + " | ".join(fmt(summ["loss_beyond_L"][f"{m}@{s}"]) for s in FACTORS[1:])
        if answers:
            row += " | " + " | ".join(fmt(summ["accuracy"][f"{m}@{s}"]) for s in FACTORS)
            row += " | " + " | ".join(fmt(summ["leaf_accuracy"][f"{m}@{s}"]) for s in FACTORS)
        if forced:
            row += " | " + " | ".join(fmt(summ["forced_result"][f"{m}@{s}"]) for s in FACTORS)
        if retr:
            row += " | " + " | ".join(fmt(summ["retrieval"][f"{m}@{s}"]) for s in FACTORS)
        lines.append(row + " |")
    return lines


def paired_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Paired differences method - none (same seed, same checkpoint, same windows) of the loss
    and, for arithmetic, the answer accuracy at s = 2 and 4."""
    from mope_jax.analysis.stats import paired_t

    recs = {k: [r for r in v if r.get("analysis")] for k, v in by_row(records).items()}
    lines = [
        "## Paired differences to plain extrapolation",
        "",
        "method - none over seeds (each seed's one checkpoint evaluated both ways on the same "
        "windows/problems): mean [95% t-interval] (p, paired t); n/a with one seed. Negative "
        "loss / positive accuracy: the method is better than no extension.",
        "",
        "| row | quantity | s | " + " | ".join(m for m in METHODS[1:]) + " |",
        "|---|---|---|" + "---|" * (len(METHODS) - 1),
    ]
    n_lines = len(lines)
    for row in _bases(experiment):
        an = [r["analysis"] for r in recs.get(row.name) or []]
        if not an:
            continue
        quantities = [("loss", lambda a, k: a["loss"][k]["all"])]
        if "answer" in an[0]:
            quantities.append(("answer acc", lambda a, k: a["answer"][k]["accuracy"]))
            if all("forced_result" in a["answer"]["none@1"] for a in an):
                quantities.append(
                    ("forced result acc", lambda a, k: a["answer"][k]["forced_result"])
                )
        if "retrieval" in an[0]:
            quantities.append(("retrieval acc", lambda a, k: a["retrieval"][k]))
        for label, get in quantities:
            for s in FACTORS[1:]:
                cells = []
                for m in METHODS[1:]:
                    a = [get(x, f"{m}@{s}") for x in an]
                    b = [get(x, f"none@{s}") for x in an]
                    t = paired_t(a, b)
                    if t.n < 2:
                        cells.append(f"{t.mean:+.3f} (n/a)")
                    else:
                        cells.append(
                            f"{t.mean:+.3f} [{t.ci_low:+.3f}, {t.ci_high:+.3f}] (p {t.p:.3f})"
                        )
                lines.append(f"| `{row.name}` | {label} | {s}x | " + " | ".join(cells) + " |")
    return "\n".join(lines) if len(lines) > n_lines else ""


def energy_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Frequency energy per row, mean over seeds."""
    recs = {k: [r for r in v if r.get("analysis")] for k, v in by_row(records).items()}
    lines = [
        "## Frequency energy",
        "",
        "Mean over seeds. TV = total-variation distance of the energy distributions (mean over "
        "layers and heads); other domain: the other row's validation text in this model's "
        "vocabulary (unknown characters -> space).",
        "",
        "| row | n | theta_eff (rad/token) | per layer | entropy (nats; uniform = ln 16 = 2.77) "
        "| TV other windows | TV other domain | theta_eff on other domain |",
        "|---|---|---|---|---|---|---|---|",
    ]
    n_lines = len(lines)

    def mean(xs):
        xs = [x for x in xs if x is not None]
        return f"{np.mean(xs):.4f}" if xs else "n/a"

    for row in experiment.rows:
        es = [r["analysis"]["energy"] for r in recs.get(row.name) or []]
        if not es:
            continue
        layers = np.mean([e["theta_eff_layer"] for e in es], 0)
        lines.append(
            f"| `{row.name}` | {len(es)} | {mean([e['theta_eff'] for e in es])} | "
            f"{', '.join(f'{x:.4f}' for x in layers)} | "
            f"{np.mean([e['entropy'] for e in es]):.2f} | "
            f"{mean([e['tv_other_windows'] for e in es])} | "
            f"{mean([e['tv_other_domain'] for e in es])} | "
            f"{mean([e['theta_eff_other_domain'] for e in es])} |"
        )
    return "\n".join(lines) if len(lines) > n_lines else ""
