"""Kernel-level tasks: the f32 matmul peak (``peak``, MFU's denominator), one MLP
(``mlp``: GELU implementations), one attention (``attention``: formulations and dropout
lowerings) and the spectral filters against the attention scores vs T (``spectral``), each
forward + backward."""

from __future__ import annotations

from experiments.bench.measure_timing import best_time


def task_peak(n: int = 2048, reps: int = 5) -> dict:
    """f32 matmul peak: a large jnp.dot (n x n) @ (n x n), best of reps."""
    import jax
    import jax.numpy as jnp

    key_a, key_b = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(key_a, (n, n), jnp.float32)
    b = jax.random.normal(key_b, (n, n), jnp.float32)
    dot = jax.jit(jnp.dot)
    jax.block_until_ready(dot(a, b))
    s, times = best_time(lambda: jax.block_until_ready(dot(a, b)), reps)
    return {"n": n, "seconds": s, "gflops": 2 * n**3 / s / 1e9, "all_seconds": times}


def task_mlp(n_tokens: int, n_embd: int, reps: int) -> dict:
    """Where the time goes: one MLP (E -> 4E -> E) forward + backward, GELU implementations
    compared with the matmuls alone (identity in place of GELU)."""
    import jax
    import jax.numpy as jnp

    from mope_jax.model import gelu

    key_x, key_1, key_2 = jax.random.split(jax.random.PRNGKey(0), 3)
    x = jax.random.normal(key_x, (n_tokens, n_embd))
    w1 = jax.random.normal(key_1, (n_embd, 4 * n_embd)) * 0.05
    w2 = jax.random.normal(key_2, (4 * n_embd, n_embd)) * 0.05
    acts = {
        "jax.nn.gelu exact (erfc)": lambda h: jax.nn.gelu(h, approximate=False),
        "mope_jax gelu exact (erf, fused jvp)": lambda h: gelu(h, approximate=False),
        "tanh approximation": lambda h: jax.nn.gelu(h, approximate=True),
        "identity (matmuls only)": lambda h: h,
    }
    flops = 3 * 2 * 2 * n_tokens * n_embd * 4 * n_embd
    out = {}
    for name, act in acts.items():

        def loss(x, w1, w2, act=act):
            return jnp.sum((act(x @ w1) @ w2) * x)

        g = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
        jax.block_until_ready(g(x, w1, w2))
        s, _ = best_time(lambda: jax.block_until_ready(g(x, w1, w2)), reps)
        out[name] = {"ms": s * 1e3, "gflops": flops / s / 1e9}
    return {"n_tokens": n_tokens, "n_embd": n_embd, "results": out}


def task_attention(batch: int, heads: int, t: int, head_dim: int, reps: int) -> dict:
    """One masked attention forward + backward (scores given): dropout off, threefry
    masks in JAX's rolled and the unrolled lowering (mope_jax.perf), and
    jax.nn.dot_product_attention."""
    import jax
    import jax.numpy as jnp

    from mope_jax.attention.core import attend, causal_mask, dot_product_scores
    from mope_jax.perf import fast_cpu_threefry

    key_q, key_k, key_v, key_d = jax.random.split(jax.random.PRNGKey(0), 4)
    q, k, v = (
        jax.random.normal(kk, (batch, t, heads, head_dim)) for kk in (key_q, key_k, key_v)
    )  # (B,T,H,D)
    mask = causal_mask(t)

    def ours(q, k, v, det, layout="bthd"):
        return attend(
            dot_product_scores(q, k, head_dim, layout=layout),
            v,
            mask=mask,
            dropout_rate=0.1,
            dropout_rng=key_d,
            deterministic=det,
            layout=layout,
        )

    cases = {
        "einsum attention, no dropout": lambda q, k, v: ours(q, k, v, True),
        "einsum attention, attn_layout=bhtd, no dropout": lambda q, k, v: ours(
            q, k, v, True, "bhtd"
        ),
        (
            "einsum attention, dropout 0.1 (threefry masks, JAX's rolled CPU lowering)"
        ): lambda q, k, v: ours(q, k, v, False),
        "einsum attention, dropout 0.1 (threefry masks, unrolled: the default)": lambda q, k, v: (
            ours(q, k, v, False)
        ),
        "jax.nn.dot_product_attention, no dropout": lambda q, k, v: jax.nn.dot_product_attention(
            q, k, v, is_causal=True
        ),
    }
    out = {}
    grads = {}
    for name, f in cases.items():
        fast_cpu_threefry("rolled" not in name)  # before the (fresh) jit below is lowered
        g = jax.jit(jax.grad(lambda q, k, v, f=f: jnp.sum(f(q, k, v) ** 2), argnums=(0, 1, 2)))
        grads[name] = jax.block_until_ready(g(q, k, v))
        sec, _ = best_time(lambda g=g: jax.block_until_ready(g(q, k, v)), reps)
        out[name] = {"ms": sec * 1e3}
    before = grads["einsum attention, no dropout"]
    now = grads["einsum attention, attn_layout=bhtd, no dropout"]
    same = all(bool(jnp.array_equal(a, b)) for a, b in zip(before, now))
    return {
        "batch": batch,
        "heads": heads,
        "t": t,
        "head_dim": head_dim,
        "results": out,
        "layout_gradients_bitwise_equal": same,
    }


def task_spectral(
    lengths: list[int],
    batch: int,
    heads: int,
    head_dim: int,
    reps: int,
    toeplitz_max_t: int = 1 << 30,
) -> dict:
    """Forward + backward seconds of the causal filters of one (B,T,H,D) tensor and of the
    attention scores, per T (pure functions of mope_jax/attention/spectral.py). The Toeplitz
    form builds an (H,T,T) matrix; above ``toeplitz_max_t`` it is not measured (None)."""
    import jax
    import jax.numpy as jnp

    from mope_jax.attention.core import dot_product_scores
    from mope_jax.attention.spectral import causal_conv_fft, causal_conv_toeplitz, kernel_taps

    fns = {
        "fft_conv": lambda u, h: causal_conv_fft(u, h),
        "toeplitz_conv": lambda u, h: causal_conv_toeplitz(u, h),
        "attention_scores": lambda u, h: dot_product_scores(u, u, head_dim),
    }
    out = {}
    for t in lengths:
        key = jax.random.PRNGKey(t)
        u = jax.random.normal(key, (batch, t, heads, head_dim))
        taps = kernel_taps("gauss", jnp.full((heads,), 8.0), min(128, t))[0]  # (H,K)
        row = {}
        for name, f in fns.items():
            if name == "toeplitz_conv" and t > toeplitz_max_t:
                row[name] = None
                continue
            g = jax.jit(jax.grad(lambda u, h, f=f: jnp.sum(f(u, h) ** 2), argnums=(0, 1)))
            jax.block_until_ready(g(u, taps))
            s, _ = best_time(lambda: jax.block_until_ready(g(u, taps)), reps)
            row[name] = s
        out[str(t)] = row
    return {
        "batch": batch,
        "heads": heads,
        "head_dim": head_dim,
        "kernel_len": 128,
        "seconds": out,
        "toeplitz_max_t": toeplitz_max_t,
    }
