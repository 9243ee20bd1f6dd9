"""The causality audit (analysis/causality.py): it catches leaks, passes causal code, and every
registered variant's declaration matches what it measures."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis.causality import (
    audit,
    audit_model,
    audit_model_variants,
    audit_registry,
    format_table,
)
from mope_jax.attention import spectral as sp
from mope_jax.attention.core import attend, causal_mask, dot_product_scores
from mope_jax.config import ModelConfig
from mope_jax.model import init_params

T, E = 12, 8


def _masked_attention(key):
    kq, kk, kv = jax.random.split(key, 3)
    wq, wk, wv = (jax.random.normal(k, (E, E)) / E**0.5 for k in (kq, kk, kv))

    def fn(x):  # (T,E) -> (T,E), one head
        q, k, v = (x @ w for w in (wq, wk, wv))
        scores = dot_product_scores(q[None, :, None], k[None, :, None], E)  # (1,1,T,S)
        return attend(scores, v[None, :, None], mask=causal_mask(x.shape[0]))[0, :, 0]

    return fn


def test_masked_attention_passes_with_zero_leak():
    fn = _masked_attention(jax.random.PRNGKey(0))
    res = audit(fn, jax.random.normal(jax.random.PRNGKey(1), (T, E)))
    assert res.causal and res.leak == 0.0 and res.first_leak is None
    assert res.scale > 0


def test_one_future_position_through_1e3_coefficient_is_caught():
    attn = _masked_attention(jax.random.PRNGKey(0))

    def leaky(x):  # output 3 also sees input 7, with weight 1e-3
        return attn(x).at[3].add(1e-3 * x[7])

    from mope_jax.analysis.causality import influence_jvp, influence_perturb, verdict

    x = jax.random.normal(jax.random.PRNGKey(1), (T, E))
    for method in ("jacobian", "jvp", "perturb"):
        res = audit(leaky, x, method=method, key=jax.random.PRNGKey(2))
        if method != "jacobian":
            # the probes cover a subset of positions; probe the leaking one explicitly
            probe = influence_jvp if method == "jvp" else influence_perturb
            infl, _ = probe(leaky, x, key=jax.random.PRNGKey(2), positions=[7])
            res = verdict(infl, method=method)
        assert not res.causal, method
        assert res.first_leak == (3, 7), method
        assert 1e-4 < res.leak_rel < 1e-2, (method, res.leak_rel)
        if method == "jacobian":
            assert abs(res.leak - 1e-3) < 1e-9  # d out[3] / d x[7] = 1e-3 I exactly


def test_padded_fft_conv_passes_and_unpadded_is_caught():
    h = jax.random.normal(jax.random.PRNGKey(3), (1, 5))

    def wrap(conv):
        return lambda x: conv(x[None, :, None, :], h)[0, :, 0, :]  # (T,E) -> (1,T,1,E) -> (T,E)

    x = jax.random.normal(jax.random.PRNGKey(1), (T, E))
    for conv in (sp.causal_conv_fft, sp.causal_conv_toeplitz, sp.causal_conv_direct):
        assert audit(wrap(conv), x).causal, conv.__name__
    res = audit(wrap(sp.circular_conv_fft), x)
    assert not res.causal
    assert res.first_leak == (0, T - 4)  # y[0] gets h[4] x[T-4] (K=5): the farthest wrap


def test_large_t_audit_uses_derivatives_so_fft_rounding_is_not_a_leak():
    """At T = 256 the audit probes positions. Finite differences (``perturb``) subtract two
    rounded outputs and divide by the perturbation, so a causal FFT convolution of large
    inputs shows a rounding 'leak' far above the tolerance; the forward-mode derivative
    (``jvp``, the default) has no such floor and still sees a real leak."""
    T2 = 256
    h = jax.random.normal(jax.random.PRNGKey(3), (1, 16))

    def conv(x):  # (T,E) -> (T,E), causal by construction (zero-padded FFT)
        return sp.causal_conv_fft(x[None, :, None, :], h)[0, :, 0, :]

    x = 1e3 * jax.random.normal(jax.random.PRNGKey(1), (T2, E))
    key = jax.random.PRNGKey(2)
    fd = audit(conv, x, method="perturb", key=key)
    assert not fd.causal and fd.leak_rel > 1e-4  # rounding, reported as a leak
    auto = audit(conv, x, key=key, max_jacobian_elems=0)  # large-T path
    assert auto.method == "jvp-cuts" and auto.causal and auto.leak_rel < 1e-6
    assert audit(conv, x, key=key, method="jvp").leak_rel < 1e-6  # probes alone: no floor either

    def leaky(x):  # the same convolution, each output t also reading input t + 5 (weight 1e-3)
        return conv(x).at[:-5].add(1e-3 * x[5:])

    res = audit(leaky, x, key=key, max_jacobian_elems=0)
    assert not res.causal and res.first_leak[1] - res.first_leak[0] == 5


def _far_leak():
    """Masked attention at T = 256, the same with output 5 reading input 200 (weight 1e-3), an
    input and a key."""
    attn = _masked_attention(jax.random.PRNGKey(0))

    def leaky(x):
        return attn(x).at[5].add(1e-3 * x[200])

    return attn, leaky, jax.random.normal(jax.random.PRNGKey(1), (256, E)), jax.random.PRNGKey(2)


def test_large_t_audit_covers_every_future_position_not_only_the_probed_ones():
    """One output reading one far future input (t = 5 <- s = 200, weight 1e-3) at T = 256: the
    probed positions (``jvp``: 16 drawn + 1, T/2, T-1) do not include s, so probing alone calls
    the function causal; the cuts (``jvp-cuts``, the large-T default: T - 1 directions, each on
    all positions >= c) find the leak and name the pair."""
    from mope_jax.analysis.causality import _probe_positions

    attn, leaky, x, key = _far_leak()
    assert 200 not in _probe_positions(key, x.shape[0], 16)  # the premise: s is not probed
    probed = audit(leaky, x, key=key, method="jvp")
    assert probed.causal  # the blind spot this test is about
    res = audit(leaky, x, key=key, max_jacobian_elems=0)
    assert res.method == "jvp-cuts" and not res.causal
    assert res.first_leak == (5, 200)  # the farthest cut that still reaches output 5
    assert 1e-5 < res.leak_rel < 1e-1
    assert audit(attn, x, key=key, max_jacobian_elems=0).causal  # and no false alarm


def _reverse_only(f):
    """f behind a jax.custom_vjp (exact gradient): jax.jvp refuses it, as it refuses
    Morlet-RoPE's hand-written group gradient."""
    g = jax.custom_vjp(f)
    g.defvjp(lambda x: (f(x), x), lambda x, ct: jax.vjp(f, x)[1](ct))
    return g


def test_large_t_audit_of_a_reverse_only_function_uses_vjp_rows_and_finds_every_pair():
    """``jax.jvp`` cannot differentiate a custom_vjp, so the large-T default (``jvp-cuts``)
    cannot run; ``auto`` then audits with one vjp per output position (``vjp-rows``), which
    like the cuts examines every (t, s > t) pair: the far leak t = 5 <- s = 200 that probing
    misses is found and named, and the causal function passes."""
    attn, leaky, x, key = _far_leak()
    with pytest.raises(TypeError, match="custom_vjp"):  # the premise
        audit(_reverse_only(attn), x, key=key, method="jvp-cuts")
    ok = audit(_reverse_only(attn), x, key=key, max_jacobian_elems=0)
    assert ok.method == "vjp-rows" and ok.causal and ok.leak == 0.0
    bad = audit(_reverse_only(leaky), x, key=key, max_jacobian_elems=0)
    assert bad.method == "vjp-rows" and not bad.causal and bad.first_leak == (5, 200)
    assert 1e-5 < bad.leak_rel < 1e-1
    # a function jvp can differentiate keeps the forward-mode default
    assert audit(attn, x, key=key, max_jacobian_elems=0).method == "jvp-cuts"


def test_vjp_rows_sees_the_jacobians_support():
    """R[t, s] > 0 exactly where the Jacobian block J[t, s] is nonzero (small T, dense check)."""
    from mope_jax.analysis.causality import influence_jacobian, influence_rows

    attn = _masked_attention(jax.random.PRNGKey(0))

    def leaky(x):
        return attn(x).at[3].add(1e-3 * x[9])

    x = jax.random.normal(jax.random.PRNGKey(1), (T, E))
    rows = influence_rows(_reverse_only(leaky), x, key=jax.random.PRNGKey(4), chunk=5)
    exact = influence_jacobian(leaky, x)
    np.testing.assert_array_equal(rows > 0, exact > 0)
    assert rows[3, 9] > 0 and rows[2, 9] == 0


def test_morlet_rope_model_is_audited_at_large_t():
    """A Morlet-RoPE GPT (custom_vjp group gradient) at a T where the Jacobian is not used: the
    audit runs (``vjp-rows``) and finds it causal; an EGA model with the paper's full-sequence
    gate on the same path is caught."""
    base = dict(
        block_size=64, n_layer=1, n_head=2, n_embd=16, dropout=0.0, vocab_size=11, init_std=0.2
    )
    mr = ModelConfig(**base, qk_position="morlet-rope")
    res = audit_model(mr, init_params(mr, jax.random.PRNGKey(0)), max_jacobian_elems=0)
    assert res.method == "vjp-rows" and res.causal, res
    ega = ModelConfig(**base, attn_bias="ega")
    with_rows = audit_model(ega, init_params(ega, jax.random.PRNGKey(0)), method="vjp-rows")
    assert with_rows.method == "vjp-rows" and not with_rows.causal


def test_bilateral_filter_is_caught_at_the_function_level():
    w = sp.gaussian_window(jnp.asarray([3.0]), T // 2 + 1, 2.0)

    def fn(x):
        return sp.spectral_filter(x[None, :, None, :], w)[0, :, 0, :]

    res = audit(fn, jax.random.normal(jax.random.PRNGKey(1), (T, E)))
    assert not res.causal and res.leak_rel > 0.1


def test_every_registered_variant_matches_its_declaration():
    rows = audit_registry(seq_len=16, n_layer=1)
    table = format_table(rows)
    bad = [r for r in rows if r["status"] != "ok"]
    assert not bad, table
    names = {(r["slot"], r["variant"]) for r in rows}
    for expected in [
        ("qk_filter", "fourier"),
        ("qk_filter", "causal-gauss"),
        ("mixer", "fnet"),
        ("qk_filter", "circular-gauss"),
        ("qk_position", "morlet-xcorr"),
    ]:
        assert expected in names
    assert any(not r["declared_causal"] for r in rows) and any(r["declared_causal"] for r in rows)


def test_the_audit_finds_a_model_that_changes_with_the_sequence_length(monkeypatch):
    """A causal kernel sized and normalised from the length it is handed (what causal-gauss did
    before its T came from the block size) reads no future value, yet computes another function
    on a shorter sequence: the audit's prefix check calls it not causal, and says why."""
    from mope_jax.analysis import causality
    from mope_jax.analysis.causality import PREFIX_TOL
    from mope_jax.attention import spectral as sp

    def length_of_the_input(cfg, kind, impl=None):  # T taken from the sequence it is handed
        return sp.CausalKernelFilter(
            cfg.n_head, kind, cfg.kernel_len, cfg.kernel_scale, cfg.kernel_learn_scale,
            cfg.kernel_w0, impl or cfg.conv_impl, cfg.kernel_norm, block_size=None,
        )  # fmt: skip

    def fresh():  # the audit's programs are cached per config: trace the patched model anew
        causality._model_fn.cache_clear()
        causality._prefix_fn.cache_clear()

    kernel = sp._kernel
    monkeypatch.setattr(sp, "_kernel", length_of_the_input)
    fresh()
    (row,) = audit_registry(seq_len=16, n_layer=1, names=("causal-gauss",))
    assert row["leak_rel"] <= row["tol"] and row["prefix_rel"] > PREFIX_TOL
    assert not row["causal"] and "not prefix-invariant" in row["status"]
    monkeypatch.setattr(sp, "_kernel", kernel)
    fresh()
    (row,) = audit_registry(seq_len=16, n_layer=1, names=("causal-gauss",))
    assert row["causal"] and row["prefix_rel"] <= PREFIX_TOL and row["status"] == "ok"


@pytest.mark.slow
def test_every_registered_variant_matches_its_declaration_on_the_large_t_path():
    """The audit a trained model gets at T = 256 (``jvp-cuts``, or ``vjp-rows`` where jvp is
    refused) runs on every variant and agrees with its declaration: Morlet-RoPE's custom_vjp
    once made the large-T audit fail after a whole mid-scale run had trained."""
    rows = audit_registry(seq_len=16, n_layer=1, max_jacobian_elems=0)
    bad = [r for r in rows if r["status"] != "ok"]
    assert not bad, format_table(rows)
    methods = {r["variant"]: r["method"] for r in rows}
    assert methods["morlet-rope"] == "vjp-rows"
    assert set(methods.values()) <= {"jvp-cuts", "vjp-rows"} and "jvp-cuts" in methods.values()


@pytest.mark.parametrize("impl", ["fft", "toeplitz", "direct"])
def test_causal_kernel_model_passes_with_every_conv_impl(impl):
    cfg = ModelConfig(
        block_size=16,
        n_layer=1,
        n_head=2,
        n_embd=16,
        dropout=0.0,
        vocab_size=11,
        init_std=0.2,
        qk_filter="causal-morlet",
        conv_impl=impl,
        kernel_scale=3.0,
    )
    res = audit_model(cfg, init_params(cfg, jax.random.PRNGKey(0)))
    assert res.causal, res
    if impl != "fft":
        assert res.leak == 0.0  # no FFT, no round-off: exactly causal


def test_model_variant_audit_rows():
    rows = audit_model_variants(["fourier-qk", "causal-gauss"], seq_len=16, n_layer=1)
    by = {r["variant"]: r for r in rows}
    assert by["fourier-qk"]["declared_causal"] is False and by["fourier-qk"]["status"] == "ok"
    assert by["causal-gauss"]["declared_causal"] is True and by["causal-gauss"]["causal"] is True


def test_training_refuses_noncausal_variant_without_allow():
    from mope_jax.presets import apply_variant, get_preset
    from mope_jax.train import TrainingError, check_causal

    for name in ("fourier-qk", "fnet", "xcorr-qk"):
        cfg = apply_variant(get_preset("smoke"), name)
        with pytest.raises(TrainingError, match="allow_noncausal"):
            check_causal(cfg)
        allowed = dataclasses.replace(
            cfg, train=dataclasses.replace(cfg.train, allow_noncausal=True)
        )
        check_causal(allowed)  # no error
    check_causal(apply_variant(get_preset("smoke"), "causal-gauss"))


def test_cli_audit_exit_status(capsys, monkeypatch):
    from mope_jax import cli
    from mope_jax.analysis import causality

    assert cli.main(["audit", "--seq-len", "8", "--slot", "mixer"]) == 0
    out = capsys.readouterr().out
    assert "fnet" in out and "NON-CAUSAL" in out

    # a declared-causal variant that leaks must make the command fail
    real = causality.audit_registry

    def lying(**kw):
        rows = real(**kw)
        return [dict(r, declared_causal=True) for r in rows]

    monkeypatch.setattr(causality, "audit_registry", lying)
    assert cli.main(["audit", "--seq-len", "8", "--slot", "mixer"]) == 1
    assert "fnet" in capsys.readouterr().err


def test_influence_matrix_is_lower_triangular_for_causal_conv():
    from mope_jax.analysis.causality import influence_jacobian

    h = jnp.asarray([[0.5, 0.3, 0.2]])
    infl = influence_jacobian(
        lambda x: sp.causal_conv_toeplitz(x[None, :, None, :], h)[0, :, 0, :], jnp.ones((6, 2))
    )
    np.testing.assert_array_equal(np.triu(infl, 1), 0.0)
    np.testing.assert_allclose(np.diag(infl), 0.5)
    np.testing.assert_allclose(np.diag(infl, -2), 0.2)


# Paper C as the authors compute it: every paper-C Q/K filter variant, audited through
# the Jacobian of a whole small model. The bilateral ones must leak, the causal ones must not.
PAPER_C_VARIANTS = [
    "fourier-qk",
    "multifourier-qk",
    "random-qk",
    "fixed-bin-dc",
    "fixed-bin-1",
    "fixed-bin-4",
    "fixed-bin-16",
    "fixed-bin-64",
    "fixed-bin-nyquist",
    "fixed-bin-learned",
    "mexhat-window-qk",
    "mexhat-k4-qk",
    "causal-morlet",
    "causal-morlet-a2",
    "causal-morlet-a32",
    "causal-morlet-l1",
    "causal-freq-qk",
    "seedc-collapse-qk",
]


@pytest.mark.parametrize("name", PAPER_C_VARIANTS)
def test_paper_c_variant_jacobian_matches_declaration(name):
    (row,) = audit_model_variants([name], seq_len=16, n_layer=1)
    assert row["method"] == "jacobian" and row["status"] == "ok", row
    if row["declared_causal"]:
        assert row["causal"] and row["leak_rel"] < 1e-6, row  # FFT round-off only
    else:
        assert not row["causal"] and row["leak_rel"] > 1e-3, row
