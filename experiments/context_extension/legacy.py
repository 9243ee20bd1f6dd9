"""The renderer of the older single-script run of this study: ``results/paper_b/
context_extension.json`` (eval-time extension of the language and arithmetic models, made by
the single-script version of this experiment) names ``experiments/context_extension.py:render``,
which the library imports as this package's ``render`` (re-exported by ``__init__``);
``mope-jax report --regenerate`` calls it."""

from __future__ import annotations

from pathlib import Path

from experiments import _paper_b as pb
from experiments.context_extension.settings import FACTORS, METHODS
from experiments.context_extension.summary import fmt, summarise


def render(payload: dict, json_path: Path) -> dict[str, str]:
    """``<name>.md`` from ``<name>.json`` alone (``mope-jax report --regenerate``)."""
    name = Path(json_path).stem
    return {f"{name}.md": pb.top(payload, json_path) + markdown(payload, name)}


def markdown(payload, name) -> str:
    lines = [
        "Evaluation-time context extension of tiny RoPE models "
        "(2 layers, width 64, 2 heads, D = 32); "
        "no fine-tuning at the longer length. Cells: mean +- sd [95% t-interval] over seeds.\n"
    ]
    for task in ("language", "arithmetic"):
        t = payload["tasks"][task]
        L = t["train_length"]
        steps = t["config"]["train"]["max_steps"]
        lines.append(f"## {task} (trained at L = {L}, {steps} steps, {len(t['seeds'])} seeds)\n")
        hdr = "| method | " + " | ".join(f"loss @ {s}x ({s * L})" for s in FACTORS)
        hdr += " | " + " | ".join(f"loss beyond L @ {s}x" for s in FACTORS[1:])
        if task == "arithmetic":
            hdr += " | " + " | ".join(f"answer acc @ {s}x" for s in FACTORS)
            hdr += " | " + " | ".join(f"leaf acc @ {s}x" for s in FACTORS)
        lines += [hdr + " |", "|" + "---|" * (hdr.count("|"))]
        summ = summarise(t["seeds"])  # from the per-seed values
        for m in METHODS:
            row = f"| {m} | " + " | ".join(fmt(summ["loss"][f"{m}@{s}"]) for s in FACTORS)
            row += " | " + " | ".join(fmt(summ["loss_beyond_L"][f"{m}@{s}"]) for s in FACTORS[1:])
            if task == "arithmetic":
                row += " | " + " | ".join(fmt(summ["accuracy"][f"{m}@{s}"]) for s in FACTORS)
                row += " | " + " | ".join(fmt(summ["leaf_accuracy"][f"{m}@{s}"]) for s in FACTORS)
            lines.append(row + " |")
        lines.append("")
    e = payload["energy"]
    lines += [
        "## frequency energy (seed 0)\n",
        "| model | theta_eff (rad/token) | per layer | entropy (nats; uniform = ln 16 = 2.77) | "
        "TV other windows | TV other domain | theta_eff on other domain |",
        "|---|---|---|---|---|---|---|",
    ]
    for task, r in e.items():
        lines.append(
            f"| {task} | {r['theta_eff']:.4f} | "
            f"{', '.join(f'{x:.4f}' for x in r['theta_eff_layer'])} | "
            f"{r['entropy']:.2f} | {r['tv_other_windows']:.3f} | {r['tv_other_domain']:.3f} | "
            f"{r['theta_eff_other_domain']:.4f} |"
        )
    lines += [
        "",
        "Figure: the campaign's, drawn from its records at each scale by `mope-jax report "
        "--regenerate` (`../context_extension/<scale>/extension.png`); this script's "
        f"cpu-scale `{name}.png` is no longer kept.",
        "",
    ]
    return "\n".join(lines)
