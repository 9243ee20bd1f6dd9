"""Campaign rows that start from another row's final parameters (``Row.init_from``: a
fine-tune). The start is exactly the base row's final parameters of the same seed; a fresh
clone that holds only the records rebuilds the base checkpoint and gives the same fine-tune
record; a missing base record, a chain or a forward reference, and parameters that do not fit
are refused with one line."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import jax
import numpy as np
import pytest

from mope_jax import campaign
from mope_jax.campaign import Experiment, Row, Scale
from mope_jax.errors import CampaignError, TrainingError
from mope_jax.sweep import load_seed, sweep

MODEL = dict(block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0)
TRAIN = dict(
    batch_size=4,
    max_steps=8,
    lr=1e-2,
    warmup_steps=2,
    eval_interval=4,
    eval_batches=2,
    log_interval=4,
    checkpoint_interval=4,
)
FT = ("model.block_size=32", "model.rope_scaling=pi", "model.rope_factor=2.0")


def experiment(ft_overrides=FT) -> Experiment:
    return Experiment(
        name="ft",
        title="fine-tune rows",
        rows=(
            Row("base", "rope", label="RoPE at L = 16"),
            Row("tuned", "rope", ft_overrides, label="fine-tuned at 32", init_from="base"),
        ),
        scales=(Scale("t", MODEL, TRAIN, seeds=2),),
        baseline="base",
        data=dict(source="blocks", num_tokens=3000),
    )


def make_root(path: Path) -> Path:
    (path / "experiments").mkdir(parents=True)
    (path / "experiments" / "__init__.py").write_text("")
    return path


def run(exp, root, work, rows=None):
    c = campaign.Campaign.open(exp, "t", root, rows=rows)
    lines: list[str] = []
    res = campaign.run_campaign(c, work_dir=work, progress=False, log=lines.append)
    return c, res, "\n".join(lines)


def leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    root = make_root(tmp_path_factory.mktemp("ft") / "repo")
    work = root / "work"
    c, res, log = run(experiment(), root, work)
    assert sorted(res.trained) == [("base", 0), ("base", 1), ("tuned", 0), ("tuned", 1)]
    return root, work, c, log


def test_tuned_rows_start_from_the_base_rows_final_parameters(done):
    root, work, c, _ = done
    rec = json.loads(c.record_path("tuned", 1).read_text())
    assert rec["init_from"].startswith("row base, final parameters of ")
    assert rec["init_from"].endswith("seeds-0-1/seed1")
    # the start itself: a sweep with an lr too small to move an f32 weight ends where it began
    _, base_state = load_seed(work / "ft" / "t" / "base" / "seeds-0-1", 1)
    cfg = campaign.row_config(experiment(), c.scale, experiment().row("tuned"), c.data)
    cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, lr=1e-30, min_lr=0.0))
    start = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], base_state.params)
    res = sweep(cfg, [1], root / "still", init_params=start, init_from="test", progress=False)
    for a, b in zip(leaves(res.states.params), leaves(start)):
        np.testing.assert_array_equal(a, b)
    assert res.states.step[0] == TRAIN["max_steps"]


def test_fresh_clone_rebuilds_the_base_and_gives_the_same_record(done, tmp_path):
    root, _, c, _ = done
    clone = make_root(tmp_path / "clone")
    shutil.copytree(root / "experiments" / "results", clone / "experiments" / "results")
    shutil.rmtree(clone / "experiments" / "results" / "ft" / "t" / "records" / "tuned")
    c2, res, log = run(experiment(), clone, clone / "work")
    assert sorted(res.trained) == [("tuned", 0), ("tuned", 1)]  # the base records were kept
    assert "are not on this machine: training them again" in log
    assert "final_val_loss" in log and "equal to record" in log
    for seed in (0, 1):
        a = json.loads(c.record_path("tuned", seed).read_text())
        b = json.loads(c2.record_path("tuned", seed).read_text())
        assert a["final_val_loss"] == b["final_val_loss"]
        assert a["curve"] == b["curve"]


def test_missing_base_record_is_refused_with_the_fix(tmp_path):
    root = make_root(tmp_path / "repo")
    with pytest.raises(CampaignError, match=r"--rows base,tuned"):
        run(experiment(), root, root / "work", rows=["tuned"])


def test_declaration_order_and_chains_are_checked():
    rows = (Row("a", "rope"), Row("b", "rope", init_from="c"), Row("c", "rope"))
    sc = (Scale("t", MODEL, TRAIN, seeds=1),)
    with pytest.raises(CampaignError, match="must be a row declared before it"):
        Experiment("x", "x", rows, sc, baseline="a")
    chain = (Row("a", "rope"), Row("b", "rope", init_from="a"), Row("c", "rope", init_from="b"))
    with pytest.raises(CampaignError, match="starts from the initialisation itself"):
        Experiment("x", "x", chain, sc, baseline="a")


def test_parameters_that_do_not_fit_are_refused(done, tmp_path):
    root, work, c, _ = done
    wide = experiment(FT + ("model.n_embd=32",))
    clone = make_root(tmp_path / "wide")
    shutil.copytree(root / "experiments" / "results", clone / "experiments" / "results")
    shutil.rmtree(clone / "experiments" / "results" / "ft" / "t" / "records" / "tuned")
    shutil.copytree(work, clone / "work")
    with pytest.raises(TrainingError, match="do not fit this model"):
        run(wide, clone, clone / "work")


def test_analysis_declared_later_is_added_from_the_local_checkpoints(done, tmp_path):
    root, work, _, _ = done
    clone = make_root(tmp_path / "clone")  # records only: nothing to measure there
    shutil.copytree(root / "experiments" / "results", clone / "experiments" / "results")
    exp = dataclasses.replace(
        experiment(), analyze=lambda cfg, state, corpus: {"step": int(state.step)}
    )
    lines: list[str] = []
    c = campaign.Campaign.open(exp, "t", clone)
    assert campaign.analyze_records(c, work_dir=clone / "work", log=lines.append) == []
    assert "no checkpoint under" in lines[0]
    c = campaign.Campaign.open(exp, "t", root)
    got = campaign.analyze_records(c, work_dir=work, log=lines.append)
    assert sorted(got) == [("base", 0), ("base", 1), ("tuned", 0), ("tuned", 1)]
    rec = json.loads(c.record_path("tuned", 1).read_text())
    assert rec["analysis"]["step"] == TRAIN["max_steps"] == rec["steps"]
    assert campaign.analyze_records(c, work_dir=work, log=lines.append) == []  # once only
