"""Is omega sigma = 5 learned from the data, or produced by the setup? (paper A, claim A5)

Command:  mope-jax campaign run omega_sigma_control --scale cpu [--rows ...] [--budget-minutes M]
          (status: mope-jax campaign status omega_sigma_control --scale S;
          ``python -m experiments.omega_sigma_control --scale S [...]`` is an alias of the run
          command)
Writes:   experiments/results/omega_sigma_control/<scale>/records/<row>/seed<s>.json and
          table.md (the campaign's table, then this module's per-cell table)
Runtime per run (wall time of one row's seeds, compilation, evaluation, summary and analysis
included; `nice -n 5` on a shared 2-core CPU, load average ~8): smoke 8-27 s (all 24 rows x 1
seed: 373 s); cpu ~60 s per MOPE cell as measured by the single-script version (12 MOPE cells,
1 seed: 750 s), the EGA-M cells slower;
mid (``experiments._scales.MID`` with the f32 attention opt-ins: T=256, 4 x 128, 2000 steps):
`mope-jax campaign estimate omega_sigma_control --scale mid --rows
mope-wd_on-init_boundary-clamp,ega-m-wd_on-init_boundary-clamp` (2026-12-01, Intel Xeon 2 cores,
campaigns paused) measured 270 / 289 ms/step, 9.6 / 10.3 min per run alone: ~8 h of this CPU for
the 24 rows x 2 seeds. Per 2-seed cell in the records' group_wall_s (strategy
shard on 2 host devices): MOPE 883-1708 s, median 893 s (Intel Xeon, 2026-12-02; the resumed
cell's 438 s left out); EGA-M 1304-1419 s alone (5 cells), 1577 s beside the test suite, 2896 s
with a 25-minute pause (AMD EPYC, 2026-12-02); 1590-1756 s (Intel Xeon, 2026-12-02, 2 cells,
nice 10, nothing else running) and 1099 + 1418 s for the last cell's seeds run one at a time.
Claim (paper A, A5): all 128 (omega, sigma) pairs converge to omega sigma = 5.000, sigma in
[1.49, 4.50], omega in [1.11, 3.35].
Suspicion (DESIGN.md section 1): the setup produces it -- init ON the boundary, weight decay 0.1
on log_omega/log_sigma (pulls both logs towards 0, so omega sigma falls below 5), and the
``where`` clamp, which pins such pairs to omega = 5/sigma and gives log_omega no gradient.

Grid (12 cells per model): weight decay on the spectral parameters on / off
(``train.no_decay=log_omega,log_sigma``) x init on the boundary (sigma = 5/omega) / off it
(sigma = 10/omega) x constraint clamp (the paper's) / soft penalty (weight 1, on
log(omega sigma) < log 5) / none. Rows ``mope-wd_<on|off>-init_<boundary|off>-<constraint>``:
the MOPE-only model (``a-mope``, E/2 pairs; ``model.mope_init``, ``model.mope_constraint``);
rows ``ega-m-...``: the same cells on ``a-ega-m`` (learned table + EGA-M, DESIGN.md section 5,
paper 1's Morlet energy gate with the paper's full z-norm, NON-CAUSAL, trained with
``train.allow_noncausal``), whose (omega, sigma) are 4 filters per head and layer (the
authors' EGA-M; the single-script version's results ran our shared variant, now
``ega-m-shared``: 4 filters per layer), init omega = pi / l
(l = 3, 7, 15, 31) and sigma = 5 / omega (boundary) or 10 / omega (off), under
``model.ega_m_init`` and ``model.ega_m_constraint``. Baseline: the paper's setup
``mope-wd_on-init_boundary-clamp``.

Scales: smoke and cpu as the single-script version (cpu: T=64, E=64 (32 pairs), 2 layers x 4
heads, batch 16, 400 steps, no dropout; 1 seed), mid = ``experiments._scales.MID``'s model and
train fields with 2 seeds. At every scale the peak lr is chosen (:func:`matched_lr`,
computed when this module is imported) so that the integrated learning rate sum_t lr_t equals
the paper's reference schedule (5000 steps, lr 3e-4, warmup 300, cosine): then decoupled weight
decay 0.1 shrinks every log-parameter by the same factor prod_t (1 - lr_t wd) as in the paper,
and Adam's largest possible drift of a parameter (~ sum_t lr_t) is the same too.

Reported per cell (``analyze`` stores each seed's in its record; :func:`cells_section` renders
the mean over seeds): fraction of pairs with |omega sigma - 5| < 1e-3, below the bound, clamp
active (the record's ``summary``); omega/sigma/product ranges; and how far the learned raw
log-parameters are from where weight decay ALONE would have taken them
(``spectra.decay_only_prediction``). Claim A5 is judged here, and
A5g, seed A's "the same convergence in the separate energy-gate experiment", by the same rule
on the ``ega-m-*`` cells.

Package layout: ``lr_rule`` (the integrated-lr rule), ``rows`` (scales, cells, rows),
``measure`` (``analyze``), ``reference`` (weight decay alone in the paper's run), ``sections``
(the per-cell table), ``boundary`` (per-cell fractions on omega sigma = 5), ``claims`` (the A5 and
A5g judges), ``forest`` (the figures hook), ``legacy`` (``render`` of the single-script
version's JSONs), ``__main__`` (the run alias); this module declares ``EXPERIMENT``.
"""

from __future__ import annotations

from mope_jax.campaign import Experiment, Scale

from .boundary import (
    CLAIM_VALUE,
    UNIT,
    WHAT,
    boundary_counts,
    boundary_fractions,
)
from .claims import CLAIMS, EFFECT_UNIT, a5_judge, a5g_judge, is_foil
from .forest import figures
from .legacy import render, render_markdown
from .lr_rule import REFERENCE_INTEGRATED_LR, integrated_lr, matched_lr
from .measure import analyze
from .reference import reference_decay_prediction
from .rows import (
    BASELINE,
    CELLS,
    LABEL,
    MODELS,
    MOPE_ROWS,
    PREFIX,
    ROWS,
    SCALES,
    VARIANT,
    cell_row,
    cell_rows,
    paper_cell,
    row_model,
    row_name,
)
from .sections import cells_section

EXPERIMENT = Experiment(
    name="omega_sigma_control",
    title="omega sigma = 5: learned from the data or produced by the setup? (paper A, A5)",
    rows=ROWS,
    scales=tuple(Scale(n, s["model"], s["train"], s["seeds"]) for n, s in SCALES.items()),
    baseline=BASELINE,
    claim=(
        "paper A reports all 128 (omega, sigma) pairs of MOPE at omega sigma = 5.000 (sigma in "
        "[1.49, 4.50], omega in [1.11, 3.35]) with init on the boundary, weight decay 0.1 on "
        "log omega/log sigma and the clamp; the grid asks whether the setup produces it."
    ),
    analyze=analyze,
    sections=(cells_section,),
    claims=CLAIMS,
    paper_scale="~4.8M params, ~82M tokens, 1 seed",
    figures=figures,
)


__all__ = [
    "BASELINE",
    "CELLS",
    "CLAIMS",
    "CLAIM_VALUE",
    "EFFECT_UNIT",
    "EXPERIMENT",
    "LABEL",
    "MODELS",
    "MOPE_ROWS",
    "PREFIX",
    "REFERENCE_INTEGRATED_LR",
    "ROWS",
    "SCALES",
    "UNIT",
    "VARIANT",
    "WHAT",
    "a5_judge",
    "a5g_judge",
    "analyze",
    "boundary_counts",
    "boundary_fractions",
    "cell_row",
    "cell_rows",
    "cells_section",
    "figures",
    "integrated_lr",
    "is_foil",
    "matched_lr",
    "paper_cell",
    "reference_decay_prediction",
    "render",
    "render_markdown",
    "row_model",
    "row_name",
]
