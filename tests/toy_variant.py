"""A whole variant in one file (README: "Adding a variant"); tests/test_variant_file.py loads it.

``qk_filter=toy-mean`` scales every key by one plus a learned multiple of its head's mean key
over the WHOLE window: k_t <- k_t (1 + g_h s mean_{t'} k_t') (the root mean square with
filter_norm=l2), so every score sees future tokens (declared non-causal). g_h = exp(log_gain_h)
is a learned spectral parameter; s = model.filter_bandwidth is read from the ``hparams``
collection, so a sweep could train several values in one program.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from mope_jax import hparams
from mope_jax.attention import registry
from mope_jax.attention.spectral import FILTER_NORMS


class ToyMean(nn.Module):
    n_head: int
    norm: str = "l1"
    scale: float = 1.0

    @nn.compact
    def __call__(self, q, k):
        """q, k (B,T,H,D) -> (q, k (1 + g s ctx)), ctx (B,1,H,D) over all T."""
        log_gain = self.param("log_gain", nn.initializers.zeros, (self.n_head,))  # (H,)
        s = hparams.read(self, "filter_bandwidth", self.scale)
        if self.norm == "l1":
            ctx = k.mean(axis=1, keepdims=True)
        else:
            ctx = jnp.sqrt(jnp.mean(jnp.square(k), axis=1, keepdims=True))
        return q, k * (1.0 + jnp.exp(log_gain)[None, None, :, None] * s * ctx)


@registry.register(
    "qk_filter",
    "toy-mean",
    causal=False,
    doc="toy: keys scaled by 1 + a learned multiple of the window's mean key (sees the future)",
    options={"filter_norm": FILTER_NORMS, "filter_bandwidth": None},
    spectral_params=("log_gain",),  # extracted as stored: toy_mean_log_gain (L, H)
    hparams=("filter_bandwidth",),
)
def build(cfg):
    return ToyMean(cfg.n_head, cfg.filter_norm, cfg.filter_bandwidth)
