"""Paper A's extra table sections (``Experiment.sections``): the learned MOPE spectra and the
gate models re-evaluated with the other gate (from the records' ``analysis``, see
``measure.py``)."""

from __future__ import annotations

import numpy as np

from mope_jax.campaign import Experiment, Scale, by_row


def mope_spectra_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """The learned MOPE spectra of the rows that have them (the records' ``summary``: the
    eval summary of each seed's trained state): boundary and clamp fractions averaged over
    seeds, omega and sigma ranges over all seeds."""
    recs = by_row(records)
    lines = []
    for name in (r.name for r in experiment.rows):
        sums = [r.get("summary") or {} for r in recs.get(name, [])]
        sums = [s for s in sums if "mope_on_boundary_frac" in s]
        if not sums:
            continue
        mean = lambda k: float(np.mean([s[k] for s in sums]))  # noqa: E731
        lo = lambda k: min(s[k] for s in sums)  # noqa: E731
        hi = lambda k: max(s[k] for s in sums)  # noqa: E731
        lines.append(
            f"| `{name}` | {len(sums)} | {mean('mope_on_boundary_frac'):.3f} | "
            f"{mean('mope_clamp_active_frac'):.3f} | "
            f"[{lo('mope_omega_min'):.3f}, {hi('mope_omega_max'):.3f}] | "
            f"[{lo('mope_sigma_min'):.3f}, {hi('mope_sigma_max'):.3f}] | "
            f"[{lo('mope_product_min'):.3f}, {hi('mope_product_max'):.3f}] |"
        )
    if not lines:
        return ""
    return "\n".join(
        [
            "## Learned MOPE spectra",
            "",
            "After the constraint, from each seed's trained state: the fraction of the n = E/2 "
            "(omega, sigma) pairs on omega sigma = 5 and with the clamp active (mean over seeds), "
            "and the ranges over all seeds.",
            "",
            "| row | seeds | pairs on omega sigma = 5 | clamp active | omega (rad/token) | "
            "sigma (tokens) | omega sigma |",
            "|---|---|---|---|---|---|---|",
            *lines,
        ]
    )


def other_gate_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Each EGA row's trained models evaluated with the other gate: other - own, paired by
    seed on the same batches."""
    from mope_jax.analysis.stats import paired_t

    lines = []
    for name, rs in by_row(records).items():
        an = [r["analysis"] for r in rs if (r.get("analysis") or {}).get("other_gate")]
        if not an:
            continue
        t = paired_t([a["val_loss_other_gate"] for a in an], [a["val_loss_own_gate"] for a in an])
        ci = f"[{t.ci_low:+.4f}, {t.ci_high:+.4f}]" if t.n > 1 else "(n/a)"
        own = float(np.mean([a["val_loss_own_gate"] for a in an]))
        alt = float(np.mean([a["val_loss_other_gate"] for a in an]))
        lines.append(
            f"| `{name}` | `{an[0]['gate']}` | `{an[0]['other_gate']}` | {len(an)} | {own:.4f} | "
            f"{alt:.4f} | {t.mean:+.4f} {ci} |"
        )
    if not lines:
        return ""
    return "\n".join(
        [
            "## Gate models re-evaluated with the other gate",
            "",
            "Each seed's trained EGA model evaluated on the batches of its final evaluation with "
            "its own gate and with the other one (`ega` = the paper's full-sequence z-norm, "
            "NON-CAUSAL; `ega-prefix` = the causal prefix z-norm; same parameters). A model "
            "trained with the paper's gate that loses much under the causal gate relied on the "
            "future.",
            "",
            "| row | trained with | evaluated with | n | val loss, own gate | val loss, other "
            "gate | other - own, mean [95% CI] |",
            "|---|---|---|---|---|---|---|",
            *sorted(lines),
        ]
    )
