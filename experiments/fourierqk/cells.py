"""Table-cell texts shared by the campaign's diagnostics section (``sections.py``) and the
single-script renderer (``legacy.py``): the ladder rows' bin at the table's T, a phase
surrogate's loss with its pct_phase, and the learned periods or kernel scales of an analysis."""

from __future__ import annotations

import numpy as np

from mope_jax.analysis import diagnostics as dg
from mope_jax.attention import spectral
from mope_jax.config import Config
from mope_jax.presets import apply_variant, model_variants


def ladder_note(variant: str, t: int) -> str:
    """' (bin b at T=t)' for the fixed-bin ladder rows, whose labels name the rung at T = 256."""
    model = apply_variant(Config(), variant).model if variant in model_variants() else None
    if (
        model is None
        or model.qk_filter not in ("fixed-bin", "fixed-bin-learned")
        or t == spectral.LADDER_T
    ):
        return ""
    return f" (bin {spectral.ladder_bin(model.filter_fixed_bin, t):g} at T={t})"


def surrogate_cell(loss: float, loss_filter: float, loss_baseline: float) -> str:
    """A surrogate's loss and its pct_phase ('-' share omitted when the filter has no gain)."""
    p = dg.pct_phase(loss, loss_filter, loss_baseline)
    return f"{loss:.3f}" + ("" if np.isnan(p) else f" ({p:.0f}%)")


def periods_text(d: dict) -> str:
    """The learned periods T/f (median per window, longest first) or kernel scales a of an
    analysis (a record's ``analysis`` or a single-script row's ``diag``); '-' when neither."""
    if d.get("periods"):
        arr = np.asarray(list(d["periods"].values()), np.float64)  # (L,K,H) or (L,H)
        arr = arr.reshape(arr.shape[0], -1, arr.shape[-1])  # (L,K,H)
        med = np.median(arr, axis=(0, 2))  # (K,)
        return "T/f median: " + "/".join(f"{p:.1f}" for p in sorted(med, reverse=True))
    if d.get("scales"):
        arr = np.asarray(list(d["scales"].values()), np.float64)
        return f"a: {arr.min():.1f}-{arr.max():.1f} (median {np.median(arr):.1f})"
    return "-"
