"""EGA-M computes what the authors' code computes: conv1d tap
orientation (tap j on lag l_s - 1 - j, envelope peak on the oldest token) and one filter set per
head, against the float64 loop reference tests/reference/ega_m_authors_np.py; our earlier
computation survives as ``ega-m-shared*`` and matches its own frozen reference
(tests/reference/ega_paper1_np.py: ``ega_m_gate``), which differs from ``ega-m`` by far more than
the tolerance."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import enable_x64

from mope_jax.analysis.causality import audit_model, generic_layernorms
from mope_jax.attention import registry
from mope_jax.attention.ega_m import (
    EGA_M_LENGTHS,
    EnergyGateMorlet,
    ega_m_filter_sets,
    morlet_energies,
    tap_index,
)
from mope_jax.config import ModelConfig
from mope_jax.model import init_params
from tests.reference import ega_m_authors_np as authors
from tests.reference import ega_paper1_np as old

H, E = 3, 6
NAMES = ("log_omega", "log_sigma", "alpha", "tau", "scale_w")


def _xn(seed=0, t=40, e=E):
    x = np.random.default_rng(seed).normal(size=(2, t, e))
    return x + np.random.default_rng(seed + 1).normal(0.3, 0.5, size=(2, t, 1))  # u not 0


def _valid(znorm, t):
    return np.ones((1, t), bool) if znorm == "full" else np.tril(np.ones((t, t), bool))


def _per_head_params(seed=0, h=H):
    """Random, different per head: omega in [0.15, 2.2] rad/token, the raw product omega sigma
    in [2, 4.5] (the clamp acts) or [5.5, 12] (it does not), each at least 10% from the bound."""
    r = np.random.default_rng(seed)
    omega = r.uniform(0.15, 2.2, (h, 4))
    below = r.uniform(size=(h, 4)) < 0.5
    below[0, :2] = True  # both cases in every draw
    below[0, 2:] = False
    product = np.where(below, r.uniform(2.0, 4.5, (h, 4)), r.uniform(5.5, 12.0, (h, 4)))
    return dict(
        log_omega=np.log(omega),
        log_sigma=np.log(product / omega),
        alpha=r.uniform(0.5, 3.0, (h, 4)),
        tau=r.normal(0, 0.5, (h, 4)),
        scale_w=r.normal(0, 1.0, (h, 4)),
    )


def _apply(mod, p64, xn, dtype=jnp.float32, hparams=None):
    p = {k: jnp.asarray(v, dtype) for k, v in p64.items()}
    variables = {"params": p} if hparams is None else {"params": p, "hparams": hparams}
    t = xn.shape[1]
    return np.asarray(mod.apply(variables, jnp.asarray(xn, dtype), jnp.arange(t)).log_gate)


def _authors(p64, xn_row, znorm, **kw):
    g = authors.ega_m_authors_gate(xn_row, *(p64[k] for k in NAMES), znorm, **kw)
    return g.reshape(g.shape[0], -1, xn_row.shape[0])  # (H, T', S)


# --------------------------------------------------------------------------- the authors' EGA-M


@pytest.mark.parametrize("znorm", ["full", "prefix"])
@pytest.mark.parametrize("constraint", ["clamp", "none"])
def test_ega_m_matches_the_authors_reference(znorm, constraint):
    """Random per-head parameters (every head different), float32 against float64 loops."""
    p64 = _per_head_params()
    xn = _xn()
    t = xn.shape[1]  # 40 > 31, the longest filter
    log_gate = _apply(EnergyGateMorlet(znorm, constraint=constraint, n_head=H), p64, xn)
    assert log_gate.shape == (2, H, 1 if znorm == "full" else t, t)
    valid = _valid(znorm, t)
    for b in range(2):
        want = _authors(p64, xn[b], znorm, constraint=constraint)  # (H,T',S)
        for h in range(H):
            np.testing.assert_allclose(
                log_gate[b, h][valid], np.log(want[h][valid]), rtol=1e-5, atol=1e-6
            )
            np.testing.assert_allclose(
                np.exp(log_gate[b, h][valid]), want[h][valid], rtol=1e-5, atol=1e-7
            )
    # the heads really differ (the test covers per-head parameters, not one set H times)
    assert np.max(np.abs(log_gate[:, 0] - log_gate[:, 1])) > 1e-2


@pytest.mark.parametrize("name", ["ega-m", "ega-m-prefix"])
def test_registered_variants_are_the_authors(name):
    """The registered builder (the presets a-ega-m, a-ega-m-causal) gives the authors' module:
    per head, conv1d taps, the configured bound."""
    cfg = ModelConfig(n_head=H, n_embd=E, mope_bound=6.0)
    mod = registry.get("attn_bias", name).build(cfg)
    assert (mod.per_head, mod.tap_order, mod.n_head, mod.bound) == (True, "conv1d", H, 6.0)
    p64 = _per_head_params(seed=3)
    xn = _xn(seed=5, t=34)
    znorm = "prefix" if name.endswith("prefix") else "full"
    got = _apply(mod, p64, xn)
    valid = _valid(znorm, 34)
    want = _authors(p64, xn[1], znorm, bound=6.0)
    for h in range(H):
        np.testing.assert_allclose(got[1, h][valid], np.log(want[h][valid]), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("znorm", ["full", "prefix"])
def test_ega_m_gradients_match_central_differences(znorm):
    """float64: every per-head parameter, through the clamp (no log_omega gradient where it
    acts)."""
    h = 2
    p64 = _per_head_params(seed=1, h=h)
    t = 33
    xn = _xn(seed=4, t=t)[0]
    valid = _valid(znorm, t)
    w = np.random.default_rng(5).normal(size=(h,) + valid.shape) * valid
    with enable_x64():
        mod = EnergyGateMorlet(znorm, n_head=h)

        def loss(p):
            lg = mod.apply({"params": p}, jnp.asarray(xn)[None], jnp.arange(t)).log_gate[0]
            return jnp.sum(jnp.where(valid, lg, 0.0) * w)

        grads = jax.grad(loss)({k: jnp.asarray(v) for k, v in p64.items()})
    for name in NAMES:

        def f(v, name=name):
            q = dict(p64, **{name: v})
            with np.errstate(divide="ignore"):
                g = np.log(_authors(q, xn, znorm)).reshape((h,) + valid.shape)
            return float(np.sum(np.where(valid, g, 0.0) * w))

        np.testing.assert_allclose(
            np.asarray(grads[name]),
            old.central_difference(f, p64[name]),
            rtol=1e-6,
            atol=1e-8,
            err_msg=f"{znorm} {name}",
        )
    clamped = np.exp(p64["log_omega"] + p64["log_sigma"]) < 5.0
    np.testing.assert_array_equal(np.asarray(grads["log_omega"])[clamped], 0.0)
    assert np.all(np.asarray(grads["log_omega"])[~clamped] != 0.0)


def test_tap_orientation_on_an_impulse():
    """u = delta at t0: the conv1d orientation's energy at t0 + k is env(l - 1 - k)^2 (peak when
    the impulse is the OLDEST token of the window, k = l - 1); ours ("lag") is env(k)^2 (peak at
    k = 0, the impulse the newest token)."""
    t, t0 = 50, 5
    u = jnp.zeros((1, t)).at[0, t0].set(1.0)
    omega = jnp.asarray([1.0, 0.5, 0.3, 0.2])
    sigma = jnp.asarray([2.0, 4.0, 6.0, 9.0])
    for order in ("conv1d", "lag"):
        e = np.asarray(morlet_energies(u, omega, sigma, EGA_M_LENGTHS, order))[0]  # (n,T)
        for s, length in enumerate(EGA_M_LENGTHS):
            k = np.arange(t) - t0
            j = np.where(order == "conv1d", length - 1 - k, k)
            want = np.where((k >= 0) & (k < length), np.exp(-(j**2) / sigma[s] ** 2), 0.0)
            np.testing.assert_allclose(e[s], want, rtol=1e-5, atol=1e-7, err_msg=order)
            assert int(np.argmax(e[s])) == (t0 + length - 1 if order == "conv1d" else t0)
    j, inside = tap_index((3, 7), "conv1d")
    assert j.shape == (2, 7) and list(j[0, :3]) == [2, 1, 0] and not inside[0, 3:].any()
    assert list(j[1]) == [6, 5, 4, 3, 2, 1, 0]
    with pytest.raises(ValueError, match="EGA-M tap order 'flip'"):
        tap_index((3,), "flip")


def test_per_head_energies_are_the_shared_ones_head_by_head():
    """The (H, n) einsum equals the (n,) computation run once per head."""
    u = jnp.asarray(_xn(seed=7, t=20)[:, :, 0], jnp.float32)
    p = _per_head_params(seed=8)
    om, sg = jnp.exp(jnp.asarray(p["log_omega"])), jnp.exp(jnp.asarray(p["log_sigma"]))
    both = np.asarray(morlet_energies(u, om, sg, EGA_M_LENGTHS, "conv1d"))  # (B,H,n,T)
    assert both.shape == (2, H, 4, 20)
    for h in range(H):
        np.testing.assert_allclose(
            both[:, h],
            np.asarray(morlet_energies(u, om[h], sg[h], EGA_M_LENGTHS, "conv1d")),
            rtol=1e-6,
        )


# --------------------------------------------------------------------------- ours, kept


@pytest.mark.parametrize("name", ["ega-m-shared", "ega-m-shared-prefix"])
def test_ega_m_shared_is_the_old_computation(name):
    """ega-m-shared*: one (4,) set per layer, tap j on lag j, against the frozen reference of
    our earlier definition (tests/reference/ega_paper1_np.py)."""
    mod = registry.get("attn_bias", name).build(ModelConfig(n_head=H, n_embd=E))
    assert (mod.per_head, mod.tap_order) == (False, "lag")
    znorm = "prefix" if name.endswith("prefix") else "full"
    p64 = old.ega_m_example_params()
    xn = _xn(seed=2)
    got = _apply(mod, p64, xn)
    assert got.shape == (2, 1, 1 if znorm == "full" else 40, 40)  # one gate for every head
    valid = _valid(znorm, 40)
    for b in range(2):
        want = old.ega_m_gate(xn[b], *(p64[k] for k in NAMES), znorm).reshape(-1, 40)
        np.testing.assert_allclose(got[b, 0][valid], np.log(want[valid]), rtol=1e-5, atol=1e-6)


def _mismatch(znorm, seed=0):
    """max |log g| difference between ``ega-m`` (every head given the same (4,) set) and the
    frozen reference of the old definition (shared, tap j on lag j)."""
    p64 = old.ega_m_example_params(seed)
    per_head = {k: np.broadcast_to(v, (H, 4)) for k, v in p64.items()}
    xn = _xn(seed=2)
    got = _apply(EnergyGateMorlet(znorm, n_head=H), per_head, xn)  # (B,H,T',S)
    valid = _valid(znorm, 40)
    worst = 0.0
    for b in range(2):
        with np.errstate(divide="ignore"):  # the gate underflows to 0 at some masked j > i
            want = np.log(old.ega_m_gate(xn[b], *(p64[k] for k in NAMES), znorm)).reshape(-1, 40)
        for h in range(H):
            worst = max(worst, float(np.max(np.abs(got[b, h][valid] - want[valid]))))
    return worst


@pytest.mark.parametrize("znorm", ["full", "prefix"])
def test_the_old_definition_is_not_the_authors(znorm):
    """With the same parameters in every head, only the tap orientation differs: the old
    definition misses ega-m by orders of magnitude more than the 1e-5 tolerance, and the
    authors' reference misses ega-m-shared likewise."""
    assert _mismatch(znorm) > 0.05
    p64 = old.ega_m_example_params()
    xn = _xn(seed=2)
    shared = _apply(EnergyGateMorlet(znorm, per_head=False, tap_order="lag"), p64, xn)
    want = _authors({k: v[None] for k, v in p64.items()}, xn[0], znorm)[0]  # (T',S)
    valid = _valid(znorm, 40)
    assert np.max(np.abs(shared[0, 0][valid] - np.log(want[valid]))) > 0.05


# --------------------------------------------------------------------------- model level


def _cfg(name, **kw):
    return ModelConfig(
        block_size=16,
        n_layer=2,
        n_head=4,
        n_embd=16,
        dropout=0.0,
        vocab_size=13,
        attn_bias=name,
        **kw,
    )


@pytest.mark.parametrize(
    "name, per_layer",
    [("ega-m", 80), ("ega-m-prefix", 80), ("ega-m-shared", 20), ("ega-m-shared-prefix", 20)],
)
def test_parameter_count_per_layer(name, per_layer):
    """20 per head (the authors' 960 = 20 x 8 heads x 6 layers) or 20 per layer (shared)."""
    cfg = _cfg(name)
    params = init_params(cfg, jax.random.PRNGKey(0))
    for layer in ("h_0", "h_1"):
        leaves = jax.tree_util.tree_leaves(params[layer]["attn"]["ega_m"])
        assert sum(x.size for x in leaves) == per_layer
    assert ega_m_filter_sets(cfg) == (4 if per_layer == 80 else 1)
    # the same init in every head
    p = params["h_0"]["attn"]["ega_m"]
    np.testing.assert_allclose(
        np.exp(np.asarray(p["log_omega"])).reshape(-1, 4),
        np.broadcast_to(math.pi / np.array([3, 7, 15, 31]), (per_layer // 20, 4)),
        rtol=1e-6,
    )


def test_the_authors_count_at_the_papers_shape():
    cfg = ModelConfig(
        block_size=16, n_layer=6, n_head=8, n_embd=32, vocab_size=13, attn_bias="ega-m"
    )
    params = init_params(cfg, jax.random.PRNGKey(0))
    total = sum(
        x.size
        for k in params
        if k.startswith("h_")
        for x in jax.tree_util.tree_leaves(params[k]["attn"]["ega_m"])
    )
    assert total == 960


@pytest.mark.parametrize("name", ["ega-m", "ega-m-prefix", "ega-m-shared", "ega-m-shared-prefix"])
def test_spectra_and_summary_of_both_shapes(name):
    from mope_jax.analysis import spectra

    cfg = _cfg(name, ega_m_init="off")
    params = init_params(cfg, jax.random.PRNGKey(0))
    sp = spectra.extract_spectra(cfg, params)
    shape = (2, 4) if "shared" in name else (2, 4, 4)
    for k in ("omega", "sigma", "raw_omega", "clamp_active", "alpha", "tau", "mix"):
        assert sp[f"ega_m_{k}"].shape == shape, k
    np.testing.assert_allclose(sp["ega_m_omega"] * sp["ega_m_sigma"], 10.0, rtol=1e-6)
    np.testing.assert_allclose(sp["ega_m_mix"], 0.25)
    summary = spectra.eval_summary(cfg, params)
    assert summary["ega_m_on_boundary_frac"] == 0.0 and summary["ega_m_clamp_active_frac"] == 0.0
    assert summary["ega_m_product_min"] == pytest.approx(10.0, rel=1e-6)


@pytest.mark.parametrize("name", ["ega-m", "ega-m-prefix"])
def test_jacobian_causality_verdicts_with_per_head_parameters(name):
    """With different parameters in every head, the prefix z-norm passes the Jacobian audit
    exactly and the full z-norm is caught (ega-m-shared*: tests/test_ega_paper1.py)."""
    cfg = ModelConfig(
        block_size=16,
        n_layer=1,
        n_head=2,
        n_embd=16,
        dropout=0.0,
        vocab_size=13,
        init_std=0.2,
        attn_bias=name,
    )
    declared = registry.get("attn_bias", name).causal
    assert declared == name.endswith("prefix")
    params = generic_layernorms(init_params(cfg, jax.random.PRNGKey(0)), jax.random.PRNGKey(2))
    p = _per_head_params(seed=9, h=2)  # away from the init, where every head is the same
    params["h_0"]["attn"]["ega_m"] = {k: jnp.asarray(v, jnp.float32) for k, v in p.items()}
    res = audit_model(cfg, params, method="jacobian")
    assert res.causal == declared, res
    if declared:
        assert res.leak == 0.0
    else:
        assert res.leak_rel > 1e-3


def test_omega_sigma_control_analysis_counts_every_head():
    """The omega*sigma analysis of an ega-m cell has H x 4 pairs per layer: its init tiling
    matches the learned parameters' order (and stays 4 per layer for ega-m-shared)."""
    from experiments import omega_sigma_control as osc
    from mope_jax.analysis import spectra
    from mope_jax.campaign import load_experiment, row_config
    from tests.test_omega_sigma_experiment import REPO

    exp = load_experiment("omega_sigma_control", REPO)
    cfg = row_config(exp, exp.scale("smoke"), exp.row("ega-m-wd_off-init_off-none"))
    for name in ("ega-m", "ega-m-shared"):
        c = dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, attn_bias=name))
        params = init_params(c.model, jax.random.PRNGKey(0))
        n = c.model.n_layer * 4 * (c.model.n_head if name == "ega-m" else 1)
        lo0, ls0 = spectra.initial_logs(c, "ega-m", "off")
        lo, ls = spectra.learned_logs(params, "ega-m")
        assert lo0.shape == lo.shape == ls.shape == (n,)
        np.testing.assert_allclose(lo, lo0, rtol=1e-6)
        np.testing.assert_allclose(ls, ls0, rtol=1e-6)
        a = osc.analyze(c, SimpleNamespace(params=params), None)
        assert len(a["omega"]) == n and a["max_abs_data_shift_log_sigma"] < 1e-5
