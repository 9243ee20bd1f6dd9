"""Paper A's rows, scales and comparisons: the declarations ``EXPERIMENT`` is built from (and
the pairs the earlier single-script table renders)."""

from __future__ import annotations

from experiments import _scales
from mope_jax.campaign import Comparison

ROWS = [  # (variant, paper's label, paper's val loss or None)
    ("a-baseline", "learned PE (baseline)", 1.474),
    ("a-sincos", "sin/cos", 1.5863),
    ("a-rope", "RoPE (+ learned table)", 1.4637),
    ("a-mope", "MOPE alone", 1.5060),
    ("a-ega1", "EGA-1", 1.3821),
    ("a-ega-morlet", "EGA-MORLET", 1.3550),
    ("a-ega1-causal", "EGA-1, causal prefix gate (ours)", None),
    ("a-ega-morlet-causal", "EGA-MORLET, causal prefix gate (ours)", None),
    ("a-morlet-rope", "Morlet-RoPE + learned table (ours)", None),
    ("a-mope-center", "MOPE, learnable centres (ours)", None),
]

# Scales. "cpu" is tiny on purpose: 10 variants x 3 seeds must fit ~10 minutes of a 2-core
# CPU shared with other jobs; no dropout (300 steps do not overfit). smoke and cpu evaluate
# (and checkpoint) once, at the end, as the single-script table did.
SCALES = {
    "smoke": dict(
        model=dict(block_size=32, n_layer=1, n_head=2, n_embd=32, dropout=0.0),
        train=dict(batch_size=8, max_steps=30, lr=2e-3, warmup_steps=5, eval_batches=4),
        seeds=2,
    ),
    "cpu": dict(
        model=dict(block_size=64, n_layer=2, n_head=4, n_embd=64, dropout=0.0),
        train=dict(batch_size=16, max_steps=300, lr=2e-3, warmup_steps=30, eval_batches=20),
        seeds=3,
    ),
}


# "mid": experiments/_scales.py (shared with paper C, the omega*sigma control and paper B's
# context extension).
MID = _scales.MID


def _once_at_the_end(train: dict) -> dict:
    n = train["max_steps"]
    return train | dict(eval_interval=n, checkpoint_interval=n, log_interval=n)


# The rows behind a headline verdict (MOPE vs baseline, EGA-MORLET vs MOPE, the paper's gate vs
# the causal one) get 5 seeds at mid; the others 3.
HEADLINE_ROWS = ("a-baseline", "a-mope", "a-ega-morlet", "a-ega-morlet-causal")

EGA_PAIRS = [  # (with gate, without gate, gate)
    ("a-ega1", "a-baseline", "paper's full z-norm (NON-CAUSAL)"),
    ("a-ega1-causal", "a-baseline", "causal prefix z-norm"),
    ("a-ega-morlet", "a-mope", "paper's full z-norm (NON-CAUSAL)"),
    ("a-ega-morlet-causal", "a-mope", "causal prefix z-norm"),
]

OTHER_PAIRS = [
    ("a-mope", "a-baseline", "MOPE in place of the learned table"),
    ("a-morlet-rope", "a-rope", "Gaussian envelope on RoPE"),
    ("a-mope-center", "a-mope", "learnable centres b0"),
]


# The paper-gate minus causal-gate difference, and the EGA x MOPE interaction (the gain of the
# gate on MOPE minus its gain on the learned table), each with its interval
GATE_AND_INTERACTION = (
    Comparison("a-ega1", "a-ega1-causal", "paper's gate minus causal gate, learned table"),
    Comparison("a-ega-morlet", "a-ega-morlet-causal", "paper's gate minus causal gate, MOPE"),
    Comparison(
        "a-ega-morlet", "a-mope", "EGA x MOPE interaction, paper's gate", c="a-ega1", d="a-baseline"
    ),
    Comparison(
        "a-ega-morlet-causal",
        "a-mope",
        "EGA x MOPE interaction, causal gate",
        c="a-ega1-causal",
        d="a-baseline",
    ),
)
