"""GPT-style decoder (pre-LN, GELU MLP 4x, dropout, tied or untied embeddings, N(0, 0.02) init).

The reference configuration (DESIGN.md section 0) is ``ModelConfig()``: T=256, E=256,
6 layers, 8 heads (D=32), learned absolute positions, tied LM head.

Dropout (rate model.dropout, training only) sits at four sites: the embeddings (token +
absolute position), the attention probabilities (attention/core.py ``attend``), the attention
output after its projection c_proj (left out with model.attn_out_dropout=False, paper C's GPT)
and the MLP output. Biases: LayerNorm and MLP follow model.use_bias; the attention projections
c_attn (q/k/v) and c_proj follow model.attn_proj_bias (None: use_bias); the untied LM head has
none.
"""

from __future__ import annotations

import math

import flax.linen as nn
import jax
import jax.numpy as jnp

from mope_jax.attention import registry
from mope_jax.attention.core import (
    MATMUL_PRECISIONS,
    SelfAttention,
    dense,
    matmul_dtype,
    mm_einsum,
)
from mope_jax.config import ModelConfig
from mope_jax.errors import ConfigError
from mope_jax.typing import Array, Params


def _phi_cdf(x: Array) -> Array:
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2; erf clipped to [-1, 1] (XLA's polynomial can
    overshoot by an ulp, which would flip the sign of the tail)."""
    return 0.5 * (1.0 + jnp.clip(jax.lax.erf(x * (1.0 / math.sqrt(2.0))), -1.0, 1.0))


@jax.custom_jvp
def _gelu_erf(x: Array) -> Array:
    return x * _phi_cdf(x)


@_gelu_erf.defjvp
def _gelu_erf_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    cdf = _phi_cdf(x)
    pdf = jnp.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))  # phi(x)
    return x * cdf, (cdf + x * pdf) * dx


def gelu(x: Array, *, approximate: bool = False) -> Array:
    """GELU, elementwise. Exact: x Phi(x) = x (1 + erf(x / sqrt 2)) / 2 (Hendrycks & Gimpel).

    The exact form equals ``jax.nn.gelu(x, approximate=False)`` to f32 rounding but is
    cheaper on CPU: jax.nn.gelu goes through erfc, and its derivative is rebuilt by
    autodiff from three separate erfc/exp passes; here Phi(x) + x phi(x) is one expression
    (experiments/bench: the ``mlp`` rows). For x < 0, 1 + erf cancels: the error is then
    absolute, below 1e-6 (a few ulp of 1), not relative (tests/test_perf.py): far in the
    negative tail it returns 0 where x Phi(x) is tiny but not 0.
    ``approximate=True`` is the tanh approximation (jax.nn.gelu's), unchanged.
    """
    if approximate:
        return jax.nn.gelu(x, approximate=True)
    return _gelu_erf(x)


class MLP(nn.Module):
    cfg: ModelConfig

    @nn.compact
    def __call__(self, x: Array, *, deterministic: bool) -> Array:
        cfg = self.cfg
        h = dense(cfg, 4 * cfg.n_embd, "c_fc")(x)
        h = gelu(h, approximate=cfg.gelu_approximate)
        h = dense(cfg, cfg.n_embd, "c_proj")(h)
        return nn.Dropout(cfg.dropout)(h, deterministic=deterministic)


class Block(nn.Module):
    cfg: ModelConfig

    @nn.compact
    def __call__(self, x: Array, positions: Array, *, deterministic: bool) -> Array:
        """x (B,T,E) -> (B,T,E): x + attn(LN(x)); x + mlp(LN(x))."""
        ln = lambda name: nn.LayerNorm(epsilon=1e-5, use_bias=self.cfg.use_bias, name=name)  # noqa: E731
        mixer = registry.get("mixer", self.cfg.mixer).build(self.cfg)  # None: attention
        if mixer is None:
            mixer = SelfAttention(self.cfg, name="attn")
        x = x + mixer(ln("ln_1")(x), positions, deterministic=deterministic)
        return x + MLP(self.cfg, name="mlp")(ln("ln_2")(x), deterministic=deterministic)


class GPT(nn.Module):
    """tokens (B,T) int32 -> logits (B,T,V) float32."""

    cfg: ModelConfig

    @nn.compact
    def __call__(
        self, tokens: Array, *, deterministic: bool = True, embed_offset: Array | None = None
    ) -> Array:
        """embed_offset (B,T,E), optional: added to the token embeddings. The causality audit
        differentiates through it, since tokens themselves are discrete. Every matmul inside
        runs at ``cfg.matmul_precision`` (read when traced)."""
        with jax.default_matmul_precision(MATMUL_PRECISIONS[self.cfg.matmul_precision]):
            cfg = self.cfg
            b, t = tokens.shape
            if t > cfg.block_size:
                raise ConfigError(f"sequence length {t} exceeds block_size {cfg.block_size}")
            positions = jnp.arange(t)
            wte = nn.Embed(
                cfg.vocab_size,
                cfg.n_embd,
                embedding_init=nn.initializers.normal(cfg.init_std),
                name="wte",
            )
            x = wte(tokens)  # (B,T,E)
            if embed_offset is not None:
                x = x + embed_offset
            pos = registry.get("pos_encoding", cfg.pos_encoding).build(cfg)
            if pos is not None:
                x = x + pos(positions)[None]  # (1,T,E)
            x = nn.Dropout(cfg.dropout)(x, deterministic=deterministic)
            for i in range(cfg.n_layer):
                x = Block(cfg, name=f"h_{i}")(x, positions, deterministic=deterministic)
            x = nn.LayerNorm(epsilon=1e-5, use_bias=cfg.use_bias, name="ln_f")(x)
            mm = matmul_dtype(cfg.compute_dtype)
            if cfg.tie_embeddings:
                if mm is not None:
                    return mm_einsum("BTE,VE->BTV", x, wte.embedding, mm)
                return wte.attend(x).astype(jnp.float32)
            head = dense(cfg, cfg.vocab_size, "lm_head", use_bias=False)
            return head(x).astype(jnp.float32)


def init_params(cfg: ModelConfig, key: Array) -> Params:
    """Parameters for ``GPT(cfg)`` from a PRNG key (evaluated at shape (1, block_size))."""
    tokens = jnp.zeros((1, cfg.block_size), jnp.int32)
    return GPT(cfg).init({"params": key}, tokens, deterministic=True)["params"]


def count_params(params: Params) -> int:
    return int(sum(x.size for x in jax.tree_util.tree_leaves(params)))


def cross_entropy(logits: Array, targets: Array) -> Array:
    """Mean next-token loss in nats. logits (B,T,V), targets (B,T) int."""
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.take_along_axis(logp, targets[..., None], axis=-1).mean()
