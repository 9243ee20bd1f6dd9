"""The renderer of the single-script version of this experiment: ``results/fourierqk/
fourierqk_cpu{,_extra}.json`` (made before the script became the campaign) name
``experiments/fourierqk.py:render`` as their renderer, i.e. the ``render`` this package exports;
``mope-jax report --regenerate`` writes their ``.md`` from the JSON alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from experiments.fourierqk.cells import ladder_note, periods_text, surrogate_cell
from experiments.fourierqk.phase_shift import OLD_PHASE_SHIFT_NOTE_SINGLE, old_phase_shift
from mope_jax.analysis import diagnostics as dg
from mope_jax.analysis.stats import summarize


def _fmt_ci(s) -> str:
    return "-" if s.n < 2 else f"[{s.ci_low:.3f}, {s.ci_high:.3f}]"


def render(result: dict, jpath: Path) -> dict[str, str]:
    """``fourierqk_<scale>[_<tag>].md`` from its JSON alone (``mope-jax report --regenerate``)."""
    from mope_jax.analysis.report import rendered_note

    jpath = Path(jpath)
    scale = result["scale"]
    rows = result["rows"]
    base = rows.get("learned")
    env = result["env"]
    cm, ct = result["config"]["model"], result["config"]["train"]

    def verdict(row: dict) -> str:
        return "causal" if row["diag"]["audit"]["causal"] else "LEAKS"

    L = [
        f"# FourierQK (paper C) at scale `{scale}`",
        "",
        f"Command: `{result['command']}`  ",
        f"Date: {result['date']}; wall time {result['wall_s'] / 60:.1f} min  ",
        f"Machine: {env['platform']}, {env['cpu_count']} CPUs, {env['backend']} ({env['device']}); "
        f"jax {env['jax']}, flax {env['flax']}; commit {env['git_commit']}  ",
        f"Model: T={cm['block_size']}, E={cm['n_embd']}, "
        f"{cm['n_layer']} layers x {cm['n_head']} heads; "
        f"{ct['max_steps']} steps x {ct['batch_size']} windows; "
        f"seeds {result['seeds']}; TinyShakespeare char level. Raw numbers: `{jpath.name}`.",
        "",
        rendered_note(result, jpath),
        "",
        "Val loss in nats/char at the last step (mean +- std over seeds, 95% t-interval); "
        "Delta = paired difference to the baseline (same seeds, same batches). "
        "Gap = loss(shuffled val) - loss(val), seed 0. "
        "Audit = measured on the seed-0 trained parameters "
        "(relative leak max_{s>t}|d out_t/d in_s| / "
        "max_{s<=t}|...|). NON-CAUSAL rows are not causal-LM losses.",
        "",
        "| row | val loss | 95% CI | Delta vs baseline [95% CI] | best val | paper | "
        "shuffled gap | audit "
        "(leak rel) | learned |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    t_model = result["config"]["model"]["block_size"]
    for v, r in rows.items():
        s = summarize(r["final_val"])
        label = (
            r["label"] + ladder_note(v, t_model) + ("" if r["declared_causal"] else " — NON-CAUSAL")
        )
        if base is not None and v != "learned":
            d = summarize(np.asarray(r["final_val"]) - np.asarray(base["final_val"]))
            delta = f"{d.mean:+.3f} {_fmt_ci(d)}"
        else:
            delta = "-"
        aud = r["diag"]["audit"]
        paper = "-" if r["paper"] is None else f"{r['paper']:.3f}"
        L.append(
            f"| {label} | {s.mean:.3f} +- {s.std:.3f} | {_fmt_ci(s)} | {delta} | "
            f"{np.mean(r['best_val']):.3f} | {paper} | {r['diag']['shuffled']['gap']:.3f} | "
            f"{verdict(r)} ({aud['leak_rel']:.1e}) | {periods_text(r['diag'])} |"
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
            f"{result['num_windows']} val windows; baseline {lb:.3f}). "
            "pct_phase = 100 (L_surrogate - L_filter) "
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
        old_shift = False
        for v in bil:
            ph, me = rows[v]["diag"]["phase"], rows[v]["diag"]["metric"]
            old = old_phase_shift(rows[v]["diag"])
            old_shift |= old and "phase_shift" in modes

            def cell(x, lf=ph["none"], mode=None, old=old):
                return surrogate_cell(x, lf, lb) + (" †" if old and mode == "phase_shift" else "")

            L.append(
                f"| {rows[v]['label']} — NON-CAUSAL | {ph['none']:.3f} | "
                + " | ".join(cell(ph[m], mode=m) for m in modes)
                + f" | {cell(me['rotation'])} | "
                f"{cell(me['projection'])} |"
            )
        if old_shift:
            L += ["", OLD_PHASE_SHIFT_NOTE_SINGLE]
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
                f"{verdict(rows[v])}): Delta = {d.mean:+.3f} "
                f"{_fmt_ci(d)} nats/char: {word}."
            )
        for v in rows:
            if not rows[v]["declared_causal"]:
                d = summarize(np.asarray(rows[v]["final_val"]) - np.asarray(base["final_val"]))
                L.append(
                    f"- {rows[v]['label']} (NON-CAUSAL, audit: "
                    f"{verdict(rows[v])}): Delta = {d.mean:+.3f} "
                    f"{_fmt_ci(d)}; shuffled gap {rows[v]['diag']['shuffled']['gap']:.3f} "
                    "vs baseline "
                    f"{base['diag']['shuffled']['gap']:.3f}."
                )
    return {jpath.with_suffix(".md").name: "\n".join(L) + "\n"}
