"""Paper 1's energy gates as the authors compute them (DESIGN.md section 5): EGA-n (gates
mixed), EGA-C (squared two-channel convolutions) and EGA-M (Morlet-filter energies), against
the float64 loop references in tests/reference/ega_paper1_np.py (values in float32, gradients
in float64 against central differences), init, the clamp's bound, and causality verdicts."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import enable_x64

from mope_jax.analysis.causality import audit_model, generic_layernorms
from mope_jax.attention import registry
from mope_jax.attention.ega_m import EnergyGateMorlet
from mope_jax.attention.energy_gate import EGA_C_LENGTHS, EnergyGateMix
from mope_jax.config import ModelConfig
from mope_jax.model import init_params
from tests.reference import ega_paper1_np as ref

T, E, H, N = 10, 6, 2, 3


def _xn(seed=0, t=T, e=E):
    x = np.random.default_rng(seed).normal(size=(2, t, e))
    return x + np.random.default_rng(seed + 1).normal(
        0.3, 0.5, size=(2, t, 1)
    )  # mean over E not 0 (EGA-M's u)


def _valid(znorm, t=T):
    """Entries that reach the attention: all keys (full, one row), j <= i (prefix)."""
    return np.ones((1, t), bool) if znorm == "full" else np.tril(np.ones((t, t), bool))


def _gate_params(kind, seed=0):
    """Random float64 parameters away from init (so the test covers general values)."""
    r = np.random.default_rng(seed)
    common = dict(
        alpha=r.uniform(0.5, 3.0, (H, N)),
        tau=r.normal(0, 0.5, (H, N)),
        scale_w=r.normal(0, 1.0, (H, N)),
    )
    if kind == "n":
        return dict(
            common,
            energy=dict(kernel=r.normal(0, 0.5, (E, H * N)), bias=r.normal(0, 0.5, (H * N,))),
        )
    n = len(EGA_C_LENGTHS)
    common = dict(
        alpha=r.uniform(0.5, 3.0, (H, n)),
        tau=r.normal(0, 0.5, (H, n)),
        scale_w=r.normal(0, 1.0, (H, n)),
    )
    for length in EGA_C_LENGTHS:
        common[f"energy_l{length}"] = dict(
            kernel=r.normal(0, 0.3, (length, E, 2 * H)), bias=r.normal(0, 0.3, (2 * H,))
        )
    return common


def _ref_gate(kind, p, xn, znorm):
    if kind == "n":
        return ref.ega_n_gate(
            xn,
            p["energy"]["kernel"].reshape(E, H, N),
            p["energy"]["bias"].reshape(H, N),
            p["alpha"],
            p["tau"],
            p["scale_w"],
            znorm,
        )
    # (l,E,2H) -> (l,E,H,2)
    kernels = [
        p[f"energy_l{length}"]["kernel"].reshape(length, E, H, 2) for length in EGA_C_LENGTHS
    ]
    biases = [p[f"energy_l{length}"]["bias"].reshape(H, 2) for length in EGA_C_LENGTHS]
    return ref.ega_c_gate(xn, kernels, biases, p["alpha"], p["tau"], p["scale_w"], znorm)


def _module(kind, znorm):
    return EnergyGateMix(H, N, znorm, lengths=() if kind == "n" else EGA_C_LENGTHS)


@pytest.mark.parametrize("kind", ["n", "c"])
@pytest.mark.parametrize("znorm", ["full", "prefix"])
def test_mixed_gates_match_float64_reference(kind, znorm):
    p64 = _gate_params(kind)
    xn = _xn()
    p32 = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), p64)
    log_gate = np.asarray(
        _module(kind, znorm)
        .apply({"params": p32}, jnp.asarray(xn, jnp.float32), jnp.arange(T))
        .log_gate
    )
    assert log_gate.shape == (2, H, 1 if znorm == "full" else T, T)
    valid = _valid(znorm)
    for b in range(2):
        with np.errstate(divide="ignore"):  # the reference gate is 0 at masked (j > i) entries
            want = np.log(_ref_gate(kind, p64, xn[b], znorm)).reshape(H, -1, T)  # (H, T', S)
        for h in range(H):
            np.testing.assert_allclose(log_gate[b, h][valid], want[h][valid], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["n", "c"])
@pytest.mark.parametrize("znorm", ["full", "prefix"])
def test_mixed_gate_gradients_match_central_differences(kind, znorm):
    """d/d(alpha, tau, scale_w, energy weights) of a weighted sum of log g, float64."""
    p64 = _gate_params(kind, seed=1)
    xn = _xn(seed=2)[0]
    valid = _valid(znorm)
    w = np.random.default_rng(3).normal(size=(H,) + valid.shape) * valid  # (H, T', S)
    names = ["alpha", "tau", "scale_w"] + (
        ["energy"] if kind == "n" else ["energy_l3", "energy_l7"]
    )
    with enable_x64():
        mod = _module(kind, znorm)

        def loss(p):
            lg = mod.apply({"params": p}, jnp.asarray(xn)[None], jnp.arange(T)).log_gate[
                0
            ]  # (H,T',S)
            return jnp.sum(jnp.where(valid, lg, 0.0) * w)

        grads = jax.grad(loss)(jax.tree_util.tree_map(jnp.asarray, p64))
    for name in names:
        for leaf in ["kernel", "bias"] if name.startswith("energy") else [None]:

            def f(v, name=name, leaf=leaf):
                q = {k: (dict(v2) if isinstance(v2, dict) else v2) for k, v2 in p64.items()}
                if leaf is None:
                    q[name] = v
                else:
                    q[name][leaf] = v
                with np.errstate(divide="ignore"):  # 0 at masked entries, excluded below
                    g = np.log(_ref_gate(kind, q, xn, znorm)).reshape((H,) + valid.shape)
                return float(np.sum(np.where(valid, g, 0.0) * w))

            x0 = p64[name] if leaf is None else p64[name][leaf]
            got = np.asarray(grads[name] if leaf is None else grads[name][leaf])
            # atol: the energy biases' true gradient is 0 (the z-norm is shift-invariant); the
            # prefix statistics' cumulative sums leave ~2e-8 of float64 round-off there
            # (gradients are O(1))
            np.testing.assert_allclose(
                got,
                ref.central_difference(f, x0),
                rtol=1e-6,
                atol=1e-7,
                err_msg=f"{kind} {znorm} {name} {leaf}",
            )


def test_ega_n_with_one_energy_is_ega_1():
    xn = jnp.asarray(_xn(), jnp.float32)
    pos = jnp.arange(T)
    for znorm in ("full", "prefix"):
        one = registry.get("attn_bias", "ega" if znorm == "full" else "ega-prefix").build(
            ModelConfig(n_head=H, n_embd=E * H)
        )
        p1 = one.init(jax.random.PRNGKey(0), xn, pos)["params"]
        p1 = dict(p1, alpha=jnp.array([1.3, 2.6]), tau=jnp.array([-0.3, 0.4]))
        mix = EnergyGateMix(H, 1, znorm)
        pn = dict(
            energy=p1["energy"],
            alpha=p1["alpha"][:, None],
            tau=p1["tau"][:, None],
            scale_w=jnp.zeros((H, 1)),
        )
        np.testing.assert_allclose(
            np.asarray(mix.apply({"params": pn}, xn, pos).log_gate),
            np.asarray(one.apply({"params": p1}, xn, pos).log_gate),
            rtol=1e-6,
            atol=1e-7,
        )


def test_gate_mixing_differs_from_energy_mixing():
    """The authors' EGA-n (gates mixed) and ours (energies mixed) differ for n > 1."""
    cfg = ModelConfig(n_head=H, n_embd=E * H, ega_n=N)
    xn = jnp.asarray(_xn(e=E * H), jnp.float32)
    a, b = (registry.get("attn_bias", n).build(cfg) for n in ("ega-n", "ega-n-energymix"))
    pa = a.init(jax.random.PRNGKey(0), xn, jnp.arange(T))["params"]
    pb = dict(b.init(jax.random.PRNGKey(0), xn, jnp.arange(T))["params"], energy=pa["energy"])
    ga, gb = (
        np.asarray(m.apply({"params": p}, xn, jnp.arange(T)).log_gate)
        for m, p in ((a, pa), (b, pb))
    )
    assert np.max(np.abs(ga - gb)) > 1e-2


# --------------------------------------------------------------------------- EGA-M
# The tests below against ``ref.ega_m_gate`` (one (4,) set shared by the heads, tap j on lag j)
# test our earlier computation, kept as ``ega-m-shared*``; the authors' EGA-M (per
# head, conv1d taps; ``ega-m``, ``ega-m-prefix``) is tested in tests/test_ega_m_fidelity.py.


def _shared(znorm="full", **kw):
    """The ega-m-shared* module: one (4,) parameter set per layer, tap j on lag j."""
    return EnergyGateMorlet(znorm, per_head=False, tap_order="lag", **kw)


@pytest.mark.parametrize("znorm", ["full", "prefix"])
@pytest.mark.parametrize("constraint", ["clamp", "none"])
def test_ega_m_matches_float64_reference(znorm, constraint):
    p64 = ref.ega_m_example_params()
    xn = _xn(t=40)  # longer than the longest filter (31 taps)
    p32 = jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float32), p64)
    mod = _shared(znorm, constraint=constraint)
    log_gate = np.asarray(
        mod.apply({"params": p32}, jnp.asarray(xn, jnp.float32), jnp.arange(40)).log_gate
    )
    assert log_gate.shape == (2, 1, 1 if znorm == "full" else 40, 40)  # one gate for every head
    valid = _valid(znorm, 40)
    for b in range(2):
        want = np.log(
            ref.ega_m_gate(
                xn[b],
                p64["log_omega"],
                p64["log_sigma"],
                p64["alpha"],
                p64["tau"],
                p64["scale_w"],
                znorm,
                constraint=constraint,
            )
        ).reshape(-1, 40)
        # rtol 1e-5 holds for the gate; the energies |c|^2 themselves carry f32 sums of 31 taps
        np.testing.assert_allclose(log_gate[b, 0][valid], want[valid], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("znorm", ["full", "prefix"])
def test_ega_m_gradients_match_central_differences(znorm):
    """Including the clamp: while omega sigma < 5, log_omega gets no gradient (filters 0, 2)."""
    p64 = ref.ega_m_example_params(seed=1)
    t = 36
    xn = _xn(seed=4, t=t)[0]
    valid = _valid(znorm, t)
    w = np.random.default_rng(5).normal(size=valid.shape) * valid
    with enable_x64():
        mod = _shared(znorm)

        def loss(p):
            lg = mod.apply({"params": p}, jnp.asarray(xn)[None], jnp.arange(t)).log_gate[
                0, 0
            ]  # (T',S)
            return jnp.sum(jnp.where(valid, lg, 0.0) * w)

        grads = jax.grad(loss)(jax.tree_util.tree_map(jnp.asarray, p64))
    for name in p64:

        def f(v, name=name):
            q = dict(p64, **{name: v})
            g = np.log(
                ref.ega_m_gate(
                    xn, q["log_omega"], q["log_sigma"], q["alpha"], q["tau"], q["scale_w"], znorm
                )
            ).reshape(valid.shape)
            return float(np.sum(np.where(valid, g, 0.0) * w))

        np.testing.assert_allclose(
            np.asarray(grads[name]),
            ref.central_difference(f, p64[name]),
            rtol=1e-6,
            atol=1e-8,
            err_msg=f"{znorm} {name}",
        )
    np.testing.assert_array_equal(np.asarray(grads["log_omega"])[[0, 2]], 0.0)
    assert np.all(np.asarray(grads["log_omega"])[[1, 3]] != 0.0)


def test_ega_m_init_and_bound():
    xn = jnp.asarray(_xn(t=12), jnp.float32)
    pos = jnp.arange(12)
    for init, product in (("boundary", 5.0), ("off", 10.0)):
        for mod, shape in (
            (EnergyGateMorlet(init_mode=init, n_head=3), (3, 4)),  # per head: the same init
            (_shared(init_mode=init), (4,)),
        ):
            p = mod.init(jax.random.PRNGKey(0), xn, pos)["params"]
            assert all(p[k].shape == shape for k in p)
            omega, sigma = np.exp(p["log_omega"]), np.exp(p["log_sigma"])
            np.testing.assert_allclose(
                omega, np.broadcast_to(math.pi / np.array([3, 7, 15, 31]), shape), rtol=1e-6
            )
            np.testing.assert_allclose(omega * sigma, product, rtol=1e-6)
            np.testing.assert_array_equal(p["alpha"], 2.0)
            np.testing.assert_array_equal(p["tau"], 0.0)
            np.testing.assert_array_equal(p["scale_w"], 0.0)
    # the bound is the traced mope_bound inside a training step (sweeps grid it), as MOPE's:
    # the step supplies it in the hparams collection
    p = {k: jnp.asarray(v, jnp.float32) for k, v in ref.ega_m_example_params().items()}
    mod = _shared("full")
    got = mod.apply({"params": p, "hparams": {"mope_bound": jnp.asarray(7.0)}}, xn, pos).log_gate
    want = np.log(
        ref.ega_m_gate(
            np.asarray(xn[0], np.float64),
            *(
                np.asarray(p[k], np.float64)
                for k in ("log_omega", "log_sigma", "alpha", "tau", "scale_w")
            ),
            "full",
            bound=7.0,
        )
    )
    np.testing.assert_allclose(np.asarray(got[0, 0, 0]), want, rtol=1e-5, atol=1e-6)


def test_ega_m_penalty_and_unknown_options():
    xn = jnp.asarray(_xn(t=8), jnp.float32)
    mod = EnergyGateMorlet(constraint="penalty", init_mode="boundary")
    params = mod.init(jax.random.PRNGKey(0), xn, jnp.arange(8))["params"]
    params = dict(params, log_sigma=params["log_sigma"] - 0.5)  # below the bound: penalised
    _, aux = mod.apply({"params": params}, xn, jnp.arange(8), mutable=["aux_loss"])
    np.testing.assert_allclose(
        float(aux["aux_loss"]["ega_m_penalty"][0]), 0.25, rtol=1e-5
    )  # mean of 0.5^2
    with pytest.raises(
        ValueError, match=r"EGA-M constraint 'soft'; choose one of \('clamp', 'penalty', 'none'\)"
    ):
        EnergyGateMorlet(constraint="soft").init(jax.random.PRNGKey(0), xn, jnp.arange(8))
    with pytest.raises(ValueError, match="EGA-M init 'far'"):
        EnergyGateMorlet(init_mode="far").init(jax.random.PRNGKey(0), xn, jnp.arange(8))


def test_ega_m_signal_is_zero_at_layernorm_init():
    """u = mean_E LN(x) is 0 while LN's scale is uniform and its bias 0 (at init): the gate is
    then a constant 1/2 -- why the audit moves the LN scales
    (analysis.causality.generic_layernorms)."""
    cfg = ModelConfig(
        block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0, vocab_size=13, attn_bias="ega-m"
    )
    params = init_params(cfg, jax.random.PRNGKey(0))
    from mope_jax.model import GPT

    tokens = jax.random.randint(jax.random.PRNGKey(1), (1, 16), 0, 13)
    _, inter = GPT(cfg).apply({"params": params}, tokens, mutable=["intermediates"])
    assert audit_model(cfg, params).leak_rel < 1e-6  # no path through u yet


# --------------------------------------------------------------------------- causality


@pytest.mark.parametrize(
    "name",
    [
        "ega-n",
        "ega-n-prefix",
        "ega-c",
        "ega-c-prefix",
        "ega-m",
        "ega-m-prefix",
        "ega-m-shared",
        "ega-m-shared-prefix",
        "ega-n-energymix",
        "ega-n-energymix-prefix",
        "ega-conv1",
        "ega-conv1-prefix",
    ],
)
def test_jacobian_causality_verdicts(name):
    """Prefix z-norms pass the Jacobian audit exactly; the paper's full z-norm is caught leaking."""
    cfg = ModelConfig(
        block_size=16,
        n_layer=1,
        n_head=2,
        n_embd=16,
        dropout=0.0,
        vocab_size=13,
        init_std=0.2,
        attn_bias=name,
        ega_n=2,
        ega_conv_len=3,
    )
    declared = registry.get("attn_bias", name).causal
    assert declared == name.endswith("prefix")
    params = generic_layernorms(init_params(cfg, jax.random.PRNGKey(0)), jax.random.PRNGKey(2))
    res = audit_model(cfg, params, method="jacobian")
    assert res.causal == declared, res
    if declared:
        assert res.leak == 0.0
    else:
        assert res.leak_rel > 1e-3  # a real leak, not rounding


def test_renamed_variants_fail_with_the_new_name():
    from mope_jax.presets import apply_variant, get_preset

    with pytest.raises(ValueError, match="renamed 'ega-conv1-prefix'"):
        registry.get("attn_bias", "ega-conv-prefix")
    with pytest.raises(ValueError, match="renamed 'a-ega-conv1-causal'"):
        apply_variant(get_preset("smoke"), "a-ega-conv-causal")


def test_ega_m_spectra_are_extracted():
    """EGA-M's (omega, sigma) per layer, head and filter reach checkpoints/records
    (extract_spectra) and eval summaries (boundary statistics, prefix ega_m_), as MOPE's do.
    (Both shapes, per head and shared: tests/test_ega_m_fidelity.py.)"""
    from mope_jax.analysis import spectra

    cfg = ModelConfig(
        block_size=16,
        n_layer=2,
        n_head=2,
        n_embd=16,
        vocab_size=13,
        attn_bias="ega-m",
        ega_m_init="off",
    )
    params = init_params(cfg, jax.random.PRNGKey(0))
    sp = spectra.extract_spectra(cfg, params)
    assert sp["ega_m_omega"].shape == sp["ega_m_sigma"].shape == (2, 2, 4)  # (L, H, 4)
    np.testing.assert_allclose(
        sp["ega_m_omega"][1], np.broadcast_to(math.pi / np.array([3, 7, 15, 31]), (2, 4)), rtol=1e-6
    )
    np.testing.assert_allclose(
        sp["ega_m_omega"] * sp["ega_m_sigma"], 10.0, rtol=1e-6
    )  # off the boundary
    summary = spectra.eval_summary(cfg, params)
    assert summary["ega_m_on_boundary_frac"] == 0.0 and summary["ega_m_clamp_active_frac"] == 0.0
    assert spectra.summarize_spectra(sp)["ega_m_product_min"] == pytest.approx(10.0, rel=1e-6)
