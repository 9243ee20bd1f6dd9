"""Performance changes keep the numbers: the fused exact GELU, data-parallel training steps
and the unrolled threefry lowering on CPU (experiments/bench measures their speed)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

from mope_jax.config import Config, ModelConfig, TrainConfig
from mope_jax.model import GPT, cross_entropy, gelu, init_params
from mope_jax.train import make_train


def _gelu64(x: np.ndarray) -> np.ndarray:
    """float64 reference x Phi(x) via math.erfc (accurate in both tails)."""
    return np.array([v * 0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x.astype(np.float64)])


def _dgelu64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    phi = np.exp(-0.5 * x**2) / math.sqrt(2 * math.pi)
    return np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x]) + x * phi


def test_gelu_matches_float64_reference_and_jax():
    x = np.linspace(-12.0, 12.0, 4801, dtype=np.float32)
    ours, theirs = (
        np.asarray(gelu(jnp.asarray(x))),
        np.asarray(jax.nn.gelu(jnp.asarray(x), approximate=False)),
    )
    ref = _gelu64(x)
    # 1 + erf(x/sqrt2) cancels for x < 0: the error is absolute (<= a few ulp of 1), not
    # relative; jax.nn.gelu's erfc form has about half of it.
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
    right = x > -0.5  # no cancellation: relative accuracy
    np.testing.assert_allclose(ours[right], ref[right], rtol=2e-6)


def test_gelu_derivative_matches_float64_reference():
    x = np.linspace(-12.0, 12.0, 2401, dtype=np.float32)
    d = np.asarray(jax.vmap(jax.grad(gelu))(jnp.asarray(x)))
    np.testing.assert_allclose(d, _dgelu64(x), rtol=1e-5, atol=1e-6)
    # second derivative through the custom jvp rule: phi(x) (2 - x^2)
    d2 = np.asarray(jax.vmap(jax.grad(jax.grad(gelu)))(jnp.asarray(x)))
    ref2 = (
        np.exp(-0.5 * x.astype(np.float64) ** 2)
        / math.sqrt(2 * math.pi)
        * (2 - x.astype(np.float64) ** 2)
    )
    np.testing.assert_allclose(d2, ref2, rtol=1e-4, atol=1e-6)


def test_gelu_approximate_is_jax_tanh_form():
    x = jnp.linspace(-5.0, 5.0, 101)
    np.testing.assert_array_equal(gelu(x, approximate=True), jax.nn.gelu(x, approximate=True))


def test_model_loss_and_grads_equal_with_jax_gelu(monkeypatch):
    """The GPT with the fused GELU equals the GPT with jax.nn.gelu (the unfused form)."""
    import mope_jax.model as model_mod

    cfg = ModelConfig(vocab_size=17, block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0)
    params = jax.tree_util.tree_map(
        lambda p: p * 20.0 if p.ndim == 2 else p, init_params(cfg, jax.random.PRNGKey(0))
    )
    x = jax.random.randint(jax.random.PRNGKey(1), (2, 16), 0, 17)
    y = jnp.roll(x, -1, axis=1)

    def loss(p):
        return cross_entropy(GPT(cfg).apply({"params": p}, x), y)

    l_new, g_new = jax.value_and_grad(loss)(params)
    monkeypatch.setattr(
        model_mod, "gelu", lambda h, approximate=False: jax.nn.gelu(h, approximate=approximate)
    )
    l_old, g_old = jax.value_and_grad(loss)(params)
    assert float(l_old) > 1.0
    np.testing.assert_allclose(l_new, l_old, rtol=1e-6)
    for a, b in zip(jax.tree_util.tree_leaves(g_new), jax.tree_util.tree_leaves(g_old)):
        np.testing.assert_allclose(
            a, b, rtol=1e-4, atol=1e-6
        )  # grads of a 20x-scaled net: f32 sums of ~1e3 terms


def _tiny_cfg(**model) -> Config:
    return Config(
        model=ModelConfig(
            vocab_size=11, block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.1, **model
        ),
        train=TrainConfig(batch_size=4, max_steps=10, warmup_steps=1, lr=1e-2),
    )


def test_data_parallel_steps_equal_single_device():
    if jax.device_count() < 2:
        pytest.skip("needs 2 devices (tests/conftest.py forces 2 CPU devices)")
    cfg = _tiny_cfg()
    data = jax.random.randint(jax.random.PRNGKey(3), (500,), 0, 11)
    mesh = jax.make_mesh((2,), ("data",), axis_types=(jax.sharding.AxisType.Auto,))
    one, dp = make_train(cfg), make_train(cfg, batch_sharding=NamedSharding(mesh, P("data")))
    state = jax.jit(one.init)(jax.random.PRNGKey(0))
    s1, m1 = jax.jit(one.train_steps, static_argnums=2)(state, data, 3)
    rep = NamedSharding(mesh, P())
    s2, m2 = jax.jit(dp.train_steps, static_argnums=2)(
        jax.device_put(state, rep), jax.device_put(data, rep), 3
    )
    assert len(jax.tree_util.tree_leaves(s2.params)[0].sharding.device_set) == 2
    # The same batches and dropout masks; only the gradient all-reduce sums in another order.
    np.testing.assert_allclose(m2["loss"], m1["loss"], rtol=1e-5)
    for a, b in zip(jax.tree_util.tree_leaves(s2.params), jax.tree_util.tree_leaves(s1.params)):
        # Adam's step m/sqrt(v) is scale-free: a gradient entry that is ~0 up to rounding still
        # moves by O(lr) in a direction the summation order decides; 1e-5 = 1e-3 lr.
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


# ----------------------------------------------------------------------- unrolled threefry


def _np_threefry2x32(key: tuple[int, int], ctr: tuple[int, int]) -> tuple[int, int]:
    """Threefry-2x32, 20 rounds (Salmon et al. 2011, Random123), in plain Python integers."""
    mask = 0xFFFFFFFF
    rot = [13, 15, 26, 6, 17, 29, 16, 24]
    ks = [key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDA]
    x = [(ctr[0] + ks[0]) & mask, (ctr[1] + ks[1]) & mask]
    for i in range(5):
        for r in rot[4 * (i % 2) : 4 * (i % 2) + 4]:
            x[0] = (x[0] + x[1]) & mask
            x[1] = ((x[1] << r) | (x[1] >> (32 - r))) & mask
            x[1] ^= x[0]
        x[0] = (x[0] + ks[(i + 1) % 3]) & mask
        x[1] = (x[1] + ks[(i + 2) % 3] + i + 1) & mask
    return x[0], x[1]


def test_python_threefry_reference_matches_random123_known_answers():
    # Known-answer vectors of Random123 (kat_vectors, threefry2x32_20)
    assert _np_threefry2x32((0, 0), (0, 0)) == (0x6B200159, 0x99BA4EFE)
    assert _np_threefry2x32((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3)) == (
        0xC4923A9C,
        0x483DF7A0,
    )


def test_unrolled_threefry_gives_the_same_bits():
    from jax._src.random.threefry2x32 import threefry_2x32

    from mope_jax import perf

    key, count = np.array([0x13198A2E, 0x03707344], np.uint32), np.arange(2 * 37, dtype=np.uint32)
    draws = {}
    try:
        for unrolled in (False, True):
            perf.fast_cpu_threefry(unrolled)
            assert perf.threefry_unrolled() == unrolled
            # fresh jitted functions, so each is lowered with the rule just registered
            bits = jax.jit(lambda k, c: threefry_2x32(k, c))(key, count)
            mask = jax.jit(lambda k: jax.random.bernoulli(k, 0.9, (4, 3, 33)))(
                jax.random.PRNGKey(7)
            )
            draws[unrolled] = (np.asarray(bits), np.asarray(mask))
            hlo = jax.jit(lambda k, c: threefry_2x32(k, c)).lower(key, count).compile().as_text()
            assert (" while(" in hlo) != unrolled  # the rule in effect: rolled = a while loop
    finally:
        perf.fast_cpu_threefry(True)
    np.testing.assert_array_equal(draws[True][0], draws[False][0])
    np.testing.assert_array_equal(draws[True][1], draws[False][1])
    # and both are Threefry-2x32: the counter is split in halves (x0 = first half, x1 = second)
    expect = [
        _np_threefry2x32((int(key[0]), int(key[1])), (int(count[i]), int(count[i + 37])))
        for i in range(37)
    ]
    np.testing.assert_array_equal(draws[True][0][:37], np.array([e[0] for e in expect], np.uint32))
    np.testing.assert_array_equal(draws[True][0][37:], np.array([e[1] for e in expect], np.uint32))


def test_threefry_patch_is_gated_on_the_jax_version(monkeypatch):
    """Active on the tested JAX versions (pyproject bounds jax to them); on any other version it
    keeps JAX's own (rolled) lowering and says why."""
    from jax._src.random.threefry2x32 import threefry_2x32

    from mope_jax import perf

    key, count = np.array([1, 2], np.uint32), np.arange(8, dtype=np.uint32)
    assert perf.supported(jax.__version__), (
        f"pyproject allows jax {jax.__version__}, perf.TESTED_JAX does not"
    )
    assert perf.fast_cpu_threefry(True) and perf.threefry_status() == "active"
    assert (
        not perf.supported("0.11.0") and not perf.supported("1.0") and not perf.supported("garbage")
    )
    try:
        perf.fast_cpu_threefry(False)
        monkeypatch.setattr(jax, "__version__", "0.99.0")
        assert perf.fast_cpu_threefry(True) is False
        assert "not a tested version" in perf.threefry_status()
        hlo = jax.jit(lambda k, c: threefry_2x32(k, c)).lower(key, count).compile().as_text()
        assert " while(" in hlo  # JAX's own rolled lowering is still the one in effect
    finally:
        monkeypatch.undo()
        perf.fast_cpu_threefry(True)
    assert perf.threefry_unrolled()


def test_pyproject_bounds_jax_to_the_tested_versions():
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    from mope_jax import perf

    deps = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())[
        "project"
    ]
    spec = next(d for d in deps["dependencies"] if d.startswith("jax"))
    upper = spec.split("<")[1].strip()
    major, minor = (int(x) for x in upper.split(".")[:2])
    assert (major, minor) > max(perf.TESTED_JAX) and (major, minor - 1) in perf.TESTED_JAX, spec


@pytest.mark.parametrize("variant", ["learned", "rope"])
def test_attn_layout_bhtd_computes_the_default_attention(variant):
    """model.attn_layout=bhtd (opt-in) is the same attention as the default layout:
    same parameters, loss and gradients to float32 rounding, with dropout on."""
    import dataclasses

    from mope_jax.presets import apply_variant

    base = apply_variant(_tiny_cfg(), variant)
    trainers = [
        make_train(dataclasses.replace(base, model=dataclasses.replace(base.model, attn_layout=a)))
        for a in ("bthd", "bhtd")
    ]
    data = jnp.asarray(np.random.default_rng(0).integers(0, 11, 500), jnp.int32)
    states = [jax.jit(t.init)(jax.random.PRNGKey(0)) for t in trainers]
    for a, b in zip(jax.tree_util.tree_leaves(states[0]), jax.tree_util.tree_leaves(states[1])):
        np.testing.assert_array_equal(a, b)
    out = [t.train_steps(s, data, 3) for t, s in zip(trainers, states)]
    losses = [np.asarray(m["loss"]) for _, m in out]
    assert np.all(np.isfinite(losses[0])) and losses[0][0] > 1.0
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
    for a, b in zip(
        jax.tree_util.tree_leaves(out[0][0].params), jax.tree_util.tree_leaves(out[1][0].params)
    ):
        # Adam at lr 1e-2 turns a rounding-level gradient difference on a near-zero gradient
        # into an update difference of up to ~1e-5 after 3 steps; a wrong attention is O(lr)
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


def test_attn_layout_unknown_value_fails_at_config_build():
    from mope_jax.config import apply_overrides
    from mope_jax.errors import ConfigError
    from mope_jax.presets import get_preset

    with pytest.raises(ConfigError, match="attn_layout"):
        apply_overrides(get_preset("cpu"), ["model.attn_layout=bthx"])
