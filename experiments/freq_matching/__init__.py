"""Frequency matching (paper B) as a campaign: does the energy-weighted RoPE frequency follow
theta* = c / W?

Command:  mope-jax campaign run freq_matching --scale cpu [--rows copy-B4,...]
          [--budget-minutes M]    (status: mope-jax campaign status freq_matching --scale cpu;
          ``python -m experiments.freq_matching --scale S [...]`` is an alias of the run command)
Writes:   experiments/results/freq_matching/<scale>/records/<row>/seed<s>.json and table.md
Records:  the campaign record of each seed (losses, curve, config, env, ...) plus ``analysis``
          (``analyze``): task, B, W, W measured by the excess-match kernel, the optimal loss,
          theta_eff and log theta_eff (all heads; per layer; lowest-entropy head), the energy
          distribution p (layer x head x frequency), entropy (trained and at init), the
          dominant frequency, the TV stability of p (other windows / random tokens / vs init)
          and the greedy copy accuracy.
Runtime per run: smoke (20 steps, 1 seed): measured 15 s (copy-B4, with the first compile)
          and 8 s (repeat-W2) of campaign wall time with the analysis, 31 s for the two-row
          command (2-core CPU shared, load ~3); cpu (400 steps, 3 seeds per row): the
          single-script version trained the 15 copy runs in ~25 min, in pieces, on the shared
          2-core CPU (~100 s per run); the repeat rows (300 steps) are of the same order.
Claim (paper B): on block data the log-mean effective frequency falls linearly in log W, with
theta* = c / W, c ~ 3.02 fitted (theory: pi).

Rows: ``copy-B<B>`` for B in 4, 6, 10, 18, 34: block-copy streams (``data.source=blocks``,
``data.block_len=B``), W = B - 2; ``repeat-W<W>`` for W in 2, 4, 8, 16, 32: the repeat variant
``[0, a_1..a_W, a_1..a_W]`` (``dependency.block_repeat_stream``) as a character file under
``runs/paper_b/`` (written, if missing or different, when this module is imported). The
committed cpu results ran the copy rows and only repeat-W2 (``--rows``).
Baseline: ``copy-B4`` (W = 2), the narrowest dependency of the primary (copy) task, from which
theta_eff should fall as 1/W. The rows differ in their data, so the val-loss differences of
the campaign table are not a test of anything (each row has its own optimum, see the section);
the study's numbers are in the section "Frequency matching": per W the copy accuracy,
theta_eff, c = theta_eff W with its 95% t-interval over seeds, and the fits of c and the free
slope over all runs of a task.

Setup (our choices; the paper's are not public):
  * model: 2 layers, width 64, 2 heads (D = 32, F = 16 rotary frequencies, base 10^4), RoPE
    only (the ``rope`` variant: no position table), no dropout, T = 128, batch 16, AdamW lr
    3e-3; cpu: 400 steps (repeat rows 300, ``Scale.row_overrides``), smoke: 20 steps;
  * measurement: frequency energy p_i per layer and head (mope_jax.analysis.freq_energy) on 8
    fixed validation windows; log theta_eff = sum_i p_i log theta_i averaged over layers and
    heads (all heads, no selection); also per layer and for the lowest-entropy head;
  * fit: slope-free estimate c = exp(mean over runs of log theta_eff + log W) with a 95%
    t-interval over runs, and the free slope of log theta_eff on log(1/W) (1 = the 1/W law).
Figures: ``mope-jax report --regenerate`` draws ``<scale>/fit.png`` (theta_eff against W, the
fits; :func:`figures`) beside the library's (mope_jax.analysis.figures); the committed
``results/paper_b/freq_matching*_{heatmap,spectra}.png`` are the single-script version's (cpu).

The package: ``rows`` (sweep values, rows, scales, the repeat-task files), ``measure`` (the
``analyze`` hook: what a trained seed's record stores), ``fits`` (the fits of the law over
runs), ``sections`` (the section "Frequency matching" of the campaign table), ``claims`` (the
judges of B1 and B1r), ``fit_figure`` (the figures hook), ``legacy`` (``render`` of the
single-script version's results JSONs) and ``__main__`` (the run alias); this module declares
``EXPERIMENT`` and re-exports the names other modules and tests use.
"""

from __future__ import annotations

from mope_jax.campaign import Experiment

from .claims import _claims
from .fit_figure import figures
from .fits import LEARNED, fit_law, fit_with_distance, runs_of
from .legacy import markdown, render
from .measure import COPY_HEAD_SHARE, analyze, copy_accuracy, copy_attention, copy_windows
from .rows import (
    BLOCKS,
    DATA,
    MODEL,
    MODEL_LEARNED,
    ROWS,
    SCALES,
    TRAIN_LEARNED,
    WIDTHS,
    repeat_file,
    task_of,
    width_of,
)
from .sections import LEGACY_MODEL, W_DEF, law_section, model_line

__all__ = [
    "BLOCKS",
    "COPY_HEAD_SHARE",
    "DATA",
    "EXPERIMENT",
    "LEARNED",
    "LEGACY_MODEL",
    "MODEL",
    "MODEL_LEARNED",
    "ROWS",
    "SCALES",
    "TRAIN_LEARNED",
    "WIDTHS",
    "W_DEF",
    "analyze",
    "copy_accuracy",
    "copy_attention",
    "copy_windows",
    "figures",
    "fit_law",
    "fit_with_distance",
    "law_section",
    "markdown",
    "model_line",
    "render",
    "repeat_file",
    "runs_of",
    "task_of",
    "width_of",
]


EXPERIMENT = Experiment(
    name="freq_matching",
    title="Paper B: frequency matching on block data (theta* = c / W)",
    rows=ROWS,
    scales=SCALES,
    baseline="copy-B4",
    claim=(
        "paper B: on block data the log-mean effective RoPE frequency falls linearly in log W, "
        "theta* = c / W with c ~ 3.02 fitted (theory: pi). The rows differ in their data, so "
        "their val-loss differences below test nothing; the law is in the section."
    ),
    data=DATA,
    analyze=analyze,
    sections=(law_section,),
    claims=_claims(),
    paper_scale="not stated (abstract only)",
    figures=figures,
)
