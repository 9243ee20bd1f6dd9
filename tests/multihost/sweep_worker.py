"""One process of a 2-process jax.distributed seed sweep on localhost CPUs (gloo collectives).

Run by tests/test_multihost.py as: python sweep_worker.py PROCESS_ID PORT RUN_DIR
"""

import os
import sys

os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.pop("XLA_FLAGS", None)  # one CPU device per process

import jax  # noqa: E402

jax.config.update("jax_cpu_collectives_implementation", "gloo")
pid, port, run_dir = int(sys.argv[1]), sys.argv[2], sys.argv[3]
jax.distributed.initialize(f"localhost:{port}", num_processes=2, process_id=pid)

from mope_jax.config import apply_overrides  # noqa: E402
from mope_jax.presets import get_preset  # noqa: E402
from mope_jax.sweep import sweep  # noqa: E402

assert jax.device_count() == 2 and jax.process_count() == 2
cfg = apply_overrides(get_preset("smoke"), ["train.max_steps=10"])
res = sweep(cfg, [0, 1], run_dir, strategy="shard", progress=False, log=lambda m: None)
print("OK", pid, res.strategy, [r["final_val_loss"] for r in res.records], flush=True)
jax.distributed.shutdown()
