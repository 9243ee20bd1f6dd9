"""Context extension (paper B): does PI help on language and hurt exact answers in arithmetic?

Command:  python experiments/context_extension.py --scale cpu      (smoke: ~1 min, cpu: minutes)
Writes:   experiments/results/paper_b/context_extension.{json,md}, context_extension.png
Claim (paper B): PI works when the test-time dependency structure is a dilation of the
training one (natural language); on arithmetic (fixed local offsets) it hurts exact answers,
and a lower perplexity under PI does not imply a higher answer accuracy.

Setup (our choices; the paper's are not public):
  * models: RoPE only (no position table), 2 layers, width 64, 2 heads (D = 32), no dropout,
    AdamW lr 3e-3; seeds trained together with mope_jax.sweep;
  * language: TinyShakespeare characters (first 90% train), trained at L = 64;
  * arithmetic: the clean-room iGSM generator (mope_jax.data.igsm), mod 23, op + only (the
    smallest table, 529 facts, so that a tiny model can learn some of it), 1-2 operations,
    written to a text file under runs/ and trained as characters at L = 128 (one 1-operation
    problem with its solution is ~105 characters, so L = 64 could not hold one);
  * evaluation only (no fine-tuning at the new length): s = L'/L in {1, 2, 4}; every method
    is an eval-time config override of the same checkpoint (mope_jax.encodings.rope.
    extend_context): none (plain extrapolation), pi, ntk, yarn (dynamic_ntk equals ntk for
    full windows of length s L, see METHODS);
  * loss: mean next-token loss over all positions of 16 fixed validation windows of length
    L' (and over positions >= L only, the part beyond the training length);
  * answer accuracy (arithmetic): 32 fresh 1-operation problems; each prompt is preceded by
    other complete problems so that it ends at position L' - 96, then 96 characters are
    decoded greedily; exact match of the number after '#'. Also the leaf accuracy: the share
    of the problem's stated values that the generated solution copies correctly ("Define A
    as a; so a=5."), a pure positional lookup without arithmetic.
  * frequency energy of both models on their own data, on other windows and on the other
    domain (stability across prompts and domains).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.analysis.freq_energy import energy_report, probe_tokens
from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig
from mope_jax.data import igsm, load_corpus
from mope_jax.encodings.rope import extend_context
from mope_jax.model import GPT

try:
    from experiments import _paper_b as pb
except ImportError:  # run as a script
    import _paper_b as pb

SHAKESPEARE = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare" / "input.txt"
)
# dynamic_ntk is not listed: every evaluation here runs a full window of length L' = s L, where
# dynamic NTK's s_eff = L'/L = s makes it exactly "ntk" (it differs only in token-by-token decoding
# with a growing length; tests/test_rope_scaling.py checks both formulas).
METHODS = ("none", "pi", "ntk", "yarn")
FACTORS = (1, 2, 4)
MAX_NEW = 96
EVAL_BATCH = 16  # loss windows and decoding batches share one compiled forward per (method, length)
OPS = ("+",)

SCALES = {
    "smoke": dict(seeds=(0,), steps=(20, 20), problems=16),
    "cpu": dict(seeds=(0, 1, 2), steps=(500, 800), problems=32),
}


def get_config(scale: str, task: str, path: str) -> Config:
    steps = SCALES[scale]["steps"][0 if task == "language" else 1]
    T, batch = (64, 32) if task == "language" else (128, 16)
    return Config(
        name=f"context_extension/{task}",
        model=ModelConfig(
            block_size=T,
            n_layer=2,
            n_head=2,
            n_embd=64,
            dropout=0.0,
            pos_encoding="none",
            qk_position="rope",
        ),
        data=DataConfig(source="text", path=path),
        train=TrainConfig(
            batch_size=batch,
            max_steps=steps,
            lr=3e-3,
            warmup_steps=min(50, steps // 4),
            eval_interval=max(steps // 4, 1),
            eval_batches=4,
            log_interval=max(steps // 4, 1),
            checkpoint_interval=steps,
            keep_checkpoints=1,
        ),
    )


def igsm_file(scale: str) -> Path:
    """The arithmetic training text (deterministic; regenerated, never committed)."""
    path = pb.RUNS / scale / "igsm_train.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 1_000_000 if scale == "cpu" else 60_000
    ids = igsm.igsm_stream(n, seed=2024, ops_range=(1, 2), ops=OPS)
    path.write_text(igsm.decode(ids))
    return path


# one compiled forward per (config, shape); the params are an argument
_forward = jax.jit(
    lambda cfg, params, x: GPT(cfg).apply({"params": params}, x, deterministic=True),
    static_argnums=0,
)


def eval_windows(val: np.ndarray, length: int, num: int) -> np.ndarray:
    """(num, length + 1) fixed windows of the validation stream (inputs and targets)."""
    starts = np.linspace(0, len(val) - length - 2, num).astype(np.int64)
    return np.stack([val[s : s + length + 1] for s in starts]).astype(np.int32)


def losses(model_cfg, params, val, L, num) -> dict:
    out = {}
    for s in FACTORS:
        w = jnp.asarray(eval_windows(val, s * L, num))
        for m in METHODS:
            if s == 1 and m != "none":
                out[f"{m}@1"] = out["none@1"]  # every method is the identity at s = 1 (tests)
                continue
            cfg = extend_context(model_cfg, m, float(s), original_length=L)
            logits = _forward(cfg, params, w[:, :-1])
            logp = jax.nn.log_softmax(logits, -1)
            nll = -jnp.take_along_axis(logp, w[:, 1:, None], -1)[..., 0]  # (N, L')
            out[f"{m}@{s}"] = {
                "all": float(nll.mean()),
                "beyond_L": float(nll[:, L:].mean()) if s > 1 else None,
            }
    return out


def accuracies(model_cfg, params, vocab, L, n_problems) -> dict:
    probs = igsm.problems(n_problems, seed=777, ops_range=(1, 1), ops=OPS)
    filler = igsm.encode(
        "".join(p.text for p in igsm.problems(200, seed=778, ops_range=(1, 2), ops=OPS)), vocab
    )
    out = {}
    for s in FACTORS:
        for m in METHODS:
            if s == 1 and m != "none":
                continue  # every method is the identity at s = 1 (checked by the tests)
            cfg = extend_context(model_cfg, m, float(s), original_length=L)

            def fn(x, cfg=cfg):
                return _forward(cfg, params, jnp.asarray(x))

            out[f"{m}@{s}"] = igsm.answer_accuracy(
                fn,
                probs,
                context=s * L,
                filler=filler,
                max_new=MAX_NEW,
                vocab=vocab,
                batch=EVAL_BATCH,
            )
    for m in METHODS[1:]:
        out[f"{m}@1"] = out["none@1"]
    return out


def tv(p, q) -> float:
    return float(0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum(-1).mean())


def map_text(ids_from: np.ndarray, vocab_from, vocab_to) -> np.ndarray:
    """Re-encode ids of one character vocabulary in another (unknown characters -> space)."""
    index = {c: i for i, c in enumerate(vocab_to)}
    space = index.get(" ", 0)
    return np.array([index.get(vocab_from[i], space) for i in ids_from], np.int32)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", choices=sorted(SCALES), default="cpu")
    ap.add_argument("--strategy", default="map")
    args = ap.parse_args(argv)
    from mope_jax.sweep import sweep

    sc = SCALES[args.scale]
    if not SHAKESPEARE.is_file():
        raise SystemExit(f"TinyShakespeare not found at {SHAKESPEARE}")
    t0 = time.perf_counter()
    tasks = {"language": str(SHAKESPEARE), "arithmetic": str(igsm_file(args.scale))}
    results, corpora, states = {}, {}, {}
    for task, path in tasks.items():
        cfg = get_config(args.scale, task, path)
        run_dir = pb.RUNS / args.scale / f"context_extension_{task}"
        if run_dir.exists():
            import shutil

            shutil.rmtree(run_dir)
        res = sweep(
            cfg,
            list(sc["seeds"]),
            run_dir,
            strategy=args.strategy,
            progress=False,
            log=lambda m: None,
        )
        if res.interrupted:
            raise SystemExit(f"interrupted; {run_dir} holds the saved state")
        corpus = load_corpus(res.cfg.data, res.cfg.model.block_size)
        corpora[task] = corpus
        L = res.cfg.model.block_size
        per_seed = []
        for r, seed in enumerate(sc["seeds"]):
            params = jax.tree_util.tree_map(lambda x, r=r: x[r], res.states.params)
            states[(task, seed)] = (res.cfg, params)
            rec = {
                "seed": seed,
                "final_val_loss": res.records[r]["final_val_loss"],
                "loss": losses(res.cfg.model, params, np.asarray(corpus.val), L, EVAL_BATCH),
            }
            if task == "arithmetic":
                rec["answer"] = accuracies(res.cfg.model, params, corpus.vocab, L, sc["problems"])
            per_seed.append(rec)
            print(
                task,
                seed,
                {k: round(v["all"], 3) for k, v in rec["loss"].items()},
                {k: v["accuracy"] for k, v in rec.get("answer", {}).items()},
                flush=True,
            )
        results[task] = {
            "train_length": L,
            "config": res.cfg.to_dict(),
            "seeds": per_seed,
            "summary": summarise(per_seed),
        }
    energy = energies(states, corpora, sc["seeds"][0])
    wall = time.perf_counter() - t0
    payload = pb.header("Paper B: RoPE context extension on language vs arithmetic", wall) | {
        "renderer": "experiments/context_extension.py:render",
        "scale": args.scale,
        "methods": METHODS,
        "factors": FACTORS,
        "tasks": results,
        "energy": energy,
        "notes": "evaluation-time overrides of one checkpoint per seed; "
        "no fine-tuning at the new length",
    }
    name = "context_extension" if args.scale == "cpu" else f"context_extension_{args.scale}"
    plot(payload, name)
    pb.write(name, payload, render)


def summarise(per_seed: list[dict]) -> dict:
    out = {"loss": {}, "loss_beyond_L": {}, "accuracy": {}, "leaf_accuracy": {}}
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
    return out


def energies(states, corpora, seed) -> dict:
    """Frequency-energy summaries of both models on own windows, other windows, other domain."""
    out = {}
    other = {"language": "arithmetic", "arithmetic": "language"}
    for task in ("language", "arithmetic"):
        cfg, params = states[(task, seed)]
        T = cfg.model.block_size
        val = np.asarray(corpora[task].val)
        own = energy_report(cfg.model, params, probe_tokens(val, T))
        alt = energy_report(cfg.model, params, probe_tokens(val[len(val) // 3 + 11 :], T))
        o = corpora[other[task]]
        dom_ids = map_text(np.asarray(o.val)[: 20 * T], o.vocab, corpora[task].vocab)
        dom = energy_report(cfg.model, params, probe_tokens(dom_ids, T))
        out[task] = {
            "theta_eff": own["theta_eff_mean"],
            "entropy": own["entropy_mean"],
            "theta_eff_layer": np.exp(np.asarray(own["log_theta_eff"]).mean(1)).tolist(),
            "tv_other_windows": tv(own["p"], alt["p"]),
            "tv_other_domain": tv(own["p"], dom["p"]),
            "theta_eff_other_domain": dom["theta_eff_mean"],
            "p_layer": own["p_layer"],
            "theta": own["theta"],
            "seed": seed,
        }
    return out


def plot(payload, name):
    plt = pb.plt()
    pb.RESULTS.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.3))
    for ax, (task, key, label) in zip(
        axes,
        [
            ("language", "loss", "TinyShakespeare val loss (nats/char)"),
            ("arithmetic", "loss", "arithmetic val loss (nats/char)"),
            ("arithmetic", "accuracy", "arithmetic answer accuracy"),
            ("arithmetic", "leaf_accuracy", "arithmetic leaf-copy accuracy"),
        ],
    ):
        summ = payload["tasks"][task]["summary"][key]
        for k, m in enumerate(METHODS):
            ys = [summ[f"{m}@{s}"]["mean"] for s in FACTORS]
            err = [summ[f"{m}@{s}"]["sd"] if summ[f"{m}@{s}"]["n"] > 1 else 0.0 for s in FACTORS]
            ax.errorbar(
                np.array(FACTORS) * (1 + 0.03 * (k - 1.5)),
                ys,
                yerr=err,
                marker="o",
                ms=3,
                capsize=2,
                label=m,
                color=f"C{k}",
            )
        ax.set_xscale("log", base=2), ax.set_xticks(FACTORS, [f"{s}x" for s in FACTORS])
        ax.set_xlabel("eval length / train length"), ax.set_title(label, fontsize=8)
    axes[0].legend(fontsize=7)
    fig.tight_layout(), fig.savefig(pb.RESULTS / f"{name}.png", dpi=130), plt.close(fig)


def _fmt(ci) -> str:
    if ci["n"] > 1:
        return f"{ci['mean']:.3f} +- {ci['sd']:.3f} [{ci['lo']:.3f}, {ci['hi']:.3f}]"
    return f"{ci['mean']:.3f}"


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
            row = f"| {m} | " + " | ".join(_fmt(summ["loss"][f"{m}@{s}"]) for s in FACTORS)
            row += " | " + " | ".join(_fmt(summ["loss_beyond_L"][f"{m}@{s}"]) for s in FACTORS[1:])
            if task == "arithmetic":
                row += " | " + " | ".join(_fmt(summ["accuracy"][f"{m}@{s}"]) for s in FACTORS)
                row += " | " + " | ".join(_fmt(summ["leaf_accuracy"][f"{m}@{s}"]) for s in FACTORS)
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
    lines += ["", f"Figure: `{name}.png`.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
