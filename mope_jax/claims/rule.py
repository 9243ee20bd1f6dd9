"""The verdict rule (this docstring) and the helpers every judge applies it with.

An experiment declares its claims (``Experiment.claims``); each :class:`Claim` has a
``judge(experiment, records_by_scale) -> Verdict`` that reads only campaign records, so the
ledger is regenerated, never typed: ``mope-jax report --regenerate experiments/results``
writes ``experiments/results/CLAIMS.md`` and the README's ledger and bottom-line blocks.
A study that trains nothing declares ``ANALYSIS = Analysis(name, results, claims)``; its
claims are judged from the committed results JSON it names.

**Scales.** Every claim is judged once at every declared scale that has records (``smoke``, a
pipeline check, never counts), each reading from that scale's records alone. A comparison
with fewer than :data:`MIN_SEEDS` (3) common seeds (or clusters) is shown, with its numbers and
n, and gets no verdict (``untested``: "n 1, not judged"). The claim's verdict is the reading
at the largest declared scale that gives one (for paper A: ``reference`` once it holds 3
seeds, else ``mid``); the readings at the other scales are shown beside it as supporting
evidence, and a claim whose verdicts differ between scales says so in the bottom line. Adding
seeds at a scale changes verdicts without a code change. Every verdict is written with its
scale ("contradicted at `mid`") wherever it appears.

**One materiality margin** per metric (:data:`MARGINS`: 0.02 nats on a val loss, 0.05 on an
accuracy or a fraction, 0.1 on a power law's exponent), for positive and negative claims
alike. With d the paper's direction and m the margin, a comparison's 95% interval (paired t
over seeds, or the judge's stated interval) is read in d-units:

  * *beyond*: the whole interval lies beyond +m (a material effect in the paper's direction);
  * *short*: the whole interval lies below +m (every material effect in the paper's direction
    excluded; the evidence says whether the effect is negligible, within +-m, or resolved the
    other way);
  * otherwise *open*.

A positive claim ("X lowers the loss") is ``reproduced`` when beyond, ``contradicted`` when
short; a negative claim ("X does not beat the baseline") is ``reproduced`` when short,
``contradicted`` when beyond; ``inconclusive`` when open. A claim of a value (a law's
exponent, a fraction of 1) is ``reproduced`` when the interval lies within the value +- m,
``contradicted`` when it lies wholly outside it, ``inconclusive`` otherwise. An inconclusive
comparison states the smallest effect it could have resolved (the interval's half-width) and
the seeds that would resolve the observed effect and the paper's (:func:`seeds_needed`: the
smallest n with t_{0.975, n-1} sd / sqrt(n) < |effect - m|); never a number at or below the
seeds already run: when the paper's effect would already have been resolved, it says so.

**A fraction** (of filters on omega sigma = 5, ...) gets an interval that stays in [0, 1] and
uses what was counted: the Wilson interval over every counted item of every seed, with the
seeds as clusters (its n is the effective count: the items divided by the design effect that
the spread between seeds implies, :func:`fraction_interval`).

**Multiplicity, one way.** Every test with a p-value (paired t and line-fit comparisons at each
claim's deciding scale; p is the two-sided p of the t statistic against the margin boundary the
decision is about, so p < 0.05 exactly when the 95% interval clears it) is one family for the
whole ledger, adjusted by Holm. A comparison whose Holm-adjusted p is >= :data:`ALPHA` decides
nothing (``inconclusive``), and CLAIMS.md lists every verdict that the adjustment flipped, with
both p-values. Intervals shown are the unadjusted 95% intervals. Fractions and bootstrap
intervals carry no p and are not in the family (CLAIMS.md names them).

Other verdicts (:data:`VERDICTS`):

  * a claim that needs several comparisons to hold together is ``contradicted`` if one is,
    ``reproduced`` if all are, ``untested`` if one has too few seeds, ``inconclusive``
    otherwise (:func:`combine`);
  * ``untestable here``: the metric is at its floor or at chance, or the records cannot show
    that the model learned the task the claim is about. An accuracy is *at chance* when the 95%
    interval of its mean over seeds reaches below chance + the accuracy margin (:func:`at_chance`);
  * ``leak``: the effect is resolved in the paper's direction only in a row that sees future
    tokens (declared NON-CAUSAL or audited LEAKS), never in its causal twin;
  * ``produced by the setup``: the effect follows from a choice of the setup (an init, a
    clamp), not from training: the paper's setup reaches the claimed value and a setup without
    that choice is resolved far from it;
  * ``description``: our own observation posed without a test (no verdict);
  * ``untested``: no records that could decide it (or fewer than 3 seeds); the ledger says what
    would test it.

**Against a baseline far from the paper's.** A verdict that compares a row with a baseline whose
loss at that scale is more than :data:`BASELINE_GAP_NATS` (0.1 nats) from the paper's own says
so beside it.

**Scale and convergence** (every row of the ledger): the records that decided a verdict give
its parameters, training tokens per run (steps x batch x T) and seeds, stated beside the
paper's own budget (``Experiment.paper_scale``), and, where the same rows have records at
``reference``, their loss there. Convergence is read on what the verdict compares, not on one
row's curve (a cosine schedule still lowers the loss at its end by design): an effect's *drift*
is its change over the last quarter of training (the paired effect at the last eval minus at
the first eval at or after 3/4 of the steps, mean over seeds, :func:`effect_drift`); an
effect that moved more than the margin is flagged *still moving*: more training could change
that comparison by about as much.

**Pooling precisions.** Records of two precisions (``ModelConfig.precision``) are never pooled
in one row (a record of another precision is stale). Two scales that differ only in precision
(paper A's ``reference``, bf16, and ``reference-f32``) may be pooled only when
:func:`precision_pooling` finds the difference negligible: in at least 3 rows, the same seed
trained at both precisions differs by at most half the loss margin (0.01 nats) and by at most
half the seed spread of that row where a spread is known. Written before any pair was trained.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from dataclasses import dataclass
from typing import Sequence

from mope_jax.claims.spec import (
    ALPHA,
    BASELINE_GAP_NATS,
    MARGINS,
    MIN_SEEDS,
    Verdict,
)
from mope_jax.claims.spec import CHANCE_MARGIN, FALLING_NATS, MARGIN_NATS  # noqa: F401


def decisive_scale(experiment, records_by_scale: dict, rows: Sequence[str]) -> str | None:
    """The largest declared scale whose records hold every row in ``rows`` with a common seed
    (None if none does). The ledger gives a judge one scale's records at a time; fewer than
    :data:`MIN_SEEDS` common seeds are shown there without a verdict."""
    best = None
    for sc in experiment.scales:  # declared smallest to largest
        if holds(records_by_scale, sc.name, rows):
            best = sc.name
    return best


def reading_scale(experiment, records_by_scale: dict, rows: Sequence[str]) -> str | None:
    """The largest declared scale (never smoke) whose records hold any row in ``rows``: the
    scale a judge reads (the ledger hands it one scale at a time); comparisons whose rows are
    missing there are shown as not run."""
    from mope_jax.campaign import by_row

    best = None
    for sc in experiment.scales:
        if sc.name == "smoke":
            continue
        recs = by_row(records_by_scale.get(sc.name, []))
        if any(recs.get(r) for r in rows):
            best = sc.name
    return best


def holds(records_by_scale: dict, scale: str, rows: Sequence[str], seeds: int = 1) -> bool:
    """Whether the records of ``scale`` (never smoke: a pipeline check, not evidence) hold every
    row in ``rows`` with at least ``seeds`` seeds in common."""
    from mope_jax.campaign import by_row

    if scale == "smoke":
        return False
    recs = by_row(records_by_scale.get(scale, []))
    common = [{int(r["seed"]) for r in recs.get(row, [])} for row in rows]
    return bool(common) and len(set.intersection(*common)) >= seeds


def difference(experiment, records: list[dict], a: str, b: str):
    """paired_t of a - b over the common seeds, on the experiment's metric."""
    from mope_jax.campaign import by_row, paired

    return paired(by_row(records), a, b, experiment.metric)[1]


def describe(t, scale: str, what: str) -> str:
    """'what +0.0633 [+0.0429, +0.0836], n 5, scale `mid`' (no interval at n 1)."""
    if t.n < 2 or not math.isfinite(t.ci_low):
        return f"{what} {t.mean:+.4f}, n {t.n}, scale `{scale}`"
    return f"{what} {t.mean:+.4f} [{t.ci_low:+.4f}, {t.ci_high:+.4f}], n {t.n}, scale `{scale}`"


def causality(experiment, scale: str, records: list[dict], rows: Sequence[str]) -> str:
    """'row: declared causal / NON-CAUSAL (audit: causal|LEAKS)' for each row."""
    from mope_jax.campaign import by_row, declared_causal

    recs, out = by_row(records), []
    for name in rows:
        row = experiment.row(name)
        text = (
            "causal"
            if declared_causal(experiment, experiment.scale(scale), row)
            else ("NON-CAUSAL")
        )
        audits = [r["audit"]["causal"] for r in recs.get(name, []) if r.get("audit")]
        if audits:
            text += f", audit {'causal' if all(audits) else 'LEAKS'}"
        out.append(f"`{name}` {text}")
    return "; ".join(out)


def is_causal(experiment, scale: str, records: list[dict], rows: Sequence[str]) -> bool:
    """Whether every row is declared causal and no audit of its records found a leak."""
    from mope_jax.campaign import by_row, declared_causal

    recs = by_row(records)
    for name in rows:
        if not declared_causal(experiment, experiment.scale(scale), experiment.row(name)):
            return False
        if any(r.get("audit") and not r["audit"]["causal"] for r in recs.get(name, [])):
            return False
    return True


# --------------------------------------------------------------------------- the rule


def seeds_needed(sd: float, effect: float | None, max_n: int = 100_000) -> int | None:
    """The smallest n >= 2 with t_{0.975, n-1} * sd / sqrt(n) < |effect|: the seeds a paired
    95% interval needs to resolve ``effect`` (already measured from the margin) at the spread
    ``sd`` (None without an effect, or beyond ``max_n``)."""
    from mope_jax.analysis.stats import t_quantile

    if effect is None or not effect or sd is None or math.isnan(sd):
        return None
    if sd == 0:
        return 2
    for n in range(2, max_n + 1):
        if t_quantile(0.975, n - 1) * sd / math.sqrt(n) < abs(effect):
            return n
    return None


def _as_paired(diffs):
    """A Paired (mean, std, interval, n) from a Paired or a sequence of per-seed differences."""
    if hasattr(diffs, "ci_low"):
        return diffs
    from mope_jax.analysis.stats import paired_t

    d = [float(x) for x in diffs]
    return paired_t(d, [0.0] * len(d))


@dataclass(frozen=True)
class Test:
    """One comparison a judge decided, for the ledger's Holm family: its unadjusted verdict and
    the two-sided p of its t statistic against the margin boundary."""

    key: tuple
    p: float
    verdict: str
    what: str = ""


_COLLECT: contextvars.ContextVar = contextvars.ContextVar("claims_collect", default=None)
_ADJUSTED: contextvars.ContextVar = contextvars.ContextVar("claims_adjusted", default=None)


@contextlib.contextmanager
def collecting(tests: list, adjusted: dict | None = None):
    """Inside: every test a judge decides is appended to ``tests``; with ``adjusted`` (key ->
    (Holm-adjusted p, family size)) a decided test whose adjusted p >= ALPHA reads inconclusive."""
    a, b = _COLLECT.set(tests), _ADJUSTED.set(adjusted)
    try:
        yield tests
    finally:
        _COLLECT.reset(a)
        _ADJUSTED.reset(b)


def _record(key, p: float, verdict: str, what: str) -> tuple[str, str]:
    """Register a test; (the verdict after the ledger's Holm adjustment, its note)."""
    tests = _COLLECT.get()
    if tests is not None:
        tests.append(Test(key, p, verdict, what))
    adjusted = _ADJUSTED.get()
    if adjusted is None or key not in adjusted or math.isnan(p):
        return verdict, ""
    adj, m = adjusted[key]
    if verdict in ("reproduced", "contradicted") and adj >= ALPHA:
        return "inconclusive", (
            f"Holm over the ledger's {m} tests: p {p:.2g} -> {adj:.2g}, no longer resolved "
            f"(unadjusted: {verdict})"
        )
    return verdict, f"Holm-adjusted p {adj:.2g} ({m} tests)"


def margin_p(t, direction: int, m: float) -> float:
    """Two-sided p of the paired t statistic of ``direction * mean`` against ``m`` (nan below
    two seeds; 0 or 1 with no spread)."""
    from mope_jax.analysis.stats import t_sf2

    if t.n < 2 or t.std is None or math.isnan(t.std):
        return float("nan")
    x = direction * t.mean - m
    if t.std == 0:
        return 0.0 if x else 1.0
    return t_sf2(x / (t.std / math.sqrt(t.n)), t.n - 1)


def _zone(lo: float, hi: float, direction: int, m: float, negative: bool):
    """(zone, verdict, near, far) of an interval read in the paper's direction against the
    margin m (module docstring): beyond +m, short of it, or open."""
    near, far = sorted((direction * lo, direction * hi))
    zone = "beyond" if near > m else ("short" if far < m else "open")
    if zone == "open":
        verdict = "inconclusive"
    elif negative:
        verdict = "reproduced" if zone == "short" else "contradicted"
    else:
        verdict = "reproduced" if zone == "beyond" else "contradicted"
    return zone, verdict, near, far


def judge_difference(
    diffs,
    paper_effect: float | None,
    direction: int,
    margin: float | None = None,
    *,
    negative: bool = False,
    unit: str = "nats",
    what: str = "",
) -> tuple[str, str]:
    """(verdict, evidence note) of one comparison by the module's rule.

    ``diffs``: a Paired (``mope_jax.analysis.stats.paired_t``) or the per-seed differences.
    ``direction``: -1 if the paper says the difference is below 0 (a lower loss), +1 above.
    ``margin``: the materiality margin (``MARGINS[unit]`` when None). Positive claim:
    reproduced when the interval lies wholly beyond the margin in ``direction``, contradicted
    when wholly short of it; ``negative=True`` (the claim "no material effect in
    ``direction``"): the reverse; inconclusive otherwise. Fewer than MIN_SEEDS seeds: untested
    (shown, not judged). The note says why a resolved verdict reads as it does, or, when
    inconclusive, what the data could resolve and the seeds the observed and the paper's
    effect would need."""
    t = _as_paired(diffs)
    if direction not in (-1, 1):
        raise ValueError("direction must be -1 or +1")
    m = MARGINS[unit] if margin is None else margin
    if t.n < MIN_SEEDS:
        return "untested", f"n {t.n} < {MIN_SEEDS} seeds: shown, not judged"
    zone, verdict, near, far = _zone(t.ci_low, t.ci_high, direction, m, negative)
    key = ("diff", round(t.mean, 12), round(t.ci_low, 12), round(t.ci_high, 12), t.n, direction)
    verdict_adj, holm_note = _record(key + (m, negative), margin_p(t, direction, m), verdict, what)
    if verdict_adj == "inconclusive":
        note = inconclusive_note(t, paper_effect, direction, m)
        return "inconclusive", "; ".join(x for x in (holm_note, note) if x)
    if zone == "beyond":
        note = f"resolved beyond the margin {m:g}"
    elif far < -m:
        note = f"resolved beyond the margin {m:g} against the paper's direction"
    elif near > -m:
        note = f"negligible: the interval lies within +-{m:g}"
    else:
        note = f"every effect beyond the margin {m:g} in the paper's direction excluded"
    return verdict_adj, "; ".join(x for x in (note, holm_note) if x)


def judge_estimate(
    estimate: float,
    se: float,
    df: float,
    direction: int,
    n: int,
    *,
    unit: str,
    margin: float | None = None,
    negative: bool = False,
    what: str = "",
    family: bool = True,
) -> tuple[str, str, float, float]:
    """:func:`judge_difference` for an estimate with a t interval of ``df`` degrees of freedom
    (a line fit's slope): (verdict, note, ci_low, ci_high); ``n`` units below MIN_SEEDS:
    untested."""
    from mope_jax.analysis.stats import t_quantile, t_sf2

    m = MARGINS[unit] if margin is None else margin
    half = t_quantile(0.975, df) * se
    lo, hi = estimate - half, estimate + half
    if n < MIN_SEEDS:
        return "untested", f"n {n} < {MIN_SEEDS}: shown, not judged", lo, hi
    zone, verdict, _, _ = _zone(lo, hi, direction, m, negative)
    p = t_sf2((direction * estimate - m) / se, df) if se > 0 and family else float("nan")
    key = ("estimate", round(estimate, 12), round(se, 12), df, direction, m, negative)
    verdict, note = _record(key, p, verdict, what)
    zone_note = {
        "beyond": f"resolved beyond the margin {m:g}",
        "short": f"every effect beyond the margin {m:g} in the paper's direction excluded",
        "open": f"the interval reaches across the margin {m:g}",
    }[zone]
    return verdict, "; ".join(x for x in (zone_note, note) if x), lo, hi


def inconclusive_note(t, paper_effect: float | None, direction: int = -1, m: float = 0.0) -> str:
    """'smallest resolvable effect +-h at n; seeds to resolve the observed effect: N; the
    paper's: M' (module docstring), never a count at or below the seeds already run."""
    h = (t.ci_high - t.ci_low) / 2
    note = f"smallest resolvable effect +-{h:.4f} at n {t.n}"
    seen = seeds_needed(t.std, abs(direction * t.mean - m))
    if seen is not None and seen <= t.n:
        note += f"; the observed {t.mean:+.4g} is resolved before the ledger-wide adjustment"
    else:
        note += f"; seeds to resolve the observed {t.mean:+.4g}: " + (
            f"{seen}" if seen is not None else "more than 100000"
        )
    if paper_effect is None:
        return note + "; the paper gives no effect size"
    need = seeds_needed(t.std, abs(direction * paper_effect - m))
    if need is not None and need <= t.n:
        return note + (
            f"; the paper's {paper_effect:+.4g} would already be resolved at n {t.n} "
            "(the interval excludes it)"
        )
    return (
        note
        + f"; the paper's {paper_effect:+.4g}: "
        + (f"{need}" if need is not None else "more than 100000")
    )


def judge_value(
    estimate: float,
    ci_low: float,
    ci_high: float,
    value: float,
    unit: str,
    n: int,
    *,
    margin: float | None = None,
    se: float | None = None,
    df: float | None = None,
    what: str = "",
    family: bool = True,
) -> tuple[str, str]:
    """(verdict, note) of a claim of a value (the rule: reproduced when the interval lies within
    ``value`` +- margin, contradicted when wholly outside it). ``n`` units (seeds, runs or
    clusters) below MIN_SEEDS: untested. With ``se`` and ``df`` (a t interval) the test joins
    the ledger's Holm family (unless ``family`` is False: a claim untestable here), its p
    against the nearer edge of value +- margin (two one-sided tests when inside)."""
    m = MARGINS[unit] if margin is None else margin
    if n < MIN_SEEDS:
        return "untested", f"n {n} < {MIN_SEEDS}: shown, not judged"
    lo, hi = value - m, value + m
    if lo <= ci_low and ci_high <= hi:
        verdict, note = "reproduced", f"within {value:g} +- {m:g}"
    elif ci_high < lo or ci_low > hi:
        verdict, note = "contradicted", f"wholly outside {value:g} +- {m:g}"
    else:
        verdict, note = "inconclusive", f"the interval reaches across {value:g} +- {m:g}"
    p = float("nan")
    if se and df and family:
        from scipy import stats as _st

        if lo <= estimate <= hi:  # two one-sided tests: p < ALPHA exactly when inside
            p = min(
                1.0, 2 * max(_st.t.sf((estimate - lo) / se, df), _st.t.sf((hi - estimate) / se, df))
            )
        else:
            edge = lo if estimate < lo else hi
            p = float(2 * _st.t.sf(abs(estimate - edge) / se, df))
    key = ("value", round(estimate, 12), round(ci_low, 12), round(ci_high, 12), n, value, m)
    verdict_adj, holm_note = _record(key, p, verdict, what)
    return verdict_adj, "; ".join(x for x in (note, holm_note) if x)


def fraction_interval(hits: Sequence[int], totals: Sequence[int], confidence: float = 0.95):
    """(fraction, low, high, effective n) of sum(hits) / sum(totals), the seeds as clusters: the
    Wilson interval at the effective count N / deff, deff = the cluster (ratio-estimator)
    variance over the binomial one (at least 1); stays in [0, 1]."""
    from mope_jax.analysis.stats import t_quantile

    hits, totals = [int(h) for h in hits], [int(n) for n in totals]
    if not totals or min(totals) <= 0 or any(h < 0 or h > n for h, n in zip(hits, totals)):
        raise ValueError("fraction_interval needs 0 <= hits <= totals > 0 per cluster")
    k, big_n = len(totals), sum(totals)
    p = sum(hits) / big_n
    n_eff = float(big_n)
    if k >= 2 and 0 < p < 1:
        mbar = big_n / k
        var_c = sum((h - p * n) ** 2 for h, n in zip(hits, totals)) / (k * (k - 1) * mbar**2)
        var_b = p * (1 - p) / big_n
        n_eff = big_n / max(1.0, var_c / var_b)
    z = -t_quantile((1 - confidence) / 2, 1e9)
    den = 1 + z * z / n_eff
    centre = (p + z * z / (2 * n_eff)) / den
    half = z * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff)) / den
    return p, max(0.0, centre - half), min(1.0, centre + half), n_eff


def combine(verdicts: Sequence[str]) -> str:
    """Comparisons that must hold together: contradicted if one is, reproduced if all are,
    untested if one has too few seeds, untestable here if one is, inconclusive otherwise."""
    if "contradicted" in verdicts:
        return "contradicted"
    if verdicts and all(v == "reproduced" for v in verdicts):
        return "reproduced"
    if "untested" in verdicts:
        return "untested"
    if "untestable here" in verdicts:
        return "untestable here"
    return "inconclusive"


def at_chance(values: Sequence[float], chance: float, margin: float = CHANCE_MARGIN) -> bool:
    """Whether an accuracy (one value per seed) is at chance: the 95% interval of its mean
    reaches below chance + margin (its mean, with one seed)."""
    from mope_jax.analysis.stats import summarize

    s = summarize(list(values))
    low = s.mean if s.n < 2 or math.isnan(s.ci_low) else s.ci_low
    return low < chance + margin


def describe_verdict(t, scale: str, what: str, verdict: str, note: str = "") -> str:
    """describe() followed by ': verdict' and the rule's note."""
    return f"{describe(t, scale, what)}: {verdict}" + (f" ({note})" if note else "")


def untested() -> Verdict:
    return Verdict("untested")


def precision_pooling(records_a: list[dict], records_b: list[dict], metric: str) -> dict:
    """Whether two scales that differ only in precision may be pooled (module docstring): for
    each (row, seed) trained at both, the difference a - b; negligible when at least 3 rows
    have a pair and every |difference| <= MARGINS['nats'] / 2 and <= half the row's seed sd
    (the larger-n scale's) where one is known. Returns {'pairs': [(row, seed, diff, sd)],
    'negligible': bool, 'why': str}."""
    from mope_jax.analysis.stats import summarize
    from mope_jax.campaign import by_row

    ra, rb = by_row(records_a), by_row(records_b)
    pairs = []
    for row in sorted(set(ra) & set(rb)):
        va = {int(r["seed"]): r[metric] for r in ra[row] if r.get(metric) is not None}
        vb = {int(r["seed"]): r[metric] for r in rb[row] if r.get(metric) is not None}
        more = max((va, vb), key=len)
        sd = summarize(list(more.values())).std if len(more) >= 2 else None
        for seed in sorted(set(va) & set(vb)):
            pairs.append((row, seed, float(va[seed] - vb[seed]), sd))
    limit = MARGINS["nats"] / 2
    rows = {p[0] for p in pairs}
    bad = [p for p in pairs if abs(p[2]) > limit or (p[3] is not None and abs(p[2]) > p[3] / 2)]
    if len(rows) < 3:
        why = f"{len(rows)} rows with a pair (3 needed): not measured, not pooled"
    elif bad:
        why = "not negligible: " + ", ".join(f"{r} seed {s} {d:+.4f}" for r, s, d, _ in bad)
    else:
        why = f"negligible in {len(rows)} rows (every |difference| <= {limit:g} and half the sd)"
    return {"pairs": pairs, "negligible": len(rows) >= 3 and not bad, "why": why}


# --------------------------------------------------------------------------- scale and convergence


def last_quarter_change(record: dict) -> float | None:
    """The change of val loss over the last quarter of a run's training (negative: still
    falling): the least-squares slope through the evals at step >= 3/4 of the run's steps (the
    last two evals when fewer than two lie there) times a quarter of the steps; None without two
    evals."""
    import numpy as np

    pts = [
        (float(p["step"]), float(p["val"]))
        for p in record.get("curve") or []
        if p.get("val") is not None and p.get("step") is not None
    ]
    if len(pts) < 2:
        return None
    total = float(record.get("steps") or pts[-1][0])
    late = [p for p in pts if p[0] >= 0.75 * total]
    if len(late) < 2:
        late = pts[-2:]
    x, y = np.array(late).T
    if np.ptp(x) == 0:
        return None
    slope = np.polyfit(x, y, 1)[0]
    return float(slope * 0.25 * total)


def matching(records: list[dict], rows: Sequence[str]) -> dict[str, list[dict]]:
    """{row: its records} for every record whose row matches one of ``rows`` (fnmatch
    patterns), in the order of ``rows``."""
    from fnmatch import fnmatchcase

    out: dict[str, list[dict]] = {}
    for pat in rows:
        for r in records:
            if fnmatchcase(str(r.get("row")), pat):
                out.setdefault(str(r["row"]), []).append(r)
    return out


def millions(values: Sequence[float]) -> str:
    lo, hi = min(values) / 1e6, max(values) / 1e6

    def f(x):
        return f"{x:.2g}" if x < 1 else f"{x:.3g}"

    return f"{f(lo)}M" if f(lo) == f(hi) else f"{f(lo)}-{f(hi)}M"


def run_tokens(record: dict) -> int | None:
    """Training tokens of one run: steps x batch x T, from its config."""
    cfg = record.get("config") or {}
    try:
        return int(
            cfg["train"]["max_steps"] * cfg["train"]["batch_size"] * cfg["model"]["block_size"]
        )
    except (KeyError, TypeError):
        return None


def _curve_at(record: dict, frac: float) -> float | None:
    """Val loss of the first eval at or after ``frac`` of the run's steps (the last eval for
    frac 1); None without a curve."""
    pts = sorted(
        (float(p["step"]), float(p["val"]))
        for p in record.get("curve") or []
        if p.get("val") is not None and p.get("step") is not None
    )
    if not pts:
        return None
    if frac >= 1:
        return pts[-1][1]
    total = float(record.get("steps") or pts[-1][0])
    late = [v for st, v in pts if st >= frac * total]
    return late[0] if late else None


def effect_drift(records: list[dict], terms) -> float | None:
    """The change of the effect sum_i coef_i row_i over the last quarter of training: at the
    last eval minus at the first eval at or after 3/4 of the steps, mean over the seeds every
    row has (None when fewer than two evals lie apart)."""
    from mope_jax.campaign import by_row

    recs = by_row(records)
    per_row = []
    for row, _ in terms:
        got = {}
        for r in recs.get(row, []):
            a, b = _curve_at(r, 0.75), _curve_at(r, 1.0)
            last_step = max((p.get("step") or 0 for p in r.get("curve") or []), default=0)
            q_steps = [p.get("step") for p in r.get("curve") or [] if p.get("val") is not None]
            if a is None or b is None or len(q_steps) < 2 or min(q_steps) >= last_step:
                continue
            got[int(r["seed"])] = b - a
        per_row.append(got)
    if not per_row or not all(per_row):
        return None
    seeds = set.intersection(*(set(g) for g in per_row))
    if not seeds:
        return None
    vals = [sum(c * g[s] for (_, c), g in zip(terms, per_row)) for s in sorted(seeds)]
    return float(sum(vals) / len(vals))


@dataclass(frozen=True)
class ScaleFacts:
    """What the records behind a verdict say about its scale (:func:`scale_facts`)."""

    scale: str
    paper: str  # the paper's own budget in words
    params: tuple[int, ...] = ()  # per run
    tokens: tuple[int, ...] = ()  # per run
    seeds: int | None = None  # seeds common to the rows (None for row patterns)
    runs: int = 0
    rows: int = 0
    # (effect label, drift over the last quarter, unit margin), largest |drift| first
    drift: tuple[tuple[str, float, float], ...] = ()
    convergence_known: bool = False
    at_reference: tuple[tuple[str, float, int, float], ...] = ()  # (row, ref mean, n, mean here)
    reference: str = "reference"  # the reference scale those losses come from
    far_baselines: tuple[tuple[str, float, float], ...] = ()  # (row, mean here, the paper's)

    def budget(self) -> str:
        """'0.8-0.84M params, 8.19M tokens a run, 5 seeds'."""
        parts = []
        if self.params:
            parts.append(f"{millions(self.params)} params")
        if self.tokens:
            parts.append(f"{millions(self.tokens)} tokens a run")
        if self.seeds is None:
            parts.append(f"{self.runs} runs over {self.rows} rows")
        else:
            parts.append(f"{self.seeds} seeds")
        return ", ".join(parts)

    @property
    def moving(self) -> tuple[tuple[str, float, float], ...]:
        """The effects that moved more than their margin over the last quarter."""
        return tuple(d for d in self.drift if abs(d[1]) > d[2])

    def convergence(self) -> str:
        if not self.convergence_known:
            return (
                "drift not measured (the compared quantity is not a difference of the rows' "
                "val losses, or their curves hold fewer than two evals in the last quarter)"
            )
        if self.moving:
            shown = self.moving[:3]
            more = f" and {len(self.moving) - 3} more" if len(self.moving) > 3 else ""
            return (
                "**still moving** (effect's change over the last quarter of training): "
                + ", ".join(f"{lab} {d:+.3f}" for lab, d, _ in shown)
                + more
            )
        worst = max((abs(d) for _, d, _ in self.drift), default=0.0)
        return f"settled (every effect moved <= {worst:.4f} over the last quarter, within margin)"

    def context(self) -> str:
        """The `reference` losses of the same rows and the baselines far from the paper's."""
        out = []
        if self.at_reference:
            out.append(
                f"at `{self.reference}`: "
                + ", ".join(
                    f"`{r}` {ref:.4f} (n {n}) vs {here:.4f}"
                    for r, ref, n, here in self.at_reference
                )
            )
        for row, here, paper in self.far_baselines:
            out.append(
                f"baseline `{row}` at {here:.3f} here, the paper's {paper:.3f}: far "
                f"(> {BASELINE_GAP_NATS:g} nats); a verdict against it is against a weaker "
                "baseline"
            )
        return "; ".join(out)


def _paper_loss(experiment, row: str) -> float | None:
    try:
        value = experiment.row(row).paper
    except (KeyError, ValueError, AttributeError):
        return None
    return value if isinstance(value, (int, float)) else None


def scale_facts(experiment, records_by_scale: dict, v: Verdict) -> ScaleFacts | None:
    """The parameters, tokens, seeds, effect drift, `reference` losses of the same rows and far
    baselines of the records that decided ``v`` (None when it names no scale)."""
    paper = getattr(experiment, "paper_scale", "") or "not stated"
    if not v.scale:
        return None
    recs_here = records_by_scale.get(v.scale, [])
    found = matching(recs_here, v.rows)
    if not found:
        return ScaleFacts(v.scale, paper)
    recs = [r for rs in found.values() for r in rs]
    common = set.intersection(*({int(r["seed"]) for r in rs} for rs in found.values()))
    patterned = any("*" in p or "?" in p for p in v.rows)
    drift, known = [], False
    for e in v.effects:
        if not e.terms:
            continue
        d = effect_drift(recs_here, e.terms)
        if d is not None:
            known = True
            drift.append((e.label, d, MARGINS.get(e.unit, MARGINS["nats"])))
    metric = getattr(experiment, "metric", "final_val_loss")
    ref = []
    refs = [k for k in records_by_scale if k.startswith("reference") and k != v.scale]
    if refs and not v.scale.startswith("reference"):
        there = matching(records_by_scale[refs[0]], [r for r in found])
        for row, rs in there.items():
            vals = [r[metric] for r in rs if r.get(metric) is not None]
            here = [r[metric] for r in found[row] if r.get(metric) is not None]
            if vals and here:
                ref.append((row, sum(vals) / len(vals), len(vals), sum(here) / len(here)))
    far = []
    base = getattr(experiment, "baseline", None)
    for e in v.effects:
        for row, coef in e.terms:
            if row != base:
                continue
            p_loss = _paper_loss(experiment, row)
            here = [r[metric] for r in found.get(row, []) if r.get(metric) is not None]
            if coef < 0 and p_loss is not None and here:
                mean = sum(here) / len(here)
                if abs(mean - p_loss) > BASELINE_GAP_NATS and (row, mean, p_loss) not in far:
                    far.append((row, mean, p_loss))
    return ScaleFacts(
        v.scale,
        paper,
        tuple(r["num_params"] for r in recs if r.get("num_params")),
        tuple(t for t in map(run_tokens, recs) if t),
        None if patterned else len(common),
        len(recs),
        len(found),
        drift=tuple(sorted(drift, key=lambda d: -abs(d[1]))),
        convergence_known=known,
        at_reference=tuple(ref[:4]),
        reference=refs[0] if refs else "reference",
        far_baselines=tuple(far),
    )


def scale_note(facts: ScaleFacts | None, v: Verdict) -> str:
    """'`mid`: 0.83M params, 8.19M tokens a run, 5 seeds (paper: ...); convergence; context'."""
    if facts is None:
        return "-" if v.verdict == "untested" else (f"`{v.scale}`" if v.scale else "-")
    if not facts.runs:
        return f"`{facts.scale}` (paper: {facts.paper})"
    extra = facts.context()
    return f"`{facts.scale}`: {facts.budget()} (paper: {facts.paper}); {facts.convergence()}" + (
        f"; {extra}" if extra else ""
    )
