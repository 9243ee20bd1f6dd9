"""The claims ledger: verdicts judged from campaign records alone, and the README block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from experiments import fourierqk
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


def test_causal_kernels_are_judged_at_the_largest_scale_holding_the_kernels_it_plans():
    base, flat, gain = [2.0, 2.1, 2.05], [2.001, 2.1015, 2.0495], [1.0, 1.1, 1.02]
    cpu = records({"learned": base, **{k: flat for k in fourierqk.CAUSAL_KERNELS}})
    mid_kernels = fourierqk._kernels_at(
        next(s for s in fourierqk.EXPERIMENT.scales if s.name == "mid")
    )
    assert "causal-mexhat" not in mid_kernels and "causal-morlet" in mid_kernels
    # mid holds only one of its two kernels: still judged at cpu
    partial = records({"learned": base, "causal-gauss": gain})
    v = judge("C4", {"cpu": cpu, "mid": partial})
    assert v.verdict == "reproduced" and "scale `cpu`" in v.evidence and "mid" not in v.evidence
    # mid holds both: judged there, without the kernel mid does not plan, and says so
    full = records({"learned": base, **{k: gain for k in mid_kernels}})
    v = judge("C4", {"cpu": cpu, "mid": full})
    assert v.verdict == "contradicted" and "scale `mid`" in v.evidence
    assert "causal-mexhat not planned at `mid`" in v.evidence and "causal-mexhat" not in v.causality


def test_growth_from_cpu_to_mid_needs_a_growing_bilateral_row_and_no_growing_kernel():
    base = [2.0, 2.1, 2.05]
    rows = (*fourierqk.BILATERAL_PAPER_ROWS, *fourierqk.GROWTH_KERNELS)

    def scale(gain: dict[str, float]) -> list[dict]:  # gains per row, with a little seed noise
        vals = {r: [b - gain.get(r, 0.1) + 0.01 * i for i, b in enumerate(base)] for r in rows}
        return records({"learned": base, **vals}, leaks=fourierqk.BILATERAL_PAPER_ROWS)

    cpu = scale({})
    assert judge("C5", {"cpu": cpu}).verdict == "untested"  # mid has no records
    v = judge("C5", {"cpu": cpu, "mid": scale({"fourier-qk": 0.5})})
    assert v.verdict == "reproduced" and "fourier-qk: -0.090 (n 3) at cpu, -0.490" in v.evidence
    assert "(grows)" in v.evidence and "`fourier-qk` NON-CAUSAL, audit LEAKS" in v.causality
    both = judge("C5", {"cpu": cpu, "mid": scale({"fourier-qk": 0.5, "causal-morlet": 0.4})})
    assert both.verdict == "contradicted"  # a causal kernel's gain grew as well
    assert judge("C5", {"cpu": cpu, "mid": scale({})}).verdict == "inconclusive"


def test_untested_without_two_common_seeds_at_a_non_smoke_scale():
    base, gain = [2.0, 2.1, 2.05], [1.0, 1.1, 1.02]
    assert judge("C1", {}).verdict == "untested"
    smoke = records({"learned": base, "fourier-qk": gain})
    assert judge("C1", {"smoke": smoke}).verdict == "untested"  # a pipeline check never decides
    one = records({"learned": base[:1], "fourier-qk": gain[:1]})
    assert judge("C1", {"cpu": one}).verdict == "untested"
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
    assert (
        f"seeds to resolve the paper's -0.05 at sd {sd:.4f}: {claims.seeds_needed(sd, 0.05)}"
        in (note)
    )
    assert "smallest resolvable effect +-" in note
    # a threshold: resolved short of it is contradicted; an interval holding it inconclusive
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
    assert v == "reproduced" and f"margin {m:g}" in note
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
    assert v.verdict == "inconclusive" and "seeds to resolve the paper's -0.0919" in v.evidence


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


def test_scale_facts_state_budget_seeds_and_flag_rows_still_falling():
    from experiments import paper_a

    recs = [_run("a-baseline", s, [2.4, 2.1, 1.977, 1.943]) for s in range(3)]
    recs += [_run("a-mope", s, [2.5, 2.2, 2.10, 2.095], params=790_000) for s in range(5)]
    v = claims.Verdict("reproduced", scale="mid", rows=("a-mope", "a-baseline"))
    facts = claims.scale_facts(paper_a.EXPERIMENT, {"mid": recs}, v)
    assert facts.seeds == 3 and facts.runs == 8 and facts.rows == 2
    assert facts.tokens == (2000 * 16 * 256,) * 8  # steps x batch x T
    assert facts.budget() == "0.79-0.8M params, 8.19M tokens a run, 3 seeds"
    # a-baseline falls 0.034 over its last quarter (> FALLING_NATS), a-mope 0.005 (converged)
    assert [r for r, _ in facts.falling] == ["a-baseline"]
    note = claims.scale_note(facts, v)
    assert "**still falling**" in note and "`a-baseline` -0.034" in note
    assert "(paper: ~4.8M params, ~82M tokens, 1 seed)" in note
    late = [{"step": 1500, "val": 2.0}, {"step": 2000, "val": 1.99}]
    flat = [dict(r, curve=r["curve"][:2] + late) for r in recs]
    assert "converged" in claims.scale_note(
        claims.scale_facts(paper_a.EXPERIMENT, {"mid": flat}, v), v
    )
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
