"""Context extension WITH a short fine-tune at the new length (PI's own protocol, Chen et al. 2023).

Command:  python experiments/context_extension_finetune.py --scale cpu
          (needs the trained runs of `python experiments/context_extension.py --scale cpu`)
Writes:   experiments/results/paper_b/context_extension_finetune.{json,md}
Question: experiments/context_extension.py evaluates every rule without any training at the
new length. PI was proposed with a fine-tune at the new length; does PI then beat plain
extrapolation on language, and does it still lose answers on arithmetic (paper B's claim)?

Setup (our choices): for each task and each seed's checkpoint, and for each rule in
{none, pi} at s = 2: fine-tune ``steps`` AdamW steps (lr 1e-3, 10 warmup steps, cosine to 0,
fresh optimiser state) on windows of 2L tokens with half the batch (same tokens per step),
then evaluate the loss on 16 fixed validation windows of 2L and, for arithmetic, the greedy
answer and leaf-copy accuracy at context 2L (as in context_extension.py). Seeds run as one
program (lax.map over the stacked parameters).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.data import igsm, load_corpus
from mope_jax.encodings.rope import extend_context
from mope_jax.train import make_optimizer, make_train

try:
    from experiments import _paper_b as pb
    from experiments import context_extension as ce
except ImportError:  # run as a script
    import _paper_b as pb
    import context_extension as ce

RULES = ("none", "pi")
FACTOR = 2
SCALES = {"smoke": dict(steps=10), "cpu": dict(steps=150)}


def load_runs(scale: str, task: str):
    """The campaign's checkpoints of row ``task`` (all seeds trained in one group)."""
    seeds = ce.SCALES[scale]["seeds"]
    run_dir = (pb.RUNS.parent / "campaigns" / "context_extension" / scale / task) / (
        "seeds-" + "-".join(str(s) for s in seeds)
    )
    if not all((run_dir / f"seed{s}" / "final.json").exists() for s in seeds):
        raise SystemExit(
            f"{run_dir} has no finished runs; first run: mope-jax campaign run "
            f"context_extension --scale {scale} (all seeds of a row in one go)"
        )
    cfg, states = pb.load_sweep_seeds(run_dir, list(seeds))
    return cfg, states.params, seeds  # params stacked (R, ...)


def finetune(cfg, params_r, rule: str, steps: int, train_data):
    """Fine-tune stacked params (R, ...) at length FACTOR L under ``rule``.

    Returns (cfg', params').
    """
    L = cfg.model.block_size
    model = extend_context(cfg.model, rule, float(FACTOR), original_length=L)
    t = dataclasses.replace(
        cfg.train,
        max_steps=steps,
        warmup_steps=10,
        lr=1e-3,
        batch_size=max(1, cfg.train.batch_size // FACTOR),
    )
    ft = dataclasses.replace(cfg, model=model, train=t)
    trainer = make_train(ft)

    def one(args):
        params, seed = args
        state = trainer.init(jax.random.PRNGKey(seed + 1000))
        state = state.replace(params=params, opt_state=make_optimizer(ft, params).init(params))
        state, m = trainer.train_steps(state, train_data, steps)
        return state.params, m["loss"]

    seeds = jnp.arange(jax.tree_util.tree_leaves(params_r)[0].shape[0])
    new, loss = jax.jit(lambda p, s: jax.lax.map(one, (p, s)))(params_r, seeds)
    return ft, new, np.asarray(loss)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    args = ap.parse_args(argv)
    steps = SCALES[args.scale]["steps"]
    t0 = time.perf_counter()
    out = {}
    for task in ("language", "arithmetic"):
        cfg, params_r, seeds = load_runs(args.scale, task)
        corpus = load_corpus(cfg.data, cfg.model.block_size)
        L = cfg.model.block_size
        train_data = jnp.asarray(corpus.train)
        val = np.asarray(corpus.val)
        w = jnp.asarray(ce.eval_windows(val, FACTOR * L, ce.EVAL_BATCH))
        res = {}
        for rule in RULES:
            ft, new, ft_loss = finetune(cfg, params_r, rule, steps, train_data)
            per_seed = []
            for r, seed in enumerate(seeds):
                p = jax.tree_util.tree_map(lambda x, r=r: x[r], new)
                logits = ce._forward(ft.model, p, w[:, :-1])
                nll = -jnp.take_along_axis(jax.nn.log_softmax(logits, -1), w[:, 1:, None], -1)[
                    ..., 0
                ]
                rec = {
                    "seed": seed,
                    "loss": float(nll.mean()),
                    "loss_beyond_L": float(nll[:, L:].mean()),
                    "finetune_loss_first_last": [float(ft_loss[r, 0]), float(ft_loss[r, -1])],
                }
                if task == "arithmetic":
                    probs = igsm.problems(
                        ce.SCALES[args.scale]["problems"], seed=777, ops_range=(1, 1), ops=ce.OPS
                    )
                    filler = igsm.encode(
                        "".join(
                            q.text
                            for q in igsm.problems(200, seed=778, ops_range=(1, 2), ops=ce.OPS)
                        ),
                        corpus.vocab,
                    )
                    fn = lambda x, m=ft.model, p=p: ce._forward(m, p, jnp.asarray(x))  # noqa: E731
                    rec["answer"] = igsm.answer_accuracy(
                        fn,
                        probs,
                        context=FACTOR * L,
                        filler=filler,
                        max_new=ce.MAX_NEW,
                        vocab=corpus.vocab,
                        batch=ce.EVAL_BATCH,
                    )
                per_seed.append(rec)
                print(task, rule, rec["loss"], rec.get("answer"), flush=True)
            res[rule] = {"seeds": per_seed, "summary": summarise(per_seed)}
        out[task] = {"train_length": L, "eval_length": FACTOR * L, "rules": res}
    wall = time.perf_counter() - t0
    payload = pb.header(
        "Paper B: context extension with a short fine-tune at 2x length (none vs PI)", wall
    ) | {
        "renderer": "experiments/context_extension_finetune.py:render",
        "scale": args.scale,
        "finetune_steps": steps,
        "factor": FACTOR,
        "tasks": out,
    }
    name = (
        "context_extension_finetune"
        if args.scale == "cpu"
        else f"context_extension_finetune_{args.scale}"
    )
    pb.write(name, payload, render)


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
            acc = ce._fmt(s["accuracy"]) if "accuracy" in s else "-"
            leaf = ce._fmt(s["leaf_accuracy"]) if "leaf_accuracy" in s else "-"
            lines.append(
                f"| {task} (L = {t['train_length']}) | {rule} | {ce._fmt(s['loss'])} | "
                f"{ce._fmt(s['loss_beyond_L'])} | {acc} | {leaf} |"
            )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
