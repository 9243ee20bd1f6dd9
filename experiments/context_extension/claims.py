"""The claim judges of the context-extension campaign (``Experiment.claims``): paper B's B3
(PI extends a model trained on language), B5 (PI lowers exact-answer accuracy on arithmetic)
and B6 (a lower loss under PI without a higher accuracy), each judged per protocol (zero-shot
and fine-tuned at FT_FACTOR L) by mope_jax.claims' rule.

The rules were fixed before any cpu-scale record of this campaign existed and are read by
mope_jax.claims' verdict rule under its one margin per metric (0.02 nats on a loss, 0.05 on an
accuracy, for positive and negative claims alike). Each claim is judged at s = FT_FACTOR = 2
(the length the fine-tunes train at) by the paired difference pi - none over seeds (95%
t-interval), in each protocol that has records at the deciding scale, each with its own
verdict: zero-shot (the base row's checkpoint evaluated with PI and with plain extrapolation)
and fine-tuned (rows <task>-ft-pi vs <task>-ft-none, the same seed's base model fine-tuned at
2L with PI and without scaling). Our fine-tune is not PI's (Chen et al. 2023 fine-tune briefly
at a low learning rate, a sliver of the pretraining tokens): ours trains FT_STEPS at the rate
of the rows' ``_ft_train``, a large share of the pretraining tokens (at mid: the pretraining
rate, half its tokens); every label states it from the config (``_ft_budget``). The paper's
claims are about PI as its authors use it, with a fine-tune, so the row's verdict is the
fine-tuned protocol's (untested until its rows exist); the zero-shot verdict is shown beside
it. The paper gives no effect size (qualitative), so an inconclusive arm states the smallest
resolvable effect only. Accuracy on arithmetic is the teacher-forced operation-result accuracy
on FORCED_PROBLEMS problems (500 at cpu: a ~5-point difference is resolvable); the 32 greedy
problems cannot. An accuracy arm whose plain-extrapolation accuracy is at chance
(1/igsm.MODULUS, the result is one residue mod 23; mope_jax.claims.at_chance) cannot show a
drop: untestable here, and not tested.
"""

from __future__ import annotations

import numpy as np

from experiments.context_extension.budget import _ft_budget, _ft_words
from experiments.context_extension.settings import FT_FACTOR, FT_RULES, ft_name
from mope_jax.campaign import Experiment, by_row
from mope_jax.data import igsm

ZERO_PROTOCOL = f"zero-shot at {FT_FACTOR}L"
CLAIM_PROTOCOL = f"fine-tuned at {FT_FACTOR}L"


def _zero_ft_diffs(recs: dict, base: str, get_zero, get_ft) -> list[tuple[str, object, list]]:
    """[(protocol, Paired pi - none, none's per-seed values)] for the protocols with 2+ paired
    seeds."""
    from mope_jax.analysis.stats import paired_t

    out = []
    zero = [r["analysis"] for r in recs.get(base, []) if r.get("analysis")]
    if len(zero) >= 2:
        s = FT_FACTOR
        none = [get_zero(a, f"none@{s}") for a in zero]
        out.append((ZERO_PROTOCOL, paired_t([get_zero(a, f"pi@{s}") for a in zero], none), none))
    tuned = {
        rule: {
            int(r["seed"]): r["analysis"]
            for r in recs.get(ft_name(base, rule), [])
            if r.get("analysis")
        }
        for rule in FT_RULES
    }
    both = sorted(set(tuned["pi"]) & set(tuned["none"]))
    if len(both) >= 2:
        none = [get_ft(tuned["none"][k]) for k in both]
        out.append((CLAIM_PROTOCOL, paired_t([get_ft(tuned["pi"][k]) for k in both], none), none))
    return out


def _deciding(exp: Experiment, by_scale: dict, base: str):
    """(scale name, records by row) of the largest non-smoke scale whose base row has 2+ seeds
    with an analysis, or None."""
    for sc in reversed(exp.scales):
        if sc.name == "smoke" or sc.name not in by_scale:
            continue
        recs = by_row(by_scale[sc.name])
        if sum(1 for r in recs.get(base, []) if r.get("analysis")) >= 2:
            return sc.name, recs
    return None


def _label(protocol: str, task: str, budget: dict | None = None) -> str:
    """The protocol for what it is (the fine-tune's steps, rate and tokens from ``budget``,
    :func:`_ft_budget`), with its comparator named exactly."""
    if protocol == CLAIM_PROTOCOL:
        return (
            f"{protocol} ({_ft_words(budget)}; PI's paper fine-tunes briefly at a low rate; the "
            f"claim's protocol: `{task}-ft-pi` - `{task}-ft-none`, the fine-tune with PI minus "
            "the fine-tune without scaling)"
        )
    return f"{protocol} (PI minus plain extrapolation, same checkpoint)"


def _ci(label: str, t, what: str) -> str:
    return f"{what} pi - none, {label}: {t.mean:+.4f} [{t.ci_low:+.4f}, {t.ci_high:+.4f}], n {t.n}"


def _interval(t) -> str:
    if t.n < 2 or not np.isfinite(t.ci_low):
        return f"{t.mean:+.4f}, n {t.n}"
    return f"{t.mean:+.4f} [{t.ci_low:+.4f}, {t.ci_high:+.4f}], n {t.n}"


def _extrapolation(recs: dict, base: str) -> str:
    """How much plain extrapolation degrades: loss beyond L at 2L minus the loss at L."""
    an = [r["analysis"] for r in recs.get(base, []) if r.get("analysis")]
    d = [a["loss"][f"none@{FT_FACTOR}"]["beyond_L"] - a["loss"]["none@1"]["all"] for a in an]
    return (
        f"plain extrapolation: loss beyond L at {FT_FACTOR}L minus loss at L "
        f"{np.mean(d):+.4f} (mean of {len(d)})"
    )


def _loss_zero(a, k):
    return a["loss"][k]["all"]


def _loss_ft(a):
    return a["loss"]["all"]


def _acc_zero(a, k):
    return a["answer"][k]["forced_result"]


def _acc_ft(a):
    return a["answer"]["forced_result"]


CHANCE = 1.0 / igsm.MODULUS  # forced result accuracy of a uniform guess of the residue


def _chance_note(none: list) -> str:
    from mope_jax import claims as cl

    return (
        f"untestable here (plain extrapolation's accuracy {np.mean(none):.3f}, its interval "
        f"below chance {CHANCE:.3f} + {cl.CHANCE_MARGIN:g})"
    )


def _headline(verdicts: dict) -> str:
    """The claim's protocol's verdict (untested without its records)."""
    return verdicts.get(CLAIM_PROTOCOL, "untested")


def _headline_line(effects: list) -> str:
    """The ledger's one line: the claim's protocol's comparisons with their verdicts ("" when
    it has none)."""
    return "; ".join(
        f"{e.label} {_interval(e)}" + (f": {e.verdict}" if e.verdict else "")
        for e in effects
        if f" {CLAIM_PROTOCOL}:" in e.label
    )


def _extension_vs_base(recs: dict, task: str, verdicts: dict, budget: dict | None):
    """(evidence, aside): the fine-tuned PI model's loss at FT_FACTOR L against the base
    model's loss at L (``language-ft-pi`` ``analysis.loss.all`` vs ``language``
    ``analysis.loss["none@1"].all``, paired over seeds) and what it says beside the fine-tuned
    pi - none verdict; ("", "") with fewer than 2 paired seeds."""
    from mope_jax import claims as cl
    from mope_jax.analysis.stats import paired_t

    base = {
        int(r["seed"]): r["analysis"]["loss"]["none@1"]["all"]
        for r in recs.get(task, [])
        if r.get("analysis")
    }
    pi = {
        int(r["seed"]): r["analysis"]["loss"]["all"]
        for r in recs.get(ft_name(task, "pi"), [])
        if r.get("analysis")
    }
    seeds = sorted(set(base) & set(pi))
    if len(seeds) < 2:
        return "", ""
    a, b = [pi[k] for k in seeds], [base[k] for k in seeds]
    t = paired_t(a, b)
    m, s = cl.MARGINS["nats"], FT_FACTOR
    text = (
        f"loss of the PI fine-tune at {s}L against the base model's at L: {np.mean(a):.3f} vs "
        f"{np.mean(b):.3f}, {_interval(t)}"
    )
    if t.n < cl.MIN_SEEDS:
        return text + " (shown, not judged)", ""
    if t.ci_high < -m:
        text += f", below the base at L by more than {m:g}: PI does extend the model"
        aside = f"PI does extend the model ({np.mean(a):.3f} at {s}L vs {np.mean(b):.3f} at L)"
        if verdicts.get(CLAIM_PROTOCOL) == "contradicted":
            text += ", no better than the fine-tune without scaling (pi - none above)"
            aside += ", no better than fine-tuning without scaling"
        if budget is not None:
            text += f" (both fine-tunes also train on {budget['share']:.0%} more tokens)"
        return text, aside
    if t.ci_low > m:
        return text + f", above the base at L by more than {m:g}: PI does not extend it", ""
    return text + f", its interval reaches inside +-{m:g}: not resolved", ""


def _contrast(recs: dict) -> str:
    """B5's note on the paper's contrast from the language rows of the same scale: when PI's
    zero-shot loss on language is resolved above plain extrapolation's by more than the margin
    (B3's zero-shot arm), the contrast the paper draws (PI works on language, fails on
    arithmetic) is not what the records show; "" otherwise."""
    from mope_jax import claims as cl

    diffs = dict((p, t) for p, t, _ in _zero_ft_diffs(recs, "language", _loss_zero, _loss_ft))
    t, m = diffs.get(ZERO_PROTOCOL), cl.MARGINS["nats"]
    if t is None or t.n < cl.MIN_SEEDS or not t.ci_low > m:
        return ""
    text = (
        f"on language at this scale PI hurts as well: loss pi - none zero-shot {_interval(t)}, "
        f"the whole interval above +{m:g}"
    )
    ft = diffs.get(CLAIM_PROTOCOL)
    if ft is not None and ft.n >= cl.MIN_SEEDS and -m < ft.ci_low and ft.ci_high < m:
        text += f", fine-tuned {_interval(ft)}, within +-{m:g} (no better than without scaling)"
    return (
        text + "; the paper's contrast (PI works on language, fails on arithmetic) is not what "
        "these records show"
    )


def _below_zero_judge(task: str, get_zero, get_ft, what: str, accuracy: bool = False):
    """A judge: pi - none of ``what`` on ``task`` below 0 (mope_jax.claims' rule, direction -1,
    the margin of its unit) in each protocol, the row's verdict the fine-tuned protocol's (B3:
    the language loss, beside the PI fine-tune's loss at 2L against the base model's at L; B5:
    the arithmetic forced result accuracy, an arm at chance untestable here, beside what the
    language rows say of the paper's contrast)."""

    def judge(exp: Experiment, by_scale: dict):
        from mope_jax import claims as cl

        found = _deciding(exp, by_scale, task)
        if found is None:
            return cl.untested()
        scale, recs = found
        budget = _ft_budget(exp, scale, recs, task)
        verdicts, parts, effects = {}, [], []
        unit = "accuracy" if accuracy else "nats"
        for p, t, none in _zero_ft_diffs(recs, task, get_zero, get_ft):
            label = f"{task} {p}: {'accuracy' if accuracy else 'loss'} pi - none"
            if accuracy and cl.at_chance(none, CHANCE):
                verdicts[p], text = "untestable here", _chance_note(none)
            else:
                verdicts[p], note = cl.judge_difference(t, None, -1, unit=unit, what=label)
                text = verdicts[p] + (f" ({note})" if note else "")
            effects.append(cl.effect(t, label, None, True, unit, verdict=verdicts[p]))
            parts.append(f"{_ci(_label(p, task, budget), t, what)}: {text}")
        if CLAIM_PROTOCOL not in verdicts:
            parts.append(f"{_label(CLAIM_PROTOCOL, task, budget)}: no records")
        aside = ""
        if accuracy:
            parts.append(_contrast(recs))
        else:
            text, aside = _extension_vs_base(recs, task, verdicts, budget)
            parts.append(text)
        parts.append(_extrapolation(recs, task))
        return cl.Verdict(
            _headline(verdicts),
            f"{'; '.join(x for x in parts if x)}; scale `{scale}`",
            f"{task}*: declared causal (RoPE)",
            scale=scale,
            rows=[f"{task}*"],
            effects=effects,
            headline=_headline_line(effects),
            aside=aside,
        )

    return judge


_judge_language = _below_zero_judge("language", _loss_zero, _loss_ft, "loss")
_judge_arithmetic = _below_zero_judge(
    "arithmetic", _acc_zero, _acc_ft, "forced result accuracy", accuracy=True
)


def _judge_perplexity(exp: Experiment, by_scale: dict):
    """B6, per protocol: the loss pi - none below 0 (direction -1, the nats margin) and the
    forced result accuracy not higher under PI (mope_jax.claims' rule for a negative claim,
    direction +1, the accuracy margin MARGINS["accuracy"] = CHANCE_MARGIN = 0.05: five points),
    combined (mope_jax.claims.combine); an arm whose plain-extrapolation accuracy is at chance is
    untestable here (its accuracy not tested). The row's verdict is the fine-tuned protocol's."""
    from mope_jax import claims as cl

    found = _deciding(exp, by_scale, "arithmetic")
    if found is None:
        return cl.untested()
    scale, recs = found
    budget = _ft_budget(exp, scale, recs, "arithmetic")
    loss = _zero_ft_diffs(recs, "arithmetic", _loss_zero, _loss_ft)
    acc = {p: (t, none) for p, t, none in _zero_ft_diffs(recs, "arithmetic", _acc_zero, _acc_ft)}
    verdicts, parts, effects = {}, [], []

    def said(v: str, note: str) -> str:
        return v + (f" ({note})" if note else "")

    for p, t, _ in loss:
        at, none = acc[p]
        loss_label = f"arithmetic {p}: loss pi - none"
        acc_label = f"arithmetic {p}: accuracy pi - none"
        lv, lnote = cl.judge_difference(t, None, -1, unit="nats", what=loss_label)
        if cl.at_chance(none, CHANCE):
            verdicts[p] = av = "untestable here"
            text = f"{_chance_note(none)}; loss alone: {said(lv, lnote)}"
        else:
            av, anote = cl.judge_difference(
                at, None, +1, negative=True, unit="accuracy", what=acc_label + " not higher"
            )
            verdicts[p] = cl.combine([lv, av])
            text = (
                f"{verdicts[p]} (loss: {said(lv, lnote)}; accuracy not higher: {said(av, anote)})"
            )
        effects.append(cl.effect(t, loss_label, None, True, "nats", verdict=lv))
        effects.append(cl.effect(at, acc_label, None, True, "accuracy", verdict=av))
        acc_ci = f"accuracy pi - none {_interval(at)}"
        parts.append(f"{_ci(_label(p, 'arithmetic', budget), t, 'loss')} vs {acc_ci}: {text}")
    if CLAIM_PROTOCOL not in verdicts:
        parts.append(f"{_label(CLAIM_PROTOCOL, 'arithmetic', budget)}: no records")
    return cl.Verdict(
        _headline(verdicts),
        f"{'; '.join(parts)}; scale `{scale}`",
        "arithmetic*: declared causal (RoPE)",
        scale=scale,
        rows=["arithmetic*"],
        effects=effects,
        headline=_headline_line(effects),
    )


def _claims():
    from mope_jax import claims as cl

    run = "mope-jax campaign run context_extension --scale cpu"
    return (
        cl.Claim(
            "B3",
            "PI extends a RoPE model trained on natural language (self-similar data): at 2L it "
            "gives a lower loss than plain extrapolation",
            "qualitative (PI succeeds where test-time dependencies dilate the training ones)",
            _judge_language,
            run + " --rows language,language-ft-none,language-ft-pi",
            short="PI extends a model trained on language",
        ),
        cl.Claim(
            "B5",
            "on arithmetic PI lowers the accuracy of exact answers (operation results) at 2L",
            "qualitative (PI degrades arithmetic)",
            _judge_arithmetic,
            run + " --rows arithmetic,arithmetic-ft-none,arithmetic-ft-pi",
            short="PI lowers exact-answer accuracy on arithmetic",
        ),
        cl.Claim(
            "B6",
            "on arithmetic a lower loss under PI comes without a higher answer accuracy",
            "qualitative (perplexity under PI does not imply accuracy)",
            _judge_perplexity,
            run + " --rows arithmetic,arithmetic-ft-none,arithmetic-ft-pi",
            short="a lower loss under PI without a higher accuracy",
        ),
    )
