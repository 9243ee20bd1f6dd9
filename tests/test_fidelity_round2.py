"""Two fidelity fixes.

1. Paper C's GPT (experiments/fourierqk/scales.py AUTHORS_C, the reference-c preset): only the q/k/v
   and attention output projections have no bias (LayerNorm and MLP keep theirs), and there is
   no dropout after the attention output projection. ``model.attn_proj_bias`` (None: follow
   use_bias) and ``model.attn_out_dropout`` (True) say so; their defaults keep the model as it
   was (tests/reference/gpt_pre_issue40.npz, written by the code before the fields existed).
2. MOPE's clamp (encodings/morlet.py) has torch.clamp's gradient at a tie: torch's backward is
   ``where(self <= max, grad, 0)`` / ``where(self >= min, grad, 0)`` (FunctionsManual.cpp,
   clamp_backward), the whole gradient at x == bound, where jnp.minimum / jnp.maximum pass half.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.attention import core
from mope_jax.config import Config, ModelConfig, apply_overrides
from mope_jax.encodings import morlet
from mope_jax.encodings.morlet import OMEGA_MAX, SIGMA_MIN, clamp_active, clamp_paper, constrain
from mope_jax.errors import ConfigError
from mope_jax.model import GPT, init_params
from tests.reference import gpt_pre_issue40 as pre

TINY = dict(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16)


def _fq():
    from experiments import fourierqk

    return fourierqk


def _authors_cfg(**kw) -> ModelConfig:
    """A tiny paper-C GPT: the campaign's recipe (untied head + AUTHORS_C)."""
    fq = _fq()
    return ModelConfig(**TINY, **(fq.RECIPE_C["model"] | fq.AUTHORS_C | kw))


def _paths(params) -> set[str]:
    return {
        jax.tree_util.keystr(k, simple=True, separator="/")
        for k, _ in jax.tree_util.tree_flatten_with_path(params)[0]
    }


def _moved(params):
    """Parameters off their init (biases nonzero), so that every bias matters."""
    return jax.tree_util.tree_map(lambda p: p * 10.0 if p.ndim == 2 else p + 0.1, params)


def _tokens():
    return jnp.asarray(np.random.default_rng(1).integers(0, 11, (2, 8)), jnp.int32)  # (B,T)


# --------------------------------------------------------------------------- item 1: the recipe


def test_authors_c_recipe_has_exactly_the_authors_parameter_set():
    cfg = _authors_cfg()
    assert cfg.use_bias is True and cfg.attn_proj_bias is False and not cfg.tie_embeddings
    got = _paths(init_params(cfg, jax.random.PRNGKey(0)))
    want = {"wte/embedding", "wpe/table", "ln_f/scale", "ln_f/bias", "lm_head/kernel"}
    for i in range(cfg.n_layer):
        want |= {
            f"h_{i}/ln_1/scale",
            f"h_{i}/ln_1/bias",
            f"h_{i}/ln_2/scale",
            f"h_{i}/ln_2/bias",
            f"h_{i}/attn/c_attn/kernel",  # q/k/v: no bias
            f"h_{i}/attn/c_proj/kernel",  # attention output: no bias
            f"h_{i}/mlp/c_fc/kernel",
            f"h_{i}/mlp/c_fc/bias",
            f"h_{i}/mlp/c_proj/kernel",
            f"h_{i}/mlp/c_proj/bias",
        }
    assert got == want, (got - want, want - got)


def test_attn_proj_bias_overrides_use_bias_both_ways():
    no_attn = _paths(init_params(ModelConfig(**TINY, attn_proj_bias=False), jax.random.PRNGKey(0)))
    assert "h_0/attn/c_attn/bias" not in no_attn and "h_0/attn/c_proj/bias" not in no_attn
    assert "h_0/mlp/c_fc/bias" in no_attn and "h_0/ln_1/bias" in no_attn
    only_attn = _paths(
        init_params(ModelConfig(**TINY, use_bias=False, attn_proj_bias=True), jax.random.PRNGKey(0))
    )
    assert {"h_0/attn/c_attn/bias", "h_0/attn/c_proj/bias"} <= only_attn
    assert not any(p.endswith("/bias") for p in only_attn if "/attn/" not in p)


def _dropout_sites(cfg: ModelConfig, monkeypatch) -> tuple[list[str], list[tuple]]:
    """One training forward pass: the module paths of the nn.Dropout calls that drop (rate > 0,
    not deterministic), and the (rate, deterministic, rng given) of each attention-probability
    dropout (core.attend)."""
    modules: list[str] = []
    probs: list[tuple] = []

    def spy(next_fun, args, kwargs, context):
        if isinstance(context.module, nn.Dropout) and context.method_name == "__call__":
            if context.module.rate > 0 and not kwargs.get("deterministic", True):
                modules.append("/".join(context.module.scope.path))
        return next_fun(*args, **kwargs)

    attend = core.attend

    def attend_spy(scores, v, **kw):
        probs.append((kw["dropout_rate"], kw["deterministic"], kw["dropout_rng"] is not None))
        return attend(scores, v, **kw)

    params = init_params(cfg, jax.random.PRNGKey(0))
    monkeypatch.setattr(core, "attend", attend_spy)
    with nn.intercept_methods(spy):
        GPT(cfg).apply(
            {"params": params},
            _tokens(),
            deterministic=False,
            rngs={"dropout": jax.random.PRNGKey(3)},
        )
    monkeypatch.setattr(core, "attend", attend)
    return modules, probs


def test_dropout_sites_before_and_after(monkeypatch):
    """Ours (default): embeddings, attention probabilities, attention output, MLP output.
    The authors' paper-C GPT: the same without the attention-output dropout."""
    ours, ours_probs = _dropout_sites(ModelConfig(**TINY, dropout=0.3), monkeypatch)
    theirs, theirs_probs = _dropout_sites(_authors_cfg(dropout=0.3), monkeypatch)
    layers = [f"h_{i}" for i in range(TINY["n_layer"])]
    assert sorted(ours) == sorted(
        ["Dropout_0"]
        + [f"{h}/attn/Dropout_0" for h in layers]
        + [f"{h}/mlp/Dropout_0" for h in layers]
    )
    assert sorted(theirs) == sorted(["Dropout_0"] + [f"{h}/mlp/Dropout_0" for h in layers])
    assert ours_probs == theirs_probs == [(0.3, False, True)] * TINY["n_layer"]


def test_attention_output_is_the_projection_itself_without_the_dropout():
    """Training mode, dropout 0.5: the attention sublayer returns c_proj's output unchanged in
    the authors' recipe, and a dropped-and-rescaled copy of it in ours."""

    def attn_io(cfg):
        params = _moved(init_params(cfg, jax.random.PRNGKey(0)))
        _, state = GPT(cfg).apply(
            {"params": params},
            _tokens(),
            deterministic=False,
            rngs={"dropout": jax.random.PRNGKey(3)},
            capture_intermediates=True,
            mutable=["intermediates"],
        )
        attn = state["intermediates"]["h_0"]["attn"]
        return np.asarray(attn["c_proj"]["__call__"][0]), np.asarray(attn["__call__"][0])

    proj, out = attn_io(_authors_cfg(dropout=0.5))
    np.testing.assert_array_equal(out, proj)
    proj, out = attn_io(ModelConfig(**TINY, dropout=0.5))
    dropped = out == 0.0
    assert 0.2 < dropped.mean() < 0.8
    np.testing.assert_allclose(out[~dropped], proj[~dropped] / 0.5, rtol=1e-6)


@pytest.mark.parametrize("bias,tied", pre.CASES)
def test_defaults_reproduce_the_model_before_the_new_fields(bias, tied):
    """Same parameter tree and the same logits (eval and training, dropout on) as the package
    before the fields existed. The fixture was written on another CPU and XLA rounds differently
    on each (up to 7e-7 on a CPU without AVX-512), so the comparison has a
    tolerance, 1e-5: rounding passes, a changed model (a bias or a dropout site more or less)
    does not. Bitwise equality within one machine: test_defaults_equal_the_explicit_old_settings.
    """
    stored = np.load(Path(pre.__file__).with_suffix(".npz"))
    now = pre.outputs()
    k = pre.key(bias, tied)
    assert now[f"{k}_paths"].tolist() == stored[f"{k}_paths"].tolist()
    for part in ("eval", "train"):
        np.testing.assert_allclose(now[f"{k}_{part}"], stored[f"{k}_{part}"], rtol=1e-5, atol=1e-5)


def test_defaults_equal_the_explicit_old_settings():
    """attn_proj_bias=None is use_bias, attn_out_dropout=True is the dropout: bitwise."""
    for bias in (True, False):
        base = ModelConfig(**TINY, dropout=0.2, use_bias=bias)
        explicit = dataclasses.replace(base, attn_proj_bias=bias, attn_out_dropout=True)
        params = _moved(init_params(base, jax.random.PRNGKey(0)))
        assert _paths(params) == _paths(init_params(explicit, jax.random.PRNGKey(0)))
        kw = dict(deterministic=False, rngs={"dropout": jax.random.PRNGKey(7)})
        np.testing.assert_array_equal(
            GPT(base).apply({"params": params}, _tokens(), **kw),
            GPT(explicit).apply({"params": params}, _tokens(), **kw),
        )


def test_the_no_bias_recipe_is_another_model():
    """What the mid records (NO_BIAS_C) compute differs from the authors' GPT once the
    LayerNorm and MLP biases are nonzero: same weights, biases dropped."""
    fq = _fq()
    theirs = _authors_cfg(dropout=0.0)
    ours = ModelConfig(**TINY, **(fq.RECIPE_C["model"] | fq.NO_BIAS_C), dropout=0.0)
    params = _moved(init_params(theirs, jax.random.PRNGKey(0)))
    keep = _paths(init_params(ours, jax.random.PRNGKey(0)))
    sub = jax.tree_util.tree_map_with_path(
        lambda k, v: v if jax.tree_util.keystr(k, simple=True, separator="/") in keep else None,
        params,
    )
    a = np.asarray(GPT(theirs).apply({"params": params}, _tokens()))
    b = np.asarray(GPT(ours).apply({"params": sub}, _tokens()))
    rel = np.linalg.norm(a - b) / np.linalg.norm(a)
    assert rel > 0.05, rel


def test_new_fields_are_validated_and_parsed():
    cfg = apply_overrides(Config(), ["model.attn_proj_bias=false", "attn_out_dropout=off"])
    assert cfg.model.attn_proj_bias is False and cfg.model.attn_out_dropout is False
    assert apply_overrides(cfg, ["model.attn_proj_bias=None"]).model.attn_proj_bias is None
    assert Config.from_dict(cfg.to_dict()) == cfg
    for bad in (dict(attn_proj_bias=1), dict(attn_proj_bias="no"), dict(attn_out_dropout=0)):
        with pytest.raises(ConfigError):
            Config(model=ModelConfig(**bad))
    with pytest.raises(ConfigError):
        apply_overrides(Config(), ["model.attn_out_dropout=maybe"])


def test_fourierqk_recipes_and_the_reference_c_preset():
    from mope_jax.campaign import row_config
    from mope_jax.presets import get_preset

    fq = _fq()
    scales = {s.name: s for s in fq.EXPERIMENT.scales}
    mid = scales["mid"].model
    assert (
        mid["use_bias"] is False and "attn_proj_bias" not in mid and "attn_out_dropout" not in mid
    )
    ref = scales["reference"].model
    assert (ref["use_bias"], ref["attn_proj_bias"], ref["attn_out_dropout"]) == (True, False, False)
    for name in ("smoke", "cpu"):
        assert not {"use_bias", "attn_proj_bias", "attn_out_dropout"} & set(scales[name].model)
    learned = next(r for r in fq.EXPERIMENT.rows if r.name == "learned")
    campaign = row_config(fq.EXPERIMENT, scales["reference"], learned).model
    preset = get_preset("reference-c").model
    for f in ("use_bias", "attn_proj_bias", "attn_out_dropout", "tie_embeddings", "dropout"):
        assert getattr(preset, f) == getattr(campaign, f), f
    assert (preset.use_bias, preset.attn_proj_bias, preset.attn_out_dropout) == (True, False, False)


# --------------------------------------------------------------------------- item 2: the clamp


def _old_capped(log_omega, log_sigma):
    """The jnp.minimum / jnp.maximum form: the same values, half the gradient at a tie."""
    return jnp.minimum(jnp.exp(log_omega), OMEGA_MAX), jnp.maximum(jnp.exp(log_sigma), SIGMA_MIN)


def _old_clamp_paper(log_omega, log_sigma, bound=5.0):
    omega, sigma = _old_capped(log_omega, log_sigma)
    return jnp.where(omega * sigma < bound, bound / sigma, omega), sigma


def _ref_clamp_grads(log_omega, log_sigma, bound=5.0):
    """The authors' torch clamp and its derivatives, float64, from the definition:
        omega_raw = exp(log_omega), sigma_raw = exp(log_sigma)   (float32, as trained)
        omega_c = clamp(omega_raw, max=0.95 pi), sigma = clamp(sigma_raw, min=1e-3)
        omega = where(omega_c sigma < bound, bound / sigma, omega_c)
    torch.clamp's derivative is 1[omega_raw <= max] (1[sigma_raw >= min]), so
        d omega / d log_omega = omega_raw 1[omega_raw <= 0.95 pi] 1[not replaced]
        d sigma / d log_sigma = sigma_raw 1[sigma_raw >= 1e-3]
        d omega / d log_sigma = -bound / sigma^2 d sigma / d log_sigma 1[replaced]
    The comparisons are made on the float32 values (what torch compares in a float32 model)."""
    om32 = np.asarray(jnp.exp(jnp.asarray(log_omega, jnp.float32)))  # the model's float32 exp
    sg32 = np.asarray(jnp.exp(jnp.asarray(log_sigma, jnp.float32)))
    omc32 = np.where(om32 > np.float32(OMEGA_MAX), np.float32(OMEGA_MAX), om32)
    sgc32 = np.where(sg32 < np.float32(SIGMA_MIN), np.float32(SIGMA_MIN), sg32)
    replaced = omc32 * sgc32 < np.float32(bound)
    om, sg = om32.astype(np.float64), sg32.astype(np.float64)
    sigma = sgc32.astype(np.float64)
    dsig = sg * (sg32 >= np.float32(SIGMA_MIN))
    dom_dlo = om * (om32 <= np.float32(OMEGA_MAX)) * ~replaced
    dom_dls = np.where(replaced, -bound / sigma**2 * dsig, 0.0)
    return dom_dlo, dom_dls, dsig


def _jac_diag(fn, x):
    return np.diag(np.asarray(jax.jacfwd(fn)(x)))


def _grads(clamp, lo, ls):
    lo, ls = jnp.asarray(lo), jnp.asarray(ls)
    return (
        _jac_diag(lambda a: clamp(a, ls)[0], lo),
        _jac_diag(lambda b: clamp(lo, b)[0], ls),
        _jac_diag(lambda b: clamp(lo, b)[1], ls),
    )


def _omega_tie_log() -> np.float32:
    """A float32 log_omega whose float32 exp is exactly float32(0.95 pi)."""
    target = np.float32(OMEGA_MAX)
    x = np.float32(math.log(OMEGA_MAX))
    for step in range(8):
        for sign in (1.0, -1.0):
            y = x
            for _ in range(step):
                y = np.nextafter(y, np.float32(sign * np.inf))
            if np.float32(jnp.exp(jnp.float32(y))) == target:
                return np.float32(y)
    raise AssertionError("no float32 log_omega within 8 ulps has exp == float32(0.95 pi)")


def test_omega_cap_tie_passes_the_whole_gradient_as_torch_clamp():
    lo_tie = _omega_tie_log()
    lo = np.array([lo_tie, lo_tie, np.log(1.0)], np.float32)
    ls = np.log(np.array([3.0, 1.0, 3.0])).astype(np.float32)  # free, replaced, free
    assert float(jnp.exp(jnp.float32(lo_tie))) == float(np.float32(OMEGA_MAX))
    ref = _ref_clamp_grads(lo, ls)
    new = _grads(clamp_paper, lo, ls)
    old = _grads(_old_clamp_paper, lo, ls)
    for g, r in zip(new, ref):
        np.testing.assert_allclose(g, r, rtol=1e-6, atol=0)
    omega_tie = float(np.float32(OMEGA_MAX))
    assert new[0][0] == pytest.approx(omega_tie, rel=1e-6)  # the whole gradient ...
    assert old[0][0] == pytest.approx(omega_tie / 2, rel=1e-6)  # ... where jnp.minimum halves it
    assert new[0][1] == old[0][1] == 0.0  # replaced: omega = bound / sigma, no log_omega path
    np.testing.assert_array_equal(new[0][2], old[0][2])  # away from the tie: the same
    # the penalty constraint's guards are the same clamp
    pen = _jac_diag(
        lambda a: constrain(a, jnp.asarray(ls), constraint="penalty")[0], jnp.asarray(lo)
    )
    assert pen[0] == pytest.approx(omega_tie, rel=1e-6) and pen[1] == pen[0]


def test_sigma_floor_tie_passes_the_whole_gradient_as_torch_clamp():
    """No float32 (nor float64) log_sigma has exp exactly 1e-3 in float32 (exp's steps are
    coarser there than the float grid), so the floor's tie is tested on the clamp itself."""
    target = np.float32(SIGMA_MIN)
    x = np.float32(math.log(SIGMA_MIN))
    near = [x]
    for sign in (1.0, -1.0):
        y = x
        for _ in range(8):
            y = np.nextafter(y, np.float32(sign * np.inf))
            near.append(y)
    assert not any(np.float32(jnp.exp(jnp.float32(y))) == target for y in near)

    s = jnp.float32(SIGMA_MIN)
    assert float(jax.grad(lambda v: morlet.clamp_min(v, SIGMA_MIN))(s)) == 1.0  # torch: >= min
    assert float(jax.grad(lambda v: jnp.maximum(v, SIGMA_MIN))(s)) == 0.5  # the old form
    m = jnp.float32(OMEGA_MAX)
    assert float(jax.grad(lambda v: morlet.clamp_max(v, OMEGA_MAX))(m)) == 1.0  # torch: <= max
    assert float(jax.grad(lambda v: jnp.minimum(v, OMEGA_MAX))(m)) == 0.5
    # beyond the bounds: no gradient; inside: the identity
    for fn, out, inside in (
        (lambda v: morlet.clamp_min(v, SIGMA_MIN), 5e-4, 2e-3),
        (lambda v: morlet.clamp_max(v, OMEGA_MAX), 3.0, 2.9),
    ):
        assert float(jax.grad(fn)(jnp.float32(out))) == 0.0
        assert float(jax.grad(fn)(jnp.float32(inside))) == 1.0


def _grid():
    """Random pairs in every regime, plus the exact ties and their float32 neighbours."""
    rng = np.random.default_rng(0)
    lo = rng.uniform(-4.0, 1.5, 4000)
    ls = rng.uniform(-9.0, 4.0, 4000)
    tie = _omega_tie_log()
    ties = [np.nextafter(tie, np.float32(-np.inf)), tie, np.nextafter(tie, np.float32(np.inf))]
    s0 = np.float32(math.log(SIGMA_MIN))
    sties = [np.nextafter(s0, np.float32(-np.inf)), s0, np.nextafter(s0, np.float32(np.inf))]
    lo = np.concatenate([lo, ties, [0.0] * 3, np.log(5.0 / np.exp(ls[:50]))])
    ls = np.concatenate([ls, [1.0] * 3, sties, ls[:50]])  # last block: omega sigma ~ 5
    return lo.astype(np.float32), ls.astype(np.float32)


def test_clamp_values_are_bitwise_unchanged():
    lo, ls = (jnp.asarray(a) for a in _grid())
    new, old = clamp_paper(lo, ls), _old_clamp_paper(lo, ls)
    for a, b in zip(new, old):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    om, sg = _old_capped(lo, ls)
    np.testing.assert_array_equal(np.asarray(clamp_active(lo, ls)), np.asarray(om * sg < 5.0))
    for a, b in zip(constrain(lo, ls, constraint="penalty"), (om, sg)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    for a, b in zip(
        constrain(lo, ls, constraint="clamp", bound=3.0), _old_clamp_paper(lo, ls, 3.0)
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    active = np.asarray(clamp_active(lo, ls))
    assert 0.1 < active.mean() < 0.9  # both regimes on the grid


def test_clamp_gradients_match_the_authors_on_the_grid():
    lo, ls = _grid()
    lo, ls = lo[::20], ls[::20]  # 200-odd pairs: the Jacobian is (n, n)
    lo = np.concatenate([lo, [_omega_tie_log()]]).astype(np.float32)
    ls = np.concatenate([ls, [1.0]]).astype(np.float32)
    for g, r in zip(_grads(clamp_paper, lo, ls), _ref_clamp_grads(lo, ls)):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-7)
