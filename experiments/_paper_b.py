"""Shared bookkeeping of the paper-B experiments: result headers, t-intervals, plots setup."""

from __future__ import annotations

import datetime
import shlex
import sys
from pathlib import Path
from typing import Any


RESULTS = Path(__file__).resolve().parent / "results" / "paper_b"
RUNS = Path(__file__).resolve().parents[1] / "runs" / "paper_b"  # git-ignored


def command() -> str:
    return "python " + " ".join(shlex.quote(a) for a in sys.argv)


def header(title: str, wall_s: float) -> dict[str, Any]:
    from mope_jax.train import environment

    return {
        "title": title,
        "command": command(),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(wall_s, 1),
        "env": environment(),
    }


def write(name: str, payload: dict[str, Any], render) -> tuple[Path, Path]:
    """results/paper_b/<name>.json, then the files ``render(payload, json_path)`` makes of it (the
    same function ``mope-jax report --regenerate`` calls; payload["renderer"] names it)."""
    from mope_jax.analysis.report import publish

    js = RESULTS / f"{name}.json"
    publish(js, payload, render, nan_as_null=True)
    return js, js.with_suffix(".md")


def top(payload: dict[str, Any], json_path: Path) -> str:
    """The head of every paper-B markdown: command, date, machine, where the numbers come from."""
    from mope_jax.analysis.report import rendered_note

    env = payload["env"]
    return (
        f"# {payload['title']}\n\n"
        f"- command: `{payload['command']}`\n- date (UTC): {payload['date_utc']}\n"
        f"- wall time: {payload['wall_seconds']} s\n"
        f"- machine: {env['platform']}, {env['cpu_count']} CPUs, backend {env['backend']} "
        f"({env['device']}), jax {env['jax']}, flax {env['flax']}, commit {env['git_commit']}\n"
        f"- raw numbers: `{Path(json_path).name}`\n\n{rendered_note(payload, json_path)}\n\n"
    )


def config_from_record(d: dict):
    """Config from a recorded dict, dropping fields this version of ModelConfig/DataConfig/
    TrainConfig does not have (a recorded run outlives a field rename elsewhere)."""
    import dataclasses as dc

    from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig

    kinds = {"model": ModelConfig, "data": DataConfig, "train": TrainConfig}
    clean = {k: v for k, v in d.items() if k not in kinds}
    for sec, kind in kinds.items():
        names = {f.name for f in dc.fields(kind)}
        clean[sec] = {k: v for k, v in d.get(sec, {}).items() if k in names}
    return Config.from_dict(clean)


def load_sweep_seeds(run_dir: Path, seeds):
    """(config, stacked TrainState over ``seeds``) from a finished sweep's Orbax checkpoint.

    Like mope_jax.sweep.load_seed, but tolerant to config fields that no longer exist."""
    import jax
    import jax.numpy as jnp

    from mope_jax.checkpoint import Checkpointer
    from mope_jax.train import make_train

    with Checkpointer(Path(run_dir) / "checkpoints", read_only=True) as ckpt:
        meta = ckpt.read_meta(None)
        cfg = config_from_record(meta["config"])
        one = jax.eval_shape(make_train(cfg).init, jax.random.PRNGKey(0))
        saved = meta["seeds"]
        abstract = jax.tree_util.tree_map(
            lambda a: jax.ShapeDtypeStruct((len(saved),) + a.shape, a.dtype), one
        )
        states, _ = ckpt.restore(abstract, None)
    idx = jnp.asarray([saved.index(s) for s in seeds])
    return cfg, jax.tree_util.tree_map(lambda x: x[idx], states)


def t_interval(x, level: float = 0.95) -> dict[str, float]:
    """mean, sd and the two-sided t-interval of the mean of samples x (mope_jax.analysis.stats)."""
    from mope_jax.analysis.stats import summarize

    s = summarize(x, confidence=level)
    if s.n < 2:
        return {
            "mean": s.mean,
            "sd": float("nan"),
            "lo": float("nan"),
            "hi": float("nan"),
            "n": s.n,
        }
    return {"mean": s.mean, "sd": s.std, "lo": s.ci_low, "hi": s.ci_high, "n": s.n}


def plt():
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    return pyplot


def train_fields(steps: int, every: int, *, batch_size: int) -> dict:
    """The paper-B studies' TrainConfig fields: AdamW lr 3e-3, warmup min(50, steps / 4), an
    eval (4 batches) and a log line every ``every`` steps, one checkpoint at the end."""
    return dict(
        batch_size=batch_size,
        max_steps=steps,
        lr=3e-3,
        warmup_steps=min(50, steps // 4),
        eval_interval=every,
        eval_batches=4,
        log_interval=every,
        checkpoint_interval=steps,
        keep_checkpoints=1,
    )
