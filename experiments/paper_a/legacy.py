"""The earlier single-script table's renderer.

``results/paper_a/paper_a_cpu.json`` (made by the single-script version of this experiment, whose
cpu scale the campaign's cpu scale repeats) names ``experiments/paper_a.py:render`` as its
renderer: the library imports the module ``experiments.paper_a`` by that name, which re-exports
``render`` from here. ``experiments/morlet_rope_memory.py`` imports ``RESULTS`` and
``experiments/omega_sigma_control.py`` ``t_interval`` from the package. Every run is trained by
the campaign's sweep; what is kept of the single script is this renderer of its committed JSON.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mope_jax.analysis.report import rendered_note
from mope_jax.analysis.stats import summarize

from .rows import EGA_PAIRS, OTHER_PAIRS

RESULTS = Path(__file__).resolve().parents[1] / "results" / "paper_a"
CORPUS = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "tinyshakespeare" / "input.txt"
)


def t_interval(
    x: list[float] | np.ndarray, level: float = 0.95
) -> tuple[float, float, float, float]:
    """(mean, std (ddof 1), ci_low, ci_high) with a Student-t interval.

    std and the bounds are NaN for n < 2.
    """
    s = summarize(x, confidence=level)
    return s.mean, (float("nan") if s.n < 2 else s.std), s.ci_low, s.ci_high


def paired(p: dict, a: str, b: str) -> dict | None:
    rows = {r["variant"]: r for r in p["rows"]}
    if a not in rows or b not in rows:
        return None
    d = [x["val_loss"] - y["val_loss"] for x, y in zip(rows[a]["seeds"], rows[b]["seeds"])]
    m, s, lo, hi = t_interval(d)
    return {"mean": m, "std": s, "ci95": [lo, hi], "per_seed": d}


def render(p: dict, json_path: Path) -> dict[str, str]:
    """``paper_a_<scale>.md`` from ``paper_a_<scale>.json`` alone.

    Used by ``mope-jax report --regenerate``.
    """
    return {Path(json_path).with_suffix(".md").name: render_markdown(p, json_path)}


def render_markdown(p: dict, json_path: Path) -> str:
    env, m, t = p["env"], p["config"]["model"], p["config"]["train"]
    lines = [
        f"# Paper A table, scale `{p['scale']}`",
        "",
        f"Made by `{p['command'].strip()}` on {p['date_utc']}, "
        f"{env['platform']} ({env['cpu_count']} CPUs, backend {env['backend']}), "
        f"git {env['git_commit']}; "
        f"{p['total_seconds']:.0f} s in all.",
        "",
        rendered_note(p, json_path),
        "",
        f"Model: T={m['block_size']}, E={m['n_embd']}, "
        f"{m['n_layer']} layers x {m['n_head']} heads, dropout "
        f"{m['dropout']}; {t['max_steps']} steps x {t['batch_size']} windows, "
        f"AdamW lr {t['lr']} (warmup "
        f"{t['warmup_steps']}, cosine), weight decay {t['weight_decay']} on all parameters; "
        "val loss over "
        f"{t['eval_batches']} random val batches at the last step; seeds {p['seeds']}. "
        "Paired diff = variant - baseline with the same seed (same batches).",
        "",
        "| variant | paper row | causal (declared / audit, leak_rel) "
        "| val loss mean +- std | 95% CI | "
        "diff vs baseline [95% CI] | paper (ref. scale) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in p["rows"]:  # statistics from the per-seed values
        a = r["audit"]
        causal = (
            "causal" if r["declared_causal"] else "**NON-CAUSAL**"
        ) + f" / {'causal' if a['causal'] else 'LEAKS'}, {a['leak_rel']:.1e}"
        d = paired(p, r["variant"], "a-baseline")
        diff = (
            ""
            if d is None or r["variant"] == "a-baseline"
            else f"{d['mean']:+.4f} [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}]"
        )
        paper = "" if r["paper_val_loss"] is None else f"{r['paper_val_loss']:.4f}"
        label = r["label"] + (" (NON-CAUSAL)" if not r["declared_causal"] else "")
        mean, std, lo, hi = t_interval([x["val_loss"] for x in r["seeds"]])
        lines.append(
            f"| `{r['variant']}` | {label} | {causal} | {mean:.4f} +- {std:.4f} | "
            f"[{lo:.4f}, {hi:.4f}] | {diff} | {paper} |"
        )
    gains = [(a, b, g, paired(p, a, b)) for a, b, g in EGA_PAIRS + OTHER_PAIRS]
    gains = [x for x in gains if x[3] is not None]
    if gains:
        lines += [
            "",
            "Paired comparisons, val(A) - val(B) with the same seed (negative = A better); "
            "the first four "
            "are the EGA gain (same model with and without the gate):",
            "",
            "| A | B | what differs | diff mean [95% CI] | per seed |",
            "|---|---|---|---|---|",
        ]
        for a, b, g, d in gains:
            lines.append(
                f"| `{a}` | `{b}` | {g} | "
                f"{d['mean']:+.4f} [{d['ci95'][0]:+.4f}, {d['ci95'][1]:+.4f}] | "
                + ", ".join(f"{x:+.4f}" for x in d["per_seed"])
                + " |"
            )
    mope = [r for r in p["rows"] if "mope_on_boundary_frac" in r["seeds"][0]]
    if mope:
        lines += [
            "",
            "Learned MOPE spectra (seed 0, after the constraint):",
            "",
            "| variant | pairs on omega sigma = 5 | clamp active | omega range (rad/token) | "
            "sigma range (tokens) |",
            "|---|---|---|---|---|",
        ]
        for r in mope:
            s = r["seeds"][0]
            lines.append(
                f"| `{r['variant']}` | {s['mope_on_boundary_frac']:.3f} "
                f"| {s['mope_clamp_active_frac']:.3f} | "
                f"[{s['mope_omega_min']:.3f}, {s['mope_omega_max']:.3f}] | "
                f"[{s['mope_sigma_min']:.3f}, {s['mope_sigma_max']:.3f}] |"
            )
    return "\n".join(lines) + "\n"
