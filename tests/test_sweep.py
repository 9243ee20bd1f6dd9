"""Seed sweeps: every strategy against single runs, sharding, resume, single-seed restore."""

import jax
import numpy as np
import pytest

from mope_jax.config import apply_overrides
from mope_jax.presets import get_preset
from mope_jax.sweep import choose_strategy, load_seed, sweep
from mope_jax.train import run

SEEDS = [0, 1]


def cfg_for(*o):
    return apply_overrides(get_preset("smoke"), ["train.max_steps=10", *o])


@pytest.fixture(scope="module")
def singles(tmp_path_factory):
    root = tmp_path_factory.mktemp("singles")
    return [run(cfg_for(f"train.seed={s}"), root / f"s{s}", progress=False) for s in SEEDS]


def max_diff(states, r, single) -> float:
    return max(
        float(np.max(np.abs(np.asarray(a)[r] - np.asarray(b))))
        for a, b in zip(
            jax.tree_util.tree_leaves(states.params), jax.tree_util.tree_leaves(single.state.params)
        )
    )


@pytest.mark.parametrize("strategy", ["map", "sequential", "shard"])
def test_sweep_equals_single_runs_bitwise(tmp_path, singles, strategy):
    if strategy == "shard" and jax.device_count() < 2:
        pytest.skip("needs 2 devices (XLA_FLAGS=--xla_force_host_platform_device_count=2)")
    res = sweep(cfg_for(), SEEDS, tmp_path / strategy, strategy=strategy, progress=False)
    for r, single in enumerate(singles):
        assert max_diff(res.states, r, single) == 0.0
        assert res.records[r]["final_val_loss"] == single.final["final_val_loss"]
        assert res.records[r]["curve"] == single.final["curve"]
    if strategy == "shard":  # one seed per device, and the outputs keep that sharding
        for leaf in jax.tree_util.tree_leaves(res.states):
            assert leaf.sharding.spec[0] == "seed" and len(leaf.sharding.device_set) == 2
            assert [
                s.index[0] for s in sorted(leaf.addressable_shards, key=lambda s: s.device.id)
            ] == [slice(0, 1), slice(1, 2)]


def test_vmap_matches_single_runs_to_float_tolerance(tmp_path, singles):
    # Measured: XLA:CPU fuses and emits vmap's batched backward pass differently from the
    # one-seed program (experiments/results/sweeps/rounding.md), so vmap is equal to float
    # tolerance, not bitwise (README, "Seed sweeps"); auto never picks it on CPU.
    res = sweep(cfg_for(), SEEDS, tmp_path / "vmap", strategy="vmap", progress=False)
    for r, single in enumerate(singles):
        assert max_diff(res.states, r, single) < 1e-4
        np.testing.assert_allclose(
            res.records[r]["final_val_loss"], single.final["final_val_loss"], rtol=1e-5
        )


def test_sweep_with_a_data_parallel_axis(tmp_path, singles):
    # mesh ('seed': 1, 'data': 2): both devices split every batch of each seed; gradients are
    # all-reduced, so equal to the single runs to float tolerance (sums in another order).
    if jax.device_count() < 2:
        pytest.skip("needs 2 devices (XLA_FLAGS=--xla_force_host_platform_device_count=2)")
    res = sweep(cfg_for(), SEEDS, tmp_path / "dp", data_parallel=2, progress=False)
    assert res.strategy == "shard" and res.records[0]["sweep"]["data_parallel"] == 2
    for r, single in enumerate(singles):
        assert max_diff(res.states, r, single) < 1e-4
        np.testing.assert_allclose(
            res.records[r]["final_val_loss"], single.final["final_val_loss"], rtol=1e-5
        )
    leaf = jax.tree_util.tree_leaves(res.states.params)[0]
    assert leaf.sharding.mesh.axis_names == ("seed", "data") and leaf.sharding.spec[0] == "seed"
    with pytest.raises(Exception, match="must divide the device count"):
        sweep(cfg_for(), SEEDS, tmp_path / "bad", data_parallel=3, progress=False)
    with pytest.raises(Exception, match="needs strategy 'shard'"):
        sweep(cfg_for(), SEEDS, tmp_path / "bad2", data_parallel=2, strategy="map", progress=False)


def test_auto_strategy_and_bad_strategy():
    assert choose_strategy(2) == ("shard" if jax.device_count() == 2 else "map")
    assert choose_strategy(3) == "map"
    with pytest.raises(Exception, match="unknown sweep strategy"):
        choose_strategy(2, "pmapp")


@pytest.mark.parametrize("strategy", ["map", "shard"])
def test_interrupted_sweep_resumes_identically_and_one_seed_restores(tmp_path, singles, strategy):
    if strategy == "shard" and jax.device_count() < 2:
        pytest.skip("needs 2 devices (XLA_FLAGS=--xla_force_host_platform_device_count=2)")
    cfg = cfg_for()
    full = sweep(cfg, SEEDS, tmp_path / "full", strategy=strategy, progress=False)
    part = sweep(cfg, SEEDS, tmp_path / "part", strategy=strategy, progress=False, stop_after=5)
    assert part.interrupted
    resumed = sweep(cfg, SEEDS, tmp_path / "part", strategy=strategy, progress=False)
    assert all(
        max_diff(
            resumed.states,
            r,
            type("S", (), {"state": jax.tree_util.tree_map(lambda x: x[r], full.states)}),
        )
        == 0.0
        for r in range(2)
    )
    assert [r["curve"] for r in resumed.records] == [r["curve"] for r in full.records]
    seed_cfg, state = load_seed(tmp_path / "full", 1)
    assert seed_cfg.train.seed == 1
    for a, b in zip(
        jax.tree_util.tree_leaves(state.params), jax.tree_util.tree_leaves(singles[1].state.params)
    ):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_hyperparameter_grid_runs_in_one_program_and_equals_single_runs(tmp_path):
    grid = {"train.lr": [1e-3, 4e-3], "train.weight_decay": [0.0, 0.1]}
    res = sweep(cfg_for(), [0], tmp_path / "grid", grid=grid, strategy="map", progress=False)
    assert len(res.records) == 4
    for lr, wd in [(1e-3, 0.0), (4e-3, 0.1)]:
        single = run(
            cfg_for(f"train.lr={lr}", f"train.weight_decay={wd}"),
            tmp_path / f"s{lr}{wd}",
            progress=False,
        )
        rec = next(
            r
            for r in res.records
            if r["config"]["train"]["lr"] == lr and r["config"]["train"]["weight_decay"] == wd
        )
        assert (
            rec["final_val_loss"] == single.final["final_val_loss"]
            and rec["curve"] == single.final["curve"]
        )
        _, state = load_seed(tmp_path / "grid", 0, hparams={"lr": lr, "weight_decay": wd})
        for a, b in zip(
            jax.tree_util.tree_leaves(state.params), jax.tree_util.tree_leaves(single.state.params)
        ):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    losses = {r["final_val_loss"] for r in res.records}
    assert len(losses) == 4  # the grid points really differ
    with pytest.raises(Exception, match="cannot sweep"):
        sweep(cfg_for(), [0], tmp_path / "bad", grid={"train.batch_size": [4, 8]}, progress=False)


def test_model_field_that_only_sets_the_initial_state_grids_inside_one_program(tmp_path):
    # causal-gauss learns its kernel scale: model.kernel_scale is only its initial value, so the
    # runs share one training program, and each equals its single run bitwise
    base = ["model.qk_filter=causal-gauss", "model.kernel_len=8"]
    res = sweep(
        cfg_for(*base),
        [0],
        tmp_path / "g",
        grid={"model.kernel_scale": [2.0, 8.0]},
        strategy="map",
        progress=False,
    )
    assert [r["config"]["model"]["kernel_scale"] for r in res.records] == [2.0, 8.0]
    assert res.records[0]["final_val_loss"] != res.records[1]["final_val_loss"]
    for scale, rec in [(8.0, res.records[1])]:  # one grid point against its single run
        single = run(
            cfg_for(*base, f"model.kernel_scale={scale}"), tmp_path / f"s{scale}", progress=False
        )
        assert (
            rec["final_val_loss"] == single.final["final_val_loss"]
            and rec["curve"] == single.final["curve"]
        )
        _, state = load_seed(tmp_path / "g", 0, hparams={"model.kernel_scale": scale})
        learned = float(np.exp(state.params["h_0"]["attn"]["CausalKernelFilter_0"]["log_scale"][0]))
        assert abs(learned - scale) < 0.25 * scale  # started from this run's own initial scale
        for a, b in zip(
            jax.tree_util.tree_leaves(state.params), jax.tree_util.tree_leaves(single.state.params)
        ):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # a field the step reads as a constant (RoPE's base) or one that changes shapes is refused
    with pytest.raises(Exception, match="changes the training step"):
        sweep(
            cfg_for("model.pos_encoding=none", "model.qk_position=rope"),
            [0],
            tmp_path / "b1",
            grid={"model.rope_base": [100.0, 1e4]},
            progress=False,
        )
    with pytest.raises(Exception, match="shapes"):
        sweep(cfg_for(), [0], tmp_path / "b2", grid={"model.n_embd": [32, 64]}, progress=False)


def test_omega_sigma_bound_grid_inside_one_program(tmp_path):
    # the MOPE clamp reads the bound from the train state (TRACED_MODEL_FIELDS): one program
    # trains bounds 4 and 6, each equal to its single run bitwise, and they really differ
    base = ["model.pos_encoding=morlet"]
    res = sweep(
        cfg_for(*base),
        [0],
        tmp_path / "g",
        grid={"model.mope_bound": [4.0, 6.0]},
        strategy="map",
        progress=False,
    )
    for bound, rec in [(6.0, res.records[1])]:  # one grid point against its single run
        single = run(
            cfg_for(*base, f"model.mope_bound={bound}"), tmp_path / f"s{bound}", progress=False
        )
        assert (
            rec["final_val_loss"] == single.final["final_val_loss"]
            and rec["curve"] == single.final["curve"]
        )
        _, state = load_seed(tmp_path / "g", 0, hparams={"model.mope_bound": bound})
        assert float(state.hparams["mope_bound"]) == bound
        for a, b in zip(
            jax.tree_util.tree_leaves(state.params), jax.tree_util.tree_leaves(single.state.params)
        ):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert res.records[0]["final_val_loss"] != res.records[1]["final_val_loss"]
    # every record carries its learned spectra (each run's clamp holds omega*sigma >= its bound),
    # and the report plots them next to the loss curves
    for bound, rec in zip([4.0, 6.0], res.records):
        omega, sigma = (
            np.asarray(rec["spectra"]["mope_omega"]),
            np.asarray(rec["spectra"]["mope_sigma"]),
        )
        assert omega.shape == (16,) and np.min(omega * sigma) >= bound * (1 - 1e-5)
    from mope_jax.analysis.report import write_report

    md = write_report([tmp_path / "g"], tmp_path / "report" / "table.md").read_text()
    assert (
        tmp_path / "report" / "table_spectra.png"
    ).stat().st_size > 0 and "table_spectra.png" in md
