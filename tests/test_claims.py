"""The claims ledger: verdicts judged from campaign records alone, and the README block."""

from __future__ import annotations

from pathlib import Path

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
    assert none.verdict == "not reproduced"
    kernels = {k: gain for k in fourierqk.CAUSAL_KERNELS}
    beat = judge("C4", {"cpu": records({"learned": base, **kernels})})
    assert beat.verdict == "not reproduced"  # a causal kernel beating the baseline refutes C4
    flat = {k: [2.0, 2.12, 2.04] for k in fourierqk.CAUSAL_KERNELS}
    assert judge("C4", {"cpu": records({"learned": base, **flat})}).verdict == "reproduced"


def test_causal_kernels_are_judged_at_the_largest_scale_holding_the_kernels_it_plans():
    base, flat, gain = [2.0, 2.1, 2.05], [2.0, 2.12, 2.04], [1.0, 1.1, 1.02]
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
    assert v.verdict == "not reproduced" and "scale `mid`" in v.evidence
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
    assert both.verdict == "not reproduced"  # a causal kernel's gain grew as well
    assert judge("C5", {"cpu": cpu, "mid": scale({})}).verdict == "not reproduced"


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
    # the same gain on both encodings: additive
    assert a4.judge(paper_a.EXPERIMENT, recs(2.135)).verdict == "not reproduced"
