"""The verdict rule (this docstring) and the helpers every judge applies it with.

An experiment declares its claims (``Experiment.claims``); each :class:`Claim` has a
``judge(experiment, records_by_scale) -> Verdict`` that reads only campaign records, so the
ledger is regenerated, never typed: ``mope-jax report --regenerate experiments/results``
writes ``experiments/results/CLAIMS.md`` and the block of README.md between the markers
``<!-- claims ledger -->`` and ``<!-- end claims ledger -->``.

A study that trains nothing (``experiments/self_similarity.py``: statistics of corpora) has no
records; it declares ``ANALYSIS = Analysis(name, results, claims)`` instead, and each of its
claims is judged by ``judge(analysis, payload)`` from the committed results JSON it names
(``payload`` None when that file is missing), so its verdict is as regenerated as the rest.

Verdicts (:data:`VERDICTS`), every one given by a committed rule, the one below, applied by
:func:`judge_difference` (and :func:`combine`, :func:`at_chance`) in every judge:

  * ``reproduced``: the 95% interval (paired t over seeds, or the judge's stated interval)
    lies wholly on the paper's side of 0 (or of the rule's threshold, where the judge states
    one);
  * ``contradicted``: the interval lies wholly on the other side: resolved against the paper;
  * ``inconclusive``: the interval includes 0 (or the threshold). The evidence then states the
    smallest effect the data could have resolved (the interval's half-width: a mean farther
    from 0 than that would have been resolved) and the seeds needed to resolve the paper's own
    effect size at the observed spread: the smallest n >= 2 with
    t_{0.975, n-1} * sd / sqrt(n) < |paper effect| (:func:`seeds_needed`, computed, with the
    sd of the per-seed differences), or that the paper gives no effect size;
  * a *negative* claim ("X does not beat the baseline") is an equivalence test with a margin
    the rule states (:data:`MARGIN_NATS` = 0.02 nats on a loss unless the judge states
    another): ``reproduced`` only when the interval excludes every beat larger than the margin
    (never on non-significance alone), ``contradicted`` when the interval lies wholly beyond the
    margin (X resolved to beat it by more), ``inconclusive`` otherwise;
  * a claim of a value (a law's slope, a constant) is ``reproduced`` when the interval holds
    the paper's value and ``contradicted`` when it excludes it;
  * a claim that needs several comparisons to hold together is ``contradicted`` if one of them
    is, ``reproduced`` if all are, ``inconclusive`` otherwise (:func:`combine`);
  * ``untestable here``: the metric is at its floor or at chance, or the model did not learn the
    task the claim is about, so no difference could show. An accuracy is *at chance* when the
    95% interval of its mean over seeds reaches below chance + :data:`CHANCE_MARGIN` (0.05,
    five points: what 500 problems resolve) (:func:`at_chance`); an arm whose compared accuracy
    (the one the claimed change must move away from) is at chance is untestable here;
  * ``leak``: the effect is resolved in the paper's direction only in a row that sees future
    tokens (declared NON-CAUSAL or audited LEAKS), never in its causal twin;
  * ``produced by the setup``: the effect follows from a choice of the setup (an init, a
    clamp), not from training;
  * ``untested``: no records that could decide it; the ledger says what would test it.

Scale and convergence (every row of the ledger): the records that decided a verdict
(``Verdict.scale`` and ``Verdict.rows``) give its parameters, training tokens per run (steps x
batch x T) and seeds, stated beside the paper's own budget (``Experiment.paper_scale``). A row is
*still falling* when its val loss fell by more than :data:`FALLING_NATS` (0.02 nats, the
equivalence margin) over the last quarter of training (least-squares line through the evals
from 3/4 of the steps on, or through the last two evals when fewer lie there, times a quarter of
the steps; mean over seeds, :func:`last_quarter_change`); an effect measured on a row that is
still falling is flagged, since more training could move it by about as much as that change.

A claim with several protocols (paper B: zero-shot and fine-tuned) gives each protocol its own
verdict in the evidence and names the protocol the paper's claim is about; the row's verdict
is that protocol's. A verdict is given at the largest declared scale whose records hold every
row the claim needs, with at least two common seeds (``smoke``, a pipeline check, never
decides).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from mope_jax.claims.spec import CHANCE_MARGIN, FALLING_NATS, MARGIN_NATS, Verdict


def decisive_scale(experiment, records_by_scale: dict, rows: Sequence[str]) -> str | None:
    """The largest declared scale whose records hold every row in ``rows`` with at least two
    seeds in common (None if none does)."""
    best = None
    for sc in experiment.scales:  # declared smallest to largest
        if holds(records_by_scale, sc.name, rows):
            best = sc.name
    return best


def holds(records_by_scale: dict, scale: str, rows: Sequence[str]) -> bool:
    """Whether the records of ``scale`` (never smoke: a pipeline check, not evidence) hold every
    row in ``rows`` with at least two seeds in common."""
    from mope_jax.campaign import by_row

    if scale == "smoke":
        return False
    recs = by_row(records_by_scale.get(scale, []))
    seeds = [{int(r["seed"]) for r in recs.get(row, [])} for row in rows]
    return bool(seeds) and len(set.intersection(*seeds)) >= 2


def difference(experiment, records: list[dict], a: str, b: str):
    """paired_t of a - b over the common seeds, on the experiment's metric."""
    from mope_jax.campaign import by_row, paired

    return paired(by_row(records), a, b, experiment.metric)[1]


def describe(t, scale: str, what: str) -> str:
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


def seeds_needed(sd: float, effect: float | None, max_n: int = 100_000) -> int | None:
    """The smallest n >= 2 with t_{0.975, n-1} * sd / sqrt(n) < |effect|: the seeds a paired
    95% interval needs to resolve ``effect`` at the spread ``sd`` (None without an effect, or
    beyond ``max_n``)."""
    import math

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


def judge_difference(
    diffs,
    paper_effect: float | None,
    direction: int,
    margin: float | None = None,
    *,
    negative: bool = False,
) -> tuple[str, str]:
    """(verdict, evidence note) of one difference by the module's rule.

    ``diffs``: a Paired (``mope_jax.analysis.stats.paired_t``) or the per-seed differences.
    ``direction``: -1 if the paper says the difference is below 0 (a lower loss), +1 above.
    Positive claim: reproduced if the interval lies wholly beyond ``margin`` (0 if None) in
    ``direction``, contradicted if wholly short of it (on the other side of 0 when the margin
    is 0), inconclusive otherwise. ``negative=True`` (the claim "no effect in ``direction``"):
    the equivalence rule with ``margin`` (MARGIN_NATS if None): reproduced if the interval
    excludes every effect beyond the margin in ``direction``, contradicted if it lies wholly
    beyond it, inconclusive otherwise. The note is empty unless inconclusive, then it states the
    smallest resolvable effect (the half-width) and :func:`seeds_needed` for ``paper_effect``."""
    t = _as_paired(diffs)
    if direction not in (-1, 1):
        raise ValueError("direction must be -1 or +1")
    if negative:
        m = MARGIN_NATS if margin is None else margin
        near, far = sorted((direction * t.ci_low, direction * t.ci_high))
        if far < m:
            return "reproduced", f"every effect beyond the margin {m:g} excluded"
        if near > m:
            return "contradicted", f"resolved beyond the margin {m:g}"
    else:
        m = 0.0 if margin is None else margin
        near, far = sorted((direction * t.ci_low, direction * t.ci_high))
        if near > m:
            return "reproduced", ""
        if far < m:
            return "contradicted", ""
    return "inconclusive", inconclusive_note(t, paper_effect)


def inconclusive_note(t, paper_effect: float | None) -> str:
    """'smallest resolvable effect +-h (n n); seeds to resolve the paper's effect e at sd s: N'."""
    h = (t.ci_high - t.ci_low) / 2
    note = f"smallest resolvable effect +-{h:.4f} at n {t.n}"
    if paper_effect is None:
        return note + "; the paper gives no effect size"
    need = seeds_needed(t.std, paper_effect)
    excluded = not (t.ci_low <= paper_effect <= t.ci_high)
    return (
        note
        + f"; seeds to resolve the paper's {paper_effect:+.4g} at sd {t.std:.4f}: "
        + (f"{need}" if need is not None else "more than 100000")
        + (" (the interval excludes the paper's effect size)" if excluded else "")
    )


def combine(verdicts: Sequence[str]) -> str:
    """Comparisons that must hold together: contradicted if one is, reproduced if all are,
    untestable here if one is (and none contradicted), inconclusive otherwise."""
    if "contradicted" in verdicts:
        return "contradicted"
    if verdicts and all(v == "reproduced" for v in verdicts):
        return "reproduced"
    if "untestable here" in verdicts:
        return "untestable here"
    return "inconclusive"


def at_chance(values: Sequence[float], chance: float, margin: float = CHANCE_MARGIN) -> bool:
    """Whether an accuracy (one value per seed) is at chance: the 95% interval of its mean
    reaches below chance + margin (its mean, with one seed)."""
    import math

    from mope_jax.analysis.stats import summarize

    s = summarize(list(values))
    low = s.mean if s.n < 2 or math.isnan(s.ci_low) else s.ci_low
    return low < chance + margin


def describe_verdict(t, scale: str, what: str, verdict: str, note: str = "") -> str:
    """describe() followed by ': verdict' and the rule's note."""
    return f"{describe(t, scale, what)}: {verdict}" + (f" ({note})" if note else "")


def untested() -> Verdict:
    return Verdict("untested")


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
    falling: tuple[tuple[str, float], ...] = ()  # (row, mean last-quarter change), steepest first
    convergence_known: bool = False

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

    def convergence(self) -> str:
        if self.falling:
            shown = self.falling[:4]
            more = f" and {len(self.falling) - 4} more" if len(self.falling) > 4 else ""
            return (
                "**still falling** (val change over the last quarter): "
                + ", ".join(f"`{r}` {c:+.3f}" for r, c in shown)
                + more
            )
        if not self.convergence_known:
            return "convergence unknown (fewer than two evals)"
        return f"converged (every row's last-quarter change within {FALLING_NATS:g})"


def scale_facts(experiment, records_by_scale: dict, v: Verdict) -> ScaleFacts | None:
    """The parameters, tokens, seeds and convergence of the records that decided ``v`` (None
    when it names no scale or no record matches its rows)."""
    paper = getattr(experiment, "paper_scale", "") or "not stated"
    if not v.scale:
        return None
    found = matching(records_by_scale.get(v.scale, []), v.rows)
    if not found:
        return ScaleFacts(v.scale, paper)
    recs = [r for rs in found.values() for r in rs]
    common = set.intersection(*({int(r["seed"]) for r in rs} for rs in found.values()))
    patterned = any("*" in p or "?" in p for p in v.rows)
    falling, known = [], False
    for row, rs in found.items():
        ch = [c for c in map(last_quarter_change, rs) if c is not None]
        known = known or bool(ch)
        if ch and sum(ch) / len(ch) < -FALLING_NATS:
            falling.append((row, sum(ch) / len(ch)))
    return ScaleFacts(
        v.scale,
        paper,
        tuple(r["num_params"] for r in recs if r.get("num_params")),
        tuple(t for t in map(run_tokens, recs) if t),
        None if patterned else len(common),
        len(recs),
        len(found),
        tuple(sorted(falling, key=lambda rc: rc[1])),
        known,
    )


def scale_note(facts: ScaleFacts | None, v: Verdict) -> str:
    """'`mid`: 0.83M params, 8.19M tokens a run, 5 seeds (paper: ...); convergence'."""
    if facts is None:
        return "-" if v.verdict == "untested" else (f"`{v.scale}`" if v.scale else "-")
    if not facts.runs:
        return f"`{facts.scale}` (paper: {facts.paper})"
    return f"`{facts.scale}`: {facts.budget()} (paper: {facts.paper}); {facts.convergence()}"
