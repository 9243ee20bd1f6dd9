"""Closed forms for the baseline encodings (against tests/reference, float64 numpy)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from mope_jax.encodings import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    rope_frequencies,
    sinusoidal_encoding,
)
from tests.reference import encodings_np as ref


def test_sinusoid_values():
    got = sinusoidal_encoding(jnp.arange(50), 16)
    np.testing.assert_allclose(
        np.asarray(got), ref.sinusoidal(50, 16), rtol=1e-5, atol=2e-5
    )  # f32 sin of ~50 rad


def test_rope_frequencies_closed_form():
    f = rope_frequencies(8, base=100.0)
    np.testing.assert_allclose(np.asarray(f), 100.0 ** (-np.arange(0, 8, 2) / 8), rtol=1e-6)
    with pytest.raises(ValueError, match="even"):
        rope_frequencies(7)


@pytest.mark.parametrize(
    "layout,reference", [("interleaved", ref.rope_interleaved), ("half", ref.rope_half)]
)
def test_rope_matches_reference(layout, reference):
    x = np.random.default_rng(0).normal(size=(1, 9, 2, 8)).astype(np.float32)  # (B,T,H,D)
    got = np.asarray(apply_rope(jnp.asarray(x), jnp.arange(9), layout=layout))
    want = np.stack(
        [[reference(x[0, t, h].astype(np.float64), t) for h in range(2)] for t in range(9)]
    )[None]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_preserves_norm_and_is_relative(layout):
    key_q, key_k = jax.random.split(jax.random.PRNGKey(0))
    q = jax.random.normal(key_q, (1, 1, 1, 16))
    k = jax.random.normal(key_k, (1, 1, 1, 16))
    rot = lambda x, p: apply_rope(x, jnp.array([p]), layout=layout)  # noqa: E731
    np.testing.assert_allclose(jnp.linalg.norm(rot(q, 37)), jnp.linalg.norm(q), rtol=1e-5)
    # q.k depends on m - n only
    dots = [float(jnp.sum(rot(q, m) * rot(k, m - 5))) for m in (5, 12, 40, 100)]
    np.testing.assert_allclose(dots, dots[0], rtol=1e-4)  # f32 angles at m ~ 100 rad
    # ... and does change with m - n
    assert abs(float(jnp.sum(rot(q, 7) * rot(k, 0))) - dots[0]) > 1e-3


def test_rope_layouts_are_a_permutation_of_each_other():
    x = jax.random.normal(jax.random.PRNGKey(1), (2, 5, 3, 8))
    perm = np.array([0, 2, 4, 6, 1, 3, 5, 7])  # interleaved pair i -> (i, i + D/2)
    a = apply_rope(x, jnp.arange(5), layout="interleaved")
    b = apply_rope(x[..., perm], jnp.arange(5), layout="half")
    np.testing.assert_allclose(np.asarray(a)[..., perm], np.asarray(b), rtol=1e-6, atol=1e-6)


def test_alibi_closed_form():
    slopes = alibi_slopes(8)
    np.testing.assert_allclose(np.asarray(slopes), [2.0 ** (-i) for i in range(1, 9)], rtol=1e-6)
    got = alibi_bias(slopes, jnp.arange(6), jnp.arange(6))
    np.testing.assert_allclose(np.asarray(got), ref.alibi(8, 6), rtol=1e-6)
    assert alibi_slopes(6).shape == (6,) and bool(jnp.all(jnp.diff(alibi_slopes(6)[:4]) < 0))
