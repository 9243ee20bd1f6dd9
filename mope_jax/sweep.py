"""Multi-seed sweeps: R seeds of one config as one compiled program.

The only module that knows about devices and meshes. Strategies (``strategy=``):

  * ``"vmap"``: ``jax.vmap`` over the seed axis (the choice on GPU/TPU);
  * ``"map"``: ``jax.lax.map`` over seeds inside one jit (measured faster than vmap on CPU);
  * ``"shard"``: the seed axis sharded over a ``Mesh`` of all devices (``seed_mesh``); each
    device runs the ``map`` program on its seeds, concurrently (see ``_PerDevice``). With
    ``data_parallel=k`` the mesh is ('seed', 'data') and each seed slot's k devices split every
    batch. On a CPU host, ``XLA_FLAGS=--xla_force_host_platform_device_count=2`` gives two
    devices. Under ``jax.distributed`` the mesh spans every process;
  * ``"sequential"``: one seed after another (the baseline the benchmark compares with);
  * ``"auto"``: ``shard`` when R is a multiple of the device count > 1, else ``map`` on CPU
    and ``vmap`` on accelerators.

Every seed of a sweep uses the per-seed step of :func:`mope_jax.train.make_train` on the
same chunk grid as :func:`mope_jax.train.run`, so seed s of a sweep reproduces ``run`` with
``train.seed=s``: bitwise on CPU for ``map``, ``shard`` and ``sequential``. ``vmap`` is not:
XLA:CPU fuses and emits the batched backward pass differently from the one-seed program
(the differences of every strategy: ``python experiments/sweep_rounding.py`` ->
experiments/results/sweeps/rounding.md), so it is the accelerator strategy and ``auto``
never picks it on CPU. Sweeps checkpoint the stacked states with Orbax (with their sharding),
resume, and write one ``seed<s>/final.json`` record per seed, the same format as ``run``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any, Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from mope_jax import memory
from mope_jax.config import Config
from mope_jax.errors import TrainingError
from mope_jax.loop import (
    Hooks,
    Program,
    boundaries,
    check_resumable,
    default_hooks,
    RunSpec,
    drive,
    resume_or_init,
)
from mope_jax.optim import GRID_FIELDS
from mope_jax.provenance import environment
from mope_jax.rundir import RunLock, environment_errors, make_run_dir
from mope_jax.train import causality_record, check_causal, make_train, prepare

STRATEGIES = ("auto", "vmap", "map", "shard", "sequential")
SEED_AXIS = "seed"
DATA_AXIS = "data"


def choose_strategy(num_seeds: int, strategy: str = "auto", data_parallel: int = 1) -> str:
    if strategy not in STRATEGIES:
        raise TrainingError(
            f"unknown sweep strategy {strategy!r}; use one of {', '.join(STRATEGIES)}"
        )
    if data_parallel > 1 and strategy not in ("auto", "shard"):
        raise TrainingError(
            f"--data-parallel {data_parallel} needs strategy 'shard' (or auto), not {strategy!r}"
        )
    if strategy != "auto":
        return strategy
    slots = jax.device_count() // data_parallel
    if data_parallel > 1 or (slots > 1 and num_seeds % slots == 0):
        return "shard"
    return "map" if jax.default_backend() == "cpu" else "vmap"


def _slots(strategy: str, data_parallel: int) -> int:
    """How many device slots the runs are split over (strategy shard), for the memory check."""
    return max(1, jax.device_count() // data_parallel) if strategy == "shard" else 1


def check_memory(cfg: Config, runs: int, strategy: str = "auto", data_parallel: int = 1) -> None:
    """ConfigError when ``runs`` runs of ``cfg`` cannot fit in memory (mope_jax.memory)."""
    strategy = choose_strategy(runs, strategy, data_parallel)
    memory.check_training(cfg, runs, strategy=strategy, slots=_slots(strategy, data_parallel))


def seed_mesh(data_parallel: int = 1) -> jax.sharding.Mesh:
    """A mesh over every device (all processes under jax.distributed): axis 'seed', or
    ('seed', 'data') with ``data_parallel`` devices per seed slot sharing each batch."""
    n = jax.device_count()
    if data_parallel < 1 or n % data_parallel:
        raise TrainingError(f"--data-parallel {data_parallel} must divide the device count ({n})")
    if data_parallel == 1:
        return jax.make_mesh((n,), (SEED_AXIS,), axis_types=(jax.sharding.AxisType.Auto,))
    return jax.make_mesh(
        (n // data_parallel, data_parallel),
        (SEED_AXIS, DATA_AXIS),
        axis_types=(jax.sharding.AxisType.Auto,) * 2,
    )


def grid_key(k: str) -> str:
    """A grid key as sweeps store it: ``train.lr`` and ``lr`` are ``lr``; ``model.X`` stays."""
    return k if k.startswith("model.") else k.removeprefix("train.")


def grid_runs(
    seeds: Sequence[int], grid: dict[str, Sequence[float]] | None
) -> list[tuple[dict[str, float], int]]:
    """Every (grid point, seed) of a sweep: the product of the grid's values, each with every
    seed. Train keys (``train.lr``; the prefix may be left out) must be among ``GRID_FIELDS``;
    model keys (``model.filter_init_bin``) are checked by :func:`check_model_grid`. A field
    named twice, or a value repeated, is refused: it would train one run twice and count it
    as two seeds."""
    names = [grid_key(k) for k in grid or {}]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise TrainingError(f"grid names {twice} twice; give each field's values once")
    grid = {grid_key(k): [float(v) for v in vs] for k, vs in (grid or {}).items()}
    for k, vs in grid.items():
        dup = sorted({f"{v:g}" for v in vs if vs.count(v) > 1})
        if dup:
            raise TrainingError(
                f"grid {k}={','.join(f'{v:g}' for v in vs)} repeats {', '.join(dup)}: one run "
                "would be trained twice and counted as two; give each value once"
            )
    bad = sorted(k for k in grid if not k.startswith("model.") and k not in GRID_FIELDS)
    if bad:
        raise TrainingError(
            f"cannot sweep {bad} inside one program; grid keys must be among "
            f"{', '.join('train.' + f for f in GRID_FIELDS)} or model fields that only "
            f"set the initial state (e.g. model.filter_init_bin)"
        )
    combos = [dict()]
    for k, vs in grid.items():
        if not vs:
            raise TrainingError(f"grid {k} has no values")
        combos = [c | {k: v} for c in combos for v in vs]
    return [(c, int(sd)) for c in combos for sd in seeds]


def run_config(cfg: Config, hp: dict[str, float], seed: int) -> Config:
    """The config of one run of a sweep: its seed and grid point (train fields and model fields)."""
    model = {
        k.removeprefix("model."): _cast(cfg.model, k.removeprefix("model."), v)
        for k, v in hp.items()
        if k.startswith("model.")
    }
    train = {k: v for k, v in hp.items() if not k.startswith("model.")}
    return dataclasses.replace(
        cfg,
        name=cfg.name + (f"[{run_label(hp)}]" if hp else ""),
        model=dataclasses.replace(cfg.model, **model),
        train=dataclasses.replace(cfg.train, seed=seed, **train),
    )


def _cast(model_cfg, field: str, value: float):
    if not hasattr(model_cfg, field):
        raise TrainingError(f"grid model.{field}: ModelConfig has no field {field!r}")
    cur = getattr(model_cfg, field)
    if isinstance(cur, bool) or not isinstance(cur, (int, float)):
        raise TrainingError(f"grid model.{field}: only numeric fields can be swept (it is {cur!r})")
    if isinstance(cur, int):
        if value != int(value):
            raise TrainingError(f"grid model.{field}: {value} is not an integer")
        return int(value)
    return float(value)


def check_model_grid(cfg: Config, run_cfgs: Sequence[Config], train_data) -> None:
    """A model field may vary inside one program only if it changes nothing but the initial
    state: same state shapes and the same lowered training step and evaluation for every grid
    point (a field the step reads, e.g. the omega*sigma bound, is refused with
    the reason; run one sweep per value instead)."""

    def signature(c: Config):
        tr = make_train(c)
        state = jax.eval_shape(tr.init, jax.random.PRNGKey(0))
        # the lowered program (not the jaxpr: that keeps dead code such as a parameter's initial
        # value computed outside its initializer), without source locations
        step = jax.jit(lambda st, d: tr.train_steps(st, d, 1)).lower(state, train_data)
        ev = jax.jit(tr.evaluate).lower(state, train_data, train_data)
        return (
            jax.tree_util.tree_structure(state),
            jax.tree_util.tree_leaves(state),
            step.as_text(debug_info=False),
            ev.as_text(debug_info=False),
        )

    ref = signature(cfg)
    seen = set()
    for c in run_cfgs:
        if c.model in seen or c.model == cfg.model:
            continue
        seen.add(c.model)
        sig = signature(c)
        if sig[:2] != ref[:2]:
            raise TrainingError(
                f"{c.name}: this grid changes the shapes of the state; run one sweep per value"
            )
        if sig[2:] != ref[2:]:
            raise TrainingError(
                f"{c.name}: this model field changes the training step, not only the initial "
                f"state, so it cannot vary inside one program; run one sweep per value"
            )


def run_label(hp: dict[str, float]) -> str:
    return ",".join(f"{k}={v:g}" for k, v in hp.items())


def seed_keys(seeds: Sequence[int]) -> jax.Array:
    """(R, 2) raw keys, key r = PRNGKey(seeds[r]) -- what ``run`` uses for ``train.seed``."""
    return jnp.stack([jax.random.PRNGKey(int(s)) for s in seeds])


def over_seeds(fn: Callable, strategy: str, mesh: jax.sharding.Mesh | None = None) -> Callable:
    """Lift ``fn(per_seed_tree, *shared)`` to ``(stacked_tree, *shared)`` with a strategy.

    The result is jitted (``sequential``: its per-seed calls are; ``shard``: its per-device calls).
    Its programs are named ``seeds_<fn>`` (what compile logs and counters see).
    """
    name = "seeds_" + getattr(getattr(fn, "func", fn), "__name__", "fn").lstrip("_")

    def inner_map(xs, *a):
        return jax.lax.map(lambda x: fn(x, *a), xs)

    def inner_vmap(xs, *a):
        return jax.vmap(lambda x: fn(x, *a))(xs)

    inner_map.__name__ = inner_vmap.__name__ = name
    if strategy == "vmap":
        return jax.jit(inner_vmap)
    if strategy == "map":
        return jax.jit(inner_map)
    if strategy == "shard":
        return _PerDevice(jax.jit(inner_map), mesh or seed_mesh())
    if strategy == "sequential":
        one = jax.jit(fn)

        def seq(xs, *a):
            n = jax.tree_util.tree_leaves(xs)[0].shape[0]
            outs = [one(jax.tree_util.tree_map(lambda x: x[i], xs), *a) for i in range(n)]
            return jax.tree_util.tree_map(lambda *ys: jnp.stack(ys), *outs)

        return seq
    raise TrainingError(f"unknown sweep strategy {strategy!r}")


class _PerDevice:
    """The ``shard`` strategy: the seed axis split over ``mesh``; each seed slot (one device, or
    a row of devices along a ``data`` axis) runs the ``map`` program on its own seeds.

    This is what ``pmap`` did, without SPMD partitioning: measured on XLA:CPU, a
    ``shard_map``/``pmap`` program rounds differently from the one-device program
    (experiments/results/sweeps/rounding.md), while one ``map`` program per device is bitwise
    equal to ``run``. The devices run concurrently (JAX dispatch is asynchronous). The price:
    one compile per seed slot (run in parallel threads; first-call times in
    experiments/results/bench/sweeps.md). Inputs
    and outputs are global arrays sharded ``P('seed')`` over ``mesh`` (replicated over
    ``data``), so Orbax saves them with their sharding; under ``jax.distributed`` each process
    runs the slots whose devices it owns.
    """

    def __init__(self, mapped: Callable, mesh: jax.sharding.Mesh):
        self.mapped, self.mesh = mapped, mesh
        self.sharding = NamedSharding(mesh, P(SEED_AXIS))
        rows = np.asarray(mesh.devices).reshape(mesh.shape[SEED_AXIS], -1)
        me = jax.process_index()
        self.slots = [(i, list(row)) for i, row in enumerate(rows) if row[0].process_index == me]
        self.places = {
            i: row[0]
            if len(row) == 1
            else NamedSharding(jax.sharding.Mesh(np.asarray(row), (DATA_AXIS,)), P())
            for i, row in self.slots
        }
        self._shared: dict[tuple[int, int], Any] = {}

    def _local(self, x, i: int, row: list, per: int):
        """Seeds [i*per, (i+1)*per) of x on slot i's devices, without a copy when x is sharded."""
        if isinstance(x, jax.Array) and x.sharding == self.sharding:
            by_dev = {s.device: s.data for s in x.addressable_shards}
            missing = [d for d in row if d not in by_dev]
            if missing:  # seen once (2 host devices, step ~1850); cause not found
                raise TrainingError(
                    f"strategy 'shard': an array of the seed state has no shard on {missing[0]} "
                    f"(its shards are on {sorted(by_dev, key=lambda d: d.id)}); run the same "
                    "command again: it resumes from the last checkpoint"
                )
            if len(row) == 1:
                return by_dev[row[0]]
            return jax.make_array_from_single_device_arrays(
                (per,) + x.shape[1:], self.places[i], [by_dev[d] for d in row]
            )
        return jax.device_put(np.asarray(x)[i * per : (i + 1) * per], self.places[i])

    def _shared_on(self, a, i: int):
        key = (id(a), i)
        if key not in self._shared:
            self._shared[key] = (
                a,
                jax.device_put(a, self.places[i]),
            )  # keep a alive: id() stays unique
        return self._shared[key][1]

    def __call__(self, xs, *shared):
        R = jax.tree_util.tree_leaves(xs)[0].shape[0]
        n_slots = self.mesh.shape[SEED_AXIS]
        if R % n_slots:
            raise TrainingError(
                f"strategy 'shard' needs the number of runs ({R}) to be a multiple of the "
                f"number of seed slots ({n_slots}); change --seeds or use --strategy map"
            )
        per = R // n_slots

        # Each slot's inputs are picked in this thread; the worker threads only dispatch.
        inputs = {
            i: (
                jax.tree_util.tree_map(lambda x: self._local(x, i, row, per), xs),
                [self._shared_on(a, i) for a in shared],
            )
            for i, row in self.slots
        }

        def one_slot(slot):
            i, row = slot
            local, args = inputs[i]
            if len(row) == 1:
                return self.mapped(local, *args)
            with jax.set_mesh(
                self.places[i].mesh
            ):  # the batch constraint P('data') refers to this row
                return self.mapped(local, *args)

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(
            len(self.slots)
        ) as pool:  # first calls compile one program per slot
            outs = list(pool.map(one_slot, self.slots))

        def assemble(*leaves):
            arrays = [s.data for leaf in leaves for s in leaf.addressable_shards]
            return jax.make_array_from_single_device_arrays(
                (R,) + leaves[0].shape[1:], self.sharding, arrays
            )

        return jax.tree_util.tree_map(assemble, *outs)


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


def place_seeds(tree, strategy: str, mesh):
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
    sigterm: bool = False  # stopped by SIGTERM (saved first)


def sweep(
    cfg: Config,
    seeds: Sequence[int],
    run_dir: str | Path,
    *,
    grid: dict[str, Sequence[float]] | None = None,
    strategy: str = "auto",
    data_parallel: int = 1,
    progress: bool = True,
    stop_after: int | None = None,
    hooks: Hooks | None = None,
    init_params: Any = None,
    init_from: str | None = None,
    log: Callable[[str], None] = print,
) -> SweepResult:
    """Train ``cfg`` for every seed in ``seeds`` (and every point of ``grid``, e.g.
    ``{"train.lr": [1e-3, 3e-3]}``) at once, resumable, one record per run.

    Run r of the program equals ``run`` of cfg with that seed and those train fields (bitwise on
    CPU for ``map``, ``shard`` and ``sequential``). ``data_parallel=k`` (strategy ``shard``) gives
    each seed slot k devices that split every batch (XLA all-reduces the gradients; equal to
    ``run`` to float tolerance). Records go to ``run_dir/seed<s>/``
    (``run_dir/<lr=...>/seed<s>/`` with a grid). ``hooks`` as in :func:`mope_jax.train.run`;
    the loop itself is :func:`mope_jax.loop.drive`, the same as ``run``'s.

    init_params: start from these parameters instead of the initialisation, stacked over the
    runs (leading axis R, e.g. another sweep's final parameters: a fine-tune); the optimiser
    state, step and keys start fresh as for a new run. ``init_from`` names where they came
    from; it is stored in the checkpoint and a resume must name the same source."""
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds) or not seeds:
        raise TrainingError(f"seeds must be distinct and non-empty, got {seeds}")
    check_causal(cfg)
    check_memory(cfg, len(grid_runs(seeds, grid)), strategy, data_parallel)
    cfg, corpus = prepare(cfg)
    t = cfg.train
    boundaries(t)
    runs = grid_runs(seeds, grid)
    for hp, sd in runs:  # every grid point's config is validated before anything is written
        run_config(cfg, hp, sd)
    R = len(runs)
    strategy = choose_strategy(R, strategy, data_parallel)
    mesh = seed_mesh(data_parallel) if strategy == "shard" else None
    if mesh is not None and R % mesh.shape[SEED_AXIS]:
        raise TrainingError(
            f"strategy 'shard' needs the number of runs ({R}) to be a multiple of the "
            f"number of seed slots ({mesh.shape[SEED_AXIS]} = devices / data parallel); "
            f"change --seeds or use --strategy map"
        )
    run_dir = Path(run_dir)
    make_run_dir(run_dir)
    with RunLock(run_dir, jax.process_index()), environment_errors(run_dir):
        return _sweep_locked(
            cfg,
            corpus,
            seeds,
            runs,
            strategy,
            mesh,
            run_dir,
            grid=grid,
            data_parallel=data_parallel,
            progress=progress,
            stop_after=stop_after,
            hooks=default_hooks() if hooks is None else hooks,
            init_params=init_params,
            init_from=init_from,
            log=log,
        )


def _sweep_locked(
    cfg,
    corpus,
    seeds,
    runs,
    strategy,
    mesh,
    run_dir,
    *,
    grid,
    data_parallel,
    progress,
    stop_after,
    hooks,
    init_params,
    init_from,
    log,
) -> SweepResult:
    from mope_jax.checkpoint import Checkpointer

    t = cfg.train
    R = len(runs)
    trainer = make_train(cfg, batch_sharding=P(DATA_AXIS) if data_parallel > 1 else None)
    train_data, val_data = jnp.asarray(corpus.train), jnp.asarray(corpus.val)
    keys = seed_keys([sd for _, sd in runs])
    init_all = over_seeds(trainer.init, strategy if strategy != "sequential" else "map", mesh)
    steps_cache: dict[int, Callable] = {}

    def steps_all(n):
        if n not in steps_cache:
            steps_cache[n] = over_seeds(functools.partial(_steps, trainer, n=n), strategy, mesh)
        return steps_cache[n]

    meta = {
        "config": cfg.to_dict(),
        "seeds": seeds,
        "runs": [[hp, sd] for hp, sd in runs],
        "strategy": strategy,
        "data_parallel": data_parallel,
        "vocab": list(corpus.vocab),
        "corpus": corpus.meta,
        "causality": causality_record(cfg),
        "env": environment(),
    }
    if init_params is not None:
        meta["init_from"] = init_from or "given parameters"
    run_cfgs = [run_config(cfg, hp, sd) for hp, sd in runs]
    model_grid = any(k.startswith("model.") for hp, _ in runs for k in hp)
    if model_grid:
        check_model_grid(cfg, run_cfgs, train_data)
    run_dirs = [
        run_dir / run_label(hp) / f"seed{sd}" if hp else run_dir / f"seed{sd}" for hp, sd in runs
    ]
    for d in run_dirs:
        d.mkdir(parents=True, exist_ok=True)

    def check(saved_meta):  # before any array is restored
        check_resumable(saved_meta, cfg, corpus, run_dir, what="a sweep")
        if saved_meta.get("runs") != json.loads(json.dumps(meta["runs"])):
            raise TrainingError(
                f"{run_dir} holds a sweep with other seeds or grid; use a new --run-dir"
            )
        if saved_meta.get("init_from") != meta.get("init_from"):
            raise TrainingError(
                f"{run_dir} started from {saved_meta.get('init_from') or 'the initialisation'}, "
                f"this sweep from {meta.get('init_from') or 'the initialisation'}; "
                "use a new --run-dir"
            )

    def init():
        if model_grid:  # each run's own initial state (its model fields), then one program
            inits = {c.model: jax.jit(make_train(c).init) for c in run_cfgs}
            one = [inits[c.model](k) for c, k in zip(run_cfgs, keys)]
            states = place_seeds(
                jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *one), strategy, mesh
            )
        else:
            states = init_all(place_seeds(keys, strategy, mesh))
        if grid:
            hps = {
                f: jnp.asarray([float(hp.get(f, getattr(t, f))) for hp, _ in runs], jnp.float32)
                for f in GRID_FIELDS
            }
            states = states.replace(hparams={**states.hparams, **place_seeds(hps, strategy, mesh)})
        if init_params is not None:
            # The optimiser state of a fresh run depends on the parameters' shapes only (zero
            # moments, count 0), so replacing the parameters is a fresh start from them.
            states = states.replace(params=place_seeds(init_params, strategy, mesh))
        return states

    abstract = jax.eval_shape(over_seeds(trainer.init, "map"), keys)
    if init_params is not None:
        want = jax.tree_util.tree_map(lambda a: (a.shape, str(a.dtype)), abstract.params)
        got = jax.tree_util.tree_map(lambda a: (tuple(a.shape), str(a.dtype)), init_params)
        if got != want:
            raise TrainingError(
                f"the starting parameters ({init_from or 'given'}) do not fit this model: "
                "their tree, shapes or dtypes differ (a fine-tune may change the length of a "
                "RoPE model, not its widths or a position table)"
            )
    if mesh is not None:
        sharding = NamedSharding(mesh, P(SEED_AXIS))
        abstract = jax.tree_util.tree_map(
            lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding), abstract
        )
    ckpt = Checkpointer(run_dir / "checkpoints", keep=t.keep_checkpoints)
    states, last_good = resume_or_init(
        ckpt,
        abstract,
        init,
        run_dirs,
        check_meta=check,
        run_dir=run_dir,
        log=log,
        primary=_primary(),
    )
    meta["num_params"] = sum(x.size // x.shape[0] for x in jax.tree_util.tree_leaves(states.params))
    program = Program(
        n_runs=R,
        steps=steps_all,
        evaluate=over_seeds(trainer.evaluate, strategy, mesh),
        stacked=True,
        to_host=host,
    )
    labels = [(run_label(hp) + " " if hp else "") + f"seed {sd}" for hp, sd in runs]
    sweep_info = {"strategy": strategy, "data_parallel": data_parallel, "seeds": seeds}
    spec = RunSpec(
        cfg=cfg,
        run_cfgs=run_cfgs,
        run_dirs=run_dirs,
        labels=labels,
        train_data=train_data,
        val_data=val_data,
        ckpt=ckpt,
        meta=meta,
        run_dir=run_dir,
        last_good=last_good,
        desc=f"{R} runs [{strategy}]",
        record_extra=lambda wall: {"sweep": sweep_info | {"wall_s": wall, "run_dir": str(run_dir)}},
        primary=_primary(),
    )
    out = drive(
        program, states, spec, hooks=hooks, stop_after=stop_after, progress=progress, log=log
    )
    return SweepResult(
        run_dir,
        cfg,
        seeds,
        strategy,
        out.states,
        out.records,
        out.wall_s,
        out.interrupted,
        sigterm=out.sigterm,
    )


def _steps(trainer, state, train_data, *, n):
    return trainer.train_steps(state, train_data, n)


def _seed_state(states, r: int):
    return jax.tree_util.tree_map(lambda x: x[r], states)


def load_seed(
    run_dir: str | Path,
    seed: int,
    step: int | None = None,
    *,
    hparams: dict[str, float] | None = None,
):
    """Restore one run's (config, state) from a sweep checkpoint, on whatever devices exist.
    With a grid, ``hparams`` picks the grid point (e.g. ``{"lr": 1e-3}``)."""
    from mope_jax.checkpoint import Checkpointer

    want = {
        k if k.startswith("model.") else k.removeprefix("train."): float(v)
        for k, v in (hparams or {}).items()
    }

    def abstract_for(meta):  # checked before any array of the step is read
        cfg = Config.from_dict(meta["config"])
        runs = [(hp, sd) for hp, sd in meta["runs"]]
        if not any(sd == seed and hp == want for hp, sd in runs):
            raise TrainingError(
                f"no run with seed {seed} and hparams {want} in this sweep; it holds "
                f"{[(run_label(hp) or 'default', sd) for hp, sd in runs]}"
            )
        one = jax.eval_shape(make_train(cfg).init, jax.random.PRNGKey(0))
        return jax.tree_util.tree_map(
            lambda a: jax.ShapeDtypeStruct((len(runs),) + a.shape, a.dtype), one
        )

    with Checkpointer(Path(run_dir) / "checkpoints", read_only=True) as ckpt:
        if step is None:  # the newest intact step (damaged ones are skipped with a warning)
            import sys

            _, states, meta = ckpt.restore_intact(
                abstract_for, log=lambda m: print(m, file=sys.stderr)
            )
        else:
            meta = ckpt.read_meta(step)
            states, _ = ckpt.restore(abstract_for(meta), step, meta=meta)
    cfg = Config.from_dict(meta["config"])
    runs = [(hp, sd) for hp, sd in meta["runs"]]
    matches = [r for r, (hp, sd) in enumerate(runs) if sd == seed and hp == want]
    run_cfg = run_config(cfg, runs[matches[0]][0], seed)
    return run_cfg, _seed_state(states, matches[0])
