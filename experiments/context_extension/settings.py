"""The settings every part of the context-extension study reads: the extension methods and
lengths, the problem counts per scale, the training lengths of the tasks and the fine-tune
rule (rows, measurement, tables, judges and figures share them)."""

from __future__ import annotations

from experiments import _scales

# dynamic_ntk is not listed: every evaluation here runs a full window of length L' = s L, where
# dynamic NTK's s_eff = L'/L = s makes it exactly "ntk" (it differs only in token-by-token decoding
# with a growing length; tests/test_rope_scaling.py checks both formulas).
METHODS = ("none", "pi", "ntk", "yarn")
FACTORS = (1, 2, 4)
MAX_NEW = 96
EVAL_BATCH = 16  # loss windows and decoding batches share one compiled forward per (method, length)
OPS = ("+",)

# per scale: the seeds, the training steps (language, arithmetic) and the greedy problems
SCALES = {
    "smoke": dict(seeds=(0,), steps=(20, 20), problems=16),
    "cpu": dict(seeds=(0, 1, 2), steps=(500, 800), problems=32),
    "mid": dict(seeds=(0, 1, 2), steps=(2000, 2000), problems=32),
}
RETRIEVAL_L = 128  # the retrieval row's training length (examples of exactly L characters)
RETRIEVAL_PROBLEMS = {"smoke": 32, "cpu": 500, "mid": 500}  # per (method, s): 5 points at 500
# arithmetic, teacher-forced (igsm.forced_accuracy: one forward pass per batch): per (method, s)
FORCED_PROBLEMS = {"smoke": 32, "cpu": 500, "mid": 500}

# mid (experiments/_scales.py): T = 256, 4 layers x 128, 4 heads, dropout 0.1, batch 16, lr 1e-3
# with 6% warmup and cosine; every task trained at L = 256.
MID_MODEL = dict(_scales.MID["model"]) | _scales.FAST_ATTENTION  # + the f32 attention opt-ins
MID_L = MID_MODEL["block_size"]
MID_TRAIN = dict(_scales.MID["train"])

# Fine-tunes at the new length: each seed's final parameters of ``language`` / ``arithmetic``
# trained on, at FT_FACTOR x L, under rule "none" (plain extrapolation) or "pi"; AdamW lr 1e-3,
# 10 warmup steps, cosine to 0, fresh optimiser state, half the batch (the same tokens per
# step). Not PI's protocol (Chen et al. 2023 fine-tune briefly at a low rate): at mid, lr 1e-3
# is the pretraining rate and FT_STEPS the half of its tokens (_ft_budget states it).
FT_FACTOR = 2
FT_RULES = ("none", "pi")
FT_STEPS = {"smoke": 10, "cpu": 200, "mid": 1000}
BASES = {"language": (64, 32), "arithmetic": (128, 16), "retrieval": (RETRIEVAL_L, 16)}


def bases(scale: str) -> dict[str, tuple[int, int]]:
    """{task: (training length L, batch size)} at a scale (BASES below mid)."""
    return {t: (MID_L, 16) for t in BASES} if scale == "mid" else BASES


def ft_name(base: str, rule: str) -> str:
    return f"{base}-ft-{rule}"
