"""The benchmark suite (experiments/bench) at toy sizes: FLOP count, measurements, report."""

from __future__ import annotations

import time

import jax
import pytest

from experiments.bench import measure, report, run, spec
from mope_jax.config import ModelConfig
from mope_jax.model import init_params


def test_flop_count_matches_the_model_weight_matrices():
    """12 E^2 L in the FLOP formula is the number of weights in the blocks' kernels."""
    cfg = ModelConfig(vocab_size=13, block_size=8, n_layer=3, n_head=2, n_embd=16)
    params = init_params(cfg, jax.random.PRNGKey(0))
    kernels = sum(
        p.size
        for path, p in jax.tree_util.tree_leaves_with_path(params)
        if "kernel" in jax.tree_util.keystr(path) and "h_" in jax.tree_util.keystr(path)
    )
    wte = params["wte"]["embedding"].size
    fwd = 2 * kernels + 2 * wte + 4 * cfg.block_size * cfg.n_embd * cfg.n_layer
    assert (
        measure.train_flops_per_token(cfg.n_layer, cfg.n_embd, cfg.block_size, cfg.vocab_size)
        == 3 * fwd
    )


TINY = [
    "model.n_layer=1",
    "model.n_embd=16",
    "model.n_head=2",
    "model.block_size=16",
    "train.batch_size=4",
    "model.vocab_size=11",
]


@pytest.mark.slow
@pytest.mark.parametrize("devices", [2])
def test_train_measurement(devices):
    if jax.device_count() < devices:
        pytest.skip("needs 2 devices")
    r = measure.task_train(TINY, steps=1, reps=1, devices=devices)
    assert r["tokens_per_s"] > 0 and r["compile_s"] > 0 and r["maxrss_mb"] > 0
    assert r["batch_size"] == 4 and r["devices"] == devices
    assert abs(r["tokens_per_s"] * r["step_s"] - 4 * 16) < 1e-6 * r["tokens_per_s"]


def test_summary_arithmetic_and_report():
    fpt = measure.train_flops_per_token(6, 256, 256, 65)
    recs = {
        "peak": {"result": {"gflops": 100.0}},
        "jax/1dev": {
            "result": {
                "tokens_per_s": 1000.0,
                "step_s": 4.0,
                "flops_per_token": fpt,
                "compile_s": 1.0,
            }
        },
        "jax/dp2": {"result": {"tokens_per_s": 2000.0, "step_s": 2.0, "flops_per_token": fpt}},
        "jax/1dev/causal-gauss/fft": {"result": {"tokens_per_s": 800.0, "step_s": 5.0}},
        "torch": {"result": {"tokens_per_s": 4000.0, "step_s": 1.0}},
        "sweep/1dev": {
            "result": {
                "overrides": [],
                "max_steps": 10,
                "results": {
                    "run/R=1": {"seeds_per_hour": 10.0},
                    "map/R=4": {"seeds_per_hour": 16.0},
                },
            }
        },
        "cfg/nanogpt-char/jax": {"result": {"tokens_per_s": 900.0, "step_s": 1.0}},
        "cfg/nanogpt-char/jax-bf16": {"result": {"tokens_per_s": 1800.0, "step_s": 0.5}},
        "cfg/nanogpt-char/jax-blocks#2": {"result": {"tokens_per_s": 1200.0, "step_s": 0.8}},
        "cfg/nanogpt-char/jax-dp2-blocks": {"result": {"tokens_per_s": 1500.0, "step_s": 0.6}},
        "cfg/nanogpt-char/jax-1core": {"result": {"tokens_per_s": 450.0, "step_s": 2.0}},
        "cfg/nanogpt-char/torch": {"result": {"tokens_per_s": 1000.0, "step_s": 1.0}},
        "cfg/nanogpt-char/torch/1t": {"result": {"tokens_per_s": 600.0, "step_s": 1.0}},
        "profile/nanogpt-char": {
            "result": {
                "overrides": ["model.n_layer=4"],
                "total_ms": 10.0,
                "share": {
                    "dense matmuls (Dense layers, LM head, and their gradients)": 0.5,
                    "attention matmuls (q k^T, A V and their gradients)": 0.3,
                    "other (elementwise, softmax, layout copies, optimizer)": 0.2,
                },
                "attention_flop_share": 0.1,
            }
        },
        "variant/learned": {
            "result": {"causal": True, "tokens_per_s": 10.0, "compile_s": 1.0, "xla_temp_mb": 1.0}
        },
        "variant/fnet": {
            "result": {"causal": False, "tokens_per_s": 20.0, "compile_s": 1.0, "xla_temp_mb": 1.0}
        },
    }
    s = report.summarize(recs)
    assert s["reference"]["jax/dp2"]["vs_torch"] == 0.5
    assert abs(s["reference"]["jax/dp2"]["mfu"] - 2000.0 * fpt / 100e9) < 1e-12
    t = s["targets"]
    assert t["jax_vs_torch>=1.0"] == {"best": "jax/dp2", "value": 0.5, "met": False}
    assert t["causal_filter<=1.3x"]["value"] == 1.25 and t["causal_filter<=1.3x"]["met"]
    assert t["sweep4>=1.5x"]["value"] == 1.6 and t["sweep4>=1.5x"]["met"]
    # the sizes we train: the ratio is to the faster PyTorch thread setting; reference-b16 reuses
    # the reference rows; a config without records has no target
    small = s["configs"]["nanogpt-char"]
    assert (
        small["torch_best"] == 1000.0
        and small["jax_vs_torch"] == 0.9
        and small["bf16_vs_f32"] == 2.0
        and small["blocks_vs_torch"] == 1.2  # from its round 2, the only one it has
        and small["bhtd_vs_torch"] is None
        and small["dp2_blocks_vs_torch"] == 1.5
        and small["1core_vs_torch_1t"] == 0.75  # per core: against PyTorch's 1 thread
        and small["dp2_vs_torch"] is None  # not "jax-dp2-blocks" under a prefix match
    )
    assert t["f32_vs_torch>=1.0 @nanogpt-char"] == {"value": 0.9, "met": False}
    assert t["f32_vs_torch>=1.0 @reference-b16"] == {"value": 0.25, "met": False}
    assert "f32_vs_torch>=1.0 @mid" not in t
    doc = {
        "size": "test",
        "command": "x",
        "date": "d",
        "load_before": [0, 0, 0],
        "load_after": [0, 0, 0],
        "wall_s": 1.0,
        "env": {
            k: "?"
            for k in ("processor", "cpu_count", "platform", "jax", "flax", "python", "git_commit")
        },
        "sizes": {"var_overrides": []},
        "records": recs,
        "summary": s,
    }
    md = report.markdown(doc)
    assert "| fnet | **NON-CAUSAL** |" in md and "| learned | yes |" in md
    assert "**no**" in md  # the missed target is shown as missed
    text = report.readme(doc, "bench_test.json")
    assert "| jax_vs_torch>=1.0 (jax/dp2) | 0.50 | **no** | 50% |" in text
    assert "bench_test.json" in text and "Missed targets" in text
    assert "| f32_vs_torch>=1.0 @nanogpt-char | 0.90 | **no** | 10% |" in text
    assert "| nanoGPT's character config" in md
    # the nanoGPT-char profile: its table, and attention time next to attention FLOPs
    assert "## Profile of one training step: nanoGPT's character config" in md
    note = "The attention's batched matmuls took 30% of the op time for 10% of the model FLOPs."
    assert note in md and note in text


def test_attention_flop_share_counts_the_two_einsums():
    # nanoGPT-char: per token and layer q k^T and A V cost 2 T E each, forward
    t, e, n_layer, v = 128, 128, 4, 65
    fwd = 24 * e * e * n_layer + 2 * e * v + 4 * t * e * n_layer
    share = measure.attention_flop_share(n_layer, e, t, v)
    assert share == pytest.approx(4 * t * e * n_layer / fwd)
    assert 0.14 < share < 0.15


@pytest.mark.slow
def test_seed_sweep_benchmark_end_to_end(tmp_path):
    """experiments/bench/sweeps.py at toy size: every strategy row, the one-core references, and
    a markdown rendered from the JSON alone (the committed one is checked by
    tests/test_report_regenerate.py)."""
    import json

    from experiments.bench import sweeps

    doc = sweeps.main(
        ["--seeds", "2", "--steps", "1", "--reps", "1", "--preset", "smoke", "--out", str(tmp_path)]
    )
    assert not [k for k, r in doc["records"].items() if r.get("error")]
    table, refs = sweeps.rows(json.loads((tmp_path / "sweeps.json").read_text()))
    assert set(table) == {
        "run/R=1",
        "map/R=2",
        "vmap/R=2",
        "sequential/R=2",
        "run/R=1 (under the 2-device flag)",
        "shard/R=2 (2 host devices)",
    }
    assert table["run/R=1"]["vs_sequential"] == 1.0 and all(
        v["seeds_per_hour"] > 0 for v in table.values()
    )
    assert (
        refs["2 x one seed on one core (ideal split of 2 cores)"]["seeds_per_hour"]
        == 2 * refs["one seed on one core"]["seeds_per_hour"]
    )
    assert "two one-core workers at the same time (measured)" in refs
    md = (tmp_path / "sweeps.md").read_text()
    assert (
        "| shard/R=2 (2 host devices) |" in md and "Target (R = 4" not in md
    )  # no R=4 row at this size
    assert sweeps.render(
        json.loads((tmp_path / "sweeps.json").read_text()), tmp_path / "sweeps.json"
    ) == {"sweeps.md": md}


def test_layout_task_two_d_dense_keeps_the_bits_and_copies_less():
    """Our Dense (x flattened to 2-D) against flax's nn.Dense on (B,T,E): the same losses bit
    for bit, fewer layout copies in the compiled step (the weight gradients' transposes)."""
    r = measure.task_layout(TINY + ["model.use_bias=false"], steps=2, reps=1)
    flax_row, ours = r["results"].values()
    assert r["bitwise_equal_losses"] and len(ours["first_losses"]) == 2
    assert ours["copy_elements_per_step"] < flax_row["copy_elements_per_step"]


@pytest.mark.slow
def test_gpu_benchmark_script_runs_at_toy_size(tmp_path):
    """experiments/bench/gpu.py (meant for a GPU) runs end to end on CPU at toy sizes into the
    folder it is given: the matmul rate and training at each precision, the PyTorch model side
    by side (f32 only off a GPU), and the vmapped seeds rows."""
    pytest.importorskip("torch")
    from experiments.bench import gpu

    doc = gpu.main(["--tiny", "--out", str(tmp_path)])
    r = doc["records"]
    assert set(r["train"]) == {"f32", "tf32", "bf16"}
    assert all(r["train"][p]["tokens_per_s"] > 0 for p in r["train"])
    assert all(r["train"][p]["mfu"] is None for p in r["train"])  # no datasheet peak for a CPU
    assert all(0 < r["train"][p]["mfu_of_measured_matmul"] for p in r["train"])
    assert set(r["torch"]) == {"f32"} and r["torch"]["f32"]["tokens_per_s"] > 0
    assert r["torch"]["f32"]["jax_over_torch"] == pytest.approx(
        r["train"]["f32"]["tokens_per_s"] / r["torch"]["f32"]["tokens_per_s"]
    )
    assert set(r["sweep"]["results"]) == {"run/R=1", "vmap/R=1", "vmap/R=2"}
    md = (tmp_path / "gpu_tiny.md").read_text()
    assert "| JAX / PyTorch |" in md and "| bf16 |" in md and "| vmap/R=2 |" in md


@pytest.mark.slow
def test_profile_task_tells_attention_matmuls_from_dense_ones():
    """The profile task (its own process: the trace flag must be set before JAX starts) splits
    the step's matmuls into the attention's einsums and the dense layers'."""
    small = [
        "model.n_layer=1",
        "model.n_embd=32",
        "model.n_head=2",
        "model.block_size=32",
        "train.batch_size=2",
    ]
    task = [{"id": "p", "task": "profile", "args": {"overrides": small}}]
    recs = run.worker(task, spec.PROFILE, time.time() + 300, lambda m: None)
    prof = recs["p"]["result"]
    assert prof is not None, recs["p"].get("error")
    share = prof["share"]
    assert abs(sum(share.values()) - 1.0) < 1e-9
    groups = {k.split(" (")[0] for k in share}
    assert {"attention matmuls", "dense matmuls"} <= groups
    assert prof["attention_flop_share"] == pytest.approx(
        measure.attention_flop_share(1, 32, 32, 65)
    )
