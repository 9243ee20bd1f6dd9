"""The campaign table's section "Frequency matching" (:func:`law_section`): per task the
per-W table of copy accuracy, theta_eff, c = theta_eff W with its 95% interval, entropy and
stability, and the fit lines. The table and fit lines (:func:`_body`) are shared with the
single-script results' renderer (:mod:`experiments.freq_matching.legacy`)."""

from __future__ import annotations

import math

import numpy as np

from mope_jax.campaign import Experiment, Scale

from .fits import LEARNED, fit_law, fit_with_distance, runs_of
from .measure import COPY_HEAD_SHARE

# the definition of W per task, the first sentence of the section
W_DEF = {
    "copy": "W = B - 2, the copy distance of [0, a_1..a_{B-2}, a_1]; "
    "W_measured = first r with excess-match K(r) >= max/2",
    "repeat": "W = the copy distance of [0, a_1..a_W, a_1..a_W] (blocks of 2W + 1); "
    "W_measured as for copy",
}

# the model sentence of the single-script results (``_body``'s default)
LEGACY_MODEL = (
    "Model: 2 layers, width 64, 2 heads (D = 32, 16 RoPE frequencies, base 1e4), "
    "{steps} steps of 16 x 128 tokens, lr 3e-3; tiny and short to fit a shared 2-core CPU. "
)


def model_line(cfg: dict, steps) -> str:
    """The model sentence of the section, from a record's config."""
    m, t = cfg["model"], cfg["train"]
    return (
        f"Model: {m['n_layer']} layers, width {m['n_embd']}, {m['n_head']} heads "
        f"(D = {m['n_embd'] // m['n_head']}, {m['n_embd'] // m['n_head'] // 2} RoPE frequencies, "
        f"base {m['rope_base']:g}), {steps} steps of {t['batch_size']} x {m['block_size']} "
        f"tokens, lr {t['lr']:g}. "
    )


def law_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Per task: the per-W table, the fits of c = theta_eff W (95% interval over runs) and of
    the free slope, from the records' ``analysis`` alone."""
    recs = [r for r in records if r.get("analysis")]
    if not recs:
        return ""
    lines = ["## Frequency matching", ""]
    for task, runs in runs_of(recs).items():
        steps = sorted(
            {r["config"]["train"]["max_steps"] for r in recs if r["analysis"]["task"] == task}
        )
        lines += [
            f"### {task} task",
            "",
            *_body(
                runs,
                task,
                W_DEF[task],
                "/".join(map(str, steps)),
                model=model_line(
                    next(r for r in recs if r["analysis"]["task"] == task)["config"],
                    "/".join(map(str, steps)),
                ),
            ),
        ]
    return "\n".join(lines)


def _body(
    runs: list[dict], task: str, w_definition: str, steps, model: str | None = None
) -> list[str]:
    """The per-W table and the fits (markdown lines), shared by the campaign section and the
    single-script renderer (``model``: the model sentence; default: the single script's)."""
    fit = fit_law(runs)
    learned = [r for r in runs if r["copy_accuracy"] >= LEARNED]
    fit_learned = fit_law(learned) if len(learned) >= 2 else None
    lines = [
        f"Task: **{task}**. {w_definition}.\n",
        (model or LEGACY_MODEL.format(steps=steps))
        + "theta_eff = exp(sum_i p_i log theta_i), p from 8 fixed validation windows, "
        + (
            "averaged (in log) over every layer and head. "
            if model
            else "averaged (in log) over both layers and both heads. "
        )
        + "'copy acc' = greedy accuracy on the copy targets; a run whose copy "
        "accuracy is below 0.9 has not learned the dependency the law is about.\n",
        "| B | W | W measured | seeds | val loss (optimum) | copy acc per seed | "
        "theta_eff per seed | c = theta_eff W, mean (95% CI) | entropy (init; uniform = 2.77) | "
        "TV other windows / random tokens / vs init |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in sorted({r["W"] for r in runs}):
        rs = [r for r in runs if r["W"] == w]
        ci = fit["log_theta_eff"]["log_c_per_W"][str(w)]
        c_ci = (
            f"{math.exp(ci['mean']):.3f} ({math.exp(ci['lo']):.3f}, {math.exp(ci['hi']):.3f})"
            if ci["n"] > 1
            else f"{math.exp(ci['mean']):.3f}"
        )
        accs = ", ".join(f"{r['copy_accuracy']:.2f}" for r in rs)
        thetas = ", ".join(f"{r['theta_eff']:.3f}" for r in rs)
        lines.append(
            f"| {rs[0]['block_len']} | {w} | {rs[0]['W_measured']} | {len(rs)} | "
            f"{np.mean([r['final_val_loss'] for r in rs]):.3f} ({rs[0]['optimal_loss']:.3f}) | "
            f"{accs} | {thetas} | "
            f"{c_ci} | {np.mean([r['entropy_mean'] for r in rs]):.2f} "
            f"({rs[0]['entropy_init']:.2f}) | "
            f"{np.mean([r['stability_tv']['other_windows'] for r in rs]):.3f} / "
            f"{np.mean([r['stability_tv']['random_tokens'] for r in rs]):.3f} / "
            f"{np.mean([r['stability_tv']['vs_init'] for r in rs]):.3f} |"
        )
    lines.append("")
    fits = [
        ("all runs, all heads (primary)", fit, "log_theta_eff"),
        ("all runs, lowest-entropy head", fit, "log_theta_eff_sharpest_head"),
    ]
    if fit_learned:
        fits.append(("runs that learned the copy only, all heads", fit_learned, "log_theta_eff"))
    for label, fd, key in fits:
        f = fd[key]
        ci = f"({f['c_lo']:.3f}, {f['c_hi']:.3f})" if f.get("c_lo") is not None else "(n/a)"
        slope = (
            f" Free fit: slope of log theta_eff on log(1/W) = {f['slope']:.3f} "
            f"(95% CI {f['slope_lo']:.3f}, {f['slope_hi']:.3f}; 1 = the 1/W law), "
            f"R^2 = {f['r2']:.3f}."
            if "slope" in f
            else " (too few distinct W for a free slope.)"
        )
        n = f["log_c"]["n"]
        lines.append(
            f"- {label}: c = {f['c']:.3f}, 95% CI {ci} over {n} runs "
            f"(paper 3.02, theory pi = 3.142).{slope}"
        )
    if runs and "copy_heads" in runs[0]:
        lines += _learned_lines(runs, learned)
    lines.append("")
    return lines


def _learned_lines(runs: list[dict], learned: list[dict]) -> list[str]:
    """The lines about the runs that learned the copy: how many did (per W), the fit over the
    heads that attend at the copy offset, and the fit with the distance from initialisation."""
    per_w = ", ".join(
        f"W={w}: {sum(r['copy_accuracy'] >= LEARNED for r in runs if r['W'] == w)}/"
        f"{sum(r['W'] == w for r in runs)}"
        for w in sorted({r["W"] for r in runs})
    )
    out = [
        f"- runs that learned the copy (copy acc >= {LEARNED}): {len(learned)} of {len(runs)} "
        f"({per_w}); the other {len(runs) - len(learned)} are excluded from the fits marked "
        "'learned'.",
    ]
    heads = [
        dict(r, log_theta_eff=r["log_theta_eff_copy_heads"])
        for r in learned
        if r.get("log_theta_eff_copy_heads") is not None
    ]
    if len({r["W"] for r in heads}) >= 2 and len(heads) >= 3:
        f = fit_law(heads)["log_theta_eff"]
        ci = f"({f['c_lo']:.3f}, {f['c_hi']:.3f})" if f.get("c_lo") is not None else "(n/a)"
        slope = (
            f" Free fit: slope {f['slope']:.3f} (95% CI {f['slope_lo']:.3f}, "
            f"{f['slope_hi']:.3f}), R^2 = {f['r2']:.3f}."
            if "slope" in f
            else ""
        )
        out.append(
            f"- learned runs, copy heads only (attention share at the copy offset >= "
            f"{COPY_HEAD_SHARE}; {len(heads)} runs have one): c = {f['c']:.3f}, 95% CI {ci}."
            + slope
        )
    else:
        out.append(
            f"- learned runs, copy heads only: too few runs with a copy head ({len(heads)})."
        )
    cov = fit_with_distance(learned)
    if cov is None:
        out.append("- learned runs, with the distance from init as a covariate: too few runs.")
    else:
        out.append(
            "- learned runs, log theta_eff = a + b log(1/W) + g TV(p, p_init): "
            f"b = {cov['b']:.3f} (95% CI {cov['b_lo']:.3f}, {cov['b_hi']:.3f}), "
            f"g = {cov['g']:.3f} (95% CI {cov['g_lo']:.3f}, {cov['g_hi']:.3f}), n = {cov['n']}; "
            "b is the 1/W law's slope once how far the spectrum moved is accounted for."
        )
    return out
