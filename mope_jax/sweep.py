"""Multi-seed sweeps: R seeds of one config as one compiled program.

The only module that knows about devices and meshes. Strategies (``strategy=``):

  * ``"vmap"``: ``jax.vmap`` over the seed axis (the choice on GPU/TPU);
  * ``"map"``: ``jax.lax.map`` over seeds inside one jit (measured faster than vmap on CPU);
  * ``"shard"``: the seed axis sharded over a 1-D ``Mesh`` of all devices with
    ``jax.shard_map``; inside each shard seeds run with ``lax.map`` on CPU and ``vmap``
    elsewhere. On a CPU host, ``XLA_FLAGS=--xla_force_host_platform_device_count=2`` gives
    two devices (one per core). Under ``jax.distributed`` the mesh spans every process;
  * ``"sequential"``: one seed after another (the baseline the benchmark compares with);
  * ``"auto"``: ``shard`` when R is a multiple of the device count > 1, else ``map`` on CPU
    and ``vmap`` on accelerators.

Every seed of a sweep uses the per-seed step of :func:`mope_jax.train.make_train` on the
same chunk grid as :func:`mope_jax.train.run`, so seed s of a sweep reproduces ``run`` with
``train.seed=s`` (bitwise on CPU for ``map``, ``shard`` and ``sequential``; see the tests for
``vmap``). Sweeps checkpoint the stacked states with Orbax (with their sharding), resume,
and write one ``seed<s>/final.json`` record per seed, the same format as ``run``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from mope_jax.config import Config
from mope_jax.train import (
    GRID_FIELDS,
    TrainingError,
    _boundaries,
    _default_hook,
    _is_save_point,
    _next_boundary,
    _SigtermFlag,
    _to_py,
    _truncate_jsonl,
    causality_record,
    check_causal,
    environment,
    make_train,
    prepare,
    summarize,
)

STRATEGIES = ("auto", "vmap", "map", "shard", "sequential")
SEED_AXIS = "seed"


def choose_strategy(num_seeds: int, strategy: str = "auto") -> str:
    if strategy not in STRATEGIES:
        raise TrainingError(f"unknown sweep strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if strategy != "auto":
        return strategy
    n_dev = jax.device_count()
    if n_dev > 1 and num_seeds % n_dev == 0:
        return "shard"
    return "map" if jax.default_backend() == "cpu" else "vmap"


def seed_mesh() -> jax.sharding.Mesh:
    """A 1-D mesh over every device (all processes under jax.distributed), axis 'seed'."""
    return jax.make_mesh((jax.device_count(),), (SEED_AXIS,), axis_types=(jax.sharding.AxisType.Auto,))


def grid_runs(seeds: Sequence[int], grid: dict[str, Sequence[float]] | None) -> list[tuple[dict[str, float], int]]:
    """Every (hyper-parameters, seed) of a sweep: the product of the grid's values, each with
    every seed. Grid keys are train fields that do not change shapes (``GRID_FIELDS``), with or
    without the ``train.`` prefix."""
    grid = {k.removeprefix("train."): [float(v) for v in vs] for k, vs in (grid or {}).items()}
    bad = sorted(set(grid) - set(GRID_FIELDS))
    if bad:
        raise TrainingError(f"cannot sweep {bad} inside one program; grid keys must be among "
                            f"{', '.join('train.' + f for f in GRID_FIELDS)}")
    combos = [dict()]
    for k, vs in grid.items():
        if not vs:
            raise TrainingError(f"grid train.{k} has no values")
        combos = [c | {k: v} for c in combos for v in vs]
    return [(c, int(sd)) for c in combos for sd in seeds]


def run_label(hp: dict[str, float]) -> str:
    return ",".join(f"{k}={v:g}" for k, v in hp.items())


def seed_keys(seeds: Sequence[int]) -> jax.Array:
    """(R, 2) raw keys, key r = PRNGKey(seeds[r]) -- what ``run`` uses for ``train.seed``."""
    return jnp.stack([jax.random.PRNGKey(int(s)) for s in seeds])


def over_seeds(fn: Callable, strategy: str, mesh: jax.sharding.Mesh | None = None) -> Callable:
    """Lift ``fn(per_seed_tree, *shared)`` to ``(stacked_tree, *shared)`` with a strategy.

    The result is jitted (except ``sequential``, whose per-seed calls are).
    """
    inner_map = lambda xs, *a: jax.lax.map(lambda x: fn(x, *a), xs)  # noqa: E731
    if strategy == "vmap":
        return jax.jit(lambda xs, *a: jax.vmap(lambda x: fn(x, *a))(xs))
    if strategy == "map":
        return jax.jit(inner_map)
    if strategy == "shard":
        mesh = mesh or seed_mesh()
        inner = inner_map if jax.default_backend() == "cpu" else (lambda xs, *a: jax.vmap(lambda x: fn(x, *a))(xs))

        def sharded(xs, *a):
            return jax.shard_map(
                lambda ys: inner(ys, *a), mesh=mesh, in_specs=P(SEED_AXIS), out_specs=P(SEED_AXIS)
            )(xs)

        return jax.jit(sharded)
    if strategy == "sequential":
        one = jax.jit(fn)

        def seq(xs, *a):
            n = jax.tree_util.tree_leaves(xs)[0].shape[0]
            outs = [one(jax.tree_util.tree_map(lambda x: x[i], xs), *a) for i in range(n)]
            return jax.tree_util.tree_map(lambda *ys: jnp.stack(ys), *outs)

        return seq
    raise TrainingError(f"unknown sweep strategy {strategy!r}")


def host(tree):
    """The tree as numpy on this host. Under jax.distributed a seed-sharded array is not fully
    addressable by one process, so it is all-gathered first (every process gets all seeds)."""

    def one(x):
        if isinstance(x, jax.Array) and not x.is_fully_addressable:
            from jax.experimental import multihost_utils

            return np.asarray(multihost_utils.process_allgather(x, tiled=True))
        return np.asarray(x)

    return jax.tree_util.tree_map(one, tree)


def _primary() -> bool:
    """Only process 0 writes metrics and records (Orbax coordinates its own writes)."""
    return jax.process_index() == 0


def _place(tree, strategy: str, mesh):
    """Put the stacked seed axis where the strategy wants it (sharded for 'shard')."""
    if strategy != "shard":
        return tree
    return jax.device_put(tree, NamedSharding(mesh, P(SEED_AXIS)))


@dataclasses.dataclass
class SweepResult:
    run_dir: Path
    cfg: Config
    seeds: list[int]
    strategy: str
    states: Any
    records: list[dict[str, Any]]
    wall_s: float
    interrupted: bool = False


def sweep(
    cfg: Config,
    seeds: Sequence[int],
    run_dir: str | Path,
    *,
    grid: dict[str, Sequence[float]] | None = None,
    strategy: str = "auto",
    progress: bool = True,
    stop_after: int | None = None,
    log: Callable[[str], None] = print,
) -> SweepResult:
    """Train ``cfg`` for every seed in ``seeds`` (and every point of ``grid``, e.g.
    ``{"train.lr": [1e-3, 3e-3]}``) at once, resumable, one record per run.

    Run r of the program equals ``run`` of cfg with that seed and those train fields. Records go
    to ``run_dir/seed<s>/`` (``run_dir/<lr=...>/seed<s>/`` with a grid)."""
    from mope_jax.checkpoint import Checkpointer

    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds) or not seeds:
        raise TrainingError(f"seeds must be distinct and non-empty, got {seeds}")
    check_causal(cfg)
    cfg, corpus = prepare(cfg)
    t = cfg.train
    _boundaries(t)
    runs = grid_runs(seeds, grid)
    R = len(runs)
    strategy = choose_strategy(R, strategy)
    mesh = seed_mesh() if strategy == "shard" else None
    if mesh is not None and R % mesh.size:
        raise TrainingError(f"strategy 'shard' needs the number of runs ({R}) to be a multiple of the "
                            f"device count ({mesh.size}); change --seeds or use --strategy map")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    trainer = make_train(cfg)
    train_data, val_data = jnp.asarray(corpus.train), jnp.asarray(corpus.val)
    spectra_fn, summary_fn = _default_hook("extract_spectra"), _default_hook("eval_summary")

    def init_one(key):
        # run() uses PRNGKey(train.seed) as the key of trainer.init
        return trainer.init(key)

    keys = seed_keys([sd for _, sd in runs])
    init_all = over_seeds(lambda k: init_one(k), strategy if strategy != "sequential" else "map", mesh)
    steps_cache: dict[int, Callable] = {}

    def steps_all(n):
        if n not in steps_cache:
            steps_cache[n] = over_seeds(functools.partial(_steps, trainer, n=n), strategy, mesh)
        return steps_cache[n]

    eval_all = over_seeds(trainer.evaluate, strategy, mesh)
    meta = {
        "config": cfg.to_dict(), "seeds": seeds, "runs": [[hp, sd] for hp, sd in runs], "strategy": strategy,
        "vocab": list(corpus.vocab),
        "corpus": corpus.meta, "causality": causality_record(cfg), "env": environment(),
    }
    ckpt = Checkpointer(run_dir / "checkpoints", keep=t.keep_checkpoints)
    run_cfgs = [dataclasses.replace(cfg, name=cfg.name + (f"[{run_label(hp)}]" if hp else ""),
                                    train=dataclasses.replace(t, seed=sd, **hp)) for hp, sd in runs]
    seed_dirs = [run_dir / run_label(hp) / f"seed{sd}" if hp else run_dir / f"seed{sd}" for hp, sd in runs]
    for d in seed_dirs:
        d.mkdir(parents=True, exist_ok=True)
    if ckpt.latest_step() is not None:
        saved_meta = ckpt.read_meta()
        if saved_meta.get("runs") != json.loads(json.dumps(meta["runs"])) or Config.from_dict(saved_meta["config"]) != cfg:
            raise TrainingError(f"{run_dir} holds a sweep with other seeds, grid or config; use a new --run-dir")
        abstract = jax.eval_shape(init_all, _place(keys, strategy, mesh))
        if mesh is not None:
            abstract = jax.tree_util.tree_map(
                lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, P(SEED_AXIS))), abstract)
        states, _ = ckpt.restore(abstract)
        step = int(host(states.step)[0])
        for d in seed_dirs:
            if _primary():
                _truncate_jsonl(d / "metrics.jsonl", step)
        log(f"resuming sweep {run_dir} from step {step}")
    else:
        states = init_all(_place(keys, strategy, mesh))
        if grid:
            hps = {f: jnp.asarray([float(hp.get(f, getattr(t, f))) for hp, _ in runs], jnp.float32)
                   for f in GRID_FIELDS}
            states = states.replace(hparams=_place(hps, strategy, mesh))
        step = 0
        for d in seed_dirs:
            if _primary():
                (d / "metrics.jsonl").write_text("")
    n_params = sum(x.size // x.shape[0] for x in jax.tree_util.tree_leaves(states.params))
    meta["num_params"] = n_params

    target = t.max_steps if stop_after is None else min(t.max_steps, stop_after)
    tokens_per_step = t.batch_size * cfg.model.block_size * R
    rates, interrupted, t_start = [], False, time.perf_counter()
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=t.max_steps, initial=step, unit="step", desc=f"{R} runs [{strategy}]")
    with _SigtermFlag() as sigterm:
        while step < target:
            n = _next_boundary(step, t) - step
            t0 = time.perf_counter()
            new_states, m = steps_all(n)(states, train_data)
            m = host(m)
            losses = m["loss"]  # (R, n)
            dt = time.perf_counter() - t0
            if not np.all(np.isfinite(losses)):
                ckpt.close()
                raise TrainingError(f"a seed's loss became non-finite before step {step + n}; the last good "
                                    f"checkpoint is kept in {run_dir}; lower train.lr")
            states, step = new_states, step + n
            rates.append(n * tokens_per_step / dt)
            ev = None
            if step % t.eval_interval == 0 or step == t.max_steps:
                ev = _to_py(host(eval_all(states, train_data, val_data)))
            need_states = ev is not None and summary_fn is not None or _is_save_point(step, t, target, sigterm.set)
            local = host(states) if need_states and (spectra_fn or summary_fn) else None
            for r, d in enumerate(seed_dirs):
                rec = {"step": step, "loss": float(losses[r].mean()), "lr": float(m["lr"][r, -1]),
                       "grad_norm": float(m["grad_norm"][r].mean()),
                       "tokens_per_s": rates[-1] / R, "seconds": dt}
                if ev is not None:
                    rec.update(eval_train=ev["train"][r], eval_val=ev["val"][r])
                    if summary_fn is not None:
                        rec.update(summary_fn(run_cfgs[r], _seed_state(local, r)))
                if _primary():
                    with (d / "metrics.jsonl").open("a") as f:
                        f.write(json.dumps(rec) + "\n")
            if bar is not None:
                bar.set_postfix({"loss": f"{losses[:, -1].mean():.4f}"}, refresh=False)
                bar.update(n)
            if _is_save_point(step, t, target, sigterm.set):
                spectra = None
                if spectra_fn is not None:
                    per_seed = [spectra_fn(run_cfgs[r], _seed_state(local, r)) for r in range(R)]
                    spectra = {k: np.stack([p[k] for p in per_seed]) for k in (per_seed[0] or {})}
                ckpt.save(step, states, meta, spectra)
            if sigterm.set:
                interrupted = True
                log(f"SIGTERM: saved step {step} in {run_dir}; run the same command again to resume")
                break
    if bar is not None:
        bar.close()
    ckpt.close()
    wall = time.perf_counter() - t_start
    records = []
    for r, (run_cfg, d) in enumerate(zip(run_cfgs, seed_dirs)):
        rec = summarize(d, run_cfg, meta, [x / R for x in rates])
        rec.update(sweep={"strategy": strategy, "seeds": seeds, "wall_s": wall, "run_dir": str(run_dir)})
        if step >= t.max_steps and _primary():
            (d / "final.json").write_text(json.dumps(rec, indent=2) + "\n")
        records.append(rec)
    return SweepResult(run_dir, cfg, seeds, strategy, states, records, wall, interrupted or step < t.max_steps)


def _steps(trainer, state, train_data, *, n):
    return trainer.train_steps(state, train_data, n)


def _seed_state(states, r: int):
    return jax.tree_util.tree_map(lambda x: x[r], states)


def load_seed(run_dir: str | Path, seed: int, step: int | None = None, *, hparams: dict[str, float] | None = None):
    """Restore one run's (config, state) from a sweep checkpoint, on whatever devices exist.
    With a grid, ``hparams`` picks the grid point (e.g. ``{"lr": 1e-3}``)."""
    from mope_jax.checkpoint import Checkpointer

    with Checkpointer(Path(run_dir) / "checkpoints", read_only=True) as ckpt:
        meta = ckpt.read_meta(step)
        cfg = Config.from_dict(meta["config"])
        runs = [(hp, sd) for hp, sd in meta["runs"]]
        want = {k.removeprefix("train."): float(v) for k, v in (hparams or {}).items()}
        matches = [r for r, (hp, sd) in enumerate(runs) if sd == seed and hp == want]
        if not matches:
            raise TrainingError(f"no run with seed {seed} and hparams {want} in this sweep; it holds "
                                f"{[(run_label(hp) or 'default', sd) for hp, sd in runs]}")
        trainer = make_train(cfg)
        one = jax.eval_shape(trainer.init, jax.random.PRNGKey(0))
        abstract = jax.tree_util.tree_map(lambda a: jax.ShapeDtypeStruct((len(runs),) + a.shape, a.dtype), one)
        states, _ = ckpt.restore(abstract, step)
    hp = runs[matches[0]][0]
    run_cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=seed, **hp))
    return run_cfg, _seed_state(states, matches[0])
