"""Paper A's ``analyze`` hook: each trained EGA model re-evaluated with the other gate.

The two gates of a family share their parameters (only the z-norm differs), so each trained EGA
model is evaluated again with the other z-norm on the very batches of its final evaluation.
"""

from __future__ import annotations

OTHER_GATE = {"ega": "ega-prefix", "ega-prefix": "ega"}


def analyze(cfg, state, corpus) -> dict:
    """For an EGA row: its final val loss with its own gate (recomputed: equals the record's
    ``final_val_loss``) and with the other gate, on the same batches (``Trainer.evaluate`` of
    the final state). {} for the other rows."""
    import dataclasses

    import jax.numpy as jnp

    from mope_jax.train import compiled_evaluate

    other = OTHER_GATE.get(cfg.model.attn_bias)
    if other is None:
        return {}
    swapped = dataclasses.replace(
        cfg,
        model=dataclasses.replace(cfg.model, attn_bias=other),
        train=dataclasses.replace(cfg.train, allow_noncausal=True),
    )
    data = jnp.asarray(corpus.train), jnp.asarray(corpus.val)
    own = compiled_evaluate(cfg)(state, *data)["val"]  # compiled once per row, not per seed
    alt = compiled_evaluate(swapped)(state, *data)["val"]
    return {
        "gate": cfg.model.attn_bias,
        "other_gate": other,
        "val_loss_own_gate": float(own),
        "val_loss_other_gate": float(alt),
    }
