"""The sections a bench run measures, in priority order, each ``(section, xla_flags, tasks)``
(a worker process per section): ``plan`` for the quick and full sizes, with the sizes we train
in ``cfg_rounds`` alternating rounds (``config_tasks``, ``config_dp2_tasks``,
``config_1core_tasks``), and ``tiny_plan``, every section at toy sizes for the tests."""

from __future__ import annotations

import os

from experiments.bench.spec import (
    CAUSAL_FILTER,
    CONFIGS,
    DP2,
    FAST_OPT_INS,
    NANOGPT_CHAR,
    PROFILE,
    PROFILE_SECTION,
    REF,
)


def plan(size: dict, variants: list[str]) -> list[tuple[str, str, list[dict]]]:
    """(section, xla_flags, tasks) in priority order."""
    s = size

    def ref(extra, **kw):
        return dict(
            task="train",
            args=dict(overrides=REF + extra, steps=s["ref_steps"], reps=s["ref_reps"], **kw),
        )

    return [
        (
            "reference, 1 device; causal spectral filter at T=256",
            "",
            [
                dict(id="peak", task="peak"),
                dict(id="jax/1dev", **ref([])),
                dict(
                    id=f"jax/1dev/{CAUSAL_FILTER}/fft",
                    **ref(["model.conv_impl=fft"], variant=CAUSAL_FILTER),
                ),
                dict(
                    id=f"jax/1dev/{CAUSAL_FILTER}/toeplitz",
                    **ref(["model.conv_impl=toeplitz"], variant=CAUSAL_FILTER),
                ),
            ],
        ),
        ("the sizes we train: JAX f32 and bf16 next to PyTorch", "", config_tasks(s)),
        ("the sizes we train: JAX f32 on 2 host devices", DP2, config_dp2_tasks(s)),
        ("the sizes we train: JAX f32 pinned to one core", "ONE_CORE", config_1core_tasks(s)),
        (
            "reference, 1 device, JAX's rolled threefry (as before issue 8)",
            "ROLLED",
            [
                dict(id="jax/1dev/rolled", **ref([])),
            ],
        ),
        (
            "reference, 2 host devices (data parallel)",
            DP2,
            [
                dict(id="jax/dp2", **ref([], devices=2)),
            ],
        ),
        (
            "pytorch reference",
            "",
            [
                dict(
                    id="torch",
                    task="torch",
                    args=dict(
                        overrides=REF,
                        steps=s["torch_steps"],
                        reps=s["torch_reps"],
                        threads=os.cpu_count() or 1,
                    ),
                ),
                dict(
                    id="torch/1t",
                    task="torch",
                    args=dict(
                        overrides=REF, steps=s["torch_steps"], reps=s["torch_reps"], threads=1
                    ),
                ),
            ],
        ),
        (
            "seed sweeps, 1 device",
            "",
            [
                dict(
                    id="sweep/1dev",
                    task="sweep",
                    args=dict(
                        seed_counts=[1, 2, 4],
                        strategies=s["sweep_strategies"],
                        preset="cpu",
                        overrides=s["sweep_overrides"],
                        steps=s["sweep_steps"],
                        reps=s["sweep_reps"],
                    ),
                ),
            ],
        ),
        (
            "seed sweeps, 2 host devices",
            DP2,
            [
                dict(
                    id="sweep/dp2",
                    task="sweep",
                    args=dict(
                        seed_counts=[2, 4],
                        strategies=["shard"],
                        preset="cpu",
                        overrides=s["sweep_overrides"],
                        steps=s["sweep_steps"],
                        reps=s["sweep_reps"],
                    ),
                ),
            ],
        ),
        (
            "where the time goes: MLP, attention, spectral filters vs T",
            "",
            [
                dict(
                    id="layout",
                    task="layout",
                    args=dict(overrides=NANOGPT_CHAR, steps=s["cfg_steps"], reps=s["cfg_reps"]),
                ),
                dict(
                    id="mlp",
                    task="mlp",
                    args=dict(n_tokens=s["mlp_tokens"], n_embd=256, reps=s["mlp_reps"]),
                ),
                dict(
                    id="attention",
                    task="attention",
                    args=dict(batch=4, heads=8, t=256, head_dim=32, reps=s["mlp_reps"]),
                ),
                dict(
                    id="spectral",
                    task="spectral",
                    args=dict(
                        lengths=s["spec_lengths"],
                        batch=s["spec_batch"],
                        heads=8,
                        head_dim=32,
                        reps=s["spec_reps"],
                        toeplitz_max_t=s["spec_toeplitz_max"],
                    ),
                ),
            ],
        ),
        PROFILE_SECTION,
        (
            "variants",
            "",
            [
                dict(
                    id=f"variant/{name}",
                    task="variant",
                    args=dict(
                        name=name,
                        preset="reference",
                        overrides=s["var_overrides"],
                        steps=s["var_steps"],
                        reps=s["var_reps"],
                    ),
                )
                for name in variants
            ],
        ),
    ]


def config_tasks(s: dict) -> list[dict]:
    """Per CONFIGS entry: JAX 1 device (f32 unless reused, bf16) and PyTorch at 2 and 1 threads.

    ``s["cfg_rounds"]`` rounds of the whole list, one after the other (ids of round r > 1 end
    in ``#r``): JAX and PyTorch then alternate, and each row keeps its best round, so a burst
    of load from a neighbour on this shared machine does not decide the ratio."""
    steps = lambda name: s["ref_steps"] if name == "reference-b16" else s["cfg_steps"]  # noqa: E731
    reps = lambda name: s["ref_reps"] if name == "reference-b16" else s["cfg_reps"]  # noqa: E731
    tasks = []
    for r in range(1, s.get("cfg_rounds", 1) + 1):
        tag = "" if r == 1 else f"#{r}"
        for name, (_, ov) in CONFIGS.items():
            jax_args = dict(steps=steps(name), reps=reps(name))
            # reference-b16's first round is the reference section's jax/1dev and torch rows
            first_reused = name == "reference-b16" and r == 1
            if not first_reused:
                tasks.append(
                    dict(
                        id=f"cfg/{name}/jax{tag}", task="train", args=dict(overrides=ov, **jax_args)
                    )
                )
            tasks.append(
                dict(
                    id=f"cfg/{name}/jax-bhtd{tag}",
                    task="train",
                    args=dict(overrides=ov + ["model.attn_layout=bhtd"], **jax_args),
                )
            )
            tasks.append(
                dict(
                    id=f"cfg/{name}/jax-blocks{tag}",
                    task="train",
                    args=dict(overrides=ov + FAST_OPT_INS, **jax_args),
                )
            )
            tasks.append(
                dict(
                    id=f"cfg/{name}/jax-bf16{tag}",
                    task="train",
                    args=dict(overrides=ov + ["model.compute_dtype=bfloat16"], **jax_args),
                )
            )
            if not first_reused:
                pytorch = (("torch", os.cpu_count() or 1), ("torch/1t", 1))
                if name == "reference-b16":  # later rounds: the 2-thread one (the faster)
                    pytorch = pytorch[:1]
                for tid, threads in pytorch:
                    tasks.append(
                        dict(
                            id=f"cfg/{name}/{tid}{tag}",
                            task="torch",
                            args=dict(
                                overrides=ov, steps=steps(name), reps=reps(name), threads=threads
                            ),
                        )
                    )
    return tasks


def config_dp2_tasks(s: dict) -> list[dict]:
    """Per CONFIGS entry but the reference (its dp2 row is the reference section's): JAX f32 with
    the batch sharded over 2 host devices, with the defaults and with FAST_OPT_INS,
    ``s["cfg_rounds"]`` rounds."""
    return [
        dict(
            id=f"cfg/{name}/{key}" + ("" if r == 1 else f"#{r}"),
            task="train",
            args=dict(overrides=ov + extra, steps=s["cfg_steps"], reps=s["cfg_reps"], devices=2),
        )
        for r in range(1, s.get("cfg_rounds", 1) + 1)
        for name, (_, ov) in CONFIGS.items()
        if name != "reference-b16"
        for key, extra in (("jax-dp2", []), ("jax-dp2-blocks", FAST_OPT_INS))
    ]


def config_1core_tasks(s: dict) -> list[dict]:
    """Per CONFIGS entry but the reference: JAX f32 defaults in a worker pinned to one core, to
    set beside PyTorch at 1 thread (per-core speed, apart from how each uses the second core),
    ``s["cfg_rounds"]`` rounds."""
    return [
        dict(
            id=f"cfg/{name}/jax-1core" + ("" if r == 1 else f"#{r}"),
            task="train",
            args=dict(overrides=ov, steps=s["cfg_steps"], reps=s["cfg_reps"]),
        )
        for r in range(1, s.get("cfg_rounds", 1) + 1)
        for name, (_, ov) in CONFIGS.items()
        if name != "reference-b16"
    ]


def tiny_plan(variants: list[str]) -> list[tuple[str, str, list[dict]]]:
    """Every section at toy sizes (seconds each), for tests/test_bench.py."""
    small = [
        "model.n_layer=1",
        "model.n_embd=32",
        "model.n_head=2",
        "model.block_size=32",
        "train.batch_size=4",
    ]

    def tr(extra, **kw):
        return dict(task="train", args=dict(overrides=small + extra, steps=1, reps=1, **kw))

    sw = dict(preset="smoke", overrides=[], steps=1, reps=1)
    return [
        (
            "reference, 1 device",
            "",
            [dict(id="peak", task="peak", args=dict(n=256, reps=1)), dict(id="jax/1dev", **tr([]))],
        ),
        (
            "reference, 2 host devices",
            DP2,
            [
                dict(id="jax/dp2", **tr([], devices=2)),
                dict(id=f"jax/1dev/{CAUSAL_FILTER}/fft", **tr([], variant=CAUSAL_FILTER)),
                dict(
                    id=f"jax/1dev/{CAUSAL_FILTER}/toeplitz",
                    **tr(["model.conv_impl=toeplitz"], variant=CAUSAL_FILTER),
                ),
            ],
        ),
        (
            "pytorch reference",
            "",
            [
                dict(
                    id="torch", task="torch", args=dict(overrides=small, steps=1, reps=1, threads=1)
                )
            ],
        ),
        (
            "the sizes we train",
            "",
            [
                dict(
                    id="cfg/nanogpt-char/jax",
                    task="train",
                    args=dict(overrides=small + ["model.use_bias=false"], steps=1, reps=1),
                ),
                dict(
                    id="cfg/nanogpt-char/jax-bf16",
                    task="train",
                    args=dict(
                        overrides=small + ["model.use_bias=false", "model.compute_dtype=bfloat16"],
                        steps=1,
                        reps=1,
                    ),
                ),
                dict(
                    id="cfg/nanogpt-char/torch/1t",
                    task="torch",
                    args=dict(
                        overrides=small + ["model.use_bias=false"], steps=1, reps=1, threads=1
                    ),
                ),
            ],
        ),
        (
            "seed sweeps, 1 device",
            "",
            [
                dict(
                    id="sweep/1dev",
                    task="sweep",
                    args=dict(seed_counts=[1, 2], strategies=["sequential", "map"], **sw),
                )
            ],
        ),
        (
            "seed sweeps, 2 host devices",
            DP2,
            [
                dict(
                    id="sweep/dp2",
                    task="sweep",
                    args=dict(seed_counts=[2], strategies=["shard"], **sw),
                )
            ],
        ),
        (
            "where the time goes",
            "",
            [
                dict(id="layout", task="layout", args=dict(overrides=small, steps=1, reps=1)),
                dict(id="mlp", task="mlp", args=dict(n_tokens=64, n_embd=16, reps=1)),
                dict(
                    id="attention",
                    task="attention",
                    args=dict(batch=1, heads=2, t=16, head_dim=4, reps=1),
                ),
                dict(
                    id="spectral",
                    task="spectral",
                    args=dict(lengths=[16, 32], batch=1, heads=2, head_dim=4, reps=1),
                ),
            ],
        ),
        ("profile", PROFILE, [dict(id="profile", task="profile", args=dict(overrides=small))]),
        (
            "variants",
            "",
            [
                dict(
                    id=f"variant/{v}",
                    task="variant",
                    args=dict(name=v, preset="smoke", overrides=[], steps=1, reps=1),
                )
                for v in ("learned", "rope", "fourier-qk")
            ],
        ),
    ]
