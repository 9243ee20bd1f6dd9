"""Scales shared by several campaigns (one definition, imported where used)."""

from __future__ import annotations

# The two f32 attention opt-ins (attention/core.py): heads next to the batch, and
# the causal attention in 4 query blocks. At mid on 2 CPU cores: 17,896 vs 14,544 tokens/s for
# the learned baseline (experiments/results/bench/bench_quick.md, 2026-12-01), +15-30% for
# fourier-qk, a-mope and a-ega-m in a scratch A/B beside other jobs (commit message). Same
# math, but float32 rounding differs from the defaults, so a campaign uses them only at scales
# whose records were all made with them: fourierqk, omega_sigma_control and context_extension
# at mid. paper_a's mid keeps the defaults its first records used (and is the comparison those
# campaigns' rows are never paired with).
FAST_ATTENTION = dict(attn_layout="bhtd", attn_query_blocks=4)

# "mid": the papers' context T=256 and dropout 0.1, 4 layers x 4 heads of width 128,
# 2000 steps x 16 windows (8.2M tokens, ~8 epochs of the train split), the papers' schedule
# shape (linear warmup over 6% of the steps, as 300 of 5000, then cosine to 0) at lr 1e-3 for
# the smaller width (nanoGPT's character model uses 1e-3 at width 128 and 384). ~0.8M
# parameters; evaluated every 500 steps on 50 random val batches. Shared by paper A
# (experiments/paper_a/), paper C (experiments/fourierqk/, which adds its recipe), the
# omega*sigma control and paper B's context extension.
MID = dict(
    model=dict(block_size=256, n_layer=4, n_head=4, n_embd=128, dropout=0.1),
    train=dict(
        batch_size=16,
        max_steps=2000,
        lr=1e-3,
        warmup_steps=120,
        eval_batches=50,
        eval_interval=500,
        checkpoint_interval=500,
        log_interval=100,
    ),
)


def for_a_loan(train: dict) -> dict:
    """``train`` fields for a scale trained on a lent accelerator: one save, at the end
    (``checkpoint_interval`` = the run's steps), evaluations as before (every ``eval_interval``,
    default 500: the curve and the convergence check keep their points). How often a run saves
    changes no number of it (``mope_jax.config.BOOKKEEPING_FIELDS``)."""
    from mope_jax.config import TrainConfig

    steps = train.get("max_steps", TrainConfig.max_steps)
    return train | dict(checkpoint_interval=steps)
