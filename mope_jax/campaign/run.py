"""Running a campaign (``mope-jax campaign run``): train every planned (row, seed) without a
record, the missing seeds of a row as one :func:`mope_jax.sweep.sweep`, write one record per seed
and re-render the table after each row; and measure again on the local checkpoints of records
already made (``campaign analyze``: an analysis declared after the runs; ``campaign reaudit``:
the causality audit of an earlier method)."""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from mope_jax.campaign.configs import config_diff, corpus_id, declared_causal
from mope_jax.campaign.estimate import (
    Estimate,
    estimate_by_measuring,
    estimate_from_records,
    minutes,
)
from mope_jax.campaign.records import Campaign, read_record, read_records
from mope_jax.campaign.render import display, fmt, render_campaign
from mope_jax.campaign.status import format_plan, plan, rel, seeds_text, stale_message
from mope_jax.errors import CampaignError
from mope_jax.provenance import at_write, jsonable, utc_now


@dataclass
class CampaignResult:
    trained: list[tuple[str, int]]  # (row, seed) whose record this call wrote
    left: list[tuple[str, int]]  # planned runs still without a record
    table: Path | None
    stopped: str | None = None  # why it stopped early: "budget" or "sigterm"


# run_campaign measures a step for its ETA only when a budget needs it or the missing runs
# total at least this many training steps
MEASURE_MIN_STEPS = 1000


def run_campaign(
    c: Campaign,
    *,
    strategy: str = "auto",
    budget_s: float | None = None,
    work_dir: str | Path | None = None,
    progress: bool = True,
    command: str | None = None,
    continue_args: Sequence[str] = (),
    estimate: Estimate | None = None,
    log: Callable[[str], None] = print,
    measure: bool = True,
    row_done: Callable[[str, list[int]], None] | None = None,
) -> CampaignResult:
    """Train every planned (row, seed) without a record, one sweep per row, then render.

    budget_s: stop at a run boundary: before a row group whose estimate does not fit in what is
    left, train the first seeds of it that fit (then stop), or stop. estimate: seconds per run
    (default: from this campaign's records on this machine, else measured on the first missing
    row; not measured, and no ETA printed, without a budget when the missing runs total fewer
    than MEASURE_MIN_STEPS steps); with a budget, a row whose pace is still another row's is
    measured before its group; after each row group the estimate of the rest is scaled by
    this call's measured / estimated seconds so far (records made under another load mislead
    the budget otherwise).
    continue_args: extra options of the printed command to continue. measure=False: never
    measure a step (on a borrowed accelerator a measurement is a compile); a budget then needs
    an ``estimate`` (:func:`mope_jax.campaign.estimate.estimate_for_lease`).
    row_done(row, seeds): called once a row group's records and table are written (a device
    job packs them there, so that a call killed later still returns them)."""
    from mope_jax.provenance import environment
    from mope_jax.rundir import unwritable

    if not measure and budget_s is not None and estimate is None:
        raise CampaignError(
            "a budget needs each row's pace: measure=False takes one only with an estimate "
            "(e.g. estimate_for_lease)"
        )
    t_start = time.monotonic()
    plans = plan(c)
    log(format_plan(c, plans))
    msg = stale_message(c, plans)
    if msg:
        raise CampaignError(msg)
    groups = [(p.row, list(p.missing)) for p in plans if p.missing]
    groups.sort(key=lambda g: g[0].init_from is not None)  # rows that start from others last
    work = Path(work_dir) if work_dir is not None else c.root / "runs" / "campaigns"
    work = work / c.experiment.name / c.scale.name
    command = command or c.command(continue_args)
    # before anything is trained: where the records, the table and the checkpoints go
    for d in [c.results_dir, c.records_dir] + [c.records_dir / r.name for r, _ in groups]:
        why = unwritable(d)
        if why:
            raise CampaignError(
                f"cannot write the records and table in {rel(d, c.root)}: {why}; make it "
                "writable, or run in a writable clone of the repository (--root)"
            )
    from mope_jax.sweep import check_memory

    for r, seeds in groups:  # every row to train fits in memory, then its corpus
        check_memory(c.config(r), len(seeds), strategy)
    for r, _ in groups:  # the corpus of every row to train, checked (with --corpus hints)
        c.prepared(r)
    why = unwritable(work) if groups else None
    if why:
        raise CampaignError(
            f"cannot write checkpoints in {work}: {why}; give a writable --work-dir"
        )
    trained: list[tuple[str, int]] = []
    stopped = None
    if not groups:
        log("nothing to train: every planned run has its record")
    else:
        env = environment()
        n_runs = sum(len(s) for _, s in groups)
        steps = sum(len(s) * c.config(r).train.max_steps for r, s in groups)
        # a measurement costs a compile and 6 steps: without a budget to plan, not worth it
        # for short runs (smoke scales, tests), where it is a large part of the whole call
        worth = measure and (budget_s is not None or steps >= MEASURE_MIN_STEPS)
        if estimate is None:
            estimate = estimate_from_records(c, env)
            if worth and estimate is None:
                estimate = estimate_by_measuring(c, groups[0][0])
            elif worth:  # rows without records may be other models: measure the first
                new = next((r for r, _ in groups if r.name in estimate.guessed), None)
                if new is not None:
                    estimate = estimate.measured_for_guessed(
                        estimate_by_measuring(c, new), new.name
                    )
        if estimate is None:
            estimate = Estimate({r.name: 0.0 for r in c.rows}, 0.0, "not measured")
            why = f"fewer than {MEASURE_MIN_STEPS}, and no budget" if measure else "--no-measure"
            log(
                f"ETA not measured: {n_runs} runs, {steps} training steps in all ({why}); "
                "`mope-jax campaign estimate` measures"
            )
        else:
            total = sum(estimate.seconds(r.name, len(s)) for r, s in groups)
            log(f"ETA ~{minutes(total)} for {n_runs} runs ({estimate.source})")
        planned_s = measured_s = 0.0  # this call's groups: estimated and measured seconds
        base = estimate
        for row, seeds in groups:
            if planned_s > 0:  # what the rows trained now took says how loaded we are now
                estimate = base.scaled(
                    measured_s / planned_s,
                    f"{base.source}, times {measured_s / planned_s:.2f} as measured by this call",
                )
            if measure and budget_s is not None and row.name in estimate.guessed:
                # its pace so far is another row's: another model may be several times slower
                # (Morlet-RoPE at mid: 2 s/step where sin/cos, measured first, took 0.6 s)
                m = estimate_by_measuring(c, row)
                log(f"  {m.source}")
                base = base.with_measured(row.name, m)
                estimate = estimate.with_measured(row.name, m)
            if budget_s is not None:
                left_s = budget_s - (time.monotonic() - t_start)
                k = len(seeds)
                while k and estimate.seconds(row.name, k) > left_s:
                    k -= 1
                if k < len(seeds):
                    stopped = "budget"
                    if k == 0:
                        log(
                            f"budget: {row.name} seeds {seeds_text(seeds)} need "
                            f"~{minutes(estimate.seconds(row.name, len(seeds)))}, "
                            f"{minutes(max(left_s, 0))} left; stopping before it"
                        )
                        break
                    log(
                        f"budget: {minutes(max(left_s, 0))} left, enough for {k} of the "
                        f"{len(seeds)} missing seeds of {row.name}; training those, then stopping"
                    )
                    seeds = seeds[:k]
            t_group = time.monotonic()
            done = _train_group(c, row, seeds, work, strategy, progress, command, log)
            if done is None:
                stopped = "sigterm"
                break
            trained += [(row.name, s) for s in done]
            write_table(c)  # the records of this group are in the table as soon as they land
            if row_done is not None:
                row_done(row.name, list(done))
            planned_s += base.seconds(row.name, len(seeds))
            measured_s += time.monotonic() - t_group
            if budget_s is not None and planned_s > 0:
                log(f"  ETA now: this call's runs took {measured_s / planned_s:.2f}x the estimate")
            if stopped:
                break
    left = [(p.row.name, s) for p in plans for s in p.missing if (p.row.name, s) not in trained]
    if left:
        by_row: dict[str, list[int]] = {}
        for r, s in left:
            by_row.setdefault(r, []).append(s)
        log(
            f"left: {len(left)} runs ("
            + "; ".join(f"{r}: seeds {seeds_text(s)}" for r, s in by_row.items())
            + f"); continue with: {c.command(continue_args)}"
        )
    table = write_table(c)
    log(f"table: {rel(table, c.root)}")
    return CampaignResult(trained, left, table, stopped)


def _train_group(c, row, seeds, work, strategy, progress, command, log) -> list[int] | None:
    """One sweep over ``seeds`` of ``row``, one record per seed; None if SIGTERM stopped it."""
    import jax

    cfg = c.config(row)
    run_dir = work / row.name / ("seeds-" + "-".join(str(s) for s in seeds))
    log(
        f"{display(row, declared_causal(c.experiment, c.scale, row))}: training seeds "
        f"{seeds_text(seeds)} in {rel(run_dir, c.root)}"
    )
    # the row's precision for everything it runs (training, audit, analysis), including what
    # the model's own context does not reach (a custom_vjp's backward pass is traced later)
    from mope_jax.attention.core import MATMUL_PRECISIONS
    from mope_jax.device import compile_log

    with (
        jax.default_matmul_precision(MATMUL_PRECISIONS[cfg.model.matmul_precision]),
        compile_log() as compiles,
    ):
        return _train_group_at_precision(
            c, row, seeds, cfg, run_dir, work, strategy, progress, command, log, compiles
        )


def _train_group_at_precision(
    c, row, seeds, cfg, run_dir, work, strategy, progress, command, log, compiles
) -> list[int] | None:
    import jax
    import numpy as np

    from mope_jax.analysis import spectra
    from mope_jax.device import perf_record, perf_text
    from mope_jax.rundir import atomic_write_text
    from mope_jax.sweep import sweep

    t0 = time.perf_counter()
    start, init_from = None, None
    if row.init_from is not None:
        start, init_from = _start_params(c, row, seeds, work, strategy, progress, log)
        if start is None:
            return None
    res = sweep(
        cfg,
        seeds,
        run_dir,
        strategy=strategy,
        progress=progress,
        init_params=start,
        init_from=init_from,
        log=log,
    )
    if res.interrupted:
        log(f"stopped; run the same command again to resume {row.name} from {run_dir}")
        return None
    t_trained = time.perf_counter()
    compiled_in_training = len(compiles.events)
    _, corpus = c.prepared(row)
    extras = []
    for r, seed in enumerate(seeds):
        state = jax.tree_util.tree_map(lambda x: np.asarray(x)[r], res.states)
        run_cfg = dataclasses.replace(res.cfg, train=dataclasses.replace(res.cfg.train, seed=seed))
        extra = {"summary": jsonable(spectra.eval_summary(run_cfg, state))}
        if c.experiment.audit:
            from mope_jax.analysis.causality import audit_model

            extra["audit"] = jsonable(audit_model(res.cfg.model, state.params).to_dict())
        analyze = row.analyze or c.experiment.analyze
        if analyze is not None:
            extra["analysis"] = jsonable(analyze(run_cfg, state, corpus))
        extras.append(extra)
    wall = time.perf_counter() - t0
    date = utc_now()
    slots = jax.device_count() if res.strategy == "shard" else 1
    # one program trained every seed: its speed is the record's tokens/s times the seeds
    perf = perf_record(res.cfg.model, res.records[0].get("tokens_per_s"), len(seeds), slots)
    group = {
        "group_seeds": list(seeds),
        "group_wall_s": wall,
        "strategy": res.strategy,
        # where the group's time went: training (its compiles included) and what came after
        # (audit, summaries, analysis); the XLA compilations of each
        "train_wall_s": t_trained - t0,
        "after_training_s": wall - (t_trained - t0),
        "compiles_training": compiled_in_training,
        "compiles_after_training": len(compiles.events) - compiled_in_training,
        "compile_s": compiles.seconds,
    }
    for r, seed in enumerate(seeds):
        rec = dict(res.records[r])
        rec.update(extras[r])
        rec.update(
            row=row.name,
            experiment=c.experiment.name,
            scale=c.scale.name,
            command=command,
            date_utc=date,
            corpus=corpus_id(corpus.meta),
            campaign=group,
            perf=perf,
        )
        if init_from is not None:
            rec["init_from"] = init_from
        if "env" in rec:  # the run's env was taken when it started; HEAD may have moved since
            rec["env"] = at_write(rec["env"])
        path = c.record_path(row.name, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(jsonable(rec), indent=1) + "\n")
        metric = rec.get(c.experiment.metric)
        log(f"  {row.name} seed {seed}: {c.experiment.metric} {fmt(metric)}")
    log(
        f"  {row.name}: {len(seeds)} runs in {wall:.0f} s ({group['train_wall_s']:.0f} s "
        f"training, {group['after_training_s']:.0f} s after it; {len(compiles.events)} XLA "
        f"compilations, {compiles.seconds:.0f} s); {perf_text(perf)}"
    )
    return list(seeds)


def _start_params(c, row, seeds, work, strategy, progress, log):
    """(stacked final parameters of row ``row.init_from`` for ``seeds``, where they came from),
    or (None, None) when SIGTERM stopped the rebuild of a missing base checkpoint."""
    import jax
    import numpy as np

    from mope_jax.sweep import load_seed

    base = c.experiment.row(row.init_from)
    no_record = [s for s in seeds if not c.record_path(base.name, s).is_file()]
    if no_record:
        raise CampaignError(
            f"row {row.name} starts from row {base.name}, which has no record for seeds "
            f"{seeds_text(no_record)}; train it first: --rows {base.name},{row.name}"
        )
    lost = [s for s in seeds if _run_dir_of(work, base.name, s) is None]
    if lost:  # a fresh clone: the record is committed, the checkpoint is not
        log(
            f"{row.name} starts from {base.name}, whose checkpoints of seeds {seeds_text(lost)} "
            "are not on this machine: training them again (no record is written)"
        )
        from mope_jax.sweep import sweep

        rebuilt_dir = work / base.name / ("seeds-" + "-".join(str(s) for s in lost))
        res = sweep(
            c.config(base), lost, rebuilt_dir, strategy=strategy, progress=progress, log=log
        )
        if res.interrupted:
            log(f"stopped; run the same command again to resume {base.name} from {rebuilt_dir}")
            return None, None
        for r, s in enumerate(lost):
            want = read_record(c.record_path(base.name, s)).get(c.experiment.metric)
            got = res.records[r].get(c.experiment.metric)
            same = "equal to" if got == want else f"vs {fmt(want)} in"
            log(f"  {base.name} seed {s} rebuilt: {c.experiment.metric} {fmt(got)} {same} record")
    params, sources = [], []
    for s in seeds:
        d = _run_dir_of(work, base.name, s)
        _, state = load_seed(d, s)
        params.append(state.params)
        sources.append(f"{rel(d, c.root)}/seed{s}")
    stacked = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *params)
    return stacked, f"row {base.name}, final parameters of " + ", ".join(sources)


def _run_dir_of(work: Path, row: str, seed: int) -> Path | None:
    """The newest finished sweep folder of ``row`` under ``work`` that holds ``seed``."""
    found = sorted(
        (d for d in (work / row).glob("seeds-*") if (d / f"seed{seed}" / "final.json").is_file()),
        key=lambda d: (d / f"seed{seed}" / "final.json").stat().st_mtime,
    )
    return found[-1] if found else None


def write_table(c: Campaign) -> Path:
    from mope_jax.rundir import atomic_write_text

    path = c.results_dir / "table.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    records = read_records(c.records_dir, [r.name for r in c.experiment.rows])
    atomic_write_text(path, render_campaign(c.experiment, c.scale, records))
    try:  # and the experiment's figures (campaign.figures): never stops a campaign
        from mope_jax.analysis.report import sync
        from mope_jax.campaign.figures import campaign_figures

        sync(campaign_figures(c.experiment, c.results_dir.parent))
    except Exception as e:  # noqa: BLE001
        import sys

        print(
            f"warning: figures of {c.experiment.name} not drawn ({type(e).__name__}: {e}); "
            "run mope-jax report --regenerate experiments/results",
            file=sys.stderr,
        )
    return path


# --------------------------------------------------------------------------- measuring again


def _matching_checkpoint(c: Campaign, work: Path, row: str, seed: int, rec: dict, log, left: str):
    """(cfg, state, run folder) of the local checkpoint that made record ``rec``, or None (no
    checkpoint here, or one of another config or step; ``left`` says what stays as it is)."""
    from mope_jax.sweep import load_seed

    where = f"{row} seed {seed}"
    d = _run_dir_of(work, row, seed)
    if d is None:
        log(f"{where}: no checkpoint under {rel(work, c.root)}; {left}")
        return None
    cfg, state = load_seed(d, seed)
    diff = config_diff(rec["config"], cfg.to_dict())
    if diff or int(state.step) != int(rec["steps"]):
        why = "; ".join(diff) or f"step {int(state.step)} vs {rec['steps']}"
        log(f"{where}: the checkpoint in {rel(d, c.root)} is another run ({why}); skipped")
        return None
    return cfg, state, d


def analyze_records(
    c: Campaign, *, work_dir: str | Path | None = None, log: Callable[[str], None] = print
) -> list[tuple[str, int]]:
    """Measure the rows' ``analyze`` on the local checkpoint of every current record that has
    no ``analysis`` (an analysis declared after the runs were trained), add it to the record
    and re-render the table; returns the (row, seed) updated. A record whose checkpoint is not
    on this machine, or whose checkpoint has another config or step, is left as it is."""
    import jax
    import numpy as np

    from mope_jax.rundir import atomic_write_text

    work = (Path(work_dir) if work_dir is not None else c.root / "runs" / "campaigns") / (
        f"{c.experiment.name}/{c.scale.name}"
    )
    updated = []
    for p in plan(c):
        analyze = p.row.analyze or c.experiment.analyze
        if analyze is None:
            continue
        for seed in p.done:
            path = c.record_path(p.row.name, seed)
            rec = read_record(path)
            if "analysis" in rec:
                continue
            found = _matching_checkpoint(
                c, work, p.row.name, seed, rec, log, "left without analysis"
            )
            if found is None:
                continue
            cfg, state, d = found
            _, corpus = c.prepared(p.row)
            state = jax.tree_util.tree_map(np.asarray, state)
            rec["analysis"] = jsonable(analyze(cfg, state, corpus))
            atomic_write_text(path, json.dumps(jsonable(rec), indent=1) + "\n")
            updated.append((p.row.name, seed))
            log(f"{p.row.name} seed {seed}: analysis added from {rel(d, c.root)}")
    table = write_table(c)
    log(f"{len(updated)} records updated; table: {rel(table, c.root)}")
    return updated


SUPERSEDED_AUDITS = ("perturb", "jvp")  # sampled large-T audits that `reaudit` redoes


def reaudit_records(
    c: Campaign, *, work_dir: str | Path | None = None, log: Callable[[str], None] = print
) -> list[tuple[str, int]]:
    """Re-run the causality audit on the local checkpoint of every current record whose audit
    was made by an earlier large-T method: finite differences (``perturb``, whose float32
    rounding floor can reach the tolerance for a causal FFT model) or derivatives at 16-19
    probed positions only (``jvp``, blind to a leak from an unprobed position). The record's
    ``audit`` becomes the current method's
    (``jvp-cuts`` at large T: every future position); the old one is kept under
    ``audit_superseded`` with the date it was replaced (and the audit it had superseded, if
    any, inside it: nothing is lost). Re-renders the table and returns the (row, seed)
    updated; records without a matching local checkpoint are left as they are (and named)."""
    import jax
    import numpy as np

    from mope_jax.analysis.causality import audit_model
    from mope_jax.rundir import atomic_write_text

    if not c.experiment.audit:
        raise CampaignError(f"experiment {c.experiment.name} declares no causality audit")
    work = (Path(work_dir) if work_dir is not None else c.root / "runs" / "campaigns") / (
        f"{c.experiment.name}/{c.scale.name}"
    )
    updated = []
    for p in plan(c):
        for seed in p.done:
            path = c.record_path(p.row.name, seed)
            rec = read_record(path)
            old = rec.get("audit")
            if not old or old.get("method") not in SUPERSEDED_AUDITS:
                continue
            found = _matching_checkpoint(c, work, p.row.name, seed, rec, log, "audit left as it is")
            if found is None:
                continue
            cfg, state, _ = found
            params = jax.tree_util.tree_map(np.asarray, state.params)
            new = jsonable(audit_model(cfg.model, params).to_dict())
            rec["audit"] = new
            earlier = (
                {"audit_superseded": rec["audit_superseded"]} if "audit_superseded" in rec else {}
            )
            rec["audit_superseded"] = old | {"replaced_utc": utc_now()} | earlier  # a chain
            atomic_write_text(path, json.dumps(jsonable(rec), indent=1) + "\n")
            updated.append((p.row.name, seed))
            log(
                f"{p.row.name} seed {seed}: audit {old['method']} leak_rel {old['leak_rel']:.3g} "
                f"({'causal' if old['causal'] else 'LEAKS'}) -> {new['method']} leak_rel "
                f"{new['leak_rel']:.3g} ({'causal' if new['causal'] else 'LEAKS'})"
            )
    table = write_table(c)
    log(f"{len(updated)} records re-audited; table: {rel(table, c.root)}")
    return updated
