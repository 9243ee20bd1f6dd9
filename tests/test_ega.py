"""Energy-gated attention (paper A): z-norms against float64 references, the gate equals an
additive log-bias without dropout, renormalisation after dropout, and causality verdicts."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis.causality import audit_model
from mope_jax.attention import registry
from mope_jax.attention.core import NEG_INF, attend, causal_mask
from mope_jax.attention.energy_gate import EnergyGate, znorm_full, znorm_prefix
from mope_jax.attention.registry import AttnBias
from mope_jax.config import Config, ModelConfig
from mope_jax.model import init_params
from tests.reference import paper_a_np as ref


def small_cfg(**kw) -> ModelConfig:
    base = dict(block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0, vocab_size=13)
    return ModelConfig(**(base | kw))


def test_znorms_match_float64_reference():
    p = (
        np.random.default_rng(0).normal(3.0, 0.5, size=(2, 3, 12)).astype(np.float32)
    )  # |mean| >> std
    full = np.asarray(znorm_full(jnp.asarray(p)))  # (2,3,1,12)
    pre = np.asarray(znorm_prefix(jnp.asarray(p)))  # (2,3,12,12)
    for a in range(2):
        for b in range(3):
            np.testing.assert_allclose(full[a, b, 0], ref.znorm_full(p[a, b]), rtol=1e-5, atol=1e-5)
            want = ref.znorm_prefix(p[a, b])
            low = np.tril(np.ones((12, 12), bool), k=0) & ~np.eye(
                12, dtype=bool
            )  # j < i (row 0 has std 0)
            # atol: prefix stds from cumulative sums in f32 (cancellation ~ 1e-6 relative of E[x^2])
            np.testing.assert_allclose(pre[a, b][low], want[low], rtol=1e-4, atol=1e-4)
            np.testing.assert_array_equal(
                np.diag(pre[a, b])[:1], [0.0]
            )  # row 0: p_0 - mean_0 = 0 exactly
    np.testing.assert_allclose(
        pre[..., -1, :], full[..., 0, :], rtol=1e-4, atol=1e-4
    )  # last row = full


@pytest.mark.parametrize(
    "name,rows",
    [("ega", 1), ("ega-prefix", 16), ("ega-n-energymix", 1), ("ega-n-energymix-prefix", 16)],
)
def test_gate_without_dropout_equals_softmax_of_scores_plus_log_gate(name, rows):
    cfg = small_cfg(attn_bias=name, ega_n=3)
    key_x, key_s, key_v, key_p = jax.random.split(jax.random.PRNGKey(0), 4)
    xn = jax.random.normal(key_x, (2, 16, 16))
    gate = registry.get("attn_bias", name).build(cfg)
    params = gate.init(key_p, xn, jnp.arange(16))
    # move alpha/tau off their init so the test covers general values
    params = jax.tree_util.tree_map(lambda x: x, params)
    params["params"]["alpha"] = jnp.array([1.3, 3.0])
    params["params"]["tau"] = jnp.array([-0.4, 0.7])
    bias = gate.apply(params, xn, jnp.arange(16))
    assert bias.add is None and bias.log_gate.shape == (2, 2, rows, 16)
    s = jax.random.normal(key_s, (2, 2, 16, 16)) * 3.0
    v = jax.random.normal(key_v, (2, 16, 2, 4))
    mask = causal_mask(16)
    got = attend(s, v, mask=mask, bias=bias)
    probs = jax.nn.softmax(jnp.where(mask, s + bias.log_gate, NEG_INF), axis=-1)
    np.testing.assert_allclose(
        np.asarray(got), np.asarray(jnp.einsum("BHTS,BSHD->BTHD", probs, v)), rtol=1e-5, atol=1e-6
    )
    lg = np.asarray(bias.log_gate, np.float64)
    a_ref = ref.ega_attention(np.asarray(s[1, 0]), lg[1, 0])
    np.testing.assert_allclose(np.asarray(probs[1, 0]), a_ref, rtol=1e-5, atol=1e-7)


def test_gate_is_renormalised_after_dropout():
    """With dropout the gate multiplies the dropped-out probabilities and each row is
    renormalised to 1 (reading A off with one-hot values)."""
    t = 8
    log_gate = jnp.log(jax.nn.sigmoid(jax.random.normal(jax.random.PRNGKey(1), (1, 1, 1, t))))
    s = jax.random.normal(jax.random.PRNGKey(2), (1, 1, t, t))
    v = jnp.eye(t).reshape(1, t, 1, t)  # (B,S,H,D): out[t] = row t of A
    a = attend(
        s,
        v,
        mask=causal_mask(t),
        bias=AttnBias(log_gate=log_gate),
        dropout_rate=0.5,
        dropout_rng=jax.random.PRNGKey(3),
        deterministic=False,
    )[0, :, 0]  # (T, S)
    sums = np.asarray(a.sum(-1))
    kept = sums > 0  # a row whose every key was dropped stays 0
    assert kept.sum() >= t - 2
    np.testing.assert_allclose(sums[kept], 1.0, rtol=1e-5)
    assert np.all(np.asarray(a)[np.triu(np.ones((t, t), bool), 1)] == 0.0)


def test_parameters_and_init():
    cfg = small_cfg(attn_bias="ega-n-energymix", ega_n=3)
    p = init_params(cfg, jax.random.PRNGKey(0))["h_0"]["attn"]["ega"]
    np.testing.assert_array_equal(p["alpha"], [2.0, 2.0])
    np.testing.assert_array_equal(p["tau"], [0.0, 0.0])
    np.testing.assert_array_equal(p["scale_w"], np.zeros((2, 3)))
    assert p["energy"]["kernel"].shape == (16, 6)
    p1 = init_params(small_cfg(attn_bias="ega"), jax.random.PRNGKey(0))["h_0"]["attn"]["ega"]
    assert "scale_w" not in p1 and p1["energy"]["kernel"].shape == (16, 2)
    with pytest.raises(ValueError, match="znorm"):
        EnergyGate(2, 1, "median").init(jax.random.PRNGKey(0), jnp.zeros((1, 4, 16)), jnp.arange(4))


def test_spectra_of_ega1_have_no_mix_weights():
    """EGA-1 has alpha and tau but no scale_w: extracting its spectra (done at every
    checkpoint) must not look the missing parameter up."""
    from mope_jax.analysis import spectra

    cfg = small_cfg(attn_bias="ega")
    sp = spectra.extract_spectra(cfg, init_params(cfg, jax.random.PRNGKey(0)))
    assert sp["ega_alpha"].shape == (1, 2) and "ega_mix" not in sp


@pytest.mark.parametrize("name", ["ega", "ega-prefix"])
def test_causality_verdicts(name):
    """The prefix gate passes the audit; the paper's full-sequence z-norm is caught leaking."""
    cfg = small_cfg(attn_bias=name, ega_n=2)
    declared = registry.get("attn_bias", name).causal
    res = audit_model(cfg, init_params(cfg, jax.random.PRNGKey(0)))
    assert res.causal == declared, res
    assert declared == name.endswith("prefix")
    if not declared:
        assert res.leak_rel > 1e-3  # a real leak, not rounding


def test_training_refuses_the_noncausal_gate_unless_allowed():
    from mope_jax.presets import apply_variant, get_preset
    from mope_jax.train import TrainingError, check_causal

    cfg = apply_variant(get_preset("smoke"), "a-ega1")
    with pytest.raises(TrainingError, match="allow_noncausal"):
        check_causal(cfg)
    check_causal(apply_variant(get_preset("smoke"), "a-ega-morlet-causal"))
    allowed = Config(
        model=cfg.model, data=cfg.data, train=cfg.train.__class__(allow_noncausal=True)
    )
    check_causal(allowed)


@pytest.mark.parametrize(
    "name",
    [
        "ega-prefix",
        "ega-n-prefix",
        "ega-n-energymix-prefix",
        "ega-c-prefix",
        "ega-m-prefix",
        "ega-m-shared-prefix",
    ],
)
def test_gradients_are_finite(name):
    """Row 0 of the prefix statistics has std 0 exactly; its gradient must not be NaN (it was,
    with max(sqrt(var), 1e-8), before the floor moved inside the square root)."""
    cfg = small_cfg(attn_bias=name, ega_n=2)
    params = init_params(cfg, jax.random.PRNGKey(0))
    tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 16), 0, 13)
    from mope_jax.model import GPT

    grads = jax.jit(jax.grad(lambda p: jnp.mean(GPT(cfg).apply({"params": p}, tokens) ** 2)))(
        params
    )
    assert all(bool(jnp.all(jnp.isfinite(g))) for g in jax.tree_util.tree_leaves(grads))


def test_conv_energy_with_only_the_current_tap_equals_the_dense_energy():
    """ega-conv1's kernel tap K-1 multiplies xn_j (causal padding); with the other taps zero the
    gate equals EGA-1's with the same weights."""
    xn = jax.random.normal(jax.random.PRNGKey(0), (2, 12, 16))
    pos = jnp.arange(12)
    for znorm in ("full", "prefix"):
        dense = EnergyGate(2, 1, znorm)
        conv = EnergyGate(2, 1, znorm, conv_len=3)
        pd = dense.init(jax.random.PRNGKey(1), xn, pos)
        pc = conv.init(jax.random.PRNGKey(2), xn, pos)
        kernel = (
            jnp.zeros_like(pc["params"]["energy"]["kernel"])
            .at[-1]
            .set(pd["params"]["energy"]["kernel"])
        )  # (K,E,H)
        pc = {
            "params": dict(
                pc["params"], energy={"kernel": kernel, "bias": pd["params"]["energy"]["bias"]}
            )
        }
        np.testing.assert_allclose(
            np.asarray(conv.apply(pc, xn, pos).log_gate),
            np.asarray(dense.apply(pd, xn, pos).log_gate),
            rtol=1e-5,
            atol=1e-6,
        )


# the causality verdicts of ega-n*, ega-c*, ega-m* and ega-conv1* are in tests/test_ega_paper1.py
# (ega-m and ega-m-prefix with per-head parameters also in tests/test_ega_m_fidelity.py)
