"""The single-script version's results: ``results/paper_a/omega_sigma_control_cpu{,_egam}.json``
(written by the earlier script of this experiment) name
``experiments/omega_sigma_control.py:render`` as their renderer, the module
``experiments.omega_sigma_control``, which re-exports :func:`render`; ``mope-jax report
--regenerate`` renders their markdown from the JSON alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mope_jax.analysis.report import rendered_note
from mope_jax.analysis.stats import summarize

from .rows import PREFIX


def render(p: dict, json_path: Path) -> dict[str, str]:
    """``omega_sigma_control_<scale>.md`` from its JSON alone (``mope-jax report --regenerate``)."""
    return {Path(json_path).with_suffix(".md").name: render_markdown(p, json_path)}


def render_markdown(p: dict, json_path: Path) -> str:
    env, m, t = p["env"], p["config"]["model"], p["config"]["train"]
    r = p["reference_decay_only"]
    date = p["date_utc"][:16].replace("T", " ") + " UTC"  # ISO time to the minute, in UTC
    models = [c.get("model", "mope") for c in p["cells"]]  # a cell without "model" is MOPE's
    with_ega_m = "ega-m" in models
    model_line = "MOPE-only model (`a-mope`):"
    if with_ega_m:
        model_line = (
            "Rows `mope`: MOPE-only model (`a-mope`, E/2 pairs); "
            "rows `ega-m`: learned table + EGA-M "
            "(`a-ega-m` as it was before issue 40, now `a-ega-m-shared`: one set of 4 (omega, "
            "sigma) filters per layer shared by the heads, tap j on lag j; the paper's full "
            "z-norm, NON-CAUSAL; init omega = pi/l, l = 3/7/15/31; bound `mope_bound`). Model:"
        )
    col = "| model " if with_ega_m else ""
    lines = [
        f"# omega sigma = 5: data or setup? Scale `{p['scale']}`",
        "",
        f"Made by `{p['command'].strip()}` on {date}, {env['platform']} "
        f"({env['cpu_count']} CPUs, backend {env['backend']}), git {env['git_commit']}; "
        f"{p['total_seconds']:.0f} s in all.",
        "",
        rendered_note(p, json_path),
        "",
        f"{model_line} T={m['block_size']}, E={m['n_embd']} ({m['n_embd'] // 2} pairs), "
        f"{m['n_layer']} layers x {m['n_head']} heads, no dropout; "
        f"{t['max_steps']} steps x {t['batch_size']} "
        f"windows, peak lr {p['schedule']['lr']:.2e} (warmup {t['warmup_steps']}, cosine) "
        "so that sum lr = "
        f"{p['schedule']['integrated_lr']:.4f} = the reference schedule's "
        f"{p['schedule']['reference_integrated_lr']:.4f}; "
        f"weight decay {t['weight_decay']}; seeds {p['seeds']}. "
        "On the boundary: |omega sigma - 5| < 1e-3.",
        "",
        col + "| wd on spectral | init | constraint | on boundary | below 5 "
        "| raw product < 5 (clamp acts) | omega sigma [min, median, max] "
        "| omega range | sigma range | data shift of log sigma (median, max) | val loss |",
        ("|---" if with_ega_m else "") + "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c, model in zip(p["cells"], models):
        s = c["seeds"]
        pre = PREFIX[model]

        def f(k: str) -> float:
            return np.mean([x[k.replace("mope_", pre + "_", 1)] for x in s])

        val_mean = summarize([x["val_loss"] for x in s], confidence=0.95).mean
        lines.append(
            (f"| {model} " if with_ega_m else "")
            + f"| {'on' if c['weight_decay_on_spectral'] else 'off'} "
            f"| {c['init']} | {c['constraint']} | "
            f"{f('mope_on_boundary_frac'):.3f} | {f('mope_below_bound_frac'):.3f} "
            f"| {f('mope_clamp_active_frac'):.3f} | "
            f"[{f('mope_product_min'):.3f}, {f('mope_product_median'):.3f}, "
            f"{f('mope_product_max'):.3f}] | "
            f"[{f('mope_omega_min'):.2f}, {f('mope_omega_max'):.2f}] "
            f"| [{f('mope_sigma_min'):.2f}, {f('mope_sigma_max'):.2f}] | "
            f"{f('median_abs_data_shift_log_sigma'):.3f}, "
            f"{f('max_abs_data_shift_log_sigma'):.3f} | {val_mean:.4f} |"
        )
    lines += [
        "",
        "Weight decay alone in the paper's reference run "
        "(no data gradient at all; init on the boundary, "
        f"5000 steps, through the clamp): log-parameters x {r['decay_factor']:.4f}, omega in "
        f"[{r['omega_range'][0]:.2f}, {r['omega_range'][1]:.2f}], "
        f"sigma in [{r['sigma_range'][0]:.2f}, "
        f"{r['sigma_range'][1]:.2f}], on boundary {r['on_boundary_frac']:.3f}; "
        "the paper reports omega in "
        f"[1.11, 3.35], sigma in [1.49, 4.50], all pairs on the boundary.",
        "",
        "Plot: the campaign's, drawn from its records by `mope-jax report --regenerate` "
        "(sigma vs omega per cell, the hyperbola omega sigma = 5, init in grey): "
        "`../omega_sigma_control/<scale>/omega_sigma.png`; this script's cpu-scale "
        f"`{p['plot']}` is no longer kept.",
    ]
    return "\n".join(lines) + "\n"
