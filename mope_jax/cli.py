"""``mope-jax``: thin command line over the library (parse, call, print).

    mope-jax demo                                   the main job: a leak made visible
    mope-jax audit                                  causality audit of every registered variant
    mope-jax presets                                list presets and model variants
    mope-jax train --preset cpu --variant rope --data input.txt --run-dir runs/rope
    mope-jax eval   --run-dir runs/rope
    mope-jax sample --run-dir runs/rope --prompt "ROMEO:" --tokens 200
    mope-jax campaign status paper_a                 a declared experiment: what is done, missing
    mope-jax campaign run paper_a --scale cpu --budget-minutes 30
    mope-jax rope-advice --data input.txt             RoPE base and extension advice from data

Overrides are ``section.key=value`` (``train.lr=1e-3``, ``model.n_layer=2``). Bad input prints
one line starting with ``error:`` that names the fix, and exits with status 2.

Exit status: 0 done (or stopped where --stop-after asked), 1 a check failed (audit, report
--check), 2 bad input (one ``error:`` line), 143 stopped by SIGTERM after saving (run the same
command again to resume), 130 interrupted by Ctrl-C.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import signal
import sys
from pathlib import Path

from mope_jax.interrupt import EXIT_KEYBOARD, INTERRUPTED_MESSAGE
from mope_jax.interrupt import install as _exit_on_ctrl_c

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 143  # 128 + SIGTERM, what a shell reports for a process killed by it

EPILOG = """examples:
  mope-jax demo                                         # no download; ~2 min on 2 CPU cores
  mope-jax train --preset cpu --data path/to/input.txt  # TinyShakespeare from a local file
  mope-jax train --preset cpu --data tinyshakespeare    # through tensorflow-datasets
  mope-jax train --preset reference --variant rope --data input.txt --run-dir runs/ref-rope
  mope-jax train --preset smoke train.max_steps=40      # key=value overrides
Run the same train command again to resume an interrupted run (SIGTERM saves first)."""


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's own error format: one ``error:`` line, exit 2 (no usage dump)."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"error: {self.prog}: {message}; see {self.prog} --help\n")


def _int_at_least(lo: int):
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"{v} must be at least {lo}")
        return v

    parse.__name__ = f"integer >= {lo}"
    return parse


def _seed(text: str) -> int:
    from mope_jax.config import SEED_MAX

    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= v <= SEED_MAX:
        raise argparse.ArgumentTypeError(
            f"{v}: seeds are integers in [0, {SEED_MAX}] (jax.random.PRNGKey keeps 32 bits)"
        )
    return v


def _finite_nonneg(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"{text} must be a finite number >= 0")
    return v


def _nonempty(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


# The most tokens one ``sample`` writes: about the length of TinyShakespeare (1.1M characters),
# the largest corpus these models are trained on. Each token is one forward pass (about a
# millisecond at the smallest preset on a CPU core), so this is already minutes of work.
SAMPLE_TOKENS_MAX = 1_000_000


def _sample_tokens(text: str) -> int:
    v = _int_at_least(1)(text)
    if v > SAMPLE_TOKENS_MAX:
        raise argparse.ArgumentTypeError(
            f"{v} is more than {SAMPLE_TOKENS_MAX:,}, the most one sample writes (about the "
            "length of TinyShakespeare; one forward pass per token, minutes on a CPU); give "
            f"--tokens {SAMPLE_TOKENS_MAX} or fewer"
        )
    return v


# options naming a file or folder: checked against the file-name and path limits before any
# work; (option, bytes kept free under it, bytes kept free in its last name)
_PATH_OPTIONS = {
    "run_dir": ("--run-dir", "run", 0),
    "run_root": ("--run-root", "run", 0),
    "work_dir": ("--work-dir", "run", 0),
    "out": ("--out", 0, "beside"),
    "json": ("--json", 0, "beside"),
    "data": ("--data", 0, 0),
    "corpus": ("--corpus", 0, 0),
    "root": ("--root", 0, 0),
    "tfds_manual_dir": ("--tfds-manual-dir", 0, 0),
    "paths": ("PATHS", 0, 0),
}


def _check_paths(args: argparse.Namespace) -> None:
    """UsageError (one line naming the option) for a path too long to create or open."""
    from mope_jax.errors import UsageError
    from mope_jax.rundir import BESIDE_ROOM, RUN_DIR_ROOM, path_too_long

    writes = args.command in ("train", "sweep", "demo", "campaign")
    for dest, (option, inside, beside) in _PATH_OPTIONS.items():
        values = getattr(args, dest, None)
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str) or not value:
                continue
            why = path_too_long(
                value,
                inside=RUN_DIR_ROOM if inside == "run" and writes else 0,
                beside=BESIDE_ROOM if beside == "beside" else 0,
            )
            if why:
                raise UsageError(f"{option}: {why}; give a shorter {option}")


def _checked_run_dir(run_dir: Path, option: str) -> Path:
    from mope_jax.errors import UsageError
    from mope_jax.rundir import RUN_DIR_ROOM, path_too_long

    why = path_too_long(run_dir, inside=RUN_DIR_ROOM)
    if why:
        raise UsageError(
            f"the default run dir {option}: {why}; give a shorter name= or a --run-dir"
        )
    return run_dir


def _add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--preset", default="cpu", help="scale preset (mope-jax presets lists them); default: cpu"
    )
    p.add_argument(
        "--variant",
        default="learned",
        help="model variant (positional encoding / attention); default: learned",
    )
    p.add_argument(
        "--data",
        default=None,
        type=_nonempty,
        help="'blocks' (built-in synthetic task, default), "
        "'tinyshakespeare' (tensorflow-datasets), "
        "or a path to a UTF-8 text file",
    )
    p.add_argument(
        "--tfds-manual-dir",
        default=None,
        help="folder holding karpathy's input.txt, "
        "so tfds builds tiny_shakespeare without a download",
    )
    p.add_argument(
        "overrides", nargs="*", metavar="key=value", help="config overrides, e.g. train.lr=1e-3"
    )


def build_config(args: argparse.Namespace):
    from mope_jax.config import apply_overrides
    from mope_jax.presets import apply_variant, get_preset

    cfg = apply_variant(get_preset(args.preset), args.variant)
    data = {}
    if args.data:
        if args.data in ("blocks", "tinyshakespeare"):
            data["source"] = args.data
        else:
            data.update(source="text", path=args.data)
    if getattr(args, "tfds_manual_dir", None):
        data["tfds_manual_dir"] = args.tfds_manual_dir
    if data:
        cfg = dataclasses.replace(cfg, data=dataclasses.replace(cfg.data, **data))
    return apply_overrides(cfg, args.overrides)


def default_run_dir(cfg) -> Path:
    name = f"{cfg.name.replace('/', '-')}-{cfg.data.source}-s{cfg.train.seed}"
    return _checked_run_dir(Path("runs") / name, "(runs/<name>-<data>-s<seed>)")


def cmd_train(args) -> int:
    from mope_jax.train import run

    cfg = build_config(args)
    run_dir = Path(args.run_dir) if args.run_dir else default_run_dir(cfg)
    print(f"run dir: {run_dir}  (config: {cfg.name}, data: {cfg.data.source})")
    res = run(cfg, run_dir, progress=not args.no_progress, stop_after=args.stop_after)
    f = res.final
    if res.interrupted:
        print(f"stopped at step {f['steps']}; run the same command again to resume")
        return EXIT_INTERRUPTED if res.sigterm else EXIT_OK
    print(
        f"done: {f['steps']} steps  val loss {_num(f.get('final_val_loss'), '.4f')} nats/token  "
        f"(best {_num(f.get('best_val_loss'), '.4f')})  "
        f"{_num(f.get('tokens_per_s'), ',.0f')} tokens/s  "
        f"{'causal' if f['causality']['declared_causal'] else 'NON-CAUSAL'}"
    )
    print(f"results: {run_dir / 'final.json'}")
    return 0


def _num(x, spec: str) -> str:
    return "n/a" if x is None else format(x, spec)


def cmd_eval(args) -> int:
    from mope_jax.train import evaluate_run, load_run

    data_cfg = None
    if args.data or args.tfds_manual_dir:
        cfg, _, _ = load_run(args.run_dir)
        ns = argparse.Namespace(data=args.data, tfds_manual_dir=args.tfds_manual_dir)
        upd = {}
        if ns.data:
            upd = (
                {"source": ns.data}
                if ns.data in ("blocks", "tinyshakespeare")
                else {"source": "text", "path": ns.data}
            )
        if ns.tfds_manual_dir:
            upd["tfds_manual_dir"] = ns.tfds_manual_dir
        data_cfg = dataclasses.replace(cfg.data, **upd)
    out = evaluate_run(args.run_dir, data_cfg, batches=args.batches)
    print(json.dumps(out))
    return 0


def cmd_sample(args) -> int:
    import jax

    from mope_jax.train import generate, load_run, sampling_corpus

    cfg, state, meta = load_run(args.run_dir)
    if args.top_k > cfg.model.vocab_size:
        from mope_jax.errors import UsageError

        raise UsageError(
            f"--top-k {args.top_k} is larger than the vocabulary ({cfg.model.vocab_size}); "
            "use 0 (no cut) or a smaller k"
        )
    corpus = sampling_corpus(cfg, meta)
    prompt = (
        args.prompt
        if args.prompt is not None
        else corpus.decode(corpus.val[:1]).strip() or corpus.vocab[0]
    )
    ids = generate(
        cfg,
        state.params,
        corpus.encode(prompt),
        args.tokens,
        jax.random.PRNGKey(args.seed),
        temperature=args.temperature,
        top_k=args.top_k,
        log=lambda m: print(m, file=sys.stderr),
    )
    print(prompt + corpus.separator + corpus.decode(ids))
    return 0


def cmd_sweep(args) -> int:
    from mope_jax.config import SEED_MAX
    from mope_jax.errors import ConfigError
    from mope_jax.sweep import grid_key, sweep

    cfg = build_config(args)
    last = args.first_seed + args.seeds - 1
    if last > SEED_MAX:
        raise ConfigError(
            f"--first-seed {args.first_seed} --seeds {args.seeds} reaches seed {last}; seeds "
            f"are integers in [0, {SEED_MAX}], so use --first-seed {SEED_MAX - args.seeds + 1} "
            "or less"
        )
    from mope_jax.sweep import check_memory

    check_memory(cfg, args.seeds, args.strategy, args.data_parallel)  # before the seed list
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    run_dir = (
        Path(args.run_dir)
        if args.run_dir
        else _checked_run_dir(
            Path("runs") / f"sweep-{cfg.name.replace('/', '-')}", "(runs/sweep-<name>)"
        )
    )
    print(f"sweep dir: {run_dir}  (config: {cfg.name}, seeds {seeds}, strategy {args.strategy})")
    grid, given = {}, {}
    for item in args.grid or []:
        key, _, values = item.partition("=")
        if not values:
            raise ConfigError(f"--grid {item!r}: write it as train.lr=1e-3,3e-3")
        try:
            grid[key] = [float(v) for v in values.split(",")]
        except ValueError:
            raise ConfigError(
                f"--grid {item!r}: values must be numbers, e.g. train.lr=1e-3,3e-3"
            ) from None
        name = grid_key(key)
        if name in given:
            raise ConfigError(
                f"--grid {given[name]!r} and --grid {item!r} sweep the same field; give its "
                "values once, comma-separated (--grid train.lr=1e-3,3e-3)"
            )
        given[name] = item
    res = sweep(
        cfg,
        seeds,
        run_dir,
        grid=grid,
        strategy=args.strategy,
        data_parallel=args.data_parallel,
        progress=not args.no_progress,
        stop_after=args.stop_after,
    )
    if res.interrupted:
        print("stopped; run the same command again to resume")
        return EXIT_INTERRUPTED if res.sigterm else EXIT_OK
    from mope_jax.analysis.report import table

    print(f"done in {res.wall_s:.1f}s with strategy {res.strategy}")
    print(table(res.records))
    return 0


def cmd_report(args) -> int:
    from mope_jax import results
    from mope_jax.analysis import report
    from mope_jax.errors import UsageError

    if args.regenerate or args.check:
        if args.out or args.baseline:
            raise UsageError(
                "--regenerate re-renders committed tables from their JSON; --out/--baseline belong "
                "to the run-records mode (mope-jax report RUN_DIRS --out F)"
            )
        paths = args.paths or [report.REGENERATE_DEFAULT]
        files = results.render_all(paths)
        n_files = sum(2 if isinstance(v, report.FigureData) else 1 for v in files.values())
        notes: list[str] = []
        drift = report.sync(files, check=args.check, notes=notes)
        for note in notes:  # figures not drawn (no matplotlib)
            print(f"note: {note}", file=sys.stderr)
        shown = " ".join(args.paths or [report.REGENERATE_DEFAULT])
        if args.check:
            for f in drift:
                what = (
                    "is missing (a figure drawn from the .figure.json beside it)"
                    if f.suffix == ".png"
                    else "differs from what its JSON or records render"
                )
                print(f"drift: {_rel(f)} {what}; fix: mope-jax report --regenerate {shown}")
            if drift:
                return 1
            print(f"{n_files} files up to date")  # a figure: its .figure.json and its PNG
            return 0
        for f in drift:
            print(f"rewrote {_rel(f)}")
        print(f"{n_files - len(drift)} files up to date, {len(drift)} rewritten")
        return 0
    if not args.paths or not args.out:
        raise UsageError(
            "report needs run folders and --out (mope-jax report RUN_DIRS --out table.md), "
            "or --regenerate [PATHS] to re-render committed tables"
        )
    out = report.write_report(args.paths, args.out, baseline=args.baseline, title=args.title)
    print(out.read_text())
    return 0


def _rel(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def cmd_presets(args) -> int:
    from mope_jax.model import count_params, init_params
    from mope_jax.presets import model_variants, presets

    import jax

    print("scale presets (--preset):")
    for p in presets().values():
        cfg = p.build()
        m, t = cfg.model, cfg.train
        n = count_params(jax.eval_shape(lambda: init_params(m, jax.random.PRNGKey(0))))
        tokens = t.max_steps * t.batch_size * m.block_size
        print(
            f"  {p.name:<12} {n / 1e6:5.2f}M params at vocab {m.vocab_size}; "
            f"T={m.block_size} E={m.n_embd} "
            f"{m.n_layer} layers x {m.n_head} heads; "
            f"{t.max_steps} steps x {t.batch_size} windows = "
            f"{tokens / 1e6:.1f}M tokens [{p.target}]: {p.description}"
        )
    print("\nmodel variants (--variant; causality as the registry declares it):")
    for v in model_variants().values():
        print(f"  {v.name:<18} {'causal    ' if v.causal else 'NON-CAUSAL'}  {v.text}")
    if args.show:
        from mope_jax.presets import get_preset

        print(get_preset(args.show).to_json())
    return 0


def cmd_audit(args) -> int:
    from mope_jax.analysis.causality import audit_model_variants, audit_registry, format_table
    from mope_jax.attention import registry
    from mope_jax.errors import UsageError

    for slot in args.slot or []:
        if slot not in registry.SLOTS:
            raise UsageError(
                f"--slot {slot!r} is not a slot; use one of {', '.join(registry.SLOTS)}"
            )
    rows = audit_registry(seq_len=args.seq_len, slots=tuple(args.slot) if args.slot else None)
    if args.variants:
        rows += audit_model_variants(seq_len=args.seq_len)
    if not rows:  # an empty selection must never read as a pass
        raise UsageError(
            f"the selection (--slot {' --slot '.join(args.slot or [])}) "
            "matches no variant to audit; "
            "every slot's default is audited once, as pos_encoding=learned"
        )
    print(format_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    bad = [f"{r['slot']}={r['variant']}" for r in rows if r["declared_causal"] and not r["causal"]]
    if bad:
        print(f"error: declared causal but leaking: {', '.join(bad)}", file=sys.stderr)
        return 1
    print(f"{len(rows)} audited: every declared-causal variant passes")
    return 0


def cmd_demo(args) -> int:
    from mope_jax.demo import main as demo_main

    return demo_main(steps=args.steps, run_root=Path(args.run_root), progress=not args.no_progress)


def cmd_campaign(args) -> int:
    """``campaign status|run|estimate|analyze``: the plan of an experiment's campaign, train
    what it lacks, measure how long that would take, or add a later-declared analysis to its
    records from the local checkpoints."""
    import shlex

    from mope_jax import campaign

    root = campaign.find_root(args.root)
    exp = campaign.load_experiment(args.experiment, root)
    rows = [r.strip() for r in (args.rows or "").split(",") if r.strip()] or None
    if args.rows is not None and rows is None:
        from mope_jax.errors import UsageError

        raise UsageError(
            f"--rows {args.rows!r} names no row; give row names, e.g. --rows "
            f"{','.join(r.name for r in exp.rows[:2])}, or leave --rows out for every row"
        )
    if args.corpus and args.tfds_manual_dir:
        from mope_jax.errors import UsageError

        raise UsageError("--corpus and --tfds-manual-dir both name the corpus; give one of them")
    opts = dict(
        rows=rows, seeds=args.seeds, corpus=args.corpus, tfds_manual_dir=args.tfds_manual_dir
    )
    if args.action == "status":
        scales = [args.scale] if args.scale else [s.name for s in exp.scales]
        for i, name in enumerate(scales):
            c = campaign.Campaign.open(exp, name, root, **opts)
            plans = campaign.plan(c)
            print(("\n" if i else "") + campaign.format_plan(c, plans))
            eta = campaign.eta_line(c, plans)
            if eta:
                print(eta)
        return 0
    if not args.scale:
        from mope_jax.errors import UsageError

        raise UsageError(
            f"campaign {args.action} needs --scale; {exp.name} has: "
            f"{', '.join(s.name for s in exp.scales)}"
        )
    c = campaign.Campaign.open(exp, args.scale, root, **opts)
    if args.action == "estimate":
        print(campaign.estimate_rows(c, log=lambda m: print(m, file=sys.stderr)))
        return 0
    if args.action == "analyze":
        campaign.analyze_records(c, work_dir=args.work_dir)
        return 0
    if args.action == "reaudit":
        campaign.reaudit_records(c, work_dir=args.work_dir)
        return 0
    extra = []
    if rows:
        extra += ["--rows", ",".join(rows)]
    if args.seeds is not None:
        extra += ["--seeds", str(args.seeds)]
    if args.corpus:
        extra += ["--corpus", shlex.quote(args.corpus)]
    if args.tfds_manual_dir:
        extra += ["--tfds-manual-dir", shlex.quote(args.tfds_manual_dir)]
    if args.budget_minutes is not None:
        extra += ["--budget-minutes", f"{args.budget_minutes:g}"]
    if args.no_measure and args.budget_minutes is not None:
        from mope_jax.errors import UsageError

        raise UsageError(
            "--no-measure with --budget-minutes: a budget needs each row's pace; drop one of them"
        )
    # what was run, without the machine-local --root/--work-dir (recorded in every new record)
    strategy = [] if args.strategy == "auto" else ["--strategy", args.strategy]
    command = c.command(extra + strategy)
    res = campaign.run_campaign(
        c,
        strategy=args.strategy,
        budget_s=None if args.budget_minutes is None else 60 * args.budget_minutes,
        work_dir=args.work_dir,
        progress=not args.no_progress,
        command=command,
        continue_args=extra,
        measure=not args.no_measure,
    )
    if res.stopped == "sigterm":
        return EXIT_INTERRUPTED
    return 0


def _c_constant(text: str) -> float:
    if text in ("pi", "theory"):
        return math.pi
    if text == "fit":
        return 3.02
    v = _finite_nonneg(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text} must be > 0 (or pi, or fit = 3.02)")
    return v


def _factors(text: str) -> tuple[float, ...]:
    try:
        out = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of numbers like 2,4") from None
    if not out or any(not (math.isfinite(s) and s > 1) for s in out):
        raise argparse.ArgumentTypeError(f"{text!r}: every factor must be > 1, e.g. 2,4")
    return out


def _positive_float(text: str) -> float:
    v = _finite_nonneg(text)
    if v <= 1:
        raise argparse.ArgumentTypeError(f"{text} must be > 1")
    return v


def cmd_rope_advice(args) -> int:
    from mope_jax.analysis import rope_advice as ra

    tokens = ra.load_tokens(args.data, tfds_manual_dir=args.tfds_manual_dir or "")
    advice = ra.advise(
        tokens,
        head_dim=args.head_dim,
        context=args.context,
        base=args.base,
        max_distance=args.max_distance,
        kind=args.kernel,
        c=args.c,
        factors=args.factors,
    )
    if args.json:
        print(json.dumps(advice.to_dict(), indent=1))
    else:
        print(ra.format_advice(advice))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mope-jax",
        description=__doc__.split("\n\n")[0],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "train",
        help="train (or resume) a model",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_config_args(p)
    p.add_argument(
        "--run-dir",
        default=None,
        type=_nonempty,
        help="where checkpoints and metrics go (default: runs/<name>)",
    )
    p.add_argument(
        "--stop-after",
        type=_int_at_least(1),
        default=None,
        help="stop (and save) after this many steps",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("eval", help="evaluate a checkpoint on its corpus (or on --data)")
    p.add_argument("--run-dir", required=True, type=_nonempty)
    p.add_argument(
        "--data",
        default=None,
        type=_nonempty,
        help="the run's corpus where it is now (a moved file; checked against its sha256)",
    )
    p.add_argument("--tfds-manual-dir", default=None)
    p.add_argument("--batches", type=_int_at_least(1), default=None, help="eval batches per split")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("sample", help="generate text from a checkpoint")
    p.add_argument("--run-dir", required=True, type=_nonempty)
    p.add_argument("--prompt", default=None)
    p.add_argument(
        "--tokens",
        type=_sample_tokens,
        default=200,
        help=f"how many to generate, 1 to {SAMPLE_TOKENS_MAX:,} (default 200)",
    )
    p.add_argument("--temperature", type=_finite_nonneg, default=0.8, help="0 = greedy")
    p.add_argument("--top-k", type=_int_at_least(0), default=0)
    p.add_argument("--seed", type=_seed, default=0)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("sweep", help="train several seeds of one config as one program")
    _add_config_args(p)
    p.add_argument("--seeds", type=_int_at_least(1), default=4, help="number of seeds (default 4)")
    p.add_argument("--first-seed", type=_seed, default=0, help="default 0")
    p.add_argument("--strategy", default="auto", help="auto | vmap | map | shard | sequential")
    p.add_argument(
        "--data-parallel",
        type=_int_at_least(1),
        default=1,
        metavar="K",
        help="with shard: K devices per seed split every batch (mesh seed x data; default 1)",
    )
    p.add_argument(
        "--grid",
        action="append",
        metavar="train.FIELD=V1,V2",
        help="also sweep inside the same program a shape-free train field (lr, weight_decay, "
        "grad_clip), the omega*sigma bound (model.mope_bound), or a model field that only "
        "sets the initial state (e.g. model.kernel_scale); repeatable",
    )
    p.add_argument("--run-dir", default=None, type=_nonempty)
    p.add_argument("--stop-after", type=_int_at_least(1), default=None)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser(
        "report",
        help="markdown table with mean, std, 95%% CI and Welch tests from run records; "
        "--regenerate re-renders the committed tables from their JSON",
    )
    p.add_argument(
        "paths",
        nargs="*",
        help="run or sweep folders (searched for final.json); with --regenerate: "
        "folders or JSON files (default experiments/results)",
    )
    p.add_argument(
        "--out", default=None, help="markdown file to write (a .png and .json go beside it)"
    )
    p.add_argument("--baseline", default=None, help="config name to compare every row with")
    p.add_argument("--title", default="Results")
    p.add_argument(
        "--regenerate",
        action="store_true",
        help='re-render every file made from a results JSON that names a "renderer"',
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="with --regenerate: write nothing; exit 1 listing the files that differ",
    )
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "campaign",
        help="an experiment's campaign: status (the plan), run (train the runs without a record), "
        "estimate (how long they would take), analyze or reaudit",
        description="experiments/<name>.py declares EXPERIMENT = Experiment(...); records go to "
        "experiments/results/<name>/<scale>/records/<row>/seed<s>.json, the table to table.md",
    )
    p.add_argument(
        "action",
        choices=("run", "status", "estimate", "analyze", "reaudit"),
        help="estimate: measure each row's training step and print the time the missing runs "
        "need (nothing is trained or saved); analyze: add the experiment's analysis to records "
        "that lack it, from the local checkpoints (nothing is trained); reaudit: redo the "
        "causality audit of records audited at sampled positions (finite differences or "
        "derivatives), from the local checkpoints",
    )
    p.add_argument("experiment", help="the module experiments.<name> (e.g. paper_a)")
    p.add_argument("--scale", default=None, help="one of the experiment's scales")
    p.add_argument(
        "--root",
        default=None,
        help="repository root holding experiments/__init__.py (default: the current directory)",
    )
    p.add_argument("--rows", default=None, help="only these rows (comma-separated)")
    p.add_argument(
        "--seeds", type=_int_at_least(1), default=None, help="seeds 0..N-1 (default: the scale's)"
    )
    p.add_argument(
        "--corpus",
        default=None,
        type=_nonempty,
        help="text file in place of the default corpus, TinyShakespeare through "
        "tensorflow-datasets (downloaded once, kept in ~/.cache/mope_jax)",
    )
    p.add_argument(
        "--tfds-manual-dir",
        default=None,
        type=_nonempty,
        help="offline: a folder holding karpathy's input.txt, read in place of the download "
        "(default: $MOPE_JAX_TFDS_MANUAL_DIR)",
    )
    p.add_argument(
        "--budget-minutes",
        type=_finite_nonneg,
        default=None,
        help="stop at a run boundary before this much time is spent",
    )
    p.add_argument("--strategy", default="auto", help="auto | vmap | map | shard | sequential")
    p.add_argument(
        "--no-measure",
        action="store_true",
        help="run: train without measuring a step first (a measurement is one compile; the ETA "
        "then comes from this machine's records, if any); not with --budget-minutes",
    )
    p.add_argument(
        "--work-dir",
        default=None,
        type=_nonempty,
        help="local checkpoints (default: <root>/runs/campaigns)",
    )
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_campaign)

    p = sub.add_parser(
        "rope-advice",
        help="measure a corpus's dependency kernel K(r) and width W; recommend a RoPE base "
        "and a context-extension schedule (paper B's law + our rule; untested advice)",
        description="Measures K(r), r = 1..--max-distance, of the training tokens, the width W "
        "(first r with K(r) >= max K / 2), and prints the RoPE base and extension overrides "
        "that paper B's field-resolution law and our rule (mope_jax/analysis/rope_advice.py) "
        "give, with every number used. No training has checked this advice yet.",
    )
    p.add_argument(
        "--data",
        required=True,
        type=_nonempty,
        help="tinyshakespeare (tensorflow-datasets) | blocks:B=10[,K=16,N=200000,seed=0] | "
        "repeat:W=8[,K=16,N=200000,seed=0] | a UTF-8 text file (characters, first 90%%)",
    )
    p.add_argument("--tfds-manual-dir", default=None, help="folder holding karpathy's input.txt")
    p.add_argument("--head-dim", type=_int_at_least(4), default=32, help="D (default 32)")
    p.add_argument(
        "--context", type=_int_at_least(2), default=256, help="training length L (default 256)"
    )
    p.add_argument(
        "--base", type=_positive_float, default=10000.0, help="base to compare (default 10000)"
    )
    p.add_argument(
        "--max-distance",
        type=_int_at_least(1),
        default=None,
        help="largest r of K(r) (default: --context)",
    )
    p.add_argument(
        "--kernel",
        choices=("auto", "mi", "match"),
        default="auto",
        help="mi (mutual information) | match (excess exact matches) | auto (default: match "
        "for the built-in copy tasks, mi otherwise)",
    )
    p.add_argument(
        "--c",
        type=_c_constant,
        default=math.pi,
        help="theta* = c/W: pi (theory, default), fit (3.02, the paper's fit) or a number",
    )
    p.add_argument(
        "--factors", type=_factors, default=(2.0, 4.0), help="extension factors s (default 2,4)"
    )
    p.add_argument("--json", action="store_true", help="print the advice as JSON")
    p.set_defaults(func=cmd_rope_advice)

    p = sub.add_parser("presets", help="list scale presets and model variants")
    p.add_argument("--show", default=None, metavar="PRESET", help="print a preset's full config")
    p.set_defaults(func=cmd_presets)

    p = sub.add_parser(
        "audit", help="causality audit of every registered variant (exit 1 if a causal one leaks)"
    )
    p.add_argument(
        "--seq-len", type=_int_at_least(2), default=32, help="audit sequence length (default 32)"
    )
    p.add_argument("--slot", action="append", default=None, help="only this slot (repeatable)")
    p.add_argument(
        "--variants", action="store_true", help="also audit the model variants (--variant names)"
    )
    p.add_argument("--json", default=None, help="also write the rows to this JSON file")
    p.set_defaults(func=cmd_audit)

    p = sub.add_parser(
        "demo",
        help="the main job: a baseline, a leaking paper mechanism and its causal twin on "
        "built-in data, beside the Bayes-optimal loss",
    )
    p.add_argument("--steps", type=_int_at_least(1), default=None, help="training steps per model")
    p.add_argument("--run-root", default="runs/demo")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_demo)
    return parser


def _quiet_absl() -> None:
    """Orbax logs routine notices through absl at WARNING, and a failed save (e.g. a full disk)
    as many ERROR tracebacks from its worker threads and asyncio; the library raises one error
    that says what to do, which the CLI prints as its one line."""
    import logging

    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    default_hook = sys.unraisablehook

    def hook(u):  # after a failed save or a damaged checkpoint's read: Orbax's leftovers
        if isinstance(u.exc_value, RuntimeError) and str(u.exc_value) == "Event loop is closed":
            return  # tensorstore callbacks that reach Orbax's closed event loop
        code = getattr(u.object, "cr_code", None)
        if code is not None and "orbax" in code.co_filename:
            return  # Orbax read coroutines abandoned when the read failed
        default_hook(u)

    sys.unraisablehook = hook
    try:
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.FATAL)
    except ImportError:
        pass


def campaign_script(file: str, argv=None) -> int:
    """``python -m experiments.<name> --scale S [...]`` (or ``python experiments/<name>.py`` for a
    one-file campaign), the alias every campaign offers: ``mope-jax campaign run <name> --scale
    S [...]`` in the repository that holds ``file`` (the campaign's module file, or its package
    folder)."""
    path = Path(file).resolve()
    args = sys.argv[1:] if argv is None else list(argv)
    return main(["campaign", "run", path.stem, "--root", str(path.parents[1]), *args])


def main(argv: list[str] | None = None) -> int:
    """The CLI (``mope-jax``, ``python -m mope_jax``). Its first act makes a Ctrl-C exit 130
    with one line (:mod:`mope_jax.interrupt`), so that one during argument parsing or the
    imports of jax never unwinds; the command itself runs under :class:`~mope_jax.loop.CtrlC`
    (inside the training loop: save first). The caller's SIGINT handler is back on return."""
    outer = _exit_on_ctrl_c()
    try:
        return _main(argv)
    finally:
        if outer is not None:
            signal.signal(signal.SIGINT, outer)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    _quiet_absl()
    from mope_jax import provenance  # noqa: F401  importing it reads the commit this process runs
    from mope_jax.errors import MopeError
    from mope_jax.loop import CtrlC

    # Ctrl-C never unwinds the process while JAX works (that can segfault at exit): inside
    # the training loop it saves at the next chunk boundary, anywhere else it exits at once
    ctrl_c = CtrlC(INTERRUPTED_MESSAGE, EXIT_KEYBOARD)
    try:
        old = signal.signal(signal.SIGINT, ctrl_c)
    except ValueError:  # not the main thread: Python's own handling
        old = None
    try:
        _check_paths(args)
        code = args.func(args)
        if ctrl_c.seen:  # stopped by Ctrl-C after saving
            print(INTERRUPTED_MESSAGE, file=sys.stderr)
            return EXIT_KEYBOARD
        return code
    except (
        MopeError
    ) as e:  # bad input or files: one line; anything else is a bug and keeps its traceback
        print(f"error: {' '.join(str(e).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as e:
        from mope_jax.memory import OOM_HINT, is_out_of_memory

        if not is_out_of_memory(e):
            raise
        # what the estimate (mope_jax.memory) did not foresee: one line, not a traceback
        print(f"error: out of memory ({type(e).__name__}); {OOM_HINT}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # raised by the code itself (the handler above never raises)
        print(INTERRUPTED_MESSAGE, file=sys.stderr)
        return EXIT_KEYBOARD
    finally:
        if old is not None:
            signal.signal(signal.SIGINT, old)


if __name__ == "__main__":
    sys.exit(main())
