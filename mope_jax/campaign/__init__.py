"""Campaigns: an experiment declares rows, scales and comparisons; the library trains the runs
that have no record yet, keeps one small record per (row, seed) in git, and renders the table.

    experiments/<name>.py      EXPERIMENT = Experiment(name, title, rows, scales, baseline, ...)
    mope-jax campaign status <name> [--scale S]           the plan: done / missing per row
    mope-jax campaign run <name> --scale S [--budget-minutes M] [--strategy map] ...
    mope-jax report --regenerate experiments/results      re-render every table.md

Layout (``<root>`` is the repository root, the folder holding ``experiments/__init__.py``):

    <root>/experiments/results/<name>/<scale>/records/<row>/seed<s>.json   committed records
    <root>/experiments/results/<name>/<scale>/table.md                     rendered from them
    <root>/runs/campaigns/<name>/<scale>/<row>/seeds-<s1>-<s2>...          local checkpoints

A record is the ``final.json`` record of that seed (``train.summarize``: losses, curve, steps,
tokens/s, train seconds, parameters, declared causality, config, small spectra, env) plus
``row``, ``experiment``, ``scale``, ``command``, ``date_utc``, ``corpus`` (its digest, no
path), ``summary`` (:func:`mope_jax.analysis.spectra.eval_summary` of the trained state),
``campaign`` (the seeds trained together and their wall time, for the ETA) and, when the
experiment asks for it, ``audit`` (:func:`mope_jax.analysis.causality.audit_model` of the
trained parameters). The missing seeds of one row train together as ONE
:func:`mope_jax.sweep.sweep` program, so seed s of a row is the same run whichever seeds it
was trained with, on whichever machine (bitwise on CPU with ``map``, ``shard`` and
``sequential``): an interrupted campaign continued elsewhere renders the same table.

A record is *stale* when its config is not the row's current config (the corpus compared by
digest, not by path, so a clone elsewhere keeps its records valid); ``status`` shows it and
``run`` refuses to mix it in.

:func:`render_campaign` is a pure function of the records: everything above ``## Provenance``
depends only on their numbers (no clock, no machine), so tables from an interrupted and an
uninterrupted campaign are equal.

The parts, each importing only those listed above it (``from mope_jax.campaign import X`` gives
every name below; code outside this package imports from here, not from the parts):

    spec.py      the declarations: Row, Comparison, Scale, Section, Experiment
    discover.py  the repository root and its experiments: find_root, available, load_experiment
    configs.py   a row's config at a scale (row_config, data_fields, declared_causal) and what
                 makes a record stale (config_diff, corpus_diff)
    records.py   Campaign (one experiment at one scale: paths, configs) and its records:
                 read_record, validate_record, read_records, by_row
    render.py    the table from the records: render_campaign, paired, contrast, the comparison
                 family and provenance (pure: no file is read or written)
    status.py    the plan: plan, format_plan, stale_message (``campaign status``)
    estimate.py  how long the missing runs take: Estimate, estimate_from_records, eta_line,
                 measure_step, estimate_by_measuring, estimate_rows (``campaign estimate``)
    figures.py   a results folder's figures from its records (forest, curves, spectra)
    run.py       training the missing seeds (run_campaign), writing the table, and measuring
                 again on local checkpoints (analyze_records, reaudit_records)
"""

from mope_jax.campaign.configs import (
    config_diff,
    data_fields,
    declared_causal,
    default_data,
    row_config,
)
from mope_jax.campaign.discover import (
    available,
    find_root,
    import_experiment_module,
    load_experiment,
)
from mope_jax.campaign.estimate import (
    Estimate,
    estimate_by_measuring,
    estimate_from_records,
    estimate_rows,
    eta_line,
    measure_step,
    minutes,
)
from mope_jax.campaign.records import (
    RECORD_RE,
    RESULTS,
    Campaign,
    by_row,
    read_record,
    read_records,
    validate_record,
)
from mope_jax.campaign.figures import campaign_figures, for_campaign
from mope_jax.campaign.render import (
    above_provenance,
    comparison_family,
    comparisons_at,
    contrast,
    display,
    paired,
    render_campaign,
    same_data,
)
from mope_jax.campaign.run import (
    MEASURE_MIN_STEPS,
    SUPERSEDED_AUDITS,
    CampaignResult,
    analyze_records,
    reaudit_records,
    run_campaign,
    write_table,
)
from mope_jax.campaign.spec import Comparison, Experiment, Row, Scale, Section
from mope_jax.campaign.status import RowPlan, format_plan, plan, stale_message
from mope_jax.errors import CampaignError

__all__ = [
    "campaign_figures",
    "for_campaign",
    # spec
    "Comparison",
    "Experiment",
    "Row",
    "Scale",
    "Section",
    "CampaignError",
    # discover
    "available",
    "find_root",
    "import_experiment_module",
    "load_experiment",
    # configs
    "config_diff",
    "data_fields",
    "declared_causal",
    "default_data",
    "row_config",
    # records
    "RECORD_RE",
    "RESULTS",
    "Campaign",
    "by_row",
    "read_record",
    "read_records",
    "validate_record",
    # render
    "above_provenance",
    "comparison_family",
    "comparisons_at",
    "contrast",
    "display",
    "paired",
    "render_campaign",
    "same_data",
    # status
    "RowPlan",
    "format_plan",
    "plan",
    "stale_message",
    # estimate
    "Estimate",
    "estimate_by_measuring",
    "estimate_from_records",
    "estimate_rows",
    "eta_line",
    "measure_step",
    "minutes",
    # run
    "MEASURE_MIN_STEPS",
    "SUPERSEDED_AUDITS",
    "CampaignResult",
    "analyze_records",
    "reaudit_records",
    "run_campaign",
    "write_table",
]
