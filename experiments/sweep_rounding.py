"""How far each seed of a sweep is from the same seed trained alone, per strategy (XLA:CPU).

Command:  python experiments/sweep_rounding.py          (~1 min on 2 CPU cores)
Writes:   experiments/results/sweeps/rounding.{json,md}  (the .md is rendered from the .json)

For the ``smoke`` preset and seeds 0 and 1: the largest absolute parameter difference after
``--steps`` training steps between every ``mope_jax.sweep`` strategy and ``run``'s program,
the same for one step's gradients (no dropout) and the forward loss, and two programs the
library does not use, measured for reference: one ``jax.shard_map`` program over the 2-device
seed mesh (the SPMD form of 'shard'), and ``vmap`` with XLA's YNNPACK fusions switched off
(``--xla_cpu_experimental_ynn_fusion_type=``, in a child process, since XLA flags are per
process). 0.0 means bitwise equal.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
from pathlib import Path

if __name__ == "__main__" and "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "experiments" / "results" / "sweeps"


def measure(steps: int, strategies: list[str]) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import PartitionSpec as P

    from mope_jax.config import apply_overrides
    from mope_jax.data.batches import sample_batch
    from mope_jax.presets import get_preset
    from mope_jax.sweep import SEED_AXIS, over_seeds, place_seeds, seed_keys, seed_mesh
    from mope_jax.train import make_train, prepare

    cfg, corpus = prepare(apply_overrides(get_preset("smoke"), [f"train.max_steps={steps}"]))
    tr = make_train(cfg)
    data = jnp.asarray(corpus.train)
    keys = seed_keys([0, 1])

    def train(s, d):
        return tr.train_steps(s, d, steps)[0].params

    def grads(s, d):
        x, y = sample_batch(jax.random.PRNGKey(3), d, cfg.train.batch_size, cfg.model.block_size)
        return jax.grad(tr.loss)(s.params, x, y, None)

    def forward(s, d):
        x, y = sample_batch(jax.random.PRNGKey(3), d, cfg.train.batch_size, cfg.model.block_size)
        return tr.loss(s.params, x, y, None)

    init = [jax.jit(tr.init)(k) for k in keys]
    alone = {
        name: [jax.jit(f)(s, data) for s in init]
        for name, f in [("params", train), ("grads", grads), ("loss", forward)]
    }

    def spmd(f):  # the shard_map program over the seed mesh (not what the library runs)
        mesh = seed_mesh()
        inner = lambda xs, d: jax.lax.map(lambda x: f(x, d), xs)  # noqa: E731
        return jax.jit(
            lambda xs, d: jax.shard_map(
                lambda ys: inner(ys, d), mesh=mesh, in_specs=P(SEED_AXIS), out_specs=P(SEED_AXIS)
            )(xs)
        )

    rows = {}
    for strategy in strategies:
        if strategy in ("shard", "shard_map") and jax.device_count() < 2:
            continue
        lib = "shard" if strategy == "shard_map" else strategy
        mesh = seed_mesh() if lib == "shard" else None
        states = place_seeds(over_seeds(tr.init, "map")(keys), lib, mesh)
        row = {}
        for name, f in [("params", train), ("grads", grads), ("loss", forward)]:
            fn = spmd(f) if strategy == "shard_map" else over_seeds(f, strategy, mesh)
            out = fn(states, data)
            row[name] = max(
                float(np.max(np.abs(np.asarray(a)[r] - np.asarray(b))))
                for r in range(2)
                for a, b in zip(
                    jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(alone[name][r])
                )
            )
        rows[strategy] = row
    return rows


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument(
        "--child", default=None, help=argparse.SUPPRESS
    )  # strategies, JSON out on stdout
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.child:
        print(json.dumps(measure(args.steps, args.child.split(","))))
        return {}
    from mope_jax.analysis.report import publish
    from mope_jax.train import environment

    rows = measure(args.steps, ["map", "sequential", "shard", "vmap", "shard_map"])
    env = dict(
        os.environ,
        XLA_FLAGS=os.environ.get("XLA_FLAGS", "") + " --xla_cpu_experimental_ynn_fusion_type=",
        PYTHONPATH=str(ROOT),
    )
    child = subprocess.run(
        [sys.executable, __file__, "--steps", str(args.steps), "--child", "map,vmap"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    for k, v in json.loads(child.stdout.strip().splitlines()[-1]).items():
        rows[f"{k}, YNNPACK fusions off"] = v
    doc = {
        "renderer": "experiments/sweep_rounding.py:render",
        "command": "python experiments/sweep_rounding.py "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "env": environment(),
        "steps": args.steps,
        "rows": rows,
    }
    for text in publish(Path(args.out) / "rounding.json", doc, render).values():
        print(text)
    return doc


LABELS = {
    "map": "map (library)",
    "sequential": "sequential (library)",
    "shard": "shard: one map program per device (library)",
    "vmap": "vmap (library)",
    "shard_map": "one shard_map program over the seed mesh (not used)",
}


def render(doc: dict, json_path) -> dict[str, str]:
    from mope_jax.analysis.report import rendered_note

    env = doc["env"]
    L = [
        "# Sweep seeds vs the same seeds trained alone (XLA:CPU)",
        "",
        f"Made by `{doc['command']}` on {doc['date']} "
        f"({env['processor']}, {env['cpu_count']} CPUs, "
        f"{env['device_count']} host devices; jax {env['jax']}; commit {env['git_commit']}). "
        f"{rendered_note(doc, json_path)}",
        "",
        "`smoke` preset, seeds 0 and 1. "
        "Largest absolute difference from `run`'s one-seed program: "
        f"parameters after {doc['steps']} training steps, "
        "one step's gradients (no dropout), the forward "
        "loss. 0 = bitwise equal.",
        "",
        "| program | parameters | gradients | loss |",
        "|---|---:|---:|---:|",
    ]
    for k, v in doc["rows"].items():
        base, _, extra = k.partition(", ")
        label = LABELS.get(base, base) + (f", {extra}" if extra else "")
        L.append(f"| {label} | {v['params']:.3g} | {v['grads']:.3g} | {v['loss']:.3g} |")
    return {"rounding.md": "\n".join(L) + "\n"}


if __name__ == "__main__":
    main()
