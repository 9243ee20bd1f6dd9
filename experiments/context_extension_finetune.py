"""Context extension WITH a short fine-tune at the new length: the renderer of the committed
single-script results.

The fine-tunes are now rows of the ``context_extension`` campaign (``language-ft-none``,
``language-ft-pi``, ``arithmetic-ft-none``, ``arithmetic-ft-pi``: ``Row.init_from`` starts each
seed from its base row's final parameters), trained and recorded like every other run:

    mope-jax campaign run context_extension --scale cpu      (every row, bases first)

and tabled in its ``Fine-tuned at the new length`` section. What remains here renders
``results/paper_b/context_extension_finetune.json``, made by the earlier single-script version
of this study (150 fine-tune steps, a private ``lax.map`` training program; the campaign rows
use the library's training loop and 200 steps at cpu scale, so their numbers are new runs, not
a re-rendering): ``mope-jax report --regenerate`` calls :func:`render`.
"""

from __future__ import annotations

from pathlib import Path

from experiments import _paper_b as pb
from experiments.context_extension.summary import fmt


def summarise(per_seed: list[dict]) -> dict:
    summ = {
        "loss": pb.t_interval([r["loss"] for r in per_seed]),
        "loss_beyond_L": pb.t_interval([r["loss_beyond_L"] for r in per_seed]),
    }
    if "answer" in per_seed[0]:
        summ["accuracy"] = pb.t_interval([r["answer"]["accuracy"] for r in per_seed])
        summ["leaf_accuracy"] = pb.t_interval([r["answer"]["leaf_accuracy"] for r in per_seed])
    return summ


def render(payload: dict, json_path) -> dict[str, str]:
    """``<name>.md`` from ``<name>.json`` alone (``mope-jax report --regenerate``)."""
    name = Path(json_path).stem
    return {f"{name}.md": pb.top(payload, json_path) + markdown(payload)}


def markdown(payload) -> str:
    lines = [
        f"Each seed's checkpoint fine-tuned {payload['finetune_steps']} steps "
        "at 2x its training length under "
        "each rule, then evaluated at 2x. Cells: mean +- sd [95% t-interval] over seeds.\n",
        "| task | rule | loss @ 2x | loss beyond L @ 2x | answer acc @ 2x | leaf acc @ 2x |",
        "|---|---|---|---|---|---|",
    ]
    for task, t in payload["tasks"].items():
        for rule, r in t["rules"].items():
            s = summarise(r["seeds"])  # from the per-seed values
            acc = fmt(s["accuracy"]) if "accuracy" in s else "-"
            leaf = fmt(s["leaf_accuracy"]) if "leaf_accuracy" in s else "-"
            lines.append(
                f"| {task} (L = {t['train_length']}) | {rule} | {fmt(s['loss'])} | "
                f"{fmt(s['loss_beyond_L'])} | {acc} | {leaf} |"
            )
    lines.append("")
    return "\n".join(lines)
