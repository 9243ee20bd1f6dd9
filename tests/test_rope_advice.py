"""`mope-jax rope-advice` and mope_jax.analysis.rope_advice on data whose width W is known."""

import json
import math

import numpy as np
import pytest

from mope_jax.analysis import rope_advice as ra
from mope_jax.cli import main
from mope_jax.data import mutual_info as mi


@pytest.fixture(scope="module")
def block_advice():
    return {b: ra.advise(ra.load_tokens(f"blocks:B={b}")) for b in (4, 6, 10, 18, 34)}


def test_block_task_width_is_b_minus_2_and_the_band_follows(block_advice):
    for b, a in block_advice.items():
        w = b - 2
        assert a.width == w == a.expected_width
        assert a.kernel.kind == "match"  # auto: the built-in copy task
        assert a.kernel.structure == "fixed-offset"
        assert a.theta_star == pytest.approx(math.pi / w)
        assert a.admissible_max == pytest.approx(math.pi / w)
        for g in a.grids.values():
            theta = ra.grid(g.base, a.head_dim)
            assert g.admissible == int((theta <= math.pi / w + 1e-12).sum())
            # theta at W: the fastest admissible frequency
            assert g.nearest_theta <= math.pi / w + 1e-12
            assert g.nearest_index == 0 or theta[g.nearest_index - 1] > math.pi / w
        assert not any("differs" in n for n in a.notes)


def test_base_rises_with_w(block_advice):
    ws = sorted(block_advice)
    width_bases = [block_advice[b].base_width for b in ws]
    recommended = [block_advice[b].base_recommended for b in ws]
    # W = 2 < pi sets no bound (base_W = 1); above it base_W rises strictly with W
    assert width_bases[0] == 1.0 and all(np.diff(width_bases) > 0)
    assert all(np.diff(recommended) >= 0)
    for a in block_advice.values():  # L = 256 sets the floor for these small widths
        assert a.base_recommended == ra.round_sig(max(a.base_width, a.base_field))
        assert a.base_field == pytest.approx((256 / math.pi) ** (32 / 30))


def test_wide_dependencies_lift_the_base_above_the_context_floor():
    recs = {}
    for w in (8, 64, 128):
        a = ra.advise(ra.load_tokens(f"repeat:W={w}"))
        assert a.width == w and a.kernel.structure == "fixed-offset"
        recs[w] = a
    assert recs[8].binding == "context" and recs[8].base_recommended == 110
    assert recs[64].binding == recs[128].binding == "width"
    assert recs[128].base_recommended > recs[64].base_recommended > recs[8].base_recommended


@pytest.mark.parametrize("w", [4.0, 8.0, 30.0, 300.0])
def test_width_matched_span_maximises_the_contrast_weighted_count(w):
    """b_W solves e^b = (W/c)(1 + b) and maximises S(b) = (n/b)(1 - e^-b W/c)."""
    c = math.pi
    b_w = ra.width_matched_log_span(w, c)
    assert math.exp(b_w) == pytest.approx(w / c * (1 + b_w), rel=1e-10)
    bs = np.linspace(math.log(w / c) + 1e-6, 20, 200_001)
    s = (1 - np.exp(-bs) * w / c) / bs
    assert b_w == pytest.approx(bs[np.argmax(s)], abs=2e-4)
    assert ra.width_matched_log_span(3.0, c) == 0.0  # W <= c: no bound


def test_fixed_offset_extension_keeps_the_frequency_that_serves_w(block_advice):
    a = block_advice[10]
    for step in a.extension:
        assert step.rule == "yarn"
        eff = {e.rule: e for e in step.effects}
        assert eff["yarn-keep"].theta_w_ratio == pytest.approx(1.0)
        assert eff["none"].theta_w_ratio == pytest.approx(1.0)
        assert eff["pi"].theta_w_ratio == pytest.approx(1 / step.factor, rel=1e-5)
        assert not eff["none"].covers and eff["pi"].covers and eff["yarn-keep"].covers
        assert f"model.rope_factor={step.factor:g}" in step.overrides
        assert "model.rope_yarn_beta=" in step.overrides
        assert f"model.block_size={int(step.factor * 256)}" in step.overrides


def test_markov_text_without_power_law_gets_ntk():
    """An exponentially decaying kernel (first-order Markov chain) is neither a power law nor
    a sharp peak."""
    P = np.array([[0.8, 0.15, 0.05], [0.1, 0.6, 0.3], [0.3, 0.1, 0.6]])
    a = ra.advise(mi.sample_markov(P, 60_000, seed=0), context=64)
    assert a.width == 1 and a.kernel.structure == "unclear"
    assert [s.rule for s in a.extension] == ["ntk", "ntk"]


def test_arithmetic_text_is_not_called_self_similar():
    """iGSM-style arithmetic (the paper's PI failure case): its MI decays with a characteristic
    length (the problem), concave in log-log, so no PI."""
    from mope_jax.data import igsm

    ids = igsm.igsm_stream(400_000, seed=2025, ops_range=(1, 2), ops=("+", "-"))
    a = ra.advise(ids, context=128)
    assert a.kernel.structure == "unclear" and a.kernel.power_curvature < ra.MIN_CURVATURE
    assert "pi" not in {s.rule for s in a.extension}


def test_tinyshakespeare(shakespeare_path):
    a = ra.advise(ra.load_tokens(str(shakespeare_path)))
    assert a.num_tokens == 1_003_854 and a.kernel.kind == "mi"
    assert a.width == 1 and a.kernel.structure == "self-similar"
    assert a.kernel.power_r2 >= ra.MIN_POWER_R2 and a.kernel.power_curvature > 0
    assert a.binding == "context" and a.base_recommended == 110
    assert [s.rule for s in a.extension] == ["pi", "pi"]
    assert a.grids["current"].beyond_context == 8  # base 10000: half the grid is beyond L
    text = ra.format_advice(a)
    assert "model.rope_base=110" in text and "ledger" in text


def test_cli_json_shape(capsys):
    assert main(["rope-advice", "--data", "repeat:W=8", "--context", "64", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["width"] == 8 and d["structure"] == "fixed-offset"
    assert len(d["kernel"]["values"]) == 64
    assert d["overrides"] == f"model.rope_base={d['base_recommended']:g}"
    assert set(d["grids"]) == {"current", "recommended", "width-matched"}
    assert [s["factor"] for s in d["extension"]] == [2.0, 4.0]
    assert {e["rule"] for e in d["extension"][0]["effects"]} == {
        "none",
        "pi",
        "ntk",
        "yarn",
        "yarn-keep",
    }
    assert d["status"].startswith("a prediction")


def test_cli_text(capsys):
    assert main(["rope-advice", "--data", "blocks:B=10", "--factors", "2", "--c", "fit"]) == 0
    out = capsys.readouterr().out
    assert "W = 8" in out and "matches the W = 8 built into the task" in out
    assert "c = 3.02" in out and "train with: model.rope_base=" in out and "s = 2 " in out


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--data", "no/such/file.txt"], "is not a file"),
        (["--data", "blocks:B=2"], "B >= 3"),
        (["--data", "blocks:Q=2"], "is not one of B=INT"),
        (["--data", "repeat:W=x"], "is not an integer"),
        (["--data", "repeat:W=8,N=100"], "--max-distance 24 or less"),
        (["--data", "repeat:W=8", "--factors", "1"], "every factor must be > 1"),
        (["--data", "repeat:W=8", "--head-dim", "3"], "must be at least 4"),
        (["--data", "repeat:W=8", "--head-dim", "33"], "must be even"),
        (["--data", "repeat:W=8", "--base", "1"], "must be > 1"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, fragment, capsys):
    try:
        rc = main(["rope-advice", *argv])
    except SystemExit as e:  # argparse's own checks exit through the parser
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("error:") and len(err.strip().splitlines()) == 1
    assert fragment in err


def test_printed_overrides_are_valid_config_overrides(block_advice):
    """What a later campaign copies: the training and evaluation overrides apply to a RoPE
    config and give the frequencies the advice analysed."""
    from mope_jax.config import apply_overrides
    from mope_jax.encodings.rope import scaled_frequencies
    from mope_jax.presets import apply_variant, get_preset

    a = block_advice[10]
    rope = apply_variant(get_preset("smoke"), "rope")
    cfg = apply_overrides(rope, ["model.n_embd=64", "model.n_head=2", *a.overrides.split()])
    assert cfg.model.rope_base == a.base_recommended and cfg.model.head_dim == a.head_dim
    for step in a.extension:
        ext = apply_overrides(cfg, step.overrides.split())
        assert ext.model.block_size == int(step.factor * a.context)
        theta, _ = scaled_frequencies(ext.model, ext.model.block_size)
        i = a.grids["recommended"].nearest_index  # yarn-keep leaves theta_W as trained
        assert float(theta[i]) == pytest.approx(a.grids["recommended"].nearest_theta, rel=1e-5)
