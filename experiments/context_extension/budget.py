"""The fine-tunes' budget against their base row's pretraining (steps, learning rate, share of
the tokens), read from the records' configs or the rows' declared ones, and its wording: the
fine-tune section, the claims' evidence and the forest name the fine-tune for what it is (not
PI's brief low-rate one)."""

from __future__ import annotations

import numpy as np

from experiments.context_extension.settings import ft_name
from mope_jax.campaign import Experiment


def _ft_budget(exp: Experiment, scale: str, recs: dict, task: str) -> dict | None:
    """The fine-tune of ``task`` at ``scale`` against its base row's pretraining: {"steps",
    "lr", "base_lr", "share" (its training tokens over the base row's)}, from the configs of
    the records where both rows have one, else from the rows' declared configs (None when
    neither is known)."""
    from mope_jax.campaign import row_config
    from mope_jax.claims import run_tokens

    def budget(row: str):
        for r in recs.get(row, []):
            train = (r.get("config") or {}).get("train") or {}
            if run_tokens(r) and train.get("lr"):
                return int(train["max_steps"]), float(train["lr"]), run_tokens(r)
        try:
            c = row_config(exp, exp.scale(scale), exp.row(row))
        except (KeyError, ValueError):
            return None
        t = c.train
        return t.max_steps, t.lr, t.max_steps * t.batch_size * c.model.block_size

    ft, base = budget(ft_name(task, "pi")), budget(task)
    if ft is None or base is None or not base[2]:
        return None
    return {"steps": ft[0], "lr": ft[1], "base_lr": base[1], "share": ft[2] / base[2]}


def _ft_words(b: dict | None, short: bool = False) -> str:
    """'1000 steps at the pretraining learning rate (0.001), 50% of the pretraining tokens'
    (short: '1000 steps at the pretraining lr, 50% of its tokens')."""
    if b is None:
        return "fine-tune budget unknown"
    same = np.isclose(b["lr"], b["base_lr"])
    ratio = f"{b['lr'] / b['base_lr']:.2g} x"
    if short:
        rate = "the pretraining lr" if same else f"{ratio} the pretraining lr"
        return f"{b['steps']} steps at {rate}, {b['share']:.0%} of its tokens"
    if same:
        rate = f"the pretraining learning rate ({b['lr']:g})"
    else:
        rate = f"lr {b['lr']:g}, {ratio} the pretraining rate {b['base_lr']:g}"
    return f"{b['steps']} steps at {rate}, {b['share']:.0%} of the pretraining tokens"
