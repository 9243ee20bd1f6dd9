"""iGSM by operation count (experiments/igsm_ops.py): the lookup distances a
solution copies over, the width W they define per row, and the B2 verdict from records."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from mope_jax import claims
from mope_jax.data import igsm


@pytest.mark.parametrize("k", [1, 3, 8])
def test_lookup_distances_point_from_each_copied_value_back_to_its_source(k):
    for p in igsm.problems(30, seed=k, ops_range=(k, k), ops=("+", "-", "*")):
        text = p.text
        d = igsm.lookup_distances(text)
        # a leaf copies once; an operation copies its two operands
        leaves = len(re.findall(r"so [a-z]=\d+\.", text))
        ops = len(re.findall(r"so [a-z]=[a-z]", text))
        assert len(d) == leaves + 2 * ops and all(x > 0 for x in d)
        num = lambda i: re.match(r"\d+", text[i:]).group()  # noqa: E731
        # every distance lands on a number equal to the copied one
        order = []
        for m in re.finditer(r"so [a-z]=(?:(\d+)|[a-z][-+*][a-z]=(\d+)[-+*](\d+)=)", text):
            order += [m.start(g) for g in (1, 2, 3) if m.group(g) is not None]
        for pos, dist in zip(order, d):
            assert num(pos - dist) == num(pos)


def test_width_grows_with_the_operation_count():
    from experiments import igsm_ops

    w = [igsm_ops.width(k)["W"] for k in igsm_ops.OPS_COUNTS]
    assert all(a < b for a, b in zip(w, w[1:]))
    assert igsm_ops.width(8)["W_p90"] > 2 * igsm_ops.width(1)["W_p90"]


def _records(slope, seeds=2, rows=(1, 2, 4, 8)):
    out = []
    for k in rows:
        W = 40.0 * k
        for s in range(seeds):
            lt = math.log(3.0) + slope * math.log(W) + 0.01 * (s - 0.5)
            a = {"ops": k, "W": W, "W_median": W, "W_p90": W, "chars_per_problem": 100.0}
            a |= {"log_theta_eff": lt, "theta_eff": math.exp(lt)}
            out.append({"row": f"ops-{k}", "seed": s, "analysis": a})
    return out


def test_trend_verdicts_and_section():
    from experiments import igsm_ops

    exp = igsm_ops.EXPERIMENT
    assert igsm_ops._trend_judge(exp, {}).verdict == "untested"
    assert igsm_ops._trend_judge(exp, {"smoke": _records(-1.0)}).verdict == "untested"
    assert igsm_ops._trend_judge(exp, {"cpu": _records(-1.0, seeds=1)}).verdict == "untested"
    # the records hold no lookup or answer accuracy: whatever the slope, untestable here, with
    # the slope judged against the law's -1 and its direction shown (not in the Holm family)
    v = igsm_ops._trend_judge(exp, {"cpu": _records(-1.0)})
    assert v.verdict == "untestable here" and "8 runs over 4 rows" in v.evidence
    assert "against the law's -1 reproduced" in v.evidence and "direction" in v.evidence
    flat = igsm_ops._trend_judge(exp, {"cpu": _records(0.0)})
    assert (
        flat.verdict == "untestable here" and "against the law's -1 contradicted" in flat.evidence
    )
    tests: list = []
    with claims.collecting(tests):
        igsm_ops._trend_judge(exp, {"cpu": _records(-1.0)})
    assert all(math.isnan(t.p) for t in tests)
    md = igsm_ops.ops_section(exp, exp.scale("cpu"), _records(-1.0))
    assert "slope of log theta_eff on log W = -1.000" in md
    assert "| `ops-8` | 8 | 320.0 (320, 320) |" in md
    assert np.isclose(igsm_ops.trend(igsm_ops._runs(_records(-0.5))).slope, -0.5)
