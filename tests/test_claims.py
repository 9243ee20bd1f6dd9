"""The claims ledger: verdicts judged from campaign records alone, and the README block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from experiments import fourierqk
from experiments.fourierqk.claims import _kernels_at
from mope_jax import claims

REPO = Path(__file__).resolve().parents[1]


def records(values: dict[str, list[float]], *, leaks: tuple[str, ...] = ()) -> list[dict]:
    return [
        {"row": row, "seed": s, "final_val_loss": v, "audit": {"causal": row not in leaks}}
        for row, vals in values.items()
        for s, v in enumerate(vals)
    ]


def judge(claim_id: str, by_scale: dict) -> claims.Verdict:
    (claim,) = [c for c in fourierqk.CLAIMS if c.id == claim_id]
    return claim.judge(fourierqk.EXPERIMENT, by_scale)


def test_a_gain_in_a_row_that_sees_the_future_is_a_leak_and_in_a_causal_row_reproduced():
    base = [2.0, 2.1, 2.05]
    gain = [1.0, 1.1, 1.02]
    leak = judge(
        "C1", {"cpu": records({"learned": base, "fourier-qk": gain}, leaks=("fourier-qk",))}
    )
    assert leak.verdict == "leak" and "fourier-qk - learned -1.0" in leak.evidence
    assert (
        "scale `cpu`" in leak.evidence and "`fourier-qk` NON-CAUSAL, audit LEAKS" in leak.causality
    )
    none = judge("C1", {"cpu": records({"learned": base, "fourier-qk": [2.01, 2.09, 2.06]})})
    assert none.verdict == "inconclusive" and "smallest resolvable effect" in none.evidence
    kernels = {k: gain for k in fourierqk.CAUSAL_KERNELS}
    beat = judge("C4", {"cpu": records({"learned": base, **kernels})})
    assert beat.verdict == "contradicted"  # a causal kernel beating the baseline refutes C4
    flat = {k: [2.001, 2.1015, 2.0495] for k in fourierqk.CAUSAL_KERNELS}
    assert judge("C4", {"cpu": records({"learned": base, **flat})}).verdict == "reproduced"


def test_causal_kernels_are_read_per_scale_over_the_kernels_each_plans():
    base, flat, gain = [2.0, 2.1, 2.05], [2.001, 2.1015, 2.0495], [1.0, 1.1, 1.02]
    cpu = records({"learned": base, **{k: flat for k in fourierqk.CAUSAL_KERNELS}})
    mid_kernels = _kernels_at(next(s for s in fourierqk.EXPERIMENT.scales if s.name == "mid"))
    assert "causal-mexhat" not in mid_kernels and "causal-morlet" in mid_kernels
    v = judge("C4", {"cpu": cpu})
    assert v.verdict == "reproduced" and "scale `cpu`" in v.evidence
    # mid holds one of its two kernels: read there, the missing one named as not run
    partial = records({"learned": base, "causal-gauss": gain})
    v = judge("C4", {"mid": partial})
    assert v.verdict == "contradicted" and "scale `mid`" in v.evidence
    assert "causal-mexhat, causal-morlet not run at `mid`" in v.evidence
    # handed several scales, the judge reads the largest holding a kernel
    full = records({"learned": base, **{k: gain for k in mid_kernels}})
    v = judge("C4", {"cpu": cpu, "mid": full})
    assert v.verdict == "contradicted" and "scale `mid`" in v.evidence
    assert "causal-mexhat not run at `mid`" in v.evidence and "causal-mexhat" not in v.causality


def test_c5_is_a_description_across_scales_never_a_verdict():
    base = [2.0, 2.1, 2.05]
    rows = (*fourierqk.BILATERAL_PAPER_ROWS, *fourierqk.GROWTH_KERNELS)

    def scale(gain: dict[str, float]) -> list[dict]:  # gains per row, with a little seed noise
        vals = {r: [b - gain.get(r, 0.1) + 0.01 * i for i, b in enumerate(base)] for r in rows}
        return records({"learned": base, **vals}, leaks=fourierqk.BILATERAL_PAPER_ROWS)

    (c5,) = [c for c in fourierqk.CLAIMS if c.id == "C5"]
    assert c5.ours and c5.across_scales
    cpu = scale({})
    assert judge("C5", {"cpu": cpu}).verdict == "untested"  # mid has no records
    v = judge("C5", {"cpu": cpu, "mid": scale({"fourier-qk": 0.5, "causal-morlet": 0.4})})
    assert v.verdict == "description" and "fourier-qk: -0.090 (n 3) at `cpu`, -0.490" in v.evidence
    assert "no test" in v.evidence and "Welch" not in v.evidence


def test_untested_without_three_common_seeds_at_a_non_smoke_scale():
    base, gain = [2.0, 2.1, 2.05], [1.0, 1.1, 1.02]
    assert judge("C1", {}).verdict == "untested"
    smoke = records({"learned": base, "fourier-qk": gain})
    assert judge("C1", {"smoke": smoke}).verdict == "untested"  # a pipeline check never decides
    one = records({"learned": base[:1], "fourier-qk": gain[:1]})
    assert judge("C1", {"cpu": one}).verdict == "untested"
    two = judge("C1", {"cpu": records({"learned": base[:2], "fourier-qk": gain[:2]})})
    assert two.verdict == "untested" and "n 2 < 3 seeds: shown, not judged" in two.evidence
    with pytest.raises(ValueError, match="not one of"):
        claims.Verdict("probably")


def test_readme_block_is_the_generated_ledger(tmp_path):
    files = claims.render(REPO)
    readme = files[REPO / "README.md"]
    table = claims.ledger(REPO)
    assert f"{claims.BEGIN}\n{table}\n{claims.END}" in readme
    assert readme == (REPO / "README.md").read_text()  # committed as generated
    assert (
        files[REPO / "experiments" / "results" / "CLAIMS.md"]
        == (REPO / "experiments" / "results" / "CLAIMS.md").read_text()
    )


def test_paper_a_synergy_is_judged_on_the_causal_interaction_and_names_every_row_it_uses():
    from experiments import paper_a

    (a4,) = [c for c in paper_a.CLAIMS if c.id == "A4"]
    noise = [0.0, 0.013, -0.008]
    base = {"a-baseline": 2.0, "a-mope": 2.15, "a-ega1": 1.98, "a-ega1-causal": 1.985}

    def recs(ega_morlet_causal: float) -> dict:
        means = {**base, "a-ega-morlet": 2.08, "a-ega-morlet-causal": ega_morlet_causal}
        vals = {r: [m + e * (1 + 0.1 * i) for e in noise] for i, (r, m) in enumerate(means.items())}
        return {"mid": records(vals, leaks=("a-ega1", "a-ega-morlet"))}

    # the gate helps MOPE by 0.10 and the table by 0.015: super-additive
    v = a4.judge(paper_a.EXPERIMENT, recs(2.05))
    assert v.verdict == "reproduced" and "interaction, causal gate -0.08" in v.evidence
    for row in ("a-ega-morlet-causal", "a-ega1-causal", "a-mope", "a-baseline"):
        assert f"`{row}`" in v.causality
    assert "`a-ega1` NON-CAUSAL, audit LEAKS" in v.causality
    # the same causal gain on both encodings: additive; only the paper's (future-seeing) gate
    # is super-additive here, so the verdict is a leak
    assert a4.judge(paper_a.EXPERIMENT, recs(2.135)).verdict == "leak"


# --------------------------------------------------------------------------- the verdict rule


def test_seeds_needed_matches_a_hand_computed_answer():
    # sd 0.1, paper effect 0.05: the smallest n with t_{0.975, n-1} * 0.1 / sqrt(n) < 0.05.
    # By hand (t table): n = 17: t_{0.975, 16} = 2.1199, 2.1199 * 0.1 / sqrt(17) = 0.05141 > 0.05;
    # n = 18: t_{0.975, 17} = 2.1098, 2.1098 * 0.1 / sqrt(18) = 0.04973 < 0.05. So n = 18.
    assert claims.seeds_needed(0.1, 0.05) == 18
    assert claims.seeds_needed(0.1, -0.05) == 18  # the size of the effect, either sign
    # sd 1, effect 1: n = 7 (t_{0.975, 5} = 2.5706, 2.5706 / sqrt(6) = 1.049 > 1;
    # t_{0.975, 6} = 2.4469, 2.4469 / sqrt(7) = 0.925 < 1)
    assert claims.seeds_needed(1.0, 1.0) == 7
    assert claims.seeds_needed(0.1, None) is None


def test_judge_difference_gives_each_verdict_and_states_what_an_inconclusive_one_needs():
    assert claims.judge_difference([-0.10, -0.12, -0.11], -0.1, -1)[0] == "reproduced"
    assert claims.judge_difference([0.10, 0.12, 0.11], -0.1, -1)[0] == "contradicted"
    v, note = claims.judge_difference([-0.1, 0.05, -0.02], -0.05, -1)
    assert v == "inconclusive"
    sd = float(np.std([-0.1, 0.05, -0.02], ddof=1))
    m = claims.MARGINS["nats"]
    # seeds to resolve the paper's effect beyond the margin: |0.05 - 0.02| at the observed sd
    assert f"the paper's -0.05: {claims.seeds_needed(sd, 0.05 - m)}" in note
    assert "smallest resolvable effect +-" in note and "seeds to resolve the observed" in note
    # a stated margin: resolved short of it is contradicted; an interval holding it inconclusive
    assert claims.judge_difference([-0.040, -0.041, -0.039], None, -1, 0.06)[0] == "contradicted"
    assert claims.judge_difference([-0.04, -0.07, -0.05], None, -1, 0.05)[0] == "inconclusive"


def test_a_negative_claim_is_an_equivalence_test_never_non_significance_alone():
    m = claims.MARGIN_NATS  # 0.02 nats
    # no difference resolved, but the interval reaches beats beyond the margin: inconclusive
    wide = [-0.05, 0.04, 0.0]
    assert claims.judge_difference(wide, None, -1, negative=True)[0] == "inconclusive"
    # the interval excludes every beat larger than the margin: reproduced
    tight = [-0.002, 0.003, 0.0]
    v, note = claims.judge_difference(tight, None, -1, negative=True)
    assert v == "reproduced" and f"within +-{m:g}" in note
    # resolved beyond the margin in the denied direction: contradicted
    assert claims.judge_difference([-0.13, -0.15, -0.11], None, -1, negative=True)[0] == (
        "contradicted"
    )


def test_planted_records_read_inconclusive_untestable_and_contradicted():
    from experiments import paper_a
    from mope_jax.campaign import load_experiment

    # paper A's headline: EGA-MORLET (both gates) worse than the baseline: contradicted
    (a0,) = [c for c in paper_a.CLAIMS if c.id == "A0"]
    noise = [0.0, 0.01, -0.008]
    means = {
        "a-baseline": 2.0, "a-mope": 2.15, "a-ega1": 1.98, "a-ega1-causal": 1.99,
        "a-ega-morlet": 2.09, "a-ega-morlet-causal": 2.07,
    }  # fmt: skip
    vals = {r: [m + e * (1 + 0.1 * i) for e in noise] for i, (r, m) in enumerate(means.items())}
    v = a0.judge(paper_a.EXPERIMENT, {"mid": records(vals, leaks=("a-ega1", "a-ega-morlet"))})
    assert v.verdict == "contradicted" and "causal twin: contradicted" in v.evidence
    assert "a-ega-morlet-causal - a-baseline +0.07" in v.evidence
    # the paper's gate alone beats all three: leak, never reproduced
    means |= {"a-ega-morlet": 1.9, "a-ega-morlet-causal": 2.07}
    vals = {r: [m + e * (1 + 0.1 * i) for e in noise] for i, (r, m) in enumerate(means.items())}
    v = a0.judge(paper_a.EXPERIMENT, {"mid": records(vals, leaks=("a-ega1", "a-ega-morlet"))})
    assert v.verdict == "leak"
    # one seed per row (the reference scale today) decides nothing
    one = {r: x[:1] for r, x in vals.items()}
    assert a0.judge(paper_a.EXPERIMENT, {"reference": records(one)}).verdict == "untested"

    # B5: an arithmetic model at chance in the zero-shot arm: that arm is untestable here,
    # and without the fine-tuned (the claim's) protocol the row stays untested
    exp = load_experiment("context_extension", REPO)
    (b5,) = [c for c in exp.claims if c.id == "B5"]
    chance = [
        {
            "row": "arithmetic",
            "seed": s,
            "analysis": {
                "loss": {"none@1": {"all": 1.0}, "none@2": {"all": 1.5, "beyond_L": 1.6}},
                "answer": {
                    "none@2": {"forced_result": 0.05 + 0.01 * s},
                    "pi@2": {"forced_result": 0.04 + 0.01 * s},
                },
            },
        }
        for s in range(3)
    ]
    v = b5.judge(exp, {"cpu": chance})
    assert "zero-shot at 2L" in v.evidence and "untestable here" in v.evidence
    assert v.verdict == "untested" and "no records" in v.evidence
    ft = [
        {"row": f"arithmetic-ft-{rule}", "seed": s, "analysis": {"answer": {"forced_result": a}}}
        for s in range(3)
        for rule, a in (("none", 0.06 + 0.01 * s), ("pi", 0.05 + 0.012 * s))
    ]
    assert b5.judge(exp, {"cpu": chance + ft}).verdict == "untestable here"

    # A2 with both intervals across 0: inconclusive, with the seeds the paper's effect needs
    (a2,) = [c for c in paper_a.CLAIMS if c.id == "A2"]
    vals = {
        "a-baseline": [2.0, 2.1, 2.05],
        "a-ega1": [1.99, 2.12, 2.03],
        "a-ega1-causal": [2.01, 2.08, 2.04],
    }
    v = a2.judge(paper_a.EXPERIMENT, {"mid": records(vals, leaks=("a-ega1",))})
    assert v.verdict == "inconclusive"
    assert "the paper's -0.0919 would already be resolved at n 3" in v.evidence


# --------------------------------------------------------------------------- scale, convergence


def _run(row, seed, vals, steps=2000, params=800_000):
    """A record whose val curve has evals every steps/4 with the given values."""
    curve = [{"step": steps * (i + 1) // len(vals), "val": v} for i, v in enumerate(vals)]
    return {
        "row": row,
        "seed": seed,
        "steps": steps,
        "num_params": params,
        "final_val_loss": vals[-1],
        "curve": curve,
        "config": {"train": {"max_steps": steps, "batch_size": 16}, "model": {"block_size": 256}},
    }


def test_last_quarter_change_is_the_fitted_drop_over_the_last_quarter():
    # evals at 500..2000: only 1500 and 2000 lie in the last quarter: the drop between them
    rec = _run("a", 0, [2.4, 2.1, 1.977, 1.943])
    assert claims.last_quarter_change(rec) == pytest.approx(1.943 - 1.977)
    # eight evals, three in the last quarter on a line of slope -1e-4 per step: -0.05 over 500
    steps = [250 * (i + 1) for i in range(8)]
    rec = {"steps": 2000, "curve": [{"step": s, "val": 3.0 - 1e-4 * s} for s in steps]}
    rec["curve"][0]["val"] = 9.0  # an early point outside the last quarter changes nothing
    assert claims.last_quarter_change(rec) == pytest.approx(-0.05)
    # one eval only (the cpu scales eval once, at the end): unknown
    assert claims.last_quarter_change({"steps": 300, "curve": [{"step": 300, "val": 2.0}]}) is None


def test_scale_facts_state_budget_seeds_and_flag_effects_still_moving():
    """Convergence is read on the compared effect: a - b at the last eval minus at the first
    eval from 3/4 of the steps on, mean over seeds; beyond the margin it is still moving. A
    cosine tail that lowers both rows alike does not move the effect."""
    from experiments import paper_a

    recs = [_run("a-baseline", s, [2.4, 2.1, 1.977, 1.943]) for s in range(3)]
    recs += [_run("a-mope", s, [2.5, 2.2, 2.10, 2.095], params=790_000) for s in range(5)]
    t = claims.difference(paper_a.EXPERIMENT, recs, "a-mope", "a-baseline")
    e = claims.diff_effect(t, "a-mope", "a-baseline")
    v = claims.Verdict("reproduced", scale="mid", rows=("a-mope", "a-baseline"), effects=[e])
    facts = claims.scale_facts(paper_a.EXPERIMENT, {"mid": recs}, v)
    assert facts.seeds == 3 and facts.runs == 8 and facts.rows == 2
    assert facts.tokens == (2000 * 16 * 256,) * 8  # steps x batch x T
    assert facts.budget() == "0.79-0.8M params, 8.19M tokens a run, 3 seeds"
    # a-baseline falls 0.034 over its last quarter, a-mope 0.005: the effect moves +0.029
    ((label, drift, margin),) = facts.moving
    assert label == "a-mope - a-baseline" and drift == pytest.approx(0.029) and margin == 0.02
    note = claims.scale_note(facts, v)
    assert "**still moving**" in note and "a-mope - a-baseline +0.029" in note
    assert "(paper: ~4.8M params, ~82M tokens, 1 seed)" in note
    # both rows fall alike at the end (a cosine tail): the effect is settled
    late = [{"step": 1500, "val": 2.0}, {"step": 2000, "val": 1.97}]
    tail = [dict(r, curve=r["curve"][:2] + late) for r in recs]
    settled = claims.scale_facts(paper_a.EXPERIMENT, {"mid": tail}, v)
    assert not settled.moving and "settled" in claims.scale_note(settled, v)
    # the baseline far from the paper's own loss is named
    ((row, here, paper),) = facts.far_baselines
    assert (row, paper) == ("a-baseline", 1.474) and here == pytest.approx(1.943)
    assert "baseline `a-baseline` at 1.943 here, the paper's 1.474: far" in note
    # rows given as a pattern count runs, not common seeds
    pv = claims.Verdict("inconclusive", scale="mid", rows=("a-*",))
    assert (
        claims.scale_facts(paper_a.EXPERIMENT, {"mid": recs}, pv)
        .budget()
        .endswith("8 runs over 2 rows")
    )


def test_bottom_line_groups_each_papers_claims_by_verdict_in_ledger_order():
    def j(cid, verdict, short):
        c = claims.Claim(cid, short + " (long)", "", lambda *a: None, "", short=short)
        return claims.Judged(c, claims.Verdict(verdict), "-")

    judged = sorted(
        [
            j("C1", "leak", "c one"),
            j("A5g", "untested", "a five g"),
            j("A0", "contradicted", "headline"),
            j("A5", "produced by the setup", "a five"),
            j("A1", "reproduced", "gate helps"),
            j("R1", "inconclusive", "ours"),
        ],
        key=lambda x: claims.claim_order(x.claim.id),
    )
    assert [x.claim.id for x in judged] == ["A0", "A1", "A5", "A5g", "C1", "R1"]
    text = claims.bottom_line(judged)
    a = text.split("**Paper C")[0]
    assert "- holds: A1 gate helps\n" in a and "- contradicted: A0 headline\n" in a
    assert "- a leak or produced by the setup: A5 a five (*produced by the setup*)" in a
    assert "- open: A5g a five g (*untested*)" in a
    assert "Paper B" not in text  # a paper without claims has no paragraph
    assert "C1 c one (*leak*)" in text and "R1 ours (*inconclusive*)" in text


def test_the_readme_bottom_line_is_the_generated_one():
    files = claims.render(REPO)
    readme = files[REPO / "README.md"]
    bottom = claims.bottom_line(claims.judge_all(REPO))
    assert f"{claims.BOTTOM_BEGIN}\n{bottom.rstrip()}\n{claims.BOTTOM_END}" in readme
    assert readme.index(claims.BOTTOM_BEGIN) < readme.index(claims.BEGIN)  # at the top


# --------------------------------------------------------------------------- A5, A5g: fractions


def _boundary_records(model: str, hits: dict[str, list[int]], n: int = 64, seeds: int = 3):
    """Planted records of ``model``'s 12 omega_sigma_control cells: each seed's count of pairs on
    omega sigma = 5 out of ``n`` (``hits[row]``, else 0 for every seed), as a record stores it
    (summary fraction, analysis omega of length n)."""
    from experiments import omega_sigma_control as osc

    key = f"{osc.PREFIX[model]}_on_boundary_frac"
    return [
        {
            "row": row,
            "seed": s,
            "final_val_loss": 2.0,
            "summary": {key: h / n},
            "analysis": {"omega": [1.0] * n, "sigma": [5.0] * n},
        }
        for row in osc.cell_rows(model)
        for s, h in enumerate(hits.get(row, [0] * seeds))
    ]


def _a5(model: str = "mope"):
    from experiments import omega_sigma_control as osc

    claim = osc.CLAIMS[0 if model == "mope" else 1]
    return osc, claim, osc.paper_cell(model)


def test_a5_boundary_fraction_paper_cell_near_one_and_foils_at_zero_is_produced_by_the_setup():
    osc, a5, paper = _a5()
    recs = _boundary_records("mope", {paper: [60, 64, 63]})
    frac, lo, hi, _ = claims.fraction_interval([60, 64, 63], [64] * 3)
    assert frac == pytest.approx(187 / 192) and 0 <= lo < frac < hi <= 1
    v = a5.judge(osc.EXPERIMENT, {"mid": recs})
    assert v.verdict == "produced by the setup" and v.scale == "mid"
    assert f"`{paper}` {frac:.3f} [{lo:.3f}, {hi:.3f}] (187/192 over 3 seeds)" in v.evidence
    assert "seeds as clusters, n 3, scale `mid`" in v.evidence
    assert "10/10 such cells resolved below 0.95" in v.evidence
    own = {e.label.split("`")[1]: e for e in v.effects}
    assert own[paper].paper == 1.0 and own[paper].verdict in ("reproduced", "inconclusive")
    assert (own[paper].mean, own[paper].ci_low, own[paper].ci_high, own[paper].n) == (
        pytest.approx(frac),
        pytest.approx(lo),
        pytest.approx(hi),
        3,
    )
    (foil,) = [e for row, e in own.items() if row != paper]
    assert foil.verdict == "contradicted" and foil.ci_high < 0.95 and foil.paper is None
    assert all(e.unit == "fraction on omega sigma = 5" for e in v.effects)
    # every cell on the boundary: reproduced
    full = _boundary_records("mope", {r: [64, 64, 64] for r in osc.cell_rows("mope")})
    assert a5.judge(osc.EXPERIMENT, {"mid": full}).verdict == "reproduced"


def test_a5_boundary_fraction_with_two_seeds_is_shown_untested_with_its_evidence():
    osc, a5, paper = _a5()
    recs = _boundary_records("mope", {paper: [60, 64]}, seeds=2)
    v = a5.judge(osc.EXPERIMENT, {"mid": recs})
    assert v.verdict == "untested" and v.evidence and v.scale == "mid"
    assert "(124/128 over 2 seeds): untested (n 2 < 3: shown, not judged)" in v.evidence
    assert v.effects and all(e.verdict == "untested" and e.n == 2 for e in v.effects)
    # a scale without any of the cells: nothing to show
    assert a5.judge(osc.EXPERIMENT, {"mid": _boundary_records("ega-m", {})}) == (claims.untested())
    # the paper's cell judged, every foil still at 2 seeds: untested, not produced by the setup
    three = _boundary_records("mope", {paper: [64, 64, 64]})
    mixed = [r for r in three if r["row"] == paper or r["seed"] < 2]
    v = a5.judge(osc.EXPERIMENT, {"mid": mixed})
    assert v.verdict == "untested" and "(192/192 over 3 seeds): reproduced" in v.evidence
    assert "seeds as clusters, n 2-3 a cell" in v.evidence


def test_a5_boundary_fraction_paper_cell_at_one_half_is_contradicted():
    osc, a5, paper = _a5()
    recs = _boundary_records("mope", {paper: [31, 33, 32]})
    v = a5.judge(osc.EXPERIMENT, {"mid": recs})
    assert v.verdict == "contradicted"
    (mine,) = [e for e in v.effects if paper in e.label]
    assert mine.verdict == "contradicted" and mine.ci_high < 0.95 and mine.ci_low >= 0


def test_a5g_boundary_fraction_same_rule_on_ega_m_filters():
    osc, a5g, paper = _a5("ega-m")
    # the committed pattern: 0.969 of the filters on the boundary in the paper's cell, foils far
    v = a5g.judge(osc.EXPERIMENT, {"mid": _boundary_records("ega-m", {paper: [62, 64, 60]})})
    assert v.verdict == "produced by the setup" and "EGA-M filters" in v.evidence
    assert "NON-CAUSAL" in v.causality and not any(e.causal for e in v.effects)
    assert [e.paper for e in v.effects] == [1.0, None]
    # MOPE's records alone say nothing about EGA-M's filters
    assert a5g.judge(osc.EXPERIMENT, {"mid": _boundary_records("mope", {})}) == claims.untested()


def test_a5_boundary_fraction_needs_the_count_of_pairs():
    osc, a5, paper = _a5()
    recs = _boundary_records("mope", {paper: [64, 64, 64]})
    del recs[0]["analysis"]
    with pytest.raises(ValueError, match="analysis\\['omega'\\]"):
        a5.judge(osc.EXPERIMENT, {"mid": recs})


def test_boundary_fraction_figure_plots_each_cell_with_its_own_verdict_and_the_band():
    from mope_jax.analysis.figures import VERDICT_COLORS, canonical

    osc, _, paper = _a5()
    recs = _boundary_records("mope", {paper: [60, 64, 63]})
    recs += _boundary_records("ega-m", {osc.paper_cell("ega-m"): [32, 31, 33]}, seeds=3)
    figs = osc.figures(osc.EXPERIMENT, {"smoke": recs, "mid": recs})
    (fig,) = figs.values()
    assert list(figs) == ["forest.png"] and fig.kind == "fraction_forest"
    d = fig.data
    assert d["band"] == [0.95, 1.0] and len(d["labels"]) == 12 and d["ncols"] == 2
    assert [p["title"].split(",")[0] for p in d["panels"]] == ["MOPE", "EGA-M (NON-CAUSAL)"]
    mope, ega = d["panels"]  # smoke never drawn: one scale, two panels
    assert len(mope["items"]) == len(ega["items"]) == 12
    assert mope["items"][0]["verdict"] in ("reproduced", "inconclusive")
    assert mope["items"][0]["paper"] == 1.0 and mope["items"][1]["verdict"] == "contradicted"
    assert ega["items"][0]["verdict"] == "contradicted" and not ega["items"][0]["causal"]
    assert all(0 <= it["ci_low"] <= it["mean"] <= it["ci_high"] <= 1 for it in ega["items"])
    assert d["verdicts"] == {w: VERDICT_COLORS[w] for w in VERDICT_COLORS if w in d["verdicts"]}
    assert canonical(fig.payload())  # JSON-clean
    assert osc.figures(osc.EXPERIMENT, {"smoke": recs}) == {}


# --------------------------------------------------------------------------- paper B: B5, B6


def _ce_records(ft_acc_diff: float, seeds: int = 3) -> list[dict]:
    """context_extension records of one scale: zero-shot language and arithmetic rows (PI hurts
    the loss by ~0.5 nats and lowers the accuracy by 0.1) and fine-tunes whose forced result
    accuracy pi - none is ``ft_acc_diff`` (tight: +-0.001 seed noise), well above chance."""
    recs = []
    for s in range(seeds):
        noise = 0.001 * (s - 1)
        zero = {
            "loss": {
                "none@1": {"all": 1.6, "beyond_L": None},
                "none@2": {"all": 2.0 + 0.01 * s, "beyond_L": 2.1},
                "pi@2": {"all": 2.5 + 0.01 * s + noise, "beyond_L": 2.6},
            },
            "answer": {
                "none@2": {"forced_result": 0.5 + 0.02 * s},
                "pi@2": {"forced_result": 0.4 + 0.02 * s + noise},
            },
        }
        recs.append({"row": "language", "seed": s, "analysis": zero})
        recs.append({"row": "arithmetic", "seed": s, "analysis": zero})
        for task in ("language", "arithmetic"):
            for rule, d in (("none", 0.0), ("pi", ft_acc_diff + noise)):
                recs.append(
                    {
                        "row": f"{task}-ft-{rule}",
                        "seed": s,
                        "analysis": {
                            "loss": {"all": 1.55 + 0.01 * s + (0.005 + noise) * (rule == "pi")},
                            "answer": {"forced_result": 0.6 + 0.02 * s + d},
                        },
                    }
                )
    return recs


def test_b5_accuracy_is_judged_at_the_accuracy_margin_not_the_nats_one():
    from mope_jax.campaign import load_experiment

    exp = load_experiment("context_extension", REPO)
    (b5,) = [c for c in exp.claims if c.id == "B5"]
    # a 3-point drop, tight: resolved, but within the 0.05 accuracy margin: not material
    v = b5.judge(exp, {"cpu": _ce_records(-0.03)})
    assert v.verdict == "contradicted", v.evidence
    assert "negligible: the interval lies within +-0.05" in v.evidence
    ft = [e for e in v.effects if "fine-tuned at 2L" in e.label]
    assert [(e.unit, e.verdict) for e in ft] == [("accuracy", "contradicted")]
    assert ft[0].mean == pytest.approx(-0.03)
    # (the nats margin, 0.02, would have called the same interval a material drop)
    diffs = [-0.03 + 0.001 * (s - 1) for s in range(3)]
    assert claims.judge_difference(diffs, None, -1)[0] == "reproduced"
    assert claims.judge_difference(diffs, None, -1, unit="accuracy")[0] == "contradicted"
    # a 20-point drop, tight: beyond the margin: reproduced
    v = b5.judge(exp, {"cpu": _ce_records(-0.2)})
    assert v.verdict == "reproduced" and "resolved beyond the margin 0.05" in v.evidence
    assert [e.verdict for e in v.effects] == ["reproduced", "reproduced"]  # zero-shot -0.1 too
    # PI hurts the language loss zero-shot in the same records: the paper's contrast is not seen
    assert "the paper's contrast (PI works on language, fails on arithmetic) is not" in v.evidence
    # the fine-tune is named for what it is, from the cpu config: 200 steps at a third of the
    # pretraining rate, 25% of arithmetic's pretraining tokens
    assert "200 steps at lr 0.001, 0.33 x the pretraining rate 0.003, 25% of the" in v.evidence


def test_context_extension_forest_plots_each_claims_comparison_with_its_margin(monkeypatch):
    from experiments.context_extension import forest
    from mope_jax.analysis.figures import canonical
    from mope_jax.campaign import load_experiment

    monkeypatch.setattr(forest, "_ledger_effects", lambda experiment: {})  # no ledger: the rule's
    exp = load_experiment("context_extension", REPO)
    recs = _ce_records(-0.03)
    fig = forest.claims_forest(exp, {"smoke": recs, "cpu": recs})  # figures()' "forest.png"
    assert fig.kind == "margin_forest"
    panels = fig.data["panels"]  # smoke never drawn
    assert [p["title"].split(":")[0] for p in panels] == [
        "`cpu`, loss, zero-shot at 2L",
        "`cpu`, accuracy, zero-shot at 2L",
        "`cpu`, loss, fine-tuned at 2L",
        "`cpu`, accuracy, fine-tuned at 2L",
    ]
    assert [p["margin"] for p in panels] == [0.02, 0.05, 0.02, 0.05]
    loss_ft, acc_ft = panels[2:]
    assert [lab.split(",")[0] for lab in acc_ft["labels"]] == ["B5 arithmetic", "B6 arithmetic"]
    # B5 (lower): -0.03 within the 0.05 margin, contradicted; B6 (not higher): reproduced
    assert [it["verdict"] for it in acc_ft["items"]] == ["contradicted", "reproduced"]
    assert [lab.split(",")[0] for lab in loss_ft["labels"]] == ["B3 language", "B6 arithmetic"]
    assert all(it["ci_low"] < it["mean"] < it["ci_high"] for p in panels for it in p["items"])
    assert "before the ledger's Holm adjustment" in fig.data["title"]
    assert canonical(fig.payload())
