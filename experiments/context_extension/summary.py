"""Per-seed summaries shared by the tables, the figures and the older single-script renderer:
mean +- sd [95% t-interval] over seeds of every loss and accuracy of the records' analyses,
and how a cell prints one."""

from __future__ import annotations

from experiments import _paper_b as pb
from mope_jax.campaign import Experiment, Row


def _bases(experiment: Experiment) -> list[Row]:
    return [r for r in experiment.rows if r.init_from is None]


def _per_seed(rs: list[dict]) -> list[dict]:
    return [
        {"seed": int(r["seed"]), **{k: v for k, v in r["analysis"].items() if k != "energy"}}
        for r in rs
    ]


def summarise(per_seed: list[dict]) -> dict:
    out = {"loss": {}, "loss_beyond_L": {}, "accuracy": {}, "leaf_accuracy": {}, "retrieval": {}}
    for key in per_seed[0]["loss"]:
        out["loss"][key] = pb.t_interval([r["loss"][key]["all"] for r in per_seed])
        if per_seed[0]["loss"][key]["beyond_L"] is not None:
            out["loss_beyond_L"][key] = pb.t_interval(
                [r["loss"][key]["beyond_L"] for r in per_seed]
            )
    if "answer" in per_seed[0]:
        for key in per_seed[0]["answer"]:
            out["accuracy"][key] = pb.t_interval([r["answer"][key]["accuracy"] for r in per_seed])
            out["leaf_accuracy"][key] = pb.t_interval(
                [r["answer"][key]["leaf_accuracy"] for r in per_seed]
            )
            if all("forced_result" in r["answer"][key] for r in per_seed):
                out.setdefault("forced_result", {})[key] = pb.t_interval(
                    [r["answer"][key]["forced_result"] for r in per_seed]
                )
    if "retrieval" in per_seed[0]:
        for key in per_seed[0]["retrieval"]:
            out["retrieval"][key] = pb.t_interval([r["retrieval"][key] for r in per_seed])
    return out


def fmt(ci) -> str:
    if ci is None:
        return "-"
    if ci["n"] > 1:
        return f"{ci['mean']:.3f} +- {ci['sd']:.3f} [{ci['lo']:.3f}, {ci['hi']:.3f}]"
    return f"{ci['mean']:.3f}"
