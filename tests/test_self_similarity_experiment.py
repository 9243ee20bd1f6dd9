"""experiments/self_similarity.py: the pre-registered verdict, claim B4 judged from the results
JSON, and a smoke run of the script."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from experiments import _paper_b as pb
from experiments import self_similarity as ss
from mope_jax import claims

REPO = Path(__file__).resolve().parents[1]
CRITERION = {"min_r2": 0.8, "max_alpha_spread": 0.5, "confidence": 0.95, "fit_chars": [4, 200]}


def corpus(alphas: dict[str, float], sd: float, *, r2: float = 0.95, seed: int = 0) -> dict:
    """A fabricated corpus result: point fits and 200 bootstrap alphas around them."""
    rng = np.random.default_rng(seed)
    return {
        "collapse": {
            "power_law": {g: {"alpha": a, "r2": r2, "points": 10} for g, a in alphas.items()},
            "ratio": 1.5,
        },
        "bootstrap": {
            "alpha": {g: (a + sd * rng.standard_normal(200)).tolist() for g, a in alphas.items()},
            "ratio": (1.5 + 0.01 * rng.standard_normal(200)).tolist(),
            "resamples": 200,
            "block_chars": 20_000,
            "num_blocks": 56,
        },
    }


SAME = {"chars": 1.6, "merges64": 1.65, "merges512": 1.55, "words": 1.6}
APART = {"chars": 1.0, "merges64": 0.8, "merges512": 0.6, "words": 0.2}
EDGE = {"chars": 1.6, "merges64": 1.8, "merges512": 1.5, "words": 1.35}  # spread 0.45


def test_each_verdict_is_reachable():
    assert ss.verdict(corpus(SAME, 0.01), CRITERION)[0] == ss.SELF_SIMILAR
    v, why = ss.verdict(corpus(APART, 0.01), CRITERION)
    assert v == ss.NOT_SELF_SIMILAR and "alpha spread 0.80" in why
    # equal exponents but a profile that is no power law
    v, why = ss.verdict(corpus(SAME, 0.01, r2=0.7), CRITERION)
    assert v == ss.NOT_SELF_SIMILAR and "min R^2 0.70" in why
    # a point spread below the margin whose CI reaches past it
    assert ss.verdict(corpus(EDGE, 0.08), CRITERION)[0] == ss.UNDECIDED
    assert ss.verdict(corpus(EDGE, 0.005), CRITERION)[0] == ss.SELF_SIMILAR
    # the criterion recorded in the JSON decides, not today's constants
    assert ss.verdict(corpus(EDGE, 0.005), CRITERION | {"max_alpha_spread": 0.3})[0] == (
        ss.NOT_SELF_SIMILAR
    )


def payload(lang: dict, arith: dict, scale: str = "cpu") -> dict:
    return {
        "scale": scale,
        "criterion": CRITERION,
        "corpora": {"tinyshakespeare": lang, "igsm_arithmetic": arith},
    }


def judge(p):
    (b4,) = ss.ANALYSIS.claims
    return b4.judge(ss.ANALYSIS, p)


def test_claim_b4_from_the_results_json():
    lang, arith = corpus(SAME, 0.01), corpus(APART, 0.01)
    v = judge(payload(lang, arith))
    assert v.verdict == "reproduced" and "tinyshakespeare: self-similar" in v.evidence
    assert judge(payload(arith, arith)).verdict == "contradicted"  # language not self-similar
    assert judge(payload(lang, lang)).verdict == "contradicted"  # arithmetic self-similar
    undecided = judge(payload(corpus(EDGE, 0.08), arith))
    assert undecided.verdict == "inconclusive" and "undecided" in undecided.evidence
    # no JSON, a smoke JSON, or one from before the bootstrap: untested
    assert judge(None).verdict == "untested"
    assert judge(payload(lang, arith, scale="smoke")).verdict == "untested"
    old = payload(lang, arith)
    for c in old["corpora"].values():
        del c["bootstrap"]
    assert judge(old).verdict == "untested"


def test_the_ledger_holds_b4_judged_from_the_committed_json():
    (analysis,) = [a for a in claims.analyses_with_claims(REPO) if a.name == "self_similarity"]
    committed = json.loads((REPO / "experiments" / "results" / analysis.results).read_text())
    v = judge(committed)
    row = next(line for line in claims.ledger(REPO).splitlines() if line.startswith("| [B4]("))
    assert f"**{v.verdict}**" in row


@pytest.mark.skipif(not ss.SHAKESPEARE.is_file(), reason="needs ../shared/data/tinyshakespeare")
def test_smoke_run_writes_json_that_renders_to_its_markdown(tmp_path, monkeypatch):
    monkeypatch.setattr(pb, "RESULTS", tmp_path)
    ss.main(["--scale", "smoke"])
    js = tmp_path / "self_similarity_smoke.json"
    p = json.loads(js.read_text())
    assert p["criterion"]["max_alpha_spread"] == ss.MAX_ALPHA_SPREAD
    for res in p["corpora"].values():
        b = res["bootstrap"]
        assert b["resamples"] == 20 and b["num_blocks"] == 12
        assert set(b["alpha"]) == {q["name"] for q in res["profiles"]}
        assert all(len(v) == 20 and np.all(np.isfinite(v)) for v in b["alpha"].values())
        assert set(res["half_sample"]["alpha"]) == set(b["alpha"])
        assert ss.verdict(res, p["criterion"])[0] in (
            ss.SELF_SIMILAR,
            ss.NOT_SELF_SIMILAR,
            ss.UNDECIDED,
        )
    (md,) = ss.render(p, js).values()
    assert md == js.with_suffix(".md").read_text() and "| verdict |" in md
    assert "(not the verdict) |" in md  # the post-hoc half-sample table
    assert (tmp_path / "self_similarity_smoke.png").is_file()
    assert judge(p).verdict == "untested"  # a smoke run never decides
