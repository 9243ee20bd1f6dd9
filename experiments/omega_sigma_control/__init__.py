"""Is omega sigma = 5 learned from the data, or produced by the setup? (paper A, claim A5)

Command:  mope-jax campaign run omega_sigma_control --scale cpu [--rows ...] [--budget-minutes M]
          (status: mope-jax campaign status omega_sigma_control --scale S;
          ``python experiments/omega_sigma_control.py --scale S [...]`` is an alias of the run
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
the 24 rows x 2 seeds of issue 15. Per 2-seed cell in the records' group_wall_s (strategy
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
authors' EGA-M since issue 40; the cells committed before it ran our shared variant, now
``ega-m-shared``: 4 filters per layer), init omega = pi / l
(l = 3, 7, 15, 31) and sigma = 5 / omega (boundary) or 10 / omega (off), under
``model.ega_m_init`` and ``model.ega_m_constraint``. Baseline: the paper's setup
``mope-wd_on-init_boundary-clamp``.

Scales: smoke and cpu as the single-script version (cpu: T=64, E=64 (32 pairs), 2 layers x 4
heads, batch 16, 400 steps, no dropout; 1 seed), mid = ``experiments.paper_a.MID``'s model and
train fields with 2 seeds (issue 15). At every scale the peak lr is chosen (:func:`matched_lr`,
computed when this module is imported) so that the integrated learning rate sum_t lr_t equals
the paper's reference schedule (5000 steps, lr 3e-4, warmup 300, cosine): then decoupled weight
decay 0.1 shrinks every log-parameter by the same factor prod_t (1 - lr_t wd) as in the paper,
and Adam's largest possible drift of a parameter (~ sum_t lr_t) is the same too.

Reported per cell (``analyze`` stores each seed's in its record; :func:`cells_section` renders
the mean over seeds): fraction of pairs with |omega sigma - 5| < 1e-3, below the bound, clamp
active (the record's ``summary``); omega/sigma/product ranges; and how far the learned raw
log-parameters are from where weight decay ALONE would have taken them
(``spectra.decay_only_prediction``). Claim A5 is judged here (moved from paper_a.py), and
A5g, seed A's "the same convergence in the separate energy-gate experiment", by the same rule
on the ``ega-m-*`` cells.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import jax
import numpy as np

if not __package__:  # run as a file: sys.path[0] is experiments/, put the repository root first
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from experiments._scales import FAST_ATTENTION, MID  # noqa: E402
from experiments.paper_a import t_interval  # noqa: E402
from mope_jax import claims as cl  # noqa: E402
from mope_jax.analysis import spectra  # noqa: E402
from mope_jax.analysis.report import rendered_note  # noqa: E402
from mope_jax.campaign import Experiment, Row, Scale, by_row  # noqa: E402
from mope_jax.config import Config, ModelConfig, TrainConfig  # noqa: E402
from mope_jax.encodings.morlet import clamp_paper, morlet_init  # noqa: E402
from mope_jax.optim import decay_mask, lr_schedule  # noqa: E402

# --------------------------------------------------------------------------- the lr rule


def integrated_lr(model: dict, train: dict) -> float:
    """sum_t lr_t of the schedule of ``Config(model, train)`` over its max_steps (computed on
    the CPU backend, so the rule gives the same lr, hence the same config, on every machine)."""
    cfg = Config(model=ModelConfig(**model), train=TrainConfig(**train))
    with jax.default_device(jax.devices("cpu")[0]):
        lrs = jax.vmap(lr_schedule(cfg))(np.arange(cfg.train.max_steps))
    return float(np.sum(np.asarray(lrs, np.float64)))


REFERENCE_INTEGRATED_LR = integrated_lr({}, {})  # Config(): the paper's 5000-step schedule


def matched_lr(train: dict, model: dict | None = None) -> float:
    """The peak lr whose schedule (the other fields of ``train``) integrates to the reference
    schedule's sum_t lr_t (the schedule is linear in its peak)."""
    return REFERENCE_INTEGRATED_LR / integrated_lr(model or {}, train | {"lr": 1.0})


def _once_at_the_end(train: dict) -> dict:
    n = train["max_steps"]
    return train | dict(eval_interval=n, checkpoint_interval=n, log_interval=n)


SCALES = {  # the single-script version's smoke and cpu; mid = paper A's MID (issue 15)
    "smoke": dict(
        model=dict(block_size=32, n_layer=1, n_head=2, n_embd=16, dropout=0.0),
        train=_once_at_the_end(dict(batch_size=8, max_steps=40, warmup_steps=4, eval_batches=4)),
        seeds=1,
    ),
    "cpu": dict(
        model=dict(block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
        train=_once_at_the_end(
            dict(batch_size=16, max_steps=400, warmup_steps=20, eval_batches=20)
        ),
        seeds=1,
    ),
    # with the f32 attention opt-ins (experiments/_scales.py FAST_ATTENTION)
    "mid": dict(model=MID["model"] | FAST_ATTENTION, train=MID["train"], seeds=2),
}
for _s in SCALES.values():
    _s["train"] = _s["train"] | {"lr": matched_lr(_s["train"], _s["model"])}

# --------------------------------------------------------------------------- rows

CELLS = [  # (weight decay on log_omega/log_sigma, init, constraint)
    (wd, init, constraint)
    for wd in ("on", "off")
    for init in ("boundary", "off")
    for constraint in ("clamp", "penalty", "none")
]
MODELS = ("mope", "ega-m")  # whose (omega, sigma) a row learns: MOPE's table or EGA-M's filters
VARIANT = {"mope": "a-mope", "ega-m": "a-ega-m"}
PREFIX = {"mope": "mope", "ega-m": "ega_m"}  # spectra / summary name prefix of each model
LABEL = {"mope": "MOPE", "ega-m": "EGA-M (NON-CAUSAL)"}


def row_name(model: str, wd: str, init: str, constraint: str) -> str:
    return f"{model}-wd_{wd}-init_{init}-{constraint}"


def cell_row(model: str, wd: str, init: str, constraint: str) -> Row:
    pre = PREFIX[model]
    overrides = [f"model.{pre}_init={init}", f"model.{pre}_constraint={constraint}"]
    if wd == "off":
        overrides.append("train.no_decay=log_omega,log_sigma")
    setup = " (the paper's setup)" if (wd, init, constraint) == ("on", "boundary", "clamp") else ""
    return Row(
        row_name(model, wd, init, constraint),
        VARIANT[model],
        tuple(overrides),
        label=f"{LABEL[model]}: wd {wd}, init {init}, {constraint}{setup}",
    )


ROWS = tuple(cell_row(m, *c) for m in MODELS for c in CELLS)
BASELINE = row_name("mope", "on", "boundary", "clamp")


def cell_rows(model: str) -> tuple[str, ...]:
    """The 12 cells' row names of ``model`` ("mope" or "ega-m"), in grid order."""
    return tuple(row_name(model, *c) for c in CELLS)


MOPE_ROWS = cell_rows("mope")


def row_model(row: Row) -> str:
    return next(m for m, v in VARIANT.items() if v == row.variant)


# --------------------------------------------------------------------------- analysis


def analyze(cfg: Config, state, corpus) -> dict:
    """Per seed: the cell, the decay-only factor and how far the learned raw log-parameters are
    from where weight decay ALONE takes them (no data gradient), and the learned (constrained)
    omega, sigma beside their init (for a plot)."""
    params = state.params
    model = "mope" if "mope" in params else "ega-m"
    pre = PREFIX[model]
    init = getattr(cfg.model, f"{pre}_init")
    constraint = getattr(cfg.model, f"{pre}_constraint")
    masks = spectra.learned_logs(decay_mask(cfg, params), model)  # is each pair decayed?
    decayed = bool(np.all(np.concatenate([np.ravel(x) for x in masks])))
    decay_cfg = (
        cfg
        if decayed
        else dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, weight_decay=0.0))
    )
    lo0, ls0 = spectra.initial_logs(cfg, model, init)
    lo_pred = spectra.decay_only_prediction(decay_cfg, lo0)
    ls_pred = spectra.decay_only_prediction(decay_cfg, ls0)
    lo, ls = spectra.learned_logs(params, model)
    values = (spectra.mope_values if model == "mope" else spectra.ega_m_values)(cfg.model, params)
    return {
        "model": model,
        "weight_decay_on_spectral": decayed,
        "init": init,
        "constraint": constraint,
        "decay_factor": float(spectra.decay_only_prediction(decay_cfg, np.ones(1))[0]),
        "median_abs_data_shift_log_omega": float(np.median(np.abs(lo - lo_pred))),
        "median_abs_data_shift_log_sigma": float(np.median(np.abs(ls - ls_pred))),
        "max_abs_data_shift_log_omega": float(np.max(np.abs(lo - lo_pred))),
        "max_abs_data_shift_log_sigma": float(np.max(np.abs(ls - ls_pred))),
        "median_abs_decay_shift_log_sigma": float(np.median(np.abs(ls_pred - ls0))),
        "omega": np.ravel(values[f"{pre}_omega"]).tolist(),
        "sigma": np.ravel(values[f"{pre}_sigma"]).tolist(),
        "init_omega": np.exp(lo0).tolist(),
        "init_sigma": np.exp(ls0).tolist(),
    }


def cells_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """The single-script version's per-cell table from the records (mean over seeds)."""
    recs = by_row(records)
    m, t = scale.model, scale.train
    pairs = m.get("n_embd", ModelConfig().n_embd) // 2
    lines = [
        "## omega sigma = 5: data or setup?",
        "",
        f"Peak lr {t['lr']:.4e} (warmup {t['warmup_steps']}, cosine over {t['max_steps']} "
        f"steps) so that sum lr = {integrated_lr(m, t):.4f} = the reference schedule's "
        f"{REFERENCE_INTEGRATED_LR:.4f}. Per cell, mean over seeds: fraction of the (omega, "
        "sigma) pairs on the boundary (|omega sigma - 5| < 1e-3), below it, with the raw "
        "product < 5 (the clamp acts); ranges; the data shift of log sigma = |learned - where "
        "weight decay alone takes it| (median, max over pairs); final val loss. MOPE: "
        f"{pairs} pairs; EGA-M: 4 filters per head and layer (the authors' per-head filters, "
        "issue 40; NON-CAUSAL rows).",
        "",
        "| model | wd on spectral | init | constraint | n | on boundary | below 5 "
        "| raw product < 5 (clamp acts) | omega sigma [min, median, max] "
        "| omega range | sigma range | data shift of log sigma (median, max) | val loss |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in experiment.rows:
        rs = [r for r in recs.get(row.name, []) if r.get("analysis") and r.get("summary")]
        if not rs:
            continue
        model, a = row_model(row), rs[0]["analysis"]
        pre = PREFIX[model]

        def f(k: str, rs=rs, pre=pre) -> float:
            return float(np.mean([r["summary"][f"{pre}_{k}"] for r in rs]))

        def g(k: str, rs=rs) -> float:
            return float(np.mean([r["analysis"][k] for r in rs]))

        val = float(np.mean([r[experiment.metric] for r in rs]))
        lines.append(
            f"| {model} | {'on' if a['weight_decay_on_spectral'] else 'off'} | {a['init']} "
            f"| {a['constraint']} | {len(rs)} | {f('on_boundary_frac'):.3f} "
            f"| {f('below_bound_frac'):.3f} | {f('clamp_active_frac'):.3f} "
            f"| [{f('product_min'):.3f}, {f('product_median'):.3f}, {f('product_max'):.3f}] "
            f"| [{f('omega_min'):.2f}, {f('omega_max'):.2f}] "
            f"| [{f('sigma_min'):.2f}, {f('sigma_max'):.2f}] "
            f"| {g('median_abs_data_shift_log_sigma'):.3f}, "
            f"{g('max_abs_data_shift_log_sigma'):.3f} | {val:.4f} |"
        )
    r = reference_decay_prediction()
    lines += [
        "",
        "Weight decay alone in the paper's reference run (no data gradient at all; init on the "
        f"boundary, 5000 steps, through the clamp): log-parameters x {r['decay_factor']:.4f}, "
        f"omega in [{r['omega_range'][0]:.2f}, {r['omega_range'][1]:.2f}], sigma in "
        f"[{r['sigma_range'][0]:.2f}, {r['sigma_range'][1]:.2f}], on boundary "
        f"{r['on_boundary_frac']:.3f}; the paper reports omega in [1.11, 3.35], sigma in "
        "[1.49, 4.50], all pairs on the boundary.",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------- claim A5

CLAIM_VALUE = 1.0  # "every pair": the fraction on omega sigma = 5 the claim states
UNIT = "fraction"  # its margin: cl.MARGINS["fraction"] (0.05)
WHAT = {"mope": "MOPE pairs", "ega-m": "EGA-M filters"}
EFFECT_UNIT = "fraction on omega sigma = 5"


def paper_cell(model: str) -> str:
    """The paper's setup: weight decay on, init on the boundary, the clamp."""
    return row_name(model, "on", "boundary", "clamp")


def is_foil(row: str) -> bool:
    """A cell without the clamp or without the boundary init (what could show the setup makes
    the boundary)."""
    return not (row.endswith("-clamp") and "-init_boundary-" in row)


def boundary_counts(records: list[dict], model: str = "mope") -> dict[str, tuple[list, list]]:
    """{cell row: (hits per seed, items per seed)} of ``model``'s cells with records: the
    (omega, sigma) pairs (MOPE's pairs, EGA-M's filters) on omega sigma = 5 of each seed,
    round(summary ``<prefix>_on_boundary_frac`` x N), N = len(analysis ``omega``)."""
    recs = by_row(records)
    key = f"{PREFIX[model]}_on_boundary_frac"
    out = {}
    for row in cell_rows(model):
        hits, totals = [], []
        for r in sorted(recs.get(row, []), key=lambda r: int(r["seed"])):
            where = f"{row} seed {r.get('seed')}"
            omega = (r.get("analysis") or {}).get("omega")
            if not omega:
                raise ValueError(
                    f"{where}: the record has no analysis['omega'], so the count N of "
                    f"{WHAT[model]} behind {key} is unknown (mope-jax campaign analyze "
                    "omega_sigma_control adds it from the run's checkpoint)"
                )
            if key not in (r.get("summary") or {}):
                raise ValueError(f"{where}: the record's summary has no {key}")
            n = len(omega)
            x = float(r["summary"][key]) * n
            if abs(x - round(x)) > 1e-6 * n:
                raise ValueError(f"{where}: {key} x {n} = {x} is not a count")
            hits.append(int(round(x)))
            totals.append(n)
        if totals:
            out[row] = (hits, totals)
    return out


def boundary_fractions(records: list[dict], model: str = "mope") -> dict[str, dict]:
    """Per cell row of ``model`` with records: the fraction of its (omega, sigma) pairs on
    omega sigma = 5 over every seed's pairs, its Wilson interval with the seeds as clusters
    (``cl.fraction_interval``) and its own verdict against the claim's 1 +- 0.05
    (``cl.judge_value``; untested below 3 seeds): {"frac", "lo", "hi", "n_eff", "n" (seeds),
    "hits", "totals", "verdict", "note"}."""
    out = {}
    for row, (hits, totals) in boundary_counts(records, model).items():
        frac, lo, hi, n_eff = cl.fraction_interval(hits, totals)
        verdict, note = cl.judge_value(
            frac,
            lo,
            hi,
            CLAIM_VALUE,
            UNIT,
            len(totals),
            what=f"{WHAT[model]} on omega sigma = 5, `{row}`",
        )
        out[row] = dict(
            frac=frac,
            lo=lo,
            hi=hi,
            n_eff=n_eff,
            n=len(totals),
            hits=hits,
            totals=totals,
            verdict=verdict,
            note=note,
        )
    return out


def _cell_text(row: str, c: dict) -> str:
    return (
        f"`{row}` {c['frac']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}] ({sum(c['hits'])}/"
        f"{sum(c['totals'])} over {c['n']} seed{'s' if c['n'] != 1 else ''}): {c['verdict']} "
        f"({c['note']})"
    )


def _boundary_judge(exp: Experiment, by_scale: dict, model: str) -> cl.Verdict:
    """'Every pair converges to omega sigma = 5' for ``model``'s 12 cells, at the scale the
    ledger hands it, by the ledger's rule for a claim of a value (mope_jax.claims.rule).

    Each cell: the fraction of its pairs on omega sigma = 5 over every seed's pairs, with the
    Wilson 95% interval, seeds as clusters (``cl.fraction_interval``), judged against the
    claim's 1 with the fraction margin 0.05 (``cl.judge_value``): reproduced when the interval
    lies within [0.95, 1], contradicted when wholly below 0.95 (resolved far from the claim),
    inconclusive otherwise, untested below 3 seeds. A *foil* is a cell without the clamp or
    without the boundary init. The claim, in this order:

      * contradicted: the paper's cell (wd on, init on the boundary, clamp) is contradicted;
      * untested: the paper's cell has fewer than 3 seeds (or no records);
      * produced by the setup: the paper's cell is not contradicted (reproduced or
        inconclusive) and at least one foil is contradicted;
      * reproduced: all 12 cells are reproduced;
      * untested: a cell that could still decide it (a foil, or any cell for reproduced) has
        fewer than 3 seeds or no records;
      * inconclusive otherwise.

    Below 3 seeds the numbers are shown with the verdict untested (the ledger's "n 2, not
    judged"); ``cl.untested()`` without evidence only when the scale has none of the cells."""
    rows = cell_rows(model)
    paper = paper_cell(model)
    sc = cl.reading_scale(exp, by_scale, rows)
    if sc is None:
        return cl.untested()
    recs = by_scale[sc]
    cells = boundary_fractions(recs, model)
    if not cells:
        return cl.untested()
    foils = {row: c for row, c in cells.items() if is_foil(row)}
    lowest = min(foils, key=lambda r: (foils[r]["frac"], -foils[r]["n"])) if foils else None
    paper_v = cells[paper]["verdict"] if paper in cells else "untested"
    missing = [row for row in rows if row not in cells]
    undecided = missing + [row for row, c in cells.items() if c["verdict"] == "untested"]
    if paper_v == "contradicted":
        verdict = "contradicted"
    elif paper_v == "untested":
        verdict = "untested"
    elif any(c["verdict"] == "contradicted" for c in foils.values()):
        verdict = "produced by the setup"
    elif not missing and all(c["verdict"] == "reproduced" for c in cells.values()):
        verdict = "reproduced"
    elif undecided:
        verdict = "untested"
    else:
        verdict = "inconclusive"

    lo_edge = CLAIM_VALUE - cl.MARGINS[UNIT]
    within = sum(lo_edge <= c["lo"] and c["hi"] <= CLAIM_VALUE for c in cells.values())
    far = [row for row, c in foils.items() if c["verdict"] == "contradicted"]
    parts = [
        f"fraction of {WHAT[model]} with omega sigma = 5, Wilson 95% interval: paper's setup "
        + (_cell_text(paper, cells[paper]) if paper in cells else f"`{paper}` not run at `{sc}`")
    ]
    if lowest is not None:
        parts.append(
            f"lowest without the clamp or the boundary init {_cell_text(lowest, foils[lowest])}"
        )
        parts.append(f"{len(far)}/{len(foils)} such cells resolved below {lo_edge:g}")
    parts.append(
        f"{within}/{len(cells)} cells with the interval within {lo_edge:g}..{CLAIM_VALUE:g}"
        + (f" ({len(missing)} of the 12 not run)" if missing else "")
    )
    ns = sorted({c["n"] for c in cells.values()})
    n_text = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]} a cell"
    parts.append(f"seeds as clusters, n {n_text}, scale `{sc}`")

    effects, cited = [], [paper, lowest]
    for row in dict.fromkeys(r for r in cited if r is not None and r in cells):
        c = cells[row]
        label = "paper's setup" if row == paper else "lowest foil"
        effects.append(
            cl.Effect(
                f"{WHAT[model]}: {label} `{row}`",
                c["frac"],
                c["lo"],
                c["hi"],
                c["n"],
                CLAIM_VALUE if row == paper else None,
                cl.is_causal(exp, sc, recs, [row]),
                EFFECT_UNIT,
                verdict=c["verdict"],
            )
        )

    def short(row: str) -> str:
        c = cells[row]
        return f"{c['frac']:.3f} [{c['lo']:.3f}, {c['hi']:.3f}], n {c['n']}: {c['verdict']}"

    headline = "; ".join(
        [f"paper's setup {short(paper)}" if paper in cells else "paper's setup not run"]
        + ([f"lowest foil `{lowest}` {short(lowest)}"] if lowest is not None else [])
    )
    return cl.Verdict(
        verdict,
        "; ".join(parts),
        cl.causality(exp, sc, recs, [r for r in (paper, lowest) if r is not None and r in cells]),
        scale=sc,
        rows=rows,
        effects=effects,
        headline=headline,
    )


def a5_judge(exp: Experiment, by_scale: dict) -> cl.Verdict:
    """Claim A5 on MOPE's 12 cells (:func:`_boundary_judge`)."""
    return _boundary_judge(exp, by_scale, "mope")


def a5g_judge(exp: Experiment, by_scale: dict) -> cl.Verdict:
    """Claim A5g on EGA-M's 12 cells (paper 1's gate, NON-CAUSAL full z-norm), by the same
    rule as A5 (:func:`_boundary_judge`): each cell's fraction on omega sigma = 5 against the
    claim's 1 within the fraction margin 0.05, its Wilson interval over the seeds as clusters.
    The claim is that the convergence recurs, so its value is A5's: 1."""
    return _boundary_judge(exp, by_scale, "ega-m")


CLAIMS = (
    cl.Claim(
        "A5",
        "every (omega, sigma) pair of MOPE converges to omega sigma = 5",
        "128/128 pairs at 5.000",
        a5_judge,
        f"mope-jax campaign run omega_sigma_control --scale mid --seeds 3 (the "
        f"{len(MOPE_ROWS)} `mope-*` cells; a cell needs 3 seeds for a verdict)",
        short="every MOPE pair ends on omega sigma = 5",
    ),
    cl.Claim(
        "A5g",
        "the convergence to omega sigma = 5 recurs in the separate energy-gate experiment "
        "(paper 1's EGA-M filters), a property of character-level language",
        "qualitative (observed in both experiments; no fraction given)",
        a5g_judge,
        "mope-jax campaign run omega_sigma_control --scale mid --seeds 3 (the 12 `ega-m-*` "
        "cells; a cell needs 3 seeds for a verdict)",
        short="the same in the EGA-M gate's filters",
    ),
)


# --------------------------------------------------------------------------- figures


def _cell_label(wd: str, init: str, constraint: str) -> str:
    paper = (wd, init, constraint) == ("on", "boundary", "clamp")
    return f"wd {wd}, init {init}, {constraint}" + (" (paper's setup)" if paper else "")


def figures(experiment: Experiment, by_scale: dict) -> dict:
    """``mope-jax report --regenerate``'s ``forest.png`` in place of the generic forest (val
    loss against the MOPE cell, which is not what A5 is about): per scale with records (smoke
    excluded), every cell's fraction of (omega, sigma) on omega sigma = 5 with its Wilson 95%
    interval, seeds as clusters (:func:`boundary_fractions`, the numbers claims A5 and A5g are
    judged on), the claim's 1 +- 0.05 shaded, MOPE and EGA-M side by side, each point coloured
    by its cell's own verdict (``cl.judge_value``; untested below 3 seeds)."""
    from mope_jax.analysis.figures import VERDICT_COLORS, FigureData

    lo_edge = CLAIM_VALUE - cl.MARGINS[UNIT]
    panels = []
    for sc in experiment.scales:
        recs = by_scale.get(sc.name) or []
        if sc.name == "smoke" or not recs:
            continue
        per_model = {m: boundary_fractions(recs, m) for m in MODELS}
        if not any(per_model.values()):
            continue
        for model in MODELS:
            items = []
            for i, (row, c) in enumerate(
                (row_name(model, *cell), per_model[model].get(row_name(model, *cell)))
                for cell in CELLS
            ):
                if c is None:
                    continue
                items.append(
                    {
                        "row": i,
                        "cell": row,
                        "mean": min(1.0, max(0.0, c["frac"])),
                        "ci_low": min(1.0, max(0.0, c["lo"])),
                        "ci_high": min(1.0, max(0.0, c["hi"])),
                        "n": c["n"],
                        "hits": sum(c["hits"]),
                        "total": sum(c["totals"]),
                        "verdict": c["verdict"],
                        "paper": CLAIM_VALUE if row == paper_cell(model) else None,
                        "causal": cl.is_causal(experiment, sc.name, recs, [row]),
                    }
                )
            seeds = sorted({it["n"] for it in items})
            if not seeds:
                n_text = "no records"
            elif len(seeds) == 1:
                n_text = f"{seeds[0]} seed{'s' if seeds[0] != 1 else ''} a cell"
            else:
                n_text = f"{seeds[0]}-{seeds[-1]} seeds a cell"
            panels.append({"title": f"{LABEL[model]}, scale `{sc.name}`: {n_text}", "items": items})
    if not panels:
        return {}
    used = {it["verdict"] for p in panels for it in p["items"]}
    return {
        "forest.png": FigureData(
            "fraction_forest",
            {
                "title": f"{experiment.title}: fraction of (omega, sigma) on omega sigma = 5 "
                "per cell, Wilson 95% interval with the seeds as clusters; each point coloured "
                "by its cell's own verdict against the claim's 1 (claims A5, A5g; untested "
                f"below {cl.MIN_SEEDS} seeds)",
                "labels": [_cell_label(*cell) for cell in CELLS],
                "xlabel": "fraction of the cell's (omega, sigma) with |omega sigma - 5| < 1e-3 "
                "(MOPE: pairs; EGA-M: filters)",
                "band": [lo_edge, CLAIM_VALUE],
                "band_label": f"the claim's {CLAIM_VALUE:g} +- {cl.MARGINS[UNIT]:g} (margin)",
                "xlim": [-0.03, 1.13],
                "ncols": len(MODELS),
                "verdicts": {w: c for w, c in VERDICT_COLORS.items() if w in used},
                "source": f"experiments/results/{experiment.name}/<scale>/records (summary "
                "<model>_on_boundary_frac x len(analysis omega), per seed)",
                "panels": panels,
            },
        )
    }


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


def main(argv=None) -> int:
    """Alias: ``python experiments/omega_sigma_control.py --scale S [...]`` runs
    ``mope-jax campaign run omega_sigma_control --scale S [...]`` in this repository."""
    from mope_jax.cli import campaign_script

    return campaign_script(__file__, argv)


# --------------------------------------------------------------------------- the earlier script
# ``results/paper_a/omega_sigma_control_cpu{,_egam}.json`` (made by the single-script version of
# this experiment) name ``render`` below as their renderer; the helpers are shared.


def reference_decay_prediction() -> dict:
    """The paper's own run, weight decay alone (no data gradient), through the clamp."""
    ref = Config()
    lo, ls = morlet_init(ref.model.n_embd // 2)
    lo_t = spectra.decay_only_prediction(ref, lo)
    ls_t = spectra.decay_only_prediction(ref, ls)
    om, sg = clamp_paper(lo_t.astype(np.float32), ls_t.astype(np.float32))
    om, sg = np.asarray(om), np.asarray(sg)
    return {
        "decay_factor": float(lo_t[-1] / lo[-1]),
        "omega_range": [float(om.min()), float(om.max())],
        "sigma_range": [float(sg.min()), float(sg.max())],
        "on_boundary_frac": float(np.mean(np.abs(om * sg - 5.0) < spectra.BOUNDARY_TOL)),
        "claimed": {
            "omega_range": [1.11, 3.35],
            "sigma_range": [1.49, 4.50],
            "on_boundary_frac": 1.0,
        },
    }


def render(p: dict, json_path: Path) -> dict[str, str]:
    """``omega_sigma_control_<scale>.md`` from its JSON alone (``mope-jax report --regenerate``)."""
    return {Path(json_path).with_suffix(".md").name: render_markdown(p, json_path)}


def render_markdown(p: dict, json_path: Path) -> str:
    env, m, t = p["env"], p["config"]["model"], p["config"]["train"]
    r = p["reference_decay_only"]
    date = (
        p["date_utc"][:16].replace("T", " ") + " UTC"
    )  # 2026-11-29T13:22:41+00:00 -> 2026-11-29 13:22 UTC
    models = [
        c.get("model", "mope") for c in p["cells"]
    ]  # JSON written before EGA-M rows: all MOPE
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

        val = t_interval([x["val_loss"] for x in s])
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
            f"{f('max_abs_data_shift_log_sigma'):.3f} | {val[0]:.4f} |"
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


if __name__ == "__main__":
    sys.exit(main())
