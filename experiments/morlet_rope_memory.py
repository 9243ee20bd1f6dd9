"""Morlet-RoPE memory: compiled temporaries of forward + backward, grouped scan vs materialised.

Command:  python -m experiments.morlet_rope_memory      (compile only, nothing is run; ~1 min)
Writes:   experiments/results/paper_a/morlet_rope_memory.{json,md}
Question: is the peak memory of Morlet-RoPE a few (B, H, T, S) score arrays, independent of the
number of frequencies F, up to T = 4096? The naive form materialises (B, H, F, T, S).

XLA's ``memory_analysis()`` of the compiled gradient program reports temporary bytes. Here it
comes from the CPU compiler (this machine has no GPU); a GPU compile can differ in fusion
details but not in the tensors the program must hold. Shapes: B=1, H=8, D=32 (F=16 frequencies;
G=16 = one sigma per frequency, and G=4 groups).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

from experiments.paper_a import RESULTS
from mope_jax.analysis.report import publish, rendered_note
from mope_jax.attention.morlet_rope import morlet_rope_scores


def naive_scores(q, k, log_sigma):
    """The same scores with the (B, H, F, T, S) per-frequency tensor materialised (G = F)."""
    b, t, h, d = q.shape
    f = d // 2
    theta = 10000.0 ** (-jnp.arange(0, d, 2, dtype=jnp.float32) / d)  # (F,)
    pos = jnp.arange(t, dtype=jnp.float32)
    ang = pos[:, None] * theta[None, :]  # (T, F)
    c, s = jnp.cos(ang)[None, :, None, :], jnp.sin(ang)[None, :, None, :]  # (1,T,1,F)
    qp, kp = q.reshape(b, t, h, f, 2), k.reshape(b, t, h, f, 2)  # (B,T,H,F,2)
    qr = jnp.stack([qp[..., 0] * c - qp[..., 1] * s, qp[..., 0] * s + qp[..., 1] * c], -1)
    kr = jnp.stack([kp[..., 0] * c - kp[..., 1] * s, kp[..., 0] * s + kp[..., 1] * c], -1)
    per = jnp.einsum("BTHFC,BSHFC->BHFTS", qr, kr)  # (B,H,F,T,S)
    r = pos[:, None] - pos[None, :]
    env = jnp.exp(
        -jnp.square(r)[None, None] / (2 * jnp.exp(2 * log_sigma))[:, :, None, None]
    )  # (H,F,T,S)
    return (per * env[None]).sum(2) / jnp.sqrt(d)


def temp_bytes(kind: str, t: int, groups: int, b=1, h=8, d=32) -> int:
    def loss(q, k, ls):
        if kind == "naive":
            out = naive_scores(q, k, ls)
        else:
            out = morlet_rope_scores(q, k, jnp.arange(t), jnp.arange(t), ls)
        return jnp.sum(jnp.sin(out))

    args = (
        jax.ShapeDtypeStruct((b, t, h, d), jnp.float32),
        jax.ShapeDtypeStruct((b, t, h, d), jnp.float32),
        jax.ShapeDtypeStruct((h, groups), jnp.float32),
    )
    mem = jax.jit(jax.grad(loss, argnums=(0, 1, 2))).lower(*args).compile().memory_analysis()
    return int(mem.temp_size_in_bytes)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lengths", default="256,1024,4096")
    args = ap.parse_args(argv)
    command = "python -m experiments.morlet_rope_memory " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    rows = []
    t0 = time.perf_counter()
    for t in [int(x) for x in args.lengths.split(",")]:
        score = 1 * 8 * t * t * 4
        for kind, groups in [("scan", 16), ("scan", 4), ("naive", 16)]:
            tb = temp_bytes(kind, t, groups)
            rows.append(
                {
                    "T": t,
                    "impl": kind,
                    "groups": groups,
                    "temp_bytes": tb,
                    "score_array_bytes": score,
                    "temp_in_score_arrays": tb / score,
                }
            )
            print(rows[-1])
    payload = {
        "renderer": "experiments/morlet_rope_memory.py:render",
        "shapes": {"B": 1, "H": 8, "D": 32, "F": 16},
        "rows": rows,
        "seconds": time.perf_counter() - t0,
    }
    stem = RESULTS / "morlet_rope_memory"
    publish(stem.with_suffix(".json"), payload, render, command=command)


def render(p: dict, json_path: Path) -> dict[str, str]:
    """``morlet_rope_memory.md`` from its JSON alone (``mope-jax report --regenerate``)."""
    env, sh = p["env"], p["shapes"]
    date = p["date_utc"][:16].replace("T", " ") + " UTC"
    lines = [
        "# Morlet-RoPE memory (compile-only)",
        "",
        f"Made by `{p['command'].strip()}` on {date}, "
        f"{env['platform']} ({env['cpu_count']} CPUs, backend {env['backend']}), "
        f"git {env['git_commit']}. "
        f"B={sh['B']}, H={sh['H']}, D={sh['D']} (F={sh['F']}). "
        "Temporaries of jit(grad(sum(sin(scores)))) in "
        "units of one (B,H,T,S) float32 array.",
        "",
        rendered_note(p, json_path),
        "",
        "| T | implementation | sigma groups G | temp bytes | in score arrays |",
        "|---|---|---|---|---|",
    ]
    for r in p["rows"]:
        lines.append(
            f"| {r['T']} | {r['impl']} | {r['groups']} | {r['temp_bytes']:,} | "
            f"{r['temp_bytes'] / r['score_array_bytes']:.2f} |"
        )
    return {Path(json_path).with_suffix(".md").name: "\n".join(lines) + "\n"}


if __name__ == "__main__":
    main()
