"""MOPE (paper A): limits, the paper's clamp and its gradients, penalty, Morlet-RoPE, spectra
round trip. References are float64 numpy in tests/reference/paper_a_np.py."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.analysis import spectra
from mope_jax.analysis.causality import audit_model
from mope_jax.attention import registry
from mope_jax.attention.core import dot_product_scores
from mope_jax.attention.morlet_rope import morlet_rope_init, morlet_rope_scores
from mope_jax.config import ModelConfig
from mope_jax.encodings.morlet import (
    MorletPositionalEncoding,
    admissibility_penalty,
    clamp_paper,
    constrain,
    morlet_encoding,
    morlet_init,
)
from mope_jax.encodings.rope import apply_rope
from mope_jax.encodings.sinusoidal import sinusoidal_encoding, sinusoidal_frequencies
from mope_jax.model import GPT, init_params
from tests.reference import paper_a_np as ref

HUGE_LOG_SIGMA = 40.0  # sigma = e^40 ~ 2e17 tokens: r^2 / (2 sigma^2) underflows, env == 1 in f32


def small_cfg(**kw) -> ModelConfig:
    base = dict(block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0, vocab_size=13)
    return ModelConfig(**(base | kw))


# --------------------------------------------------------------------------- MOPE closed forms


def test_mope_sigma_inf_equals_sincos_with_same_frequencies():
    e = 16
    omega = sinusoidal_frequencies(e)  # (E/2,)
    pos = jnp.arange(64)
    pe = morlet_encoding(pos, jnp.log(omega), jnp.full_like(omega, HUGE_LOG_SIGMA))
    sc = sinusoidal_encoding(pos, e)  # layout [sin, cos]; MOPE's is [cos, sin]
    np.testing.assert_allclose(
        np.asarray(pe[:, 0::2]), np.asarray(sc[:, 1::2]), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        np.asarray(pe[:, 1::2]), np.asarray(sc[:, 0::2]), rtol=1e-6, atol=1e-6
    )


def test_mope_matches_float64_reference_with_centres():
    rng = np.random.default_rng(0)
    n = 6
    omega = rng.uniform(0.1, 3.0, n)
    sigma = rng.uniform(0.7, 20.0, n)
    center = rng.uniform(-3.0, 10.0, n)
    pos = np.arange(32)
    got = morlet_encoding(
        jnp.asarray(pos),
        jnp.log(omega).astype(jnp.float32),
        jnp.log(sigma).astype(jnp.float32),
        center=jnp.asarray(center, jnp.float32),
    )
    # atol: angles up to ~93 rad in f32 (ulp 7.6e-6), and log/exp round trips of omega, sigma
    np.testing.assert_allclose(
        np.asarray(got), ref.morlet_table(pos, omega, sigma, center), rtol=1e-5, atol=1e-5
    )


def test_mope_phase_difference_is_ropes_rotation_angle():
    n = 8
    omega = jnp.exp(jnp.linspace(0.0, math.log(0.99 * math.pi), n))
    pe = morlet_encoding(
        jnp.arange(20), jnp.log(omega), jnp.full((n,), 1.5)
    )  # finite sigma: env > 0
    z = pe[:, 0::2] + 1j * pe[:, 1::2]  # (T, n) complex MOPE
    unit = jnp.tile(jnp.array([1.0, 0.0]), n).reshape(
        1, 1, 1, 2 * n
    )  # (B,T,H,D): every pair = 1 + 0i
    for m, k in [(7, 3), (19, 0), (4, 11)]:
        rot = apply_rope(
            jnp.concatenate([unit, unit], axis=1), jnp.array([m, k]), freqs=omega
        )  # (1,2,1,D)
        rz = rot[0, :, 0, 0::2] + 1j * rot[0, :, 0, 1::2]  # (2, n) = e^{i omega m}, e^{i omega k}
        want = rz[0] * jnp.conj(rz[1])  # RoPE's relative rotation e^{i omega (m - k)}
        got = z[m] * jnp.conj(z[k])
        np.testing.assert_allclose(
            np.asarray(got / jnp.abs(got)), np.asarray(want), atol=2e-5
        )  # f32 angles ~60 rad


def test_init_on_and_off_the_boundary():
    lo, ls = morlet_init(128, init="boundary")
    np.testing.assert_allclose(np.exp(lo[[0, -1]]), [1.0, 0.99 * math.pi], rtol=1e-6)
    np.testing.assert_allclose(np.exp(lo + ls), 5.0, rtol=1e-5)
    lo2, ls2 = morlet_init(128, init="off")
    np.testing.assert_array_equal(lo2, lo)
    np.testing.assert_allclose(np.exp(lo2 + ls2), 10.0, rtol=1e-5)


# --------------------------------------------------------------------------- constraints


def _mixed_log_params():
    """Pairs in every regime: clamped (product < 5), free, omega capped at 0.95 pi, sigma
    floored."""
    log_omega = np.log([1.0, 2.0, 0.5, 3.1, 3.0, 0.2, 1.5]).astype(np.float32)
    log_sigma = np.log([3.0, 4.0, 20.0, 1.0, 2.5, 1e-4, 3.0]).astype(np.float32)
    return log_omega, log_sigma


def test_paper_clamp_values_and_gradients_match_reference():
    lo, ls = _mixed_log_params()
    omega, sigma = clamp_paper(jnp.asarray(lo), jnp.asarray(ls))
    r_om, r_sig, dom_dlo, dom_dls, dsig_dls = ref.paper_clamp(lo, ls)
    np.testing.assert_allclose(np.asarray(omega), r_om, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(sigma), r_sig, rtol=1e-5)
    j_om_lo = np.diag(
        np.asarray(jax.jacfwd(lambda a: clamp_paper(a, jnp.asarray(ls))[0])(jnp.asarray(lo)))
    )
    j_om_ls = np.diag(
        np.asarray(jax.jacfwd(lambda b: clamp_paper(jnp.asarray(lo), b)[0])(jnp.asarray(ls)))
    )
    j_sig_ls = np.diag(
        np.asarray(jax.jacfwd(lambda b: clamp_paper(jnp.asarray(lo), b)[1])(jnp.asarray(ls)))
    )
    np.testing.assert_allclose(j_om_lo, dom_dlo, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(j_om_ls, dom_dls, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(j_sig_ls, dsig_dls, rtol=1e-5, atol=1e-6)
    active = r_om * r_sig <= 5.0 + 1e-9
    assert active.sum() >= 3 and (~active).sum() >= 2  # the fixture covers both regimes
    assert np.all(
        j_om_lo[np.exp(lo) * np.maximum(np.exp(ls), 1e-3) < 5.0] == 0.0
    )  # exactly no gradient


def test_log_omega_gets_no_gradient_through_the_encoding_while_clamped():
    """Through the MOPE module, log_omega's gradient is exactly zero at clamped pairs (clamp)
    and non-zero there under the soft penalty or no constraint."""
    n = 8
    weights = jax.random.normal(jax.random.PRNGKey(0), (16, 2 * n))  # a generic linear read-out
    lo, ls = morlet_init(n)
    shift = np.where(
        np.arange(n) % 2 == 0, -0.5, 0.5
    )  # half the pairs inside (product 5 e^-0.5 ~ 3)
    params = {"log_omega": jnp.asarray(lo), "log_sigma": jnp.asarray(ls + shift)}
    clamped = np.arange(n) % 2 == 0
    capped = np.exp(lo) > 0.95 * math.pi  # min(omega, 0.95 pi) has no gradient either
    assert capped.sum() == 1 and not capped[clamped].any()
    grads = {}
    for constraint in ("clamp", "penalty", "none"):
        mod = MorletPositionalEncoding(2 * n, constraint=constraint)

        def loss(p):
            pe, aux = mod.apply({"params": p}, jnp.arange(16), mutable=["aux_loss"])
            return jnp.sum(pe * weights) + sum(jax.tree_util.tree_leaves(aux))

        grads[constraint] = np.asarray(jax.grad(loss)(params)["log_omega"])
    assert np.all(grads["clamp"][clamped] == 0.0)
    assert np.all(grads["clamp"][~clamped & ~capped] != 0.0)
    assert np.all(grads["penalty"][~capped] != 0.0)
    assert np.all(grads["none"] != 0.0)


def test_penalty_is_sown_and_added_to_the_training_loss():
    from mope_jax.config import Config, TrainConfig
    from mope_jax.train import make_train

    weight = 3.0
    cfg = Config(
        model=small_cfg(pos_encoding="morlet", mope_constraint="penalty", mope_penalty=weight),
        train=TrainConfig(batch_size=2),
    )
    trainer = make_train(cfg)
    params = trainer.init(jax.random.PRNGKey(1)).params
    ls = params["mope"]["log_sigma"] - jnp.linspace(0.0, 1.0, 8)  # products 5 .. 5/e: penalty > 0
    params["mope"] = dict(params["mope"], log_sigma=ls)
    gap = (
        np.log(5.0)
        - np.asarray(params["mope"]["log_omega"], np.float64)
        - np.asarray(ls, np.float64)
    )
    want = weight * np.mean(np.maximum(gap, 0.0) ** 2)
    assert want > 0.01
    x = jax.random.randint(jax.random.PRNGKey(2), (2, 16), 0, 13)
    train_loss = jax.jit(trainer.loss)(
        params, x, x, jax.random.PRNGKey(3)
    )  # dropout 0: same logits as eval
    eval_loss = jax.jit(trainer.loss, static_argnums=3)(params, x, x, None)
    np.testing.assert_allclose(
        float(train_loss - eval_loss), want, rtol=1e-4
    )  # difference of ~4 nats in f32
    np.testing.assert_allclose(
        float(admissibility_penalty(params["mope"]["log_omega"], ls)), want / weight, rtol=1e-5
    )


def test_module_parameters_and_registry():
    cfg = small_cfg(pos_encoding="morlet", mope_center=True, mope_init="off")
    params = init_params(cfg, jax.random.PRNGKey(0))
    assert set(params["mope"]) == {"log_omega", "log_sigma", "center"}
    np.testing.assert_allclose(
        np.exp(params["mope"]["log_omega"] + params["mope"]["log_sigma"]), 10.0, rtol=1e-5
    )
    assert registry.get("pos_encoding", "morlet").causal
    with pytest.raises(ValueError, match="constraint"):
        MorletPositionalEncoding(16, constraint="soft").init(jax.random.PRNGKey(0), jnp.arange(4))
    with pytest.raises(ValueError, match="constraint"):
        constrain(jnp.zeros(2), jnp.zeros(2), constraint="soft")


# --------------------------------------------------------------------------- Morlet-RoPE


def _qk(b=2, t=9, h=2, d=8, seed=0):
    kq, kk = jax.random.split(jax.random.PRNGKey(seed))
    return jax.random.normal(kq, (b, t, h, d)), jax.random.normal(kk, (b, t, h, d))


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_morlet_rope_equals_rope_for_huge_sigma(layout):
    q, k = _qk()
    pos = jnp.arange(q.shape[1])
    cfg = small_cfg(rope_layout=layout, n_embd=16, n_head=2)  # head_dim 8
    rope = registry.get("qk_position", "rope").build(cfg)
    qr, kr = rope.apply({}, q, k, pos)
    want = dot_product_scores(qr, kr, 8)
    got = morlet_rope_scores(q, k, pos, pos, jnp.full((2, 4), HUGE_LOG_SIGMA), layout=layout)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_morlet_rope_model_equals_rope_model_for_huge_sigma():
    cfg_m = small_cfg(qk_position="morlet-rope")
    cfg_r = dataclasses.replace(cfg_m, qk_position="rope")
    params = init_params(cfg_m, jax.random.PRNGKey(0))
    attn = params["h_0"]["attn"]
    # sharpen attention (init scores are ~0, so any envelope would barely matter)
    attn = dict(attn, c_attn=dict(attn["c_attn"], kernel=30.0 * attn["c_attn"]["kernel"]))
    params_m = dict(
        params,
        h_0=dict(
            params["h_0"],
            attn=dict(
                attn,
                morlet_rope={
                    "log_sigma": jnp.full_like(attn["morlet_rope"]["log_sigma"], HUGE_LOG_SIGMA)
                },
            ),
        ),
    )
    params_r = dict(
        params, h_0=dict(params["h_0"], attn={k: v for k, v in attn.items() if k != "morlet_rope"})
    )
    tokens = jax.random.randint(jax.random.PRNGKey(1), (2, 16), 0, 13)
    lm = GPT(cfg_m).apply({"params": params_m}, tokens)
    lr = GPT(cfg_r).apply({"params": params_r}, tokens)
    np.testing.assert_allclose(np.asarray(lm), np.asarray(lr), rtol=1e-5, atol=1e-5)
    # and a finite sigma changes the model (the envelope is live): sigma = 1 token
    params_1 = dict(
        params,
        h_0=dict(
            params["h_0"],
            attn=dict(
                attn, morlet_rope={"log_sigma": jnp.zeros_like(attn["morlet_rope"]["log_sigma"])}
            ),
        ),
    )
    lf = GPT(cfg_m).apply({"params": params_1}, tokens)
    assert float(jnp.max(jnp.abs(lf - lr))) > 1e-2


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_morlet_rope_envelope_matches_float64_reference(layout):
    q, k = _qk(seed=3)
    sigma = np.random.default_rng(1).uniform(
        0.6, 6.0, (2, 4)
    )  # (H, F) tokens: envelopes far from 1
    pos = jnp.arange(q.shape[1])
    got = morlet_rope_scores(
        q, k, pos, pos, jnp.log(jnp.asarray(sigma, jnp.float32)), layout=layout
    )
    want = ref.morlet_rope_scores(np.asarray(q), np.asarray(k), sigma, layout=layout)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_morlet_rope_groups_share_sigma():
    q, k = _qk(d=8, seed=4)
    sigma_g = np.array([[1.3, 7.0], [2.2, 0.9]])  # (H, G=2), each group = 2 frequencies
    pos = jnp.arange(q.shape[1])
    got = morlet_rope_scores(q, k, pos, pos, jnp.log(jnp.asarray(sigma_g, jnp.float32)))
    want = ref.morlet_rope_scores(np.asarray(q), np.asarray(k), np.repeat(sigma_g, 2, axis=1))
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_groups", [4, 2])  # one sigma per frequency; two frequencies each
def test_morlet_rope_gradient_matches_float64_finite_differences(n_groups):
    """The hand-written group gradient (q, k and log sigma) against central differences of the
    float64 reference loop, for L = sum(w * scores) with a random w."""
    q, k = _qk(b=1, t=5, h=2, d=8, seed=5)
    log_sigma = np.log(np.random.default_rng(2).uniform(0.7, 4.0, (2, n_groups)))
    w = np.random.default_rng(3).normal(size=(1, 2, 5, 5))
    pos = jnp.arange(5)

    def loss(q, k, ls):
        return jnp.sum(jnp.asarray(w, jnp.float32) * morlet_rope_scores(q, k, pos, pos, ls))

    got = jax.grad(loss, argnums=(0, 1, 2))(q, k, jnp.asarray(log_sigma, jnp.float32))

    def loss64(q, k, ls):  # sigma per frequency: each group's sigma repeated over its pairs
        sigma = np.repeat(np.exp(ls), 4 // ls.shape[1], axis=1)
        return float(np.sum(w * ref.morlet_rope_scores(q, k, sigma)))

    args = [np.asarray(q, np.float64), np.asarray(k, np.float64), log_sigma]
    eps = 1e-6
    for i, g in enumerate(got):
        want = np.zeros(args[i].shape)
        for idx in np.ndindex(args[i].shape):
            hi, lo = [a.copy() for a in args], [a.copy() for a in args]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            want[idx] = (loss64(*hi) - loss64(*lo)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-4, atol=1e-5)


def test_morlet_rope_memory_is_bounded_by_a_few_score_arrays():
    """fwd + bwd must not hold a (B, H, F, T, S) tensor: compiled temporaries stay below 8
    score-sized arrays although F = 16 (measured: ~3.1 with the hand-written group gradient, ~4.6
    before it; a materialised version needs ~97)."""
    b, t, h, d = 1, 512, 2, 32

    def loss(q, k, log_sigma):
        return jnp.sum(jnp.sin(morlet_rope_scores(q, k, jnp.arange(t), jnp.arange(t), log_sigma)))

    args = (jnp.ones((b, t, h, d)), jnp.ones((b, t, h, d)), jnp.zeros((h, d // 2)))
    mem = jax.jit(jax.grad(loss, argnums=(0, 1, 2))).lower(*args).compile().memory_analysis()
    if mem is None:
        pytest.skip("this backend reports no memory analysis")
    assert mem.temp_size_in_bytes < 8 * b * h * t * t * 4


def test_morlet_rope_init_is_the_boundary_in_theta():
    ls = morlet_rope_init(8, 3, 4, product=5.0)
    theta = 10000.0 ** (-np.arange(0, 8, 2) / 8)
    np.testing.assert_allclose(
        np.exp(np.asarray(ls)), np.broadcast_to(5.0 / theta, (3, 4)), rtol=1e-5
    )


@pytest.mark.parametrize(
    "field",
    [
        dict(pos_encoding="morlet"),
        dict(qk_position="morlet-rope", morlet_rope_groups=2),
        dict(pos_encoding="morlet", mope_center=True),
    ],
)
def test_morlet_models_pass_the_causality_audit(field):
    cfg = small_cfg(**field)
    res = audit_model(cfg, init_params(cfg, jax.random.PRNGKey(0)))
    assert res.causal, res


# --------------------------------------------------------------------------- spectra


def test_extract_spectra_and_summary():
    cfg = small_cfg(pos_encoding="morlet")
    params = init_params(cfg, jax.random.PRNGKey(0))
    params["mope"] = dict(
        params["mope"],
        log_sigma=params["mope"]["log_sigma"] - jnp.where(jnp.arange(8) < 3, 0.3, -0.3),
    )
    sp = spectra.extract_spectra(cfg, params)
    om, sg = clamp_paper(params["mope"]["log_omega"], params["mope"]["log_sigma"])
    np.testing.assert_array_equal(sp["mope_omega"], np.asarray(om))
    np.testing.assert_array_equal(sp["mope_sigma"], np.asarray(sg))
    summ = spectra.eval_summary(cfg, params)
    assert summ["mope_on_boundary_frac"] == pytest.approx(
        3 / 8
    )  # the 3 clamped pairs sit on omega sigma = 5
    assert summ["mope_clamp_active_frac"] == pytest.approx(3 / 8)
    assert (
        spectra.extract_spectra(small_cfg(), init_params(small_cfg(), jax.random.PRNGKey(0))) == {}
    )
    assert spectra.eval_summary(small_cfg(), init_params(small_cfg(), jax.random.PRNGKey(0))) == {}


def test_checkpoint_round_trip_of_spectral_parameters(tmp_path):
    from mope_jax.checkpoint import Checkpointer
    from mope_jax.presets import apply_variant, get_preset
    from mope_jax.train import read_metrics, run

    cfg = apply_variant(get_preset("smoke"), "a-mope")
    res = run(cfg, tmp_path, progress=False, log=lambda s: None)
    with Checkpointer(tmp_path / "checkpoints", read_only=True) as ckpt:
        stored = ckpt.read_spectra()
    p = res.state.params["mope"]
    om, sg = clamp_paper(p["log_omega"], p["log_sigma"])
    np.testing.assert_array_equal(stored["mope_omega"], np.asarray(om))
    np.testing.assert_array_equal(stored["mope_sigma"], np.asarray(sg))
    np.testing.assert_array_equal(
        spectra.read_spectra(tmp_path)["mope_sigma"], stored["mope_sigma"]
    )
    evals = [r for r in read_metrics(tmp_path) if "eval_val" in r]
    assert evals and all("mope_on_boundary_frac" in r for r in evals)
    import json

    summary = json.loads(spectra.write_spectra_summary(tmp_path).read_text())["summary"]
    assert summary["mope_on_boundary_frac"] == evals[-1]["mope_on_boundary_frac"]
    assert summary["mope_sigma_min"] == pytest.approx(float(np.min(stored["mope_sigma"])))


def test_decay_only_prediction_matches_optax_without_gradients():
    """With zero gradients AdamW only decays: p_T = p_0 prod_t (1 - lr_t wd)."""
    import optax

    from mope_jax.config import Config, TrainConfig
    from mope_jax.train import make_optimizer

    cfg = Config(train=TrainConfig(max_steps=60, warmup_steps=7, lr=0.05, weight_decay=0.3))
    p0 = {"log_sigma": jnp.asarray(morlet_init(8)[1])}
    tx = make_optimizer(cfg, p0)
    state, p = tx.init(p0), p0
    for _ in range(cfg.train.max_steps):
        updates, state = tx.update(jax.tree_util.tree_map(jnp.zeros_like, p), state, p)
        p = optax.apply_updates(p, updates)
    want = spectra.decay_only_prediction(cfg, np.asarray(p0["log_sigma"]))
    np.testing.assert_allclose(np.asarray(p["log_sigma"]), want, rtol=1e-5)
    assert np.all(
        np.abs(want) < 0.7 * np.abs(np.asarray(p0["log_sigma"]))
    )  # the decay is large here (x0.64)


def test_sigma_omega_plot_is_written(tmp_path):
    pytest.importorskip("matplotlib")
    lo, ls = morlet_init(8)
    om, sg = clamp_paper(jnp.asarray(lo), jnp.asarray(ls) - 0.2)
    out = spectra.plot_sigma_omega(
        tmp_path / "s.png",
        {"a": {"omega": np.asarray(om), "sigma": np.asarray(sg)}},
        init={"omega": np.exp(lo), "sigma": np.exp(ls)},
    )
    assert out.stat().st_size > 1000
