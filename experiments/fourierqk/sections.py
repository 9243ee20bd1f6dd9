"""The campaign table's own section (``Experiment.sections``): per row best val, shuffled gap
and learned periods, then the phase-surrogate and metric-distortion table of the learned
bilateral rows."""

from __future__ import annotations

import numpy as np

from experiments.fourierqk.cells import ladder_note, periods_text, surrogate_cell
from experiments.fourierqk.phase_shift import OLD_PHASE_SHIFT_NOTE, old_phase_shift
from mope_jax.analysis import diagnostics as dg
from mope_jax.attention import spectral
from mope_jax.campaign import Experiment, Scale, by_row


def _learned_text(record: dict) -> str:
    """The learned-column text of a campaign record: its analysis' periods or scales, else
    MexHat-K4's peak periods (the record's ``spectra``; init 50/26/10/5 tokens)."""
    text = periods_text(record["analysis"])
    per = (record.get("spectra") or {}).get("qk_mexhat_period")
    if text == "-" and per is not None:
        arr = np.asarray(per, np.float64)  # (L,H,K)
        med = np.median(arr.reshape(-1, arr.shape[-1]), axis=0)  # (K,)
        text = "peak period median: " + "/".join(f"{p:.1f}" for p in med)
    return text


def diagnostics_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Best val, shuffled gap and learned periods per row (mean over seeds; periods of the
    lowest seed), then the surrogate table of the learned bilateral rows."""
    recs = by_row(records)
    base = [r["analysis"]["shuffled"]["val"] for r in recs.get(experiment.baseline, [])]
    lines = [
        "## Diagnostics",
        "",
        "Per row, mean over seeds: best val over evals (paper C reports best-over-evals), the "
        "shuffled gap = loss(shuffled val) - loss(val) on fixed val windows; learned periods "
        "T/f, MexHat-K4's peak periods sqrt(2) pi s or kernel scales a (tokens) of the lowest "
        "seed, median per window over layers and heads. Ladder rows name the rung at "
        f"T={spectral.LADDER_T}; at T={scale.model.get('block_size', 256)} the bin is scaled.",
        "",
        "| row | n | best val | shuffled gap | learned (lowest seed) |",
        "|---|---|---|---|---|",
    ]
    for row in experiment.rows:
        rs = [r for r in recs.get(row.name, []) if r.get("analysis")]
        if not rs:
            continue
        best = np.mean([r["best_val_loss"] for r in rs])
        gap = np.mean([r["analysis"]["shuffled"]["gap"] for r in rs])
        note = ladder_note(row.variant, scale.model.get("block_size", 256))
        lines.append(
            f"| `{row.name}`{note} | {len(rs)} | {best:.3f} | {gap:.3f} | {_learned_text(rs[0])} |"
        )
    bil = [
        row.name
        for row in experiment.rows
        if any("phase" in (r.get("analysis") or {}) for r in recs.get(row.name, []))
    ]
    if bil and base:
        lb = float(np.mean(base))
        modes = [m for m in dg.SURROGATE_LABELS if m in recs[bil[0]][0]["analysis"]["phase"]]
        lines += [
            "",
            "Eval-time phase surrogates and metric-distortion controls (mean over seeds, the "
            f"same val windows; baseline {lb:.3f}). pct_phase = 100 (L_surrogate - L_filter) / "
            "(L_baseline - L_filter) of the means; '-' when the filter has no gain over the "
            "baseline. The authors' surrogates replace the phase (or rotate both q and k); ours "
            "('add-') add a phase, which keeps the q-k cross-spectrum when shared.",
            "",
            "| row | n | filter | "
            + " | ".join(dg.SURROGATE_LABELS[m] for m in modes)
            + " | rotation R | projection P |",
            "|---|---|---|" + "---|" * len(modes) + "---|---|",
        ]
        old_shift = []  # rows with an analysis made with our earlier phase_shift
        for name in bil:
            an = [r["analysis"] for r in recs[name] if "phase" in (r.get("analysis") or {})]
            ph = {k: float(np.mean([a["phase"][k] for a in an])) for k in an[0]["phase"]}
            me = {k: float(np.mean([a["metric"][k] for a in an])) for k in an[0]["metric"]}
            if any(old_phase_shift(a) for a in an):
                old_shift.append(name)

            def cell(x, lf=ph["none"], mode=None, name=name):
                mark = " †" if mode == "phase_shift" and name in old_shift else ""
                return surrogate_cell(x, lf, lb) + mark

            lines.append(
                f"| `{name}` (NON-CAUSAL) | {len(an)} | {ph['none']:.3f} | "
                + " | ".join(cell(ph[m], mode=m) for m in modes)
                + f" | {cell(me['rotation'])} | {cell(me['projection'])} |"
            )
        if old_shift and "phase_shift" in modes:
            lines += ["", OLD_PHASE_SHIFT_NOTE]
    return "\n".join(lines)
