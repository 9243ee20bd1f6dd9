"""Masked dot-product attention with the plug points of the registry.

s_ij = q_i . k_j / sqrt(D) + bias_ij          (j <= i)
A    = dropout(softmax(s))
A_ij <- A_ij g_ij / max(sum_j' A_ij' g_ij', 1e-8)    (only if a key gate is present)
out  = A V
"""

from __future__ import annotations

import math
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp

from mope_jax.attention import registry
from mope_jax.attention.registry import AttnBias
from mope_jax.errors import ConfigError
from mope_jax.typing import Array

NEG_INF = -1e30  # finite, so fully masked rows cannot produce NaN

# model.compute_dtype -> the dtype matmul inputs are rounded to (None: float32 throughout).
# "bfloat16" is the usual mixed-precision recipe: parameters, the residual stream, LayerNorm,
# softmax and the loss stay float32; the inputs of the Dense layers, the attention einsums and
# the tied LM head are rounded to bf16 and multiplied with float32 accumulation and output.
COMPUTE_DTYPES = {"float32": None, "bfloat16": jnp.bfloat16}
registry.register_option("compute_dtype", tuple(COMPUTE_DTYPES), owner="the attention core")
# model.matmul_precision -> the precision JAX gives float32 matmuls inside the model (GPT wraps
# its whole forward pass in jax.default_matmul_precision): "highest" = full float32 (XLA:CPU
# computes exactly this whatever is asked), "tf32" = TensorFloat-32 on GPUs that have it.
MATMUL_PRECISIONS = {"highest": "highest", "tf32": "tensorfloat32"}
registry.register_option("matmul_precision", tuple(MATMUL_PRECISIONS), owner="the attention core")
# model.attn_layout: "bthd" (default) | "bhtd" (opt-in; heads next to the batch, faster on
# XLA:CPU, numbers differ at f32 rounding). See dot_product_scores.
ATTN_LAYOUTS = ("bthd", "bhtd")
registry.register_option("attn_layout", ATTN_LAYOUTS, owner="the attention core")
# model.attn_query_blocks: 1 (default) computes the full (T, T) score matrix and masks it;
# n > 1 (opt-in, faster, numbers differ at f32 rounding) splits the queries into n blocks and
# gives block i only the keys it can see. See causal_block_bounds.
registry.register_option("attn_query_blocks", None, owner="the attention core")
# model.attn_proj_bias: None (default) follows model.use_bias; True / False gives the q/k/v and
# output projections a bias or none, whatever use_bias says (paper C's GPT: False). See
# attention_projection.
registry.register_option("attn_proj_bias", (None, True, False), owner="the attention core")
# model.attn_out_dropout: True (default) applies the residual dropout after the output projection
# c_proj; False (paper C's GPT) leaves it out. See SelfAttention.
registry.register_option("attn_out_dropout", (True, False), owner="the attention core")


def matmul_dtype(name: str):
    """model.compute_dtype -> jnp dtype of matmul inputs, or None for float32."""
    try:
        return COMPUTE_DTYPES[name]
    except KeyError:
        raise ConfigError(
            f"model.compute_dtype={name!r}; use one of {sorted(COMPUTE_DTYPES)}"
        ) from None


def mm_einsum(spec: str, a: Array, b: Array, dtype=None) -> Array:
    """jnp.einsum; with dtype (bf16) the inputs are rounded to it and accumulated in float32."""
    if dtype is None:
        return jnp.einsum(spec, a, b)
    return jnp.einsum(spec, a.astype(dtype), b.astype(dtype), preferred_element_type=jnp.float32)


class Dense(nn.Module):
    """y = x W (+ b) over the last axis, computed on x flattened to 2-D (N, I).

    The same parameters ("kernel" (I, O) ~ N(0, init_std), "bias" (O,) zeros) and values as
    ``nn.Dense``. Flattening first matters for speed on XLA:CPU: the weight gradient is then
    the plain matrix product x^T dy of two row-major (N, .) arrays, which XLA's dot takes as
    it is; with x of rank 3 the contraction runs over two axes (B, T) and XLA materialises a
    transposed copy of dy (or x) for every layer (experiments/results/bench).
    """

    features: int
    use_bias: bool = True
    init_std: float = 0.02
    dtype: Any = None  # matmul input dtype (None: float32); see COMPUTE_DTYPES

    @nn.compact
    def __call__(self, x: Array) -> Array:
        """x (..., I) -> (..., O)."""
        kernel = self.param(
            "kernel", nn.initializers.normal(self.init_std), (x.shape[-1], self.features)
        )
        x2 = x.reshape(-1, x.shape[-1])  # (..., I) -> (N, I)
        if self.dtype is None:
            y = x2 @ kernel  # (N, O)
        else:
            y = jnp.dot(
                x2.astype(self.dtype), kernel.astype(self.dtype), preferred_element_type=jnp.float32
            )
        if self.use_bias:
            y = (
                y + self.param("bias", nn.initializers.zeros, (self.features,))[None, :]
            )  # (N,O) + (1,O)
        return y.reshape(*x.shape[:-1], self.features)  # (N, O) -> (..., O)


def dense(cfg, features: int, name: str, *, use_bias: bool | None = None) -> Dense:
    """The model's Dense layer: N(0, init_std) kernel, cfg.use_bias, cfg.compute_dtype matmul."""
    return Dense(
        features,
        cfg.use_bias if use_bias is None else use_bias,
        cfg.init_std,
        matmul_dtype(cfg.compute_dtype),
        name=name,
    )


def attention_projection(cfg, features: int, name: str) -> Dense:
    """A projection of the attention sublayer (q/k/v ``c_attn``, output ``c_proj``): the model's
    :func:`dense`, with a bias iff model.attn_proj_bias says so (None: iff model.use_bias)."""
    return dense(cfg, features, name, use_bias=cfg.attn_proj_bias)


def causal_mask(t: int, s: int | None = None) -> Array:
    """(T, S) bool, True where key j may be seen by query i: j <= i + (S - T)."""
    s = t if s is None else s
    return jnp.arange(s)[None, :] <= jnp.arange(t)[:, None] + (s - t)


def dot_product_scores(
    q: Array, k: Array, head_dim: int, dtype=None, layout: str = "bthd"
) -> Array:
    """q (B,T,H,D'), k (B,S,H,D') -> scores (B,H,T,S), divided by sqrt(head_dim).
    dtype: matmul input dtype (None: as given; bf16: rounded, float32 accumulation).
    layout "bhtd": the heads are moved next to the batch first. XLA:CPU's batched dot wants its
    batch dimensions leading, and one explicit transpose per operand costs less than the
    copies it inserts around "BTHD,BSHD->BHTS" (experiments/results/bench); the kernels then
    sum in another order, so the scores differ at float32 rounding."""
    if layout == "bhtd":
        q, k = q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3)  # (B,H,T,D'), (B,H,S,D')
        return mm_einsum("BHTD,BHSD->BHTS", q, k, dtype) / math.sqrt(head_dim)
    return mm_einsum("BTHD,BSHD->BHTS", q, k, dtype) / math.sqrt(head_dim)


def attend(
    scores: Array,
    v: Array,
    *,
    mask: Array,
    bias: AttnBias | None = None,
    dropout_rate: float = 0.0,
    dropout_rng: Array | None = None,
    deterministic: bool = True,
    dtype=None,
    layout: str = "bthd",
    keep: Array | None = None,
) -> Array:
    """scores (B,H,T,S), v (B,S,H,D), mask (T,S) -> out (B,T,H,D). dtype: matmul input dtype
    of A V (None: v's; bf16: rounded, float32 accumulation); layout as in
    :func:`dot_product_scores`. keep: the dropout mask (B,H,T,S) to use in place of one drawn
    from dropout_rng (the query blocks of :func:`blocked_attention` pass slices of one draw)."""
    if bias is not None and bias.add is not None:
        scores = scores + bias.add
    scores = jnp.where(mask, scores, NEG_INF)
    probs = jax.nn.softmax(scores.astype(jnp.float32), axis=-1)
    if not deterministic and dropout_rate > 0.0:
        if keep is None:
            keep = jax.random.bernoulli(dropout_rng, 1.0 - dropout_rate, probs.shape)
        probs = jnp.where(keep, probs / (1.0 - dropout_rate), 0.0)
    if bias is not None and bias.log_gate is not None:
        gated = probs * jnp.exp(bias.log_gate)
        probs = gated / jnp.maximum(gated.sum(-1, keepdims=True), 1e-8)
    if layout == "bhtd":
        v = v.transpose(0, 2, 1, 3)  # (B,H,S,D)
        if dtype is not None:
            out = mm_einsum("BHTS,BHSD->BHTD", probs, v, dtype)
        else:
            out = jnp.einsum("BHTS,BHSD->BHTD", probs.astype(v.dtype), v)
        return out.transpose(0, 2, 1, 3)  # (B,H,T,D) -> (B,T,H,D)
    if dtype is not None:
        return mm_einsum("BHTS,BSHD->BTHD", probs, v, dtype)
    return jnp.einsum("BHTS,BSHD->BTHD", probs.astype(v.dtype), v)


def causal_block_bounds(t: int, n_blocks: int) -> list[tuple[int, int]]:
    """Query rows [r0, r1) of each of n_blocks near-equal blocks of T rows (empty ones dropped).
    Under the causal mask, the queries r0..r1-1 see only the keys 0..r1-1, so block i needs a
    (r1 - r0, r1) slice of the score matrix: about (n + 1) / (2 n) of the T^2 entries in all."""
    bounds = [round(i * t / n_blocks) for i in range(n_blocks + 1)]
    return [(r0, r1) for r0, r1 in zip(bounds[:-1], bounds[1:]) if r1 > r0]


def _rows_keys(x: Array | None, r0: int, r1: int) -> Array | None:
    """x broadcastable to (B, H, T, S=T) -> its rows [r0, r1) and keys [0, r1) (axes of size 1
    stay broadcast)."""
    if x is None:
        return None
    rows = slice(r0, r1) if x.shape[-2] != 1 else slice(None)
    keys = slice(0, r1) if x.shape[-1] != 1 else slice(None)
    return x[..., rows, keys]


def blocked_attention(
    q: Array | None,
    k: Array | None,
    v: Array,
    *,
    n_blocks: int,
    head_dim: int,
    scores: Array | None = None,
    bias: AttnBias | None = None,
    dropout_rate: float = 0.0,
    dropout_rng: Array | None = None,
    deterministic: bool = True,
    dtype=None,
    layout: str = "bthd",
) -> Array:
    """Causal attention computed per query block (model.attn_query_blocks = n_blocks > 1).

    q, k, v (B,T,H,D) (or ``scores`` (B,H,T,T) when a position variant computed them) ->
    out (B,T,H,D). Query block [r0, r1) is scored against keys [0, r1) only: the entries the
    causal mask would zero are never computed. The mask, the bias, the gate and the dropout
    mask (drawn once at (B,H,T,T) from dropout_rng, then sliced: the same bits as
    :func:`attend`'s) are those of the full computation restricted to the block, and the
    masked entries contribute exactly 0 to the full softmax and gate sums, so the result is
    the full computation's up to float32 rounding (shorter sums, another kernel order).
    """
    t = v.shape[1]
    keep = None
    if not deterministic and dropout_rate > 0.0:
        keep = jax.random.bernoulli(dropout_rng, 1.0 - dropout_rate, (v.shape[0], v.shape[2], t, t))
    outs = []
    for r0, r1 in causal_block_bounds(t, n_blocks):
        if scores is None:
            s = dot_product_scores(q[:, r0:r1], k[:, :r1], head_dim, dtype, layout)
        else:
            s = scores[:, :, r0:r1, :r1]
        block_bias = None
        if bias is not None:
            block_bias = AttnBias(
                add=_rows_keys(bias.add, r0, r1), log_gate=_rows_keys(bias.log_gate, r0, r1)
            )
        outs.append(
            attend(
                s,
                v[:, :r1],
                mask=causal_mask(r1 - r0, r1),
                bias=block_bias,
                dropout_rate=dropout_rate,
                deterministic=deterministic,
                dtype=dtype,
                layout=layout,
                keep=None if keep is None else keep[:, :, r0:r1, :r1],
            )
        )
    return outs[0] if len(outs) == 1 else jnp.concatenate(outs, axis=1)


class SelfAttention(nn.Module):
    """Causal multi-head self-attention with the registry's plug points."""

    cfg: "object"  # ModelConfig (kept untyped to keep imports one-way)

    @nn.compact
    def __call__(self, xn: Array, positions: Array, *, deterministic: bool) -> Array:
        """xn (B,T,E) = LN(x), positions (T,) -> (B,T,E)."""
        cfg = self.cfg
        b, t, e = xn.shape
        h, d = cfg.n_head, cfg.head_dim
        mm = matmul_dtype(cfg.compute_dtype)
        qkv = attention_projection(cfg, 3 * e, "c_attn")(xn)  # (B,T,3E)
        q, k, v = jnp.split(qkv, 3, axis=-1)
        q, k, v = (a.reshape(b, t, h, d) for a in (q, k, v))  # (B,T,H,D)

        qk_filter = registry.get("qk_filter", cfg.qk_filter).build(cfg)
        if qk_filter is not None:
            q, k = qk_filter(q, k)
        # q, k before the position transform, for analyses (analysis/freq_energy.py); a no-op
        # unless apply() is called with mutable=["intermediates"].
        self.sow("intermediates", "q", q)
        self.sow("intermediates", "k", k)
        qk_position = registry.get("qk_position", cfg.qk_position).build(cfg)
        scores = None
        if qk_position is not None:
            out = qk_position(q, k, positions)
            if isinstance(out, tuple):
                q, k = out
            else:
                scores = out  # the variant computed (B,H,T,S) scores itself
        if scores is None and cfg.attn_query_blocks == 1:
            scores = dot_product_scores(q, k, d, mm, cfg.attn_layout)
        attn_bias = registry.get("attn_bias", cfg.attn_bias).build(cfg)
        bias = attn_bias(xn, positions, deterministic) if attn_bias is not None else None

        needs_rng = not deterministic and cfg.dropout > 0.0
        # traced in the order of every earlier record's graph: mask, dropout key, attention
        mask = causal_mask(t) if cfg.attn_query_blocks == 1 else None
        common = dict(
            bias=bias,
            dropout_rate=cfg.dropout,
            dropout_rng=self.make_rng("dropout") if needs_rng else None,
            deterministic=deterministic,
            dtype=mm,
            layout=cfg.attn_layout,
        )
        if cfg.attn_query_blocks > 1:
            y = blocked_attention(
                q, k, v, n_blocks=cfg.attn_query_blocks, head_dim=d, scores=scores, **common
            )
        else:
            y = attend(scores, v, mask=mask, **common)
        y = y.reshape(b, t, e)  # (B,T,H,D) -> (B,T,E)
        y = attention_projection(cfg, e, "c_proj")(y)
        if not cfg.attn_out_dropout:
            return y  # paper C's GPT: no residual dropout after the output projection
        return nn.Dropout(cfg.dropout)(y, deterministic=deterministic)
