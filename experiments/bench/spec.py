"""What the benchmarks measure: sizes, the compared configurations and the reference rows
(read by experiments/bench/run.py, which runs them, and report.py, which renders them)."""

from __future__ import annotations

from pathlib import Path

from experiments._scales import FAST_ATTENTION

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "experiments" / "results" / "bench"
DP2 = "--xla_force_host_platform_device_count=2"
PROFILE = "--xla_cpu_enable_xprof_traceme=true"

# Sizes. quick fits in ~4 minutes on 2 cores; full is the same protocol, longer.
SIZES = {
    "quick": dict(
        ref_steps=1,
        ref_reps=2,
        torch_steps=1,
        torch_reps=2,
        cfg_steps=8,
        cfg_reps=3,
        cfg_rounds=2,
        var_overrides=[
            "model.n_layer=1",
            "model.n_embd=32",
            "model.n_head=2",
            "model.block_size=32",
            "train.batch_size=8",
        ],
        var_steps=2,
        var_reps=2,
        sweep_overrides=["model.n_layer=2"],
        sweep_steps=3,
        sweep_reps=2,
        sweep_strategies=["map", "vmap"],
        spec_lengths=[128, 256, 512, 1024, 2048, 4096],
        spec_batch=1,
        spec_reps=2,
        spec_toeplitz_max=2048,
        mlp_tokens=4096,
        mlp_reps=3,
    ),
    "full": dict(
        ref_steps=5,
        ref_reps=3,
        torch_steps=5,
        torch_reps=3,
        cfg_steps=10,
        cfg_reps=3,
        cfg_rounds=3,
        var_overrides=["train.batch_size=8"],
        var_steps=5,
        var_reps=3,
        sweep_overrides=[],
        sweep_steps=10,
        sweep_reps=3,
        sweep_strategies=["sequential", "map", "vmap"],
        spec_lengths=[128, 256, 512, 1024, 2048, 4096],
        spec_batch=4,
        spec_reps=5,
        spec_toeplitz_max=4096,
        mlp_tokens=4096,
        mlp_reps=5,
    ),
}
REF = ["train.batch_size=16"]  # the reference model at batch 16
# The sizes we train, each timed in JAX (float32, and the opt-in bf16 matmuls) next
# to the PyTorch reference of the same architecture and optimiser. "reference-b16" reuses the
# reference section's rows ("jax/1dev", "torch", "torch/1t").
NANOGPT_CHAR = [
    "model.block_size=128",
    "model.n_layer=4",
    "model.n_head=4",
    "model.n_embd=128",
    "model.dropout=0",
    "model.use_bias=false",
    "train.batch_size=32",
    "train.max_steps=1000",
    "train.lr=1e-3",
    "train.min_lr=1e-4",
    "train.warmup_steps=100",
    "train.decay_group=2d",
    "train.beta2=0.99",
]
MID = [
    "model.block_size=256",
    "model.n_layer=4",
    "model.n_head=4",
    "model.n_embd=128",
    "model.dropout=0.1",
    "train.batch_size=16",
]
CONFIGS = {
    "reference-b16": ("reference size: 6 x 256, T=256, 8 heads, batch 16, dropout 0.1", REF),
    "nanogpt-char": (
        "nanoGPT's character config: 4 x 128, T=128, 4 heads, batch 32, dropout 0, no biases",
        NANOGPT_CHAR,
    ),
    "mid": ("mid scale: 4 x 128, T=256, 4 heads, batch 16, dropout 0.1", MID),
}
CAUSAL_FILTER = "causal-gauss"
# the fastest f32 opt-ins together, as the mid campaigns use them
# (experiments/_scales.py FAST_ATTENTION: bhtd layout, 4 causal query blocks)
FAST_OPT_INS = [f"model.{k}={v}" for k, v in FAST_ATTENTION.items()]
PROFILE_SECTION = (
    "where the time goes: profiles of one reference step (batch 2) and one nanoGPT-char step",
    PROFILE,
    [
        {"id": "profile", "task": "profile", "args": {"overrides": ["train.batch_size=2"]}},
        {"id": "profile/nanogpt-char", "task": "profile", "args": {"overrides": NANOGPT_CHAR}},
    ],
)
PROFILES = {"profile": "the reference model", "profile/nanogpt-char": "nanoGPT's character config"}


# reference-model rows: id -> label; "same numerics" rows compute what the defaults compute
REF_ROWS = {
    "jax/1dev/rolled": "JAX, 1 device, JAX's own CPU threefry lowering (as before issue 8)",
    "jax/1dev": "JAX, 1 device, defaults (unrolled threefry, fused GELU)",
    "jax/dp2": "JAX, 2 host devices, batch sharded (same numerics)",
    "torch": "PyTorch eager, F.scaled_dot_product_attention, 2 threads",
    "torch/1t": "PyTorch eager, F.scaled_dot_product_attention, 1 thread",
}
# in quick mode the variants run in this order until the time budget ends: one of each family first
VARIANT_PRIORITY = (
    "learned",
    "rope",
    "alibi",
    "a-mope",
    "a-morlet-rope",
    "a-ega1-causal",
    "a-ega1",
    "causal-gauss",
    "fourier-qk",
    "fnet",
    "xcorr-qk",
)
