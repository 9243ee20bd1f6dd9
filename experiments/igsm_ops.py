"""iGSM by operation count (paper B, claim B2): does the RoPE frequency a model uses fall
as the data's dependency width W grows?

Command:  mope-jax campaign run igsm_ops --scale cpu [--rows ops-1,ops-8] [--budget-minutes M]
          (status: mope-jax campaign status igsm_ops; ``python experiments/igsm_ops.py --scale S
          [...]`` is an alias of the run command)
Writes:   experiments/results/igsm_ops/<scale>/records/<row>/seed<s>.json and table.md
Runtime per run: smoke (20 steps, 1 seed): measured 9-13 s per row with the analysis (2-core
          CPU beside a campaign); cpu (1500 steps, 3 seeds per row): not measured yet
          (``campaign run`` prints an ETA from a measured step first).
Claim (paper B): the number of operations of an iGSM problem controls its dependency distance,
and a model trained on it uses lower RoPE frequencies as that distance grows (theta* ~ 1/W).

Rows: ``ops-<k>`` for k = 1, 2, 4, 8: the clean-room iGSM generator (mope_jax.data.igsm, mod
23, ops + and -, exactly k operations per problem, 2 leaves) written as a character file under
``runs/paper_b/igsm_ops/`` (when this module is imported, if missing or different; never
committed); a RoPE-only model trained on it. Baseline ``ops-1``. The rows differ in their data,
so their val-loss differences test nothing; the study is in the section.

Definitions, fixed before any run of this campaign:
  * W of a row = the mean of :func:`mope_jax.data.igsm.lookup_distances` over 2,000 problems
    of the row's generator (seed 7): the distances over which a solution copies a value stated
    before it (a leaf's value from the prompt, an operand's value from the step that made it).
    The median and the 90th percentile are reported beside it. (The half-maximum width of the
    mutual-information kernel is 1 character for every k, so it cannot rank the rows.)
  * theta_eff of a model = exp(mean over layers and heads of sum_i p_i log theta_i), p the
    frequency energy on 8 fixed validation windows (mope_jax.analysis.freq_energy).
  * Trend: least squares of log theta_eff on log W over every run (slope and its 95%
    t-interval; the 1/W law predicts -1), and c = theta_eff W per row.
  * Claim B2 is reproduced if the slope's interval lies below 0, contradicted if above 0,
    inconclusive otherwise (mope_jax.claims' rule), at
    the largest non-smoke scale with at least 2 seeds on at least 3 rows.

Setup (our choices; the paper's are not public): 2 layers, width 128, 4 heads (D = 32, the 16
frequencies of base 1e4), T = 256 (an 8-operation problem is ~380 characters; 90% of its
lookups are under ~160), no dropout, batch 16, AdamW lr 1e-3, warmup 100, cosine.
"""

from __future__ import annotations

import math
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

from mope_jax.analysis.freq_energy import energy_report, probe_tokens
from mope_jax.campaign import Experiment, Row, Scale, by_row
from mope_jax.config import Config
from mope_jax.data import igsm

try:
    from experiments import _paper_b as pb
except ImportError:  # run as a script
    import _paper_b as pb

OPS_COUNTS = (1, 2, 4, 8)
OPS = ("+", "-")
CHARS = {"smoke": 100_000, "cpu": 1_000_000}
MODEL = dict(block_size=256, n_layer=2, n_head=4, n_embd=128, dropout=0.0)  # + variant "rope"
W_PROBLEMS, W_SEED = 2000, 7


def data_file(k: int, chars: int) -> Path:
    """The k-operation training text (deterministic; rewritten only when missing or different)."""
    path = pb.RUNS / "igsm_ops" / f"ops{k}_{chars}.txt"
    text = igsm.igsm_text(chars, seed=2024 + k, ops_range=(k, k), ops=OPS)
    if not path.is_file() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


@lru_cache(maxsize=None)
def width(k: int) -> dict:
    """W of the k-operation generator: mean, median and 90th percentile lookup distance."""
    probs = igsm.problems(W_PROBLEMS, seed=W_SEED, ops_range=(k, k), ops=OPS)
    d = np.array([x for p in probs for x in igsm.lookup_distances(p.text)], np.float64)
    return {
        "W": float(d.mean()),
        "W_median": float(np.median(d)),
        "W_p90": float(np.percentile(d, 90)),
        "lookups_per_problem": len(d) / W_PROBLEMS,
        "chars_per_problem": float(np.mean([len(p.text) for p in probs])),
    }


def _train(steps: int) -> dict:
    return pb.train_fields(steps, max(steps // 4, 1), batch_size=16) | dict(
        lr=1e-3, warmup_steps=min(100, steps // 4)
    )


def _scale(name: str, steps: int, seeds: int) -> Scale:
    return Scale(
        name,
        MODEL,
        _train(steps),
        seeds=seeds,
        row_overrides={f"ops-{k}": (f"data.path={data_file(k, CHARS[name])}",) for k in OPS_COUNTS},
    )


ROWS = tuple(
    Row(f"ops-{k}", "rope", ("data.source=text",), label=f"iGSM, {k} operations per problem")
    for k in OPS_COUNTS
)


def ops_of(cfg: Config) -> int:
    return int(Path(cfg.data.path).stem.split("_")[0].removeprefix("ops"))


def analyze(cfg: Config, state, corpus) -> dict:
    """One trained seed: the row's W and the model's frequency energy summaries."""
    k = ops_of(cfg)
    rep = energy_report(cfg.model, state.params, probe_tokens(np.asarray(corpus.val), 256))
    return {
        "ops": k,
        **width(k),
        "log_theta_eff": rep["log_theta_eff_mean"],
        "theta_eff": rep["theta_eff_mean"],
        "log_theta_eff_layer": np.asarray(rep["log_theta_eff"]).mean(1).tolist(),
        "entropy": rep["entropy_mean"],
        "p_layer": rep["p_layer"],
    }


def _runs(records: list[dict]) -> list[dict]:
    return [
        dict(r["analysis"], seed=int(r["seed"]), row=r["row"])
        for r in records
        if (r.get("analysis") or {}).get("W")
    ]


def _w_span(runs: list[dict]) -> str:
    """'W 2.1 to 3.6 (1.7x)': the dependency widths the runs cover."""
    ws = [r["W"] for r in runs]
    return f"{min(ws):.1f} to {max(ws):.1f} ({max(ws) / min(ws):.1f}x)"


def trend(runs: list[dict]):
    """Least squares of log theta_eff on log W over the runs (None with < 2 distinct W)."""
    from mope_jax.analysis.stats import line_fit

    if len({r["W"] for r in runs}) < 2:
        return None
    return line_fit([math.log(r["W"]) for r in runs], [r["log_theta_eff"] for r in runs])


def ops_section(experiment: Experiment, scale: Scale, records: list[dict]) -> str:
    """Per row: W (mean, median, p90), theta_eff per seed, c = theta_eff W; then the trend."""
    runs = _runs(records)
    if not runs:
        return ""
    lines = [
        "## Frequency against dependency width",
        "",
        "W = mean lookup distance of the generator (characters; median and 90th percentile "
        "beside it); theta_eff from the frequency energy on 8 validation windows, all layers "
        "and heads (rad/token); c = theta_eff W (the 1/W law: constant, paper ~3.02).",
        "",
        "| row | operations | W (median, p90) | chars / problem | n | theta_eff per seed | "
        "theta_eff mean +- sd | c = theta_eff W |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rs in by_row(records).items():
        an = [r["analysis"] for r in rs if (r.get("analysis") or {}).get("W")]
        if not an:
            continue
        a, th = an[0], [x["theta_eff"] for x in an]
        sd = f"{np.std(th, ddof=1):.4f}" if len(th) > 1 else "n/a"
        lines.append(
            f"| `{name}` | {a['ops']} | {a['W']:.1f} ({a['W_median']:.0f}, {a['W_p90']:.0f}) | "
            f"{a['chars_per_problem']:.0f} | {len(an)} | {', '.join(f'{t:.4f}' for t in th)} | "
            f"{np.mean(th):.4f} +- {sd} | {np.mean(th) * a['W']:.2f} |"
        )
    f = trend(runs)
    lines.append("")
    if f is None:
        lines.append("Trend: needs runs at two or more W.")
    else:
        ci = f"[{f.ci_low:+.3f}, {f.ci_high:+.3f}]" if f.n > 2 else "(n/a)"
        lines.append(
            f"Trend over {f.n} runs: slope of log theta_eff on log W = {f.slope:+.3f} {ci} "
            f"(95% t-interval; the 1/W law predicts -1, no effect 0), R^2 = {f.r2:.3f}."
        )
    return "\n".join(lines)


def _trend_judge(exp: Experiment, by_scale: dict):
    from mope_jax import claims as cl
    from mope_jax.analysis.stats import t_quantile

    for sc in reversed(exp.scales):
        if sc.name == "smoke" or sc.name not in by_scale:
            continue
        recs = by_row(by_scale[sc.name])
        rows = [n for n, rs in recs.items() if len(_runs(rs)) >= 2]
        if len(rows) < 3:
            continue
        runs = [r for n in rows for r in _runs(recs[n])]
        f = trend(runs)
        half = (f.ci_high - f.ci_low) / 2
        df = f.n - 2
        se = half / t_quantile(0.975, df)
        law, law_note = cl.judge_value(
            f.slope, f.ci_low, f.ci_high, -1.0, "slope", f.n, family=False
        )  # fmt: skip
        way, way_note, _, _ = cl.judge_estimate(
            f.slope, se, df, -1, f.n, unit="slope", family=False
        )
        evidence = (
            f"slope of log theta_eff on log W {f.slope:+.3f} [{f.ci_low:+.3f}, "
            f"{f.ci_high:+.3f}], {f.n} runs over {len(rows)} rows, scale `{sc.name}`: against "
            f"the law's -1 {law} ({law_note}); direction (slope below -{cl.MARGINS['slope']:g}) "
            f"{way} ({way_note}); W spans {_w_span(runs)}; untestable here: the records hold no "
            "lookup or answer accuracy, so whether the models learned the lookups (the task "
            "the claim is about) is not known"
        )
        return cl.Verdict(
            "untestable here",
            evidence,
            "ops-*: declared causal (RoPE)",
            scale=sc.name,
            rows=rows,
            effects=[
                cl.Effect(
                    "slope of log theta_eff on log W (law: -1)",
                    f.slope,
                    f.ci_low,
                    f.ci_high,
                    f.n,
                    -1.0,
                    unit="slope of log theta on log W",
                    verdict="untestable here",
                )
            ],
            headline=f"slope {f.slope:+.3f} [{f.ci_low:+.3f}, {f.ci_high:+.3f}] vs the law's -1; "
            "no accuracy in the records: whether the lookups were learned is unknown",
        )
    return cl.untested()


def _claims():
    from mope_jax import claims as cl

    return (
        cl.Claim(
            "B2",
            "on iGSM, more operations (a wider dependency W) lower the RoPE frequency a model uses",
            "theta* ~ 1/W (the number of operations sets the distance)",
            _trend_judge,
            "mope-jax campaign run igsm_ops --scale cpu",
            short="more operations lower the RoPE frequency used",
        ),
    )


EXPERIMENT = Experiment(
    name="igsm_ops",
    title="Paper B: iGSM by operation count (theta_eff against the dependency width W)",
    rows=ROWS,
    scales=(_scale("smoke", 20, 1), _scale("cpu", 1500, 3)),
    baseline="ops-1",
    claim=(
        "paper B: the number of operations sets the dependency distance of iGSM problems, and "
        "the RoPE frequency a trained model uses falls as it grows. The rows differ in their "
        "data, so their val-loss differences below test nothing; the study is in the section."
    ),
    analyze=analyze,
    sections=(ops_section,),
    claims=_claims(),
    paper_scale="not stated (abstract only)",
)


def main(argv=None) -> int:
    """Alias: ``python experiments/igsm_ops.py --scale S [...]`` runs
    ``mope-jax campaign run igsm_ops --scale S [...]`` in this repository."""
    from mope_jax.cli import campaign_script

    return campaign_script(__file__, argv)


if __name__ == "__main__":
    sys.exit(main())
