"""Paper C's scales: the recipe every scale carries (``RECIPE_C``), the authors' GPT details
(``AUTHORS_C``) and ours at mid (``NO_BIAS_C``), the model size and schedule of each scale
(``SCALES``), and ``build_scale``, which turns one of them into the campaign's ``Scale``."""

from __future__ import annotations

from experiments._scales import FAST_ATTENTION, MID
from experiments._scales import for_a_loan as FOR_A_LOAN
from experiments.fourierqk.rows import MID_ROWS, MORLET_SCALE_ROWS
from mope_jax.campaign import Scale

# Paper C's recipe on top of every scale: untied LM head, weight decay on 2-D weights only.
RECIPE_C = dict(model=dict(tie_embeddings=False), train=dict(decay_group="2d"))
# ... and at mid and reference also the authors' smaller departures (DESIGN.md section 5).
# The authors' paper-C GPT: only the q/k/v and attention output projections have no bias
# (LayerNorm and MLP keep theirs), and there is no dropout after the attention output
# projection (attention-probability, MLP-output and embedding dropout stay). The reference
# scale and the reference-c preset (mope_jax/presets.py).
AUTHORS_C = dict(use_bias=True, attn_proj_bias=False, attn_out_dropout=False)
# Ours at mid: no biases anywhere (the committed mid records; kept so they stay valid). The
# authors' recipe (AUTHORS_C) differs: their LayerNorms and MLP have biases, and they have no
# dropout after the attention output projection (mid has dropout 0.1 there).
NO_BIAS_C = dict(use_bias=False)
MORLET_SCALE_DECAY = ("train.weight_decay=0.2",)

# "cpu" matches paper A's cpu scale (experiments/paper_a/) so the baselines are comparable:
# T=64, 2 layers x 4 heads, E=64, 300 steps of 16 windows (~0.3 epoch), no dropout. It is
# tiny because 9 rows x 3 seeds must fit ~12 minutes of a 2-core CPU shared with other jobs.
SCALES = {
    "smoke": dict(
        model=dict(block_size=32, n_layer=1, n_head=2, n_embd=32, dropout=0.0, kernel_len=16),
        train=dict(
            batch_size=8, max_steps=20, lr=2e-3, warmup_steps=5, eval_batches=2, eval_interval=10
        ),
        seeds=1,
        num_windows=8,
    ),
    "cpu": dict(
        model=dict(
            block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0, conv_impl="toeplitz"
        ),
        train=dict(
            batch_size=16,
            max_steps=300,
            lr=2e-3,
            warmup_steps=20,
            eval_batches=20,
            eval_interval=100,
        ),
        seeds=3,
        num_windows=128,
    ),
    # the mid scale (experiments/paper_a/'s model and schedule), with the rest of the
    # authors' paper-C recipe (DESIGN.md section 5, "Small") as we first read it: no biases
    # anywhere (NO_BIAS_C, not quite the authors' AUTHORS_C: see there), and weight decay 0.2
    # for the Morlet-scale rows (MORLET_SCALE_ROWS). smoke and cpu keep the biases and decay
    # 0.1 their committed records were trained with.
    # with the f32 attention opt-ins (experiments/_scales.py FAST_ATTENTION)
    "mid": dict(
        model=MID["model"] | NO_BIAS_C | FAST_ATTENTION,
        train=MID["train"],
        seeds=3,
        num_windows=256,
    ),
    # ModelConfig()/TrainConfig() + paper C's recipe = the reference-c preset
    # at the authors' precision: float32 (paper C's scripts use no autocast; a T4 has no TF32)
    "reference": dict(
        model=dict(AUTHORS_C),
        train=FOR_A_LOAN(dict(warmup_steps=200, eval_batches=200)),
        seeds=3,
        num_windows=256,
    ),
    # the same through a GPU's TF32 units (~7x the float32 rate on an H100): its own scale, never
    # pooled with `reference` unless a rule committed first says the difference is negligible
    "reference-tf32": dict(
        model=dict(AUTHORS_C, matmul_precision="tf32"),
        train=FOR_A_LOAN(dict(warmup_steps=200, eval_batches=200)),
        seeds=3,
        num_windows=256,
    ),
}


def build_scale(name: str) -> Scale:
    """``SCALES[name]`` with paper C's recipe, as the campaign's ``Scale``: smoke and cpu
    checkpoint and log once (as the single-script version did); mid and the reference scales
    give the Morlet-scale rows weight decay 0.2; mid plans ``MID_ROWS``, the others every row."""
    s = SCALES[name]
    train = RECIPE_C["train"] | s["train"]
    if name in ("smoke", "cpu"):  # checkpoint and log once, as the single-script version
        train |= dict(checkpoint_interval=train["max_steps"], log_interval=train["max_steps"])
    authors = name in ("mid", "reference", "reference-tf32")
    return Scale(
        name,
        RECIPE_C["model"] | s["model"],
        train,
        s["seeds"],
        row_overrides={r: MORLET_SCALE_DECAY for r in MORLET_SCALE_ROWS} if authors else None,
        rows=MID_ROWS if name == "mid" else None,
    )
