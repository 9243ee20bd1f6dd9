"""The seed sweep under jax.distributed: two processes on localhost, one CPU device each."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mope_jax.config import apply_overrides
from mope_jax.presets import get_preset
from mope_jax.train import run

WORKER = Path(__file__).parent / "multihost" / "sweep_worker.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_process_sweep_matches_single_runs(tmp_path):
    port, run_dir = str(free_port()), tmp_path / "sweep"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(Path(__file__).parents[1])}
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKER), str(i), port, str(run_dir)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0 and "OK" in out, err[-3000:]
    cfg = apply_overrides(get_preset("smoke"), ["train.max_steps=10"])
    for seed in (0, 1):
        single = run(
            apply_overrides(cfg, [f"train.seed={seed}"]), tmp_path / f"single{seed}", progress=False
        )
        rec = json.loads((run_dir / f"seed{seed}" / "final.json").read_text())
        # each process runs its seed with the one-device program: bitwise equal to run()
        assert rec["final_val_loss"] == single.final["final_val_loss"]
        assert rec["curve"] == single.final["curve"]
        assert rec["sweep"]["strategy"] == "shard"
    assert (run_dir / "checkpoints").exists()
