"""The whole GPT's parameter tree and logits at the ModelConfig defaults, as frozen BEFORE
``model.attn_proj_bias`` and ``model.attn_out_dropout`` were added.

``gpt_pre_issue40.npz`` was written by this module run with the pre-change package first on
the path (OLD holds ``git archive 5d864fa mope_jax`` unpacked, before the new fields existed;
run from outside the repository so that its own package is not imported instead):

    cd /tmp && PYTHONPATH=OLD python REPO/tests/reference/gpt_pre_issue40.py OUT.npz

tests/test_fidelity_round2.py recomputes ``outputs()`` with today's package and compares: the
defaults of the new fields must keep the earlier computation (campaign.config_diff counts a
record without them as made with today's defaults). Never regenerate it to make a test pass.
"""

from __future__ import annotations

import sys

import numpy as np

# (use_bias, tie_embeddings): the four baseline models
CASES = ((True, True), (True, False), (False, True), (False, False))


def key(bias: bool, tied: bool) -> str:
    return f"bias{int(bias)}_tied{int(tied)}"


def outputs() -> dict[str, np.ndarray]:
    """Per case: the sorted parameter paths, eval logits and training logits (dropout 0.1, one
    fixed dropout key), at a tiny size with parameters moved off their init (biases nonzero)."""
    import jax
    import jax.numpy as jnp

    from mope_jax.config import ModelConfig
    from mope_jax.model import GPT, init_params

    out: dict[str, np.ndarray] = {}
    x = jnp.asarray(np.random.default_rng(1).integers(0, 11, (2, 8)), jnp.int32)  # (B,T)
    for bias, tied in CASES:
        cfg = ModelConfig(
            vocab_size=11,
            block_size=8,
            n_layer=2,
            n_head=2,
            n_embd=16,
            dropout=0.1,
            use_bias=bias,
            tie_embeddings=tied,
        )
        params = init_params(cfg, jax.random.PRNGKey(0))
        params = jax.tree_util.tree_map(lambda p: p * 10.0 if p.ndim == 2 else p + 0.1, params)
        leaves = jax.tree_util.tree_flatten_with_path(params)[0]
        paths = sorted(f"{jax.tree_util.keystr(k)}{tuple(v.shape)}" for k, v in leaves)
        model = GPT(cfg)
        det = model.apply({"params": params}, x, deterministic=True)
        train = model.apply(
            {"params": params}, x, deterministic=False, rngs={"dropout": jax.random.PRNGKey(5)}
        )
        k = key(bias, tied)
        out[f"{k}_paths"] = np.asarray(paths)
        out[f"{k}_eval"] = np.asarray(det)
        out[f"{k}_train"] = np.asarray(train)
    return out


if __name__ == "__main__":
    np.savez_compressed(sys.argv[1], **outputs())
