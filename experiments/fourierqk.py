"""Paper C (FourierQK): spectral Q/K filters, causal and not, with every row audited.

Command:  nice -n 5 python experiments/fourierqk.py --scale cpu --data /work/shared/data/tinyshakespeare/input.txt
          (smoke: ~30 s per row under load, used by tests/test_fourierqk_experiment.py; cpu: 17.6 min
          measured on a 2-core CPU shared with other jobs, 17 rows x 3 seeds, ~20-150 s per row;
          use --seeds 2 to save a third; reference: paper C's recipe, for a GPU/TPU)
Writes:   experiments/results/fourierqk/fourierqk_<scale>[_<tag>].{json,md}   (--out, --tag to change)
Extra rows (not in the default table): --rows learned,mexhat-window-qk,xcorr-qk --tag extra
          (``mexhat-window-qk`` was called ``mexhat-qk`` when fourierqk_cpu_extra.json was recorded)
Claim (paper C, reference scale): val loss baseline 1.474, Random-QK 1.031, Fourier-QK 0.608,
MultiFourier-QK 0.309 (0.236 +- 0.019 over seeds); causal time-domain kernels do not beat the
baseline; learned MultiFourier periods ~49/27/10/6 tokens.
Expected here: the bilateral rows (and FNet, and the unpadded circular kernel) are NON-CAUSAL,
measured so by the audit, and any gain they show is a leak; the causal kernels must be judged
on their paired difference to the baseline.

Rows: baseline (learned PE), Random-QK, Fourier-QK, MultiFourier-QK (bilateral FFT, NON-CAUSAL,
trained with train.allow_noncausal=true), the causal Gaussian / Mexican-hat / complex Morlet
kernels (learned scale per head; computed with ``conv_impl`` = toeplitz here, which equals the
zero-padded FFT to float tolerance, see tests/test_spectral.py), the same Gaussian kernel by an
UNPADDED FFT (circular: the declared-non-causal foil) and FNet (NON-CAUSAL).

Protocol: TinyShakespeare char level (first 90% train / last 10% val). Each row is paper C's
recipe (untied head, 2-D-only weight decay, no decay on log_center/log_scale; warmup scaled
down) at the scale's model size; seeds 0..R-1 are trained as one vmapped program per row and
seed s draws the same batches in every row, so differences to the baseline are paired. Each
(row, seed) equals ``mope-jax train --preset <scale> --variant <v> train.seed=s`` with this
script's overrides. Reported per row: val loss at the last step (``eval_batches`` random
windows) mean +- std, 95% t-interval, paired difference to the baseline with its 95%
t-interval, best val over evals (paper C reports best-over-evals); on seed 0: the shuffled
validation gap (one global permutation of the val characters, ``num_windows`` fixed windows),
the causality audit of the trained parameters (``audit_model``), the learned periods T / f
(tokens) or kernel scales a (tokens), EMD periods of the layer-0 filtered queries. For the
bilateral rows also the eval-time phase surrogates (pct_phase = 100 (L_surrogate - L_filter) /
(L_baseline - L_filter)) and the metric-distortion controls (random rotation / projection in
place of the DFT, same trained windows).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from mope_jax.analysis import diagnostics as dg
from mope_jax.analysis.causality import audit_model
from mope_jax.analysis.stats import summarize
from mope_jax.attention import registry, spectral
from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig
from mope_jax.presets import apply_variant, model_variants
from mope_jax.train import environment, make_train, prepare

RESULTS = Path(__file__).resolve().parent / "results" / "fourierqk"
CORPUS = "/work/shared/data/tinyshakespeare/input.txt"

ROWS = [  # (variant, label, paper's val loss or None)
    ("learned", "baseline (learned PE)", 1.474),
    ("random-qk", "Random-QK", 1.031),
    ("fourier-qk", "Fourier-QK", 0.608),
    ("multifourier-qk", "MultiFourier-QK", 0.309),
    ("causal-gauss", "causal Gaussian kernel", None),
    ("causal-mexhat", "causal Mexican-hat kernel", None),
    ("causal-morlet", "causal complex Morlet kernel", None),
    ("circular-gauss", "Gaussian kernel, unpadded FFT (circular)", None),
    ("fnet", "FNet (Re FFT2 mixing)", None),
    # not in the default table (CPU budget); run with --rows ... --tag extra
    ("mexhat-window-qk", "Mexican-hat spectral window (one, learned centre; ours)", None),
    ("xcorr-qk", "irfft Morlet cross-correlation (paper's negative result)", 0.018),
    # DESIGN.md section 5 (issue 12): the authors' definitions
    ("fixed-bin-dc", "fixed bin 0 (DC, null test)", None),
    ("fixed-bin-1", "fixed bin 1", None),
    ("fixed-bin-4", "fixed bin 4", None),
    ("fixed-bin-16", "fixed bin 16", None),
    ("fixed-bin-64", "fixed bin 64", None),
    ("fixed-bin-nyquist", "fixed bin T/2 (Nyquist, null test)", None),
    ("fixed-bin-learned", "learned centre (init bin 4)", None),
    ("mexhat-k4-qk", "MexHat-K4 (4 admissible spectra/head)", None),
    *[(f"causal-morlet-a{a}", f"causal Morlet, fixed a={a}", None) for a in (2, 4, 8, 16, 32)],
    ("causal-morlet-l1", "causal complex Morlet kernel, our L1 norm", None),
    ("causal-freq-qk", "causal learned-frequency kernel", None),
    ("seedc-collapse-qk", "seed C's per-position weight (our reading)", None),
]
# the committed cpu table: the nine original rows (paper-C rows now with the authors' L2 windows,
# causal-morlet the authors' 128-tap unit-energy kernel) + the fixed-bin ladder, its learned
# centre and MexHat-K4 (issue 12)
DEFAULT_ROWS = [r[0] for r in ROWS[:9]] + [r[0] for r in ROWS[11:19]]
SURROGATE_ROWS = (
    "fourier-qk",
    "multifourier-qk",
    "fixed-bin-learned",
    "mexhat-k4-qk",
)  # learned bilateral: surrogates + controls

# Paper C's recipe on top of every scale: untied LM head, weight decay on 2-D weights only.
RECIPE_C = dict(model=dict(tie_embeddings=False), train=dict(decay_group="2d"))

# "cpu" matches paper A's cpu scale (experiments/paper_a.py) so the baselines are comparable:
# T=64, 2 layers x 4 heads, E=64, 300 steps of 16 windows (~0.3 epoch), no dropout. It is
# tiny because 9 rows x 3 seeds must fit ~12 minutes of a 2-core CPU shared with other jobs.
SCALES = {
    "smoke": dict(
        model=dict(block_size=32, n_layer=1, n_head=2, n_embd=32, dropout=0.0, kernel_len=16),
        train=dict(
            batch_size=8, max_steps=20, lr=2e-3, warmup_steps=5, eval_batches=2, eval_interval=10
        ),
        seeds=1,
        num_windows=8,
    ),
    "cpu": dict(
        model=dict(
            block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0, conv_impl="toeplitz"
        ),
        train=dict(
            batch_size=16,
            max_steps=300,
            lr=2e-3,
            warmup_steps=20,
            eval_batches=20,
            eval_interval=100,
        ),
        seeds=3,
        num_windows=128,
    ),
    # ModelConfig()/TrainConfig() + paper C's recipe = the reference-c preset
    "reference": dict(
        model={}, train=dict(warmup_steps=200, eval_batches=200), seeds=3, num_windows=512
    ),
}


def _ladder_note(variant: str, t: int) -> str:
    """' (bin b at T=t)' for the fixed-bin ladder rows, whose labels name the rung at T = 256."""
    model = apply_variant(Config(), variant).model if variant in model_variants() else None
    if (
        model is None
        or model.qk_filter not in ("fixed-bin", "fixed-bin-learned")
        or t == spectral.LADDER_T
    ):
        return ""
    return f" (bin {spectral.ladder_bin(model.filter_fixed_bin, t):g} at T={t})"


def get_config(arg: str = "cpu") -> dict:
    """The experiment at scale ``arg``: base Config, seeds, rows, eval windows."""
    s = SCALES[arg]
    model = ModelConfig(**(RECIPE_C["model"] | s["model"]))
    train = TrainConfig(**(RECIPE_C["train"] | s["train"]))
    train = dataclasses.replace(
        train, checkpoint_interval=train.max_steps, log_interval=train.max_steps
    )
    data = DataConfig(source="text", path=CORPUS)
    return {
        "base": Config(model=model, data=data, train=train, name=f"fourierqk-{arg}"),
        "seeds": s["seeds"],
        "rows": list(DEFAULT_ROWS),
        "num_windows": s["num_windows"],
        "scale": arg,
    }


def row_config(base: Config, variant: str) -> Config:
    cfg = apply_variant(base, variant)
    if not registry.declared_causal(cfg.model):  # labelled NON-CAUSAL everywhere below
        cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, allow_noncausal=True))
    return cfg


def train_row(cfg: Config, seeds: int):
    """All seeds of one row as one vmapped program -> (cfg with vocab, corpus, params (R,...),
    eval_val (R, n_evals), seconds)."""
    cfg, corpus = prepare(cfg)
    trainer = make_train(cfg)
    keys = jnp.stack([jax.random.PRNGKey(cfg.train.seed + r) for r in range(seeds)])  # (R,2)
    t0 = time.perf_counter()
    state, hist = jax.jit(jax.vmap(trainer.train, in_axes=(0, None, None)))(
        keys, jnp.asarray(corpus.train), jnp.asarray(corpus.val)
    )
    ev = np.asarray(hist["eval_val"], np.float64)  # (R, n_evals)
    return cfg, corpus, state.params, ev, time.perf_counter() - t0


def _seed(params, r: int):
    return jax.tree_util.tree_map(lambda x: x[r], params)


def diagnose(cfg: Config, params, corpus, num_windows: int, variant: str) -> dict:
    """Seed-0 diagnostics: shuffled gap, audit, learned periods/scales, EMD, surrogates."""
    m = cfg.model
    val = np.asarray(corpus.val)
    out = {"shuffled": dg.shuffled_gap(m, params, val, num_windows=num_windows)}
    audit = audit_model(m, params)
    out["audit"] = audit.to_dict()
    out["periods"] = dg.summarize_periods(dg.learned_periods(m, params))
    out["scales"] = dg.summarize_periods(dg.learned_scales(params))
    if m.mixer == "attention":
        try:
            x, _ = dg.eval_windows(val, m.block_size, 1)
            out["emd_query_periods_layer0"] = [
                [round(p, 2) for p in ps[:6]]
                for ps in dg.query_emd_periods(m, params, jnp.asarray(x))
            ]
        except ImportError as e:  # EMD-signal not installed
            out["emd_query_periods_layer0"] = str(e)
    if variant in SURROGATE_ROWS:
        out["phase"] = dg.phase_surrogate_losses(m, params, val, num_windows=num_windows)
        out["metric"] = dg.metric_distortion_losses(
            m, params, val, num_windows=num_windows, transforms=("rotation", "projection")
        )
    return out


def _fmt_ci(s) -> str:
    return "-" if s.n < 2 else f"[{s.ci_low:.3f}, {s.ci_high:.3f}]"


def _periods_text(d: dict) -> str:
    if d.get("periods"):
        arr = np.asarray(list(d["periods"].values()), np.float64)  # (L,K,H) or (L,H)
        arr = arr.reshape(arr.shape[0], -1, arr.shape[-1])  # (L,K,H)
        med = np.median(arr, axis=(0, 2))  # (K,)
        return "T/f median: " + "/".join(f"{p:.1f}" for p in sorted(med, reverse=True))
    if d.get("scales"):
        arr = np.asarray(list(d["scales"].values()), np.float64)
        return f"a: {arr.min():.1f}-{arr.max():.1f} (median {np.median(arr):.1f})"
    return "-"


def write_results(result: dict, out_dir: Path, scale: str, tag: str = "") -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"fourierqk_{scale}" + (f"_{tag}" if tag else "")
    jpath, mpath = out_dir / f"{stem}.json", out_dir / f"{stem}.md"
    result = {"renderer": "experiments/fourierqk.py:render", **result}
    jpath.write_text(json.dumps(result, indent=2) + "\n")
    mpath.write_text(render(json.loads(jpath.read_text()), jpath)[mpath.name])
    return jpath, mpath


def render(result: dict, jpath: Path) -> dict[str, str]:
    """``fourierqk_<scale>[_<tag>].md`` from its JSON alone (``mope-jax report --regenerate``)."""
    from mope_jax.analysis.report import rendered_note

    jpath = Path(jpath)
    scale = result["scale"]
    rows = result["rows"]
    base = rows.get("learned")
    env = result["env"]
    L = [
        f"# FourierQK (paper C) at scale `{scale}`",
        "",
        f"Command: `{result['command']}`  ",
        f"Date: {result['date']}; wall time {result['wall_s'] / 60:.1f} min  ",
        f"Machine: {env['platform']}, {env['cpu_count']} CPUs, {env['backend']} ({env['device']}); "
        f"jax {env['jax']}, flax {env['flax']}; commit {env['git_commit']}  ",
        f"Model: T={result['config']['model']['block_size']}, E={result['config']['model']['n_embd']}, "
        f"{result['config']['model']['n_layer']} layers x {result['config']['model']['n_head']} heads; "
        f"{result['config']['train']['max_steps']} steps x {result['config']['train']['batch_size']} windows; "
        f"seeds {result['seeds']}; TinyShakespeare char level. Raw numbers: `{jpath.name}`.",
        "",
        rendered_note(result, jpath),
        "",
        "Val loss in nats/char at the last step (mean +- std over seeds, 95% t-interval); Delta = paired "
        "difference to the baseline (same seeds, same batches). Gap = loss(shuffled val) - loss(val), seed 0. "
        "Audit = measured on the seed-0 trained parameters (relative leak max_{s>t}|d out_t/d in_s| / "
        "max_{s<=t}|...|). NON-CAUSAL rows are not causal-LM losses.",
        "",
        "| row | val loss | 95% CI | Delta vs baseline [95% CI] | best val | paper | shuffled gap | audit "
        "(leak rel) | learned |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    t_model = result["config"]["model"]["block_size"]
    for v, r in rows.items():
        s = summarize(r["final_val"])
        label = (
            r["label"]
            + _ladder_note(v, t_model)
            + ("" if r["declared_causal"] else " — NON-CAUSAL")
        )
        if base is not None and v != "learned":
            d = summarize(np.asarray(r["final_val"]) - np.asarray(base["final_val"]))
            delta = f"{d.mean:+.3f} {_fmt_ci(d)}"
        else:
            delta = "-"
        aud = r["diag"]["audit"]
        verdict = "causal" if aud["causal"] else "LEAKS"
        paper = "-" if r["paper"] is None else f"{r['paper']:.3f}"
        L.append(
            f"| {label} | {s.mean:.3f} +- {s.std:.3f} | {_fmt_ci(s)} | {delta} | "
            f"{np.mean(r['best_val']):.3f} | {paper} | {r['diag']['shuffled']['gap']:.3f} | "
            f"{verdict} ({aud['leak_rel']:.1e}) | {_periods_text(r['diag'])} |"
        )
    bil = [v for v in rows if "phase" in rows[v]["diag"]]
    if bil and base is not None:
        lb = base["diag"]["shuffled"]["val"]
        legacy = (
            "shared" in rows[bil[0]]["diag"]["phase"]
        )  # results recorded before the authors' surrogates
        modes = (
            ["shared", "independent", "amplitude", "shift"]
            if legacy
            else [m for m in dg.SURROGATE_LABELS if m in rows[bil[0]]["diag"]["phase"]]
        )
        heads = (
            ["shared phases", "independent", "amplitude only", "pi/4 shift"]
            if legacy
            else [dg.SURROGATE_LABELS[m] for m in modes]
        )
        L += [
            "",
            "Eval-time phase surrogates and metric-distortion controls (seed 0, the same "
            f"{result['num_windows']} val windows; baseline {lb:.3f}). pct_phase = 100 (L_surrogate - L_filter) "
            "/ (L_baseline - L_filter); '-' when the filter has no gain over the baseline."
            + (
                ""
                if legacy
                else " The authors' surrogates replace the phase (or rotate both q and k); ours "
                "('add-') add a phase, which keeps the q-k cross-spectrum when shared."
            ),
            "",
            "| row | filter | " + " | ".join(heads) + " | rotation R | projection P |",
            "|---|---|" + "---|" * len(heads) + "---|---|",
        ]
        for v in bil:
            ph, me = rows[v]["diag"]["phase"], rows[v]["diag"]["metric"]

            def cell(x, lf=ph["none"]):
                p = dg.pct_phase(x, lf, lb)
                return f"{x:.3f}" + ("" if np.isnan(p) else f" ({p:.0f}%)")

            L.append(
                f"| {rows[v]['label']} — NON-CAUSAL | {ph['none']:.3f} | "
                + " | ".join(cell(ph[m]) for m in modes)
                + f" | {cell(me['rotation'])} | "
                f"{cell(me['projection'])} |"
            )
    L += ["", "## Answer computed from the table", ""]
    if base is not None:
        for v in ("causal-gauss", "causal-mexhat", "causal-morlet"):
            if v not in rows:
                continue
            d = summarize(np.asarray(rows[v]["final_val"]) - np.asarray(base["final_val"]))
            if d.n < 2:
                word = "single seed, no interval"
            elif d.ci_high < 0:
                word = "better than the baseline (interval below 0)"
            elif d.ci_low > 0:
                word = "worse than the baseline (interval above 0)"
            else:
                word = "no significant difference (interval contains 0)"
            L.append(
                f"- {rows[v]['label']} (causal, audit: "
                f"{'causal' if rows[v]['diag']['audit']['causal'] else 'LEAKS'}): Delta = {d.mean:+.3f} "
                f"{_fmt_ci(d)} nats/char: {word}."
            )
        for v in rows:
            if not rows[v]["declared_causal"]:
                d = summarize(np.asarray(rows[v]["final_val"]) - np.asarray(base["final_val"]))
                L.append(
                    f"- {rows[v]['label']} (NON-CAUSAL, audit: "
                    f"{'causal' if rows[v]['diag']['audit']['causal'] else 'LEAKS'}): Delta = {d.mean:+.3f} "
                    f"{_fmt_ci(d)}; shuffled gap {rows[v]['diag']['shuffled']['gap']:.3f} vs baseline "
                    f"{base['diag']['shuffled']['gap']:.3f}."
                )
    return {jpath.with_suffix(".md").name: "\n".join(L) + "\n"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", default="cpu", choices=sorted(SCALES))
    p.add_argument("--data", default=CORPUS, help="TinyShakespeare input.txt")
    p.add_argument("--seeds", type=int, default=None, help="override the scale's number of seeds")
    p.add_argument("--rows", default=None, help="comma-separated subset of variants (default: all)")
    p.add_argument("--out", default=str(RESULTS), help="output folder")
    p.add_argument(
        "--tag", default="", help="suffix of the output files (fourierqk_<scale>_<tag>.*)"
    )
    args = p.parse_args(argv)

    exp = get_config(args.scale)
    base = exp["base"]
    base = dataclasses.replace(
        base, data=dataclasses.replace(base.data, path=str(Path(args.data).resolve()))
    )
    seeds = args.seeds or exp["seeds"]
    names = args.rows.split(",") if args.rows else exp["rows"]
    labels = {v: (lab, paper) for v, lab, paper in ROWS}
    t_start = time.perf_counter()
    result = {
        "command": "python experiments/fourierqk.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "env": environment(),
        "scale": args.scale,
        "seeds": seeds,
        "num_windows": exp["num_windows"],
        "config": base.to_dict(),
        "rows": {},
    }
    for v in names:
        cfg = row_config(base, v)
        cfg, corpus, params, ev, secs = train_row(cfg, seeds)
        p0 = _seed(params, 0)
        diag = diagnose(cfg, p0, corpus, exp["num_windows"], v)
        lab, paper = labels.get(v, (v, None))
        result["rows"][v] = {
            "label": lab,
            "paper": paper,
            "declared_causal": registry.declared_causal(cfg.model),
            "noncausal_parts": registry.noncausal_parts(cfg.model),
            "final_val": ev[:, -1].tolist(),
            "best_val": ev.min(1).tolist(),
            "eval_curve": ev.tolist(),
            "train_seconds": secs,
            "diag": diag,
            "model_overrides": {
                k: val
                for k, val in dataclasses.asdict(cfg.model).items()
                if val != getattr(base.model, k) and k != "vocab_size"
            },
        }
        print(
            f"{v:<16} val {ev[:, -1].mean():.4f} (best {ev.min(1).mean():.4f})  gap "
            f"{diag['shuffled']['gap']:.3f}  audit {'causal' if diag['audit']['causal'] else 'LEAKS'} "
            f"({diag['audit']['leak_rel']:.1e})  {secs:.0f}s",
            flush=True,
        )
    result["wall_s"] = time.perf_counter() - t_start
    jpath, mpath = write_results(result, Path(args.out), args.scale, args.tag)
    print(f"wrote {jpath} and {mpath}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
