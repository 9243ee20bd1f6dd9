"""experiments/paper_a (measure.py, sections.py): the gate models re-evaluated with the
other gate. The two EGA gates share their parameters, so the trained state of a gated row is
evaluated with its own gate (which must give back the recorded final val loss, bitwise) and
with the other one on the same batches; the section pairs them by seed."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest

from experiments import paper_a
from mope_jax.campaign import Campaign, row_config
from mope_jax.data import load_corpus
from mope_jax.sweep import sweep

REPO = __import__("pathlib").Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_other_gate_analysis_recovers_the_final_loss_and_differs(shakespeare_path, tmp_path):
    exp = paper_a.EXPERIMENT
    c = Campaign.open(exp, "smoke", REPO, corpus=shakespeare_path)
    cfg = row_config(exp, c.scale, exp.row("a-ega1"), c.data)
    cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, max_steps=10))
    cfg = dataclasses.replace(
        cfg, train=dataclasses.replace(cfg.train, eval_interval=10, checkpoint_interval=10)
    )
    res = sweep(cfg, [0, 1], tmp_path / "run", progress=False)
    corpus = load_corpus(res.cfg.data, res.cfg.model.block_size)
    recs = []
    for r, seed in enumerate((0, 1)):
        state = jax.tree_util.tree_map(lambda x, r=r: np.asarray(x)[r], res.states)
        run_cfg = dataclasses.replace(res.cfg, train=dataclasses.replace(res.cfg.train, seed=seed))
        a = paper_a.analyze(run_cfg, state, corpus)
        assert (a["gate"], a["other_gate"]) == ("ega", "ega-prefix")
        assert a["val_loss_own_gate"] == res.records[r]["final_val_loss"]
        assert a["val_loss_other_gate"] != a["val_loss_own_gate"]
        recs.append({"row": "a-ega1", "seed": seed, "analysis": a})
    assert (
        paper_a.analyze(
            dataclasses.replace(cfg, model=dataclasses.replace(cfg.model, attn_bias="none")),
            state,
            corpus,
        )
        == {}
    )
    md = paper_a.other_gate_section(exp, c.scale, recs)
    assert "## Gate models re-evaluated with the other gate" in md
    assert "| `a-ega1` | `ega` | `ega-prefix` | 2 |" in md
    assert paper_a.other_gate_section(exp, c.scale, [{"row": "a-mope", "seed": 0}]) == ""
