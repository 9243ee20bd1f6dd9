"""How long a campaign's missing runs take: an :class:`Estimate` from this campaign's own
records made on this kind of machine (the ETA of ``campaign status``), or from one training step
measured now (``mope-jax campaign estimate``; ``run`` measures when a budget needs it)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from mope_jax.campaign.records import Campaign, read_records
from mope_jax.campaign.spec import Row
from mope_jax.campaign.status import RowPlan, plan


@dataclass(frozen=True)
class Estimate:
    """Seconds for a row group of k seeds: ``overhead + k * per_run[row]``."""

    per_run: dict[str, float]
    overhead: float
    source: str
    # rows whose pace is a guess: no record of their own (the median of the others) and not
    # measured themselves (another row's measured pace)
    guessed: frozenset[str] = frozenset()
    # per-row overhead where it is not ``overhead``: a measured row's compiles (a pace from
    # records already holds them in its group's wall time, a measured step does not)
    row_overhead: dict[str, float] = field(default_factory=dict)

    def seconds(self, row: str, k: int) -> float:
        return self.row_overhead.get(row, self.overhead) + k * self.per_run[row] if k else 0.0

    def scaled(self, factor: float, source: str) -> Estimate:
        """Every row's seconds times ``factor`` (this machine's load now, measured)."""
        per = {r: s * factor for r, s in self.per_run.items()}
        over = {r: s * factor for r, s in self.row_overhead.items()}
        return Estimate(per, self.overhead * factor, source, self.guessed, over)

    def measured_for_guessed(self, measured: Estimate, row: str) -> Estimate:
        """The rows without records at ``measured``'s pace (measured on ``row``, one of them),
        and with its compiles, instead of the median of rows that may be other models; the
        others stay guesses."""
        per = {r: measured.per_run[r] if r in self.guessed else s for r, s in self.per_run.items()}
        over = dict(self.row_overhead) | {r: measured.overhead for r in self.guessed}
        return Estimate(
            per,
            self.overhead,
            f"{self.source}; rows without one: {measured.source}",
            self.guessed - {row},
            over,
        )

    def with_measured(self, row: str, measured: Estimate) -> Estimate:
        """``row`` at its own measured pace and compiles (no longer a guess); the other rows
        unchanged."""
        per = dict(self.per_run)
        per[row] = measured.per_run[row]
        over = dict(self.row_overhead) | {row: measured.overhead}
        return Estimate(per, self.overhead, self.source, self.guessed - {row}, over)


def _machine(env: dict) -> tuple:
    keys = ("backend", "device", "processor", "cpu_model", "cpu_count", "platform")
    return tuple(env.get(k) for k in keys)


def estimate_from_records(c: Campaign, env: dict) -> Estimate | None:
    """Per-run seconds measured by this campaign's own records made on this kind of machine
    (the wall time of each record's row group / its seeds, or its training time when that is
    longer: a resumed run's wall time is only its last call's; each row its own when it has
    some, else the median of all, and such rows are listed in ``guessed``)."""
    per: dict[str, list[float]] = {}
    for rec in read_records(c.records_dir, [r.name for r in c.experiment.rows]):
        camp = rec.get("campaign") or {}
        if _machine(rec.get("env") or {}) != _machine(env) or not camp.get("group_seeds"):
            continue
        group_s = max(camp["group_wall_s"], float(rec.get("train_seconds") or 0.0))
        per.setdefault(rec["row"], []).append(group_s / len(camp["group_seeds"]))
    if not per:
        return None
    import numpy as np

    every = float(np.median([x for xs in per.values() for x in xs]))
    return Estimate(
        {r.name: float(np.median(per[r.name])) if r.name in per else every for r in c.rows},
        0.0,
        f"from {sum(map(len, per.values()))} records of this campaign on this machine",
        frozenset(r.name for r in c.rows if r.name not in per),
    )


# A lent accelerator is never measured before it trains (a measurement is a compile): where this
# campaign has no record made on this kind of device, a run's seconds are its model FLOPs
# (mope_jax.device) over the device's datasheet peak at the scale's precision times an assumed
# MFU, and a row costs LEASE_ROW_OVERHEAD_S of compilation on top. Guesses, labelled as such,
# and on the slow side of what the first loans measured (33-42% MFU at float32 on an H200,
# 49-69 s per compile); a row's records then give its own pace for the next rows and loans.
ASSUMED_MFU = {"f32": 0.30, "tf32": 0.15, "bf16": 0.15}
LEASE_ROW_OVERHEAD_S = 90.0


def estimate_for_lease(c: Campaign, env: dict, kind: str | None = None) -> Estimate | None:
    """Seconds per run without measuring anything: this campaign's records on this kind of
    machine (:func:`estimate_from_records`; a row without its own record takes the others'
    median), else the FLOP count at ASSUMED_MFU of the device's peak (``kind``: its
    ``device_kind``); None when neither is known (e.g. a CPU with no record: no peak)."""
    est = estimate_from_records(c, env)
    if est is not None:
        return est
    from mope_jax.device import device_kind, model_flops_per_token, peak_tflops

    kind = kind or device_kind()
    per, precision = {}, None
    for r in c.rows:
        cfg, _ = c.prepared(r)
        precision = cfg.model.precision
        peak = peak_tflops(kind, precision)
        if peak is None:
            return None
        t = cfg.train
        tokens = t.max_steps * t.batch_size * cfg.model.block_size
        evals = math.ceil(t.max_steps / t.eval_interval)
        eval_tokens = evals * 2 * t.eval_batches * t.batch_size * cfg.model.block_size / 3
        flops = (tokens + eval_tokens) * model_flops_per_token(cfg.model)
        per[r.name] = flops / (peak * 1e12 * ASSUMED_MFU[precision])
    every = {r.name: per.get(r.name, max(per.values())) for r in c.experiment.rows}
    return Estimate(
        every,
        LEASE_ROW_OVERHEAD_S,
        f"a guess: model FLOPs at {100 * ASSUMED_MFU[precision]:.0f}% of {kind}'s {precision} "
        f"peak, {LEASE_ROW_OVERHEAD_S:.0f} s of compiles a row (no record of this campaign on "
        "this device yet)",
    )


def eta_line(c: Campaign, plans: list[RowPlan]) -> str | None:
    """``campaign status``: the time the missing runs need at the pace this campaign's records
    were made on this kind of machine (None when nothing is missing)."""
    from mope_jax.provenance import environment

    todo = [p for p in plans if p.missing]
    if not todo:
        return None
    runs = sum(len(p.missing) for p in todo)
    how = f"`mope-jax campaign estimate {c.experiment.name} --scale {c.scale.name}` measures"
    est = estimate_from_records(c, environment())
    if est is None:
        return f"ETA: no record of this campaign was made on this kind of machine; {how} it"
    total = sum(est.seconds(p.row.name, len(p.missing)) for p in todo)
    guessed = [p.row.name for p in todo if p.row.name in est.guessed]
    guess = (
        f"; {', '.join(guessed)}: no record of {'its' if len(guessed) == 1 else 'their'} own, "
        "taken at the other rows' median pace: a guess, another model may be several times slower"
        if guessed
        else ""
    )
    return (
        f"ETA ~{minutes(total)} ({total / 3600:.1f} h) for the {runs} missing runs at the pace "
        f"{est.source} (median per row, whatever ran beside them){guess}; {how} each row now"
    )


def measure_step(cfg, steps: int = 3) -> tuple[float, float]:
    """(compile seconds, seconds per step) of one seed of ``cfg``: compile and time ``steps``
    training steps twice."""
    import jax
    import jax.numpy as jnp

    from mope_jax.train import make_train, prepare

    cfg, corpus = prepare(cfg)
    tr = make_train(cfg)
    data = jnp.asarray(corpus.train)
    state = jax.jit(tr.init)(jax.random.PRNGKey(0))
    fn = jax.jit(tr.train_steps, static_argnums=2)
    t0 = time.perf_counter()
    state, m = fn(state, data, steps)
    jax.block_until_ready(m)
    t1 = time.perf_counter()
    state, m = fn(state, data, steps)
    jax.block_until_ready(m)
    t2 = time.perf_counter()
    step = (t2 - t1) / steps
    return max(t1 - t0 - (t2 - t1), 0.0), step


def _run_seconds(cfg, step_s: float) -> float:
    """One run's training and evaluation seconds from its seconds per training step (an
    evaluation batch counted as a forward pass, ~1/3 of a step)."""
    t = cfg.train
    evals = math.ceil(t.max_steps / t.eval_interval)
    return t.max_steps * step_s + evals * 2 * t.eval_batches * step_s / 3


def estimate_by_measuring(c: Campaign, row: Row) -> Estimate:
    c.prepared(row)  # its corpus checked, with the hints of a campaign
    cfg = c.config(row)
    compile_s, step_s = measure_step(cfg)
    per_run = _run_seconds(cfg, step_s)
    programs = 3 if c.experiment.audit else 2  # training, evaluation (and the audit's)
    return Estimate(
        {r.name: per_run for r in c.rows},
        programs * compile_s,
        f"measured on {row.name}: {step_s * 1e3:.1f} ms/step, compile {compile_s:.1f} s",
        frozenset(r.name for r in c.rows if r.name != row.name),  # the others: this row's pace
    )


def estimate_rows(c: Campaign, plans: list[RowPlan] | None = None, log=print) -> str:
    """``campaign estimate``: measure one seed's training step of every row with missing seeds
    (compile, then 2 x 3 timed steps; nothing is saved) and return the per-row table and the
    total, for planning before a run."""
    plans = plan(c) if plans is None else plans
    todo = [p for p in plans if p.missing]
    head = f"campaign {c.experiment.name}, scale {c.scale.name}"
    if not todo:
        return f"{head}: nothing to train (every planned run has its record)"
    for p in todo:  # every row's corpus checked first, with the hints of a campaign
        c.prepared(p.row)
    programs = 3 if c.experiment.audit else 2
    width = max(len(p.row.name) for p in todo)
    lines = [
        f"{head}: measured now on this machine, one seed per row (compile, then 2 x 3 timed "
        "steps); a run = its training steps plus evaluation at ~1/3 of a step per batch; a "
        "row's missing seeds train together, one after another",
        f"  {'row':<{width}}  ms/step  compile  per run     missing  row total",
    ]
    total = 0.0
    for p in todo:
        log(f"measuring {p.row.name} ...")
        cfg = c.config(p.row)
        compile_s, step_s = measure_step(cfg)
        per_run = _run_seconds(cfg, step_s)
        row_s = programs * compile_s + len(p.missing) * per_run
        total += row_s
        lines.append(
            f"  {p.row.name:<{width}}  {step_s * 1e3:7.1f}  {compile_s:5.1f} s  "
            f"{minutes(per_run):>10}  {len(p.missing):7d}  {minutes(row_s):>9}"
        )
    runs = sum(len(p.missing) for p in todo)
    lines.append(
        f"total: {runs} runs, ~{minutes(total)} ({total / 3600:.1f} h) for this campaign alone "
        "on this machine; anything running beside it slows it"
    )
    return "\n".join(lines)


def minutes(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"
