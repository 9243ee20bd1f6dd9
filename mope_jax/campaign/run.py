"""Campaigns: an experiment declares rows, scales and comparisons; the library trains the runs
that have no record yet, keeps one small record per (row, seed) in git, and renders the table.

    experiments/<name>.py      EXPERIMENT = Experiment(name, title, rows, scales, baseline, ...)
    mope-jax campaign status <name> [--scale S]           the plan: done / missing per row
    mope-jax campaign run <name> --scale S [--budget-minutes M] [--strategy map] ...
    mope-jax report --regenerate experiments/results      re-render every table.md

Layout (``<root>`` is the repository root, the folder holding ``experiments/__init__.py``):

    <root>/experiments/results/<name>/<scale>/records/<row>/seed<s>.json   committed records
    <root>/experiments/results/<name>/<scale>/table.md                     rendered from them
    <root>/runs/campaigns/<name>/<scale>/<row>/seeds-<s1>-<s2>...          local checkpoints

A record is the ``final.json`` record of that seed (``train.summarize``: losses, curve, steps,
tokens/s, train seconds, parameters, declared causality, config, small spectra, env) plus
``row``, ``experiment``, ``scale``, ``command``, ``date_utc``, ``corpus`` (its digest, no
path), ``summary`` (:func:`mope_jax.analysis.spectra.eval_summary` of the trained state),
``campaign`` (the seeds trained together and their wall time, for the ETA) and, when the
experiment asks for it, ``audit`` (:func:`mope_jax.analysis.causality.audit_model` of the
trained parameters). The missing seeds of one row train together as ONE
:func:`mope_jax.sweep.sweep` program, so seed s of a row is the same run whichever seeds it
was trained with, on whichever machine (bitwise on CPU with ``map``, ``shard`` and
``sequential``): an interrupted campaign continued elsewhere renders the same table.

A record is *stale* when its config is not the row's current config (the corpus compared by
digest, not by path, so a clone elsewhere keeps its records valid); ``status`` shows it and
``run`` refuses to mix it in.

:func:`render_campaign` is a pure function of the records: everything above ``## Provenance``
depends only on their numbers (no clock, no machine), so tables from an interrupted and an
uninterrupted campaign are equal.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import math
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from mope_jax.config import LOCATION_FIELDS
from mope_jax.errors import CampaignError
from mope_jax.provenance import jsonable as _jsonable
from mope_jax.provenance import at_write, cpu_text, utc_now

RESULTS = ("experiments", "results")
RECORD_RE = re.compile(r"^seed(\d+)\.json$")
_SECTIONS = ("model", "train", "data")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
# DataConfig fields that say where a corpus lives on this machine, not what it is: a record
# made elsewhere is compared on the corpus digest instead.
_LOCATION_FIELDS = LOCATION_FIELDS
# a record's losses: each a finite number where present
_LOSS_FIELDS = ("final_val_loss", "final_train_loss", "best_val_loss")


# --------------------------------------------------------------------------- declaration


@dataclass(frozen=True)
class Row:
    """One line of the table: a presets variant (``presets.apply_variant``) plus dotted
    overrides (``"model.n_layer=2"``, ``"train.lr=1e-3"``). A variant declared non-causal gets
    ``train.allow_noncausal=true`` and is labelled NON-CAUSAL wherever it appears."""

    name: str
    variant: str
    overrides: tuple[str, ...] = ()
    label: str = ""
    paper: float | None = None  # the paper's number for this row (at its own scale), if any
    # A row declared earlier in the experiment: each seed starts from that row's final
    # parameters of the same seed (fresh optimiser, step 0), e.g. a fine-tune at a new length.
    # Its checkpoint is read from the local work folder; where only its record exists (a fresh
    # clone) that row's seeds are trained again first and checked against the record.
    init_from: str | None = None
    # This row's own measurement instead of the experiment's ``analyze`` (same signature).
    analyze: Callable | None = None


@dataclass(frozen=True)
class Comparison:
    """A paired comparison a - b over the seeds both rows have; ``what`` says what differs.
    With ``c`` and ``d`` it is the interaction (a - b) - (c - d) over the seeds all four rows
    have (e.g. whether a gate helps one model more than another)."""

    a: str
    b: str
    what: str
    c: str | None = None
    d: str | None = None

    def __post_init__(self):
        if (self.c is None) != (self.d is None):
            raise CampaignError(f"comparison {self.a} - {self.b}: give both c and d, or neither")

    @property
    def key(self) -> tuple[str, ...]:
        return (self.a, self.b) if self.c is None else (self.a, self.b, self.c, self.d)

    @property
    def terms(self) -> tuple[tuple[str, float], ...]:
        """(row, coefficient) of the contrast."""
        two = ((self.a, 1.0), (self.b, -1.0))
        return two if self.c is None else two + ((self.c, -1.0), (self.d, 1.0))


@dataclass(frozen=True)
class Scale:
    """Model and train fields (``ModelConfig``/``TrainConfig`` keyword arguments), the number of
    seeds, and optionally ``DataConfig`` fields on top of the experiment's data.

    rows: the names of the rows planned (and tabled) at this scale (None: every row; a grid
    whose points depend on the scale lists its own; the baseline must be one of them).
    row_overrides: ``{row name: dotted overrides}`` applied after that row's own overrides at
    this scale only (a row whose steps or data size differ per scale, e.g. a task that trains
    longer than the others at one scale).
    row_seeds: ``{row name: seeds}`` for rows planned with another number of seeds than
    ``seeds`` at this scale (e.g. more seeds for the rows behind a headline verdict)."""

    name: str
    model: dict
    train: dict
    seeds: int
    data: dict | None = None
    row_overrides: dict | None = None
    rows: tuple[str, ...] | None = None
    row_seeds: dict | None = None

    def seeds_of(self, row: str) -> int:
        """How many seeds (0..n-1) this scale plans for ``row``."""
        return int((self.row_seeds or {}).get(row, self.seeds))


Section = Callable[["Experiment", "Scale", list], str]


@dataclass(frozen=True)
class Experiment:
    """A campaign's declaration (``EXPERIMENT`` in ``experiments/<name>.py``).

    data: ``DataConfig`` fields; None = TinyShakespeare, the text file
    ``<root>/../shared/data/tinyshakespeare/input.txt`` (``--corpus PATH`` replaces it).
    sections: pure renderers ``fn(experiment, scale, records) -> markdown`` appended after the
    tables (records: every record of the scale, as :func:`read_records` returns them).
    claims: the paper claims judged from this campaign's records (:mod:`mope_jax.claims`;
    rendered into the claims ledger by ``mope-jax report --regenerate``).
    analyze: a bespoke measurement of each trained run, ``fn(cfg, state, corpus) -> dict``
    (JSON values; cfg has the corpus vocabulary, state is that seed's TrainState with numpy
    leaves), stored in the record as ``analysis`` for the sections to render.
    paper_scale: the paper's own training budget in words (parameters, training tokens, seeds),
    which the claims ledger states beside ours; "" when the paper gives none.
    """

    name: str
    title: str
    rows: tuple[Row, ...]
    scales: tuple[Scale, ...]
    baseline: str
    comparisons: tuple[Comparison, ...] = ()
    claim: str | None = None
    audit: bool = False
    metric: str = "final_val_loss"
    sections: tuple[Section, ...] = ()
    data: dict | None = None
    analyze: Callable | None = None
    claims: tuple = ()  # mope_jax.claims.Claim: the paper claims this campaign judges
    paper_scale: str = ""

    def __post_init__(self):
        object.__setattr__(self, "rows", tuple(self.rows))
        object.__setattr__(self, "scales", tuple(self.scales))
        object.__setattr__(self, "comparisons", tuple(self.comparisons))
        object.__setattr__(self, "sections", tuple(self.sections))
        where = f"experiment {self.name!r}"
        for what, names in (
            ("row", [r.name for r in self.rows]),
            ("scale", [s.name for s in self.scales]),
        ):
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise CampaignError(f"{where}: {what} names {dup} are declared twice")
            bad = [n for n in names if not _NAME_RE.match(n)]
            if bad:
                raise CampaignError(
                    f"{where}: {what} names {bad} are not folder names; use letters, digits, -_."
                )
        if not self.rows or not self.scales:
            raise CampaignError(f"{where}: declare at least one row and one scale")
        rows = {r.name for r in self.rows}
        before: set[str] = set()
        for r in self.rows:
            base = r.init_from
            if base is not None and (base not in before or self.row(base).init_from is not None):
                raise CampaignError(
                    f"{where}: row {r.name} starts from {base!r}, which must be a row declared "
                    "before it that starts from the initialisation itself"
                )
            before.add(r.name)
        if self.baseline not in rows:
            raise CampaignError(f"{where}: baseline {self.baseline!r} is not one of its rows")
        for c in self.comparisons:
            for side, _ in c.terms:
                if side not in rows:
                    raise CampaignError(f"{where}: comparison {c.a} - {c.b}: no row {side!r}")
        for s in self.scales:
            if s.seeds < 1:
                raise CampaignError(f"{where}: scale {s.name} needs at least one seed")
            unknown = sorted(set(s.row_overrides or {}) - rows)
            if unknown:
                raise CampaignError(f"{where}: scale {s.name} row_overrides name no row {unknown}")
            unknown = sorted(set(s.row_seeds or {}) - set(s.rows if s.rows is not None else rows))
            if unknown:
                raise CampaignError(
                    f"{where}: scale {s.name} row_seeds name rows it does not plan {unknown}"
                )
            if any(int(n) < 1 for n in (s.row_seeds or {}).values()):
                raise CampaignError(f"{where}: scale {s.name} row_seeds need at least one seed")
            if s.rows is not None:
                object.__setattr__(s, "rows", tuple(s.rows))
                unknown = [n for n in s.rows if n not in rows]
                if unknown:
                    raise CampaignError(f"{where}: scale {s.name} lists unknown rows {unknown}")
                if self.baseline not in s.rows:
                    raise CampaignError(
                        f"{where}: scale {s.name} does not list the baseline {self.baseline!r}"
                    )

    def row(self, name: str) -> Row:
        for r in self.rows:
            if r.name == name:
                return r
        raise CampaignError(
            f"experiment {self.name} has no row {name!r}; its rows: "
            + ", ".join(r.name for r in self.rows)
        )

    def rows_at(self, scale: Scale) -> tuple[Row, ...]:
        """The rows planned at ``scale``: its ``rows`` (in that order), else all."""
        if scale.rows is None:
            return self.rows
        return tuple(self.row(n) for n in scale.rows)

    def scale(self, name: str) -> Scale:
        for s in self.scales:
            if s.name == name:
                return s
        raise CampaignError(
            f"experiment {self.name} has no scale {name!r}; use --scale with one of: "
            + ", ".join(s.name for s in self.scales)
        )


# --------------------------------------------------------------------------- loading


def find_root(root: str | Path | None = None) -> Path:
    """The repository root: ``root`` (default: the current directory), which must hold
    ``experiments/__init__.py``."""
    path = Path(root if root is not None else ".").resolve()
    if not (path / "experiments" / "__init__.py").is_file():
        raise CampaignError(
            f"{path} has no experiments/__init__.py, so it is not a repository root; run from "
            "the repository root or pass --root PATH"
        )
    return path


@contextlib.contextmanager
def _experiments_of(root: Path):
    """Import ``experiments.*`` from ``root``: its folder first on sys.path and any
    ``experiments`` package of another root out of sys.modules for the duration; both are put
    back after (several roots can be used in one process, e.g. by tests and report)."""
    pkg = sys.modules.get("experiments")
    ours = pkg is not None and any(
        Path(p).resolve() == root / "experiments" for p in getattr(pkg, "__path__", [])
    )
    saved = {}
    if not ours:
        saved = {
            k: sys.modules.pop(k)
            for k in list(sys.modules)
            if k == "experiments" or k.startswith("experiments.")
        }
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(root))
        if not ours:
            for k in [k for k in sys.modules if k == "experiments" or k.startswith("experiments.")]:
                del sys.modules[k]
            sys.modules.update(saved)


def available(root: Path) -> list[str]:
    """Experiment modules of ``root`` that declare ``EXPERIMENT`` (by their text, not run)."""
    return sorted(
        p.stem
        for p in (root / "experiments").glob("*.py")
        if not p.stem.startswith("_") and re.search(r"^EXPERIMENT\b", p.read_text(), re.M)
    )


def import_experiment_module(name: str, root: Path):
    """The module ``experiments.<name>`` of the repository at ``root`` (imported by name)."""
    with _experiments_of(Path(root)):
        return importlib.import_module(f"experiments.{name}")


def load_experiment(name: str, root: str | Path | None = None) -> Experiment:
    """``EXPERIMENT`` of the module ``experiments.<name>`` of the repository at ``root``."""
    root = find_root(root)
    known = available(root)
    if (
        not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name)
        or not (root / "experiments" / f"{name}.py").is_file()
    ):
        raise CampaignError(
            f"unknown experiment {name!r}; the campaigns in {root / 'experiments'}: "
            + (", ".join(known) or "none")
        )
    mod = import_experiment_module(name, root)
    exp = getattr(mod, "EXPERIMENT", None)
    if not isinstance(exp, Experiment):
        raise CampaignError(
            f"experiments/{name}.py defines no EXPERIMENT = Experiment(...), so it is not a "
            "campaign; campaigns here: " + (", ".join(known) or "none")
        )
    if exp.name != name:
        raise CampaignError(
            f"experiments/{name}.py declares Experiment(name={exp.name!r}); name it {name!r}"
        )
    return exp


# --------------------------------------------------------------------------- configs


def default_data(root: Path) -> dict:
    path = (Path(root) / ".." / "shared" / "data" / "tinyshakespeare" / "input.txt").resolve()
    return {"source": "text", "path": str(path)}


def data_fields(
    experiment: Experiment, scale: Scale, root: Path, corpus: str | Path | None = None
) -> dict:
    d = dict(experiment.data) if experiment.data is not None else default_data(root)
    d.update(scale.data or {})
    if corpus is not None:
        d.update(source="text", path=str(Path(corpus).expanduser().resolve()))
    return d


def row_config(experiment: Experiment, scale: Scale, row: Row, data: dict | None = None):
    """The row's Config at this scale (vocab not fitted yet; ``train.seed`` 0)."""
    from mope_jax.attention import registry
    from mope_jax.config import Config, DataConfig, ModelConfig, TrainConfig, apply_overrides
    from mope_jax.presets import apply_variant

    try:
        base = Config(
            model=ModelConfig(**scale.model),
            data=DataConfig(**(data or {})),
            train=TrainConfig(**scale.train),
            name=f"{experiment.name}-{scale.name}",
        )
        extra = list((scale.row_overrides or {}).get(row.name, ()))
        cfg = apply_overrides(apply_variant(base, row.variant), list(row.overrides) + extra)
    except (TypeError, ValueError) as e:  # ConfigError is a ValueError; so is a renamed variant
        raise CampaignError(f"{experiment.name}/{scale.name} row {row.name}: {e}") from None
    if not registry.declared_causal(cfg.model):  # allowed, and labelled everywhere
        cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, allow_noncausal=True))
    return cfg


def declared_causal(experiment: Experiment, scale: Scale, row: Row) -> bool:
    from mope_jax.attention import registry

    return registry.declared_causal(row_config(experiment, scale, row).model)


def _normal(x):
    return json.loads(json.dumps(x))


def _field_defaults() -> dict[str, dict]:
    """{section: {field: default}} of today's config dataclasses, JSON-normalised."""
    from mope_jax.config import Config

    cfg = Config()
    return {
        sec: _normal(_jsonable(dataclasses.asdict(getattr(cfg, sec))))
        for sec in ("model", "data", "train")
    }


def config_diff(old: dict, new: dict) -> list[str]:
    """``section.key: old -> new`` for every field that differs (location fields left out).

    A field the old record does not have at all was added to the config after the record was
    written; it counts as equal when the new config keeps it at its default (a field is only
    added with a default that keeps the earlier computation, e.g. ``model.attn_layout``)."""
    old, new = _normal(old), _normal(new)
    defaults = _field_defaults()
    out = []
    for sec in ("model", "data", "train"):
        a, b = old.get(sec, {}), new.get(sec, {})
        for k in sorted(set(a) | set(b)):
            if sec == "data" and k in _LOCATION_FIELDS:
                continue
            if k not in a and k in defaults.get(sec, {}) and b.get(k) == defaults[sec][k]:
                continue
            if a.get(k) != b.get(k):
                out.append(f"{sec}.{k}: {a.get(k)!r} -> {b.get(k)!r}")
    if old.get("name") != new.get("name"):
        out.append(f"name: {old.get('name')!r} -> {new.get('name')!r}")
    return out


def _corpus_id(meta: dict) -> dict:
    """What the corpus is, without where it is on this machine."""
    return {k: v for k, v in (meta or {}).items() if k not in _LOCATION_FIELDS}


# --------------------------------------------------------------------------- the campaign


@dataclass
class Campaign:
    """One experiment at one scale in one repository: paths, configs and records."""

    experiment: Experiment
    scale: Scale
    root: Path
    seeds: list[int]
    rows: list[Row]
    data: dict
    row_seeds: dict = field(default_factory=dict)  # {row name: its seeds}, where not ``seeds``
    _prepared: dict = field(default_factory=dict, repr=False)

    @classmethod
    def open(
        cls,
        experiment: Experiment | str,
        scale: str,
        root: str | Path | None = None,
        *,
        rows: Sequence[str] | None = None,
        seeds: int | None = None,
        corpus: str | Path | None = None,
    ) -> "Campaign":
        root = find_root(root)
        if isinstance(experiment, str):
            experiment = load_experiment(experiment, root)
        sc = experiment.scale(scale)
        selected = [experiment.row(r) for r in rows] if rows else list(experiment.rows_at(sc))
        off = [r.name for r in selected if r not in experiment.rows_at(sc)]
        if off:
            raise CampaignError(
                f"rows {off} are not planned at scale {sc.name}; its rows: "
                + ", ".join(r.name for r in experiment.rows_at(sc))
            )
        if corpus is not None:  # a bad file is named as the option it came from
            from mope_jax.data import read_text_file

            read_text_file(corpus, option="--corpus")
        n = sc.seeds if seeds is None else int(seeds)
        if n < 1:
            raise CampaignError(f"--seeds {n}: a campaign needs at least one seed")
        per_row = {}  # an explicit --seeds applies to every selected row
        if seeds is None:
            per_row = {
                r.name: list(range(sc.seeds_of(r.name)))
                for r in selected
                if sc.seeds_of(r.name) != n
            }
        return cls(
            experiment,
            sc,
            root,
            list(range(n)),
            selected,
            data_fields(experiment, sc, root, corpus),
            per_row,
        )

    def seeds_of(self, row: Row) -> list[int]:
        """The seeds planned for ``row``."""
        return self.row_seeds.get(row.name, self.seeds)

    @property
    def results_dir(self) -> Path:
        return self.root.joinpath(*RESULTS, self.experiment.name, self.scale.name)

    @property
    def records_dir(self) -> Path:
        return self.results_dir / "records"

    def record_path(self, row: str, seed: int) -> Path:
        return self.records_dir / row / f"seed{seed}.json"

    def config(self, row: Row):
        return row_config(self.experiment, self.scale, row, self.data)

    def prepared(self, row: Row):
        """(config with the corpus vocabulary, corpus) -- the config a record holds."""
        from mope_jax.train import prepare

        cfg = self.config(row)
        key = (cfg.data, cfg.model.block_size)
        if key not in self._prepared:  # the corpus is --corpus here (or the default file)
            longer = "give a longer --corpus" if cfg.data.source == "text" else None
            self._prepared[key] = prepare(cfg, option="--corpus", longer=longer)[1]
        corpus = self._prepared[key]
        model = dataclasses.replace(cfg.model, vocab_size=corpus.vocab_size)
        return dataclasses.replace(cfg, model=model), corpus

    def expected(self, row: Row, seed: int) -> dict:
        cfg, _ = self.prepared(row)
        return dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=seed)).to_dict()

    def command(self, extra: Sequence[str] = ()) -> str:
        return " ".join(
            ["mope-jax campaign run", self.experiment.name, "--scale", self.scale.name, *extra]
        )


def read_record(path: Path) -> dict:
    """The record at ``path`` (``records/<row>/seed<s>.json``), checked by
    :func:`validate_record`: every reader (status, run, report, claims) gets valid records."""
    try:
        rec = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CampaignError(
            f"{path}: not a readable campaign record ({type(e).__name__}); delete it to retrain "
            "that run"
        ) from None
    validate_record(path, rec)
    return rec


def validate_record(path: Path, rec) -> None:
    """CampaignError (naming the file, what is wrong and the fix) unless ``rec`` is a JSON
    object whose ``config`` holds ``model``, ``train`` and ``data`` objects, whose ``row``
    (where present) is its folder's name and ``seed`` the number in its file name, and whose
    losses are finite numbers where present."""
    path = Path(path)
    retrain = "delete it to retrain that run"
    if not isinstance(rec, dict) or "seed" not in rec or "config" not in rec:
        raise CampaignError(f"{path}: not a campaign record; {retrain}")
    cfg = rec["config"]
    if not isinstance(cfg, dict) or not all(isinstance(cfg.get(k), dict) for k in _SECTIONS):
        raise CampaignError(
            f"{path}: its config is not an object holding model, train and data objects; {retrain}"
        )
    row, seed = rec.get("row", path.parent.name), rec["seed"]
    if not isinstance(row, str) or not _NAME_RE.match(row):
        raise CampaignError(f"{path}: its row {row!r} is not a row name; {retrain}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CampaignError(f"{path}: its seed {seed!r} is not a seed number; {retrain}")
    m = RECORD_RE.match(path.name)
    if m is None or int(m.group(1)) != seed or row != path.parent.name:
        raise CampaignError(
            f"{path}: the record is row {row} seed {seed}, its path says row {path.parent.name} "
            f"{path.stem}; move it to records/{row}/seed{seed}.json or delete it"
        )
    for key in _LOSS_FIELDS:
        v = rec.get(key)
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
        ):
            raise CampaignError(f"{path}: its {key} is {v!r}, not a finite number; {retrain}")


def read_records(records_dir: str | Path) -> list[dict]:
    """Every ``<row>/seed<s>.json`` under ``records_dir``, sorted by (row, seed); each gets
    ``row`` (its folder) if it lacks one. Temporary files of an interrupted write are skipped."""
    out = []
    d = Path(records_dir)
    if not d.is_dir():
        return out
    for row_dir in sorted(p for p in d.iterdir() if p.is_dir()):
        for f in sorted(row_dir.iterdir()):
            m = RECORD_RE.match(f.name)
            if m:
                rec = read_record(f)
                rec.setdefault("row", row_dir.name)
                out.append(rec)
    return sorted(out, key=lambda r: (r["row"], int(r["seed"])))


@dataclass(frozen=True)
class RowPlan:
    row: Row
    declared_causal: bool
    done: tuple[int, ...]
    missing: tuple[int, ...]
    stale: tuple[tuple[int, str], ...]  # (seed, what differs)
    extra: tuple[int, ...]  # records of seeds outside this plan (kept; rendered too)


def plan(c: Campaign) -> list[RowPlan]:
    """Per selected row: which planned seeds have a (current) record, which are missing, which
    records are stale."""
    out = []
    for row in c.rows:
        done, missing, stale = [], [], []
        for s in c.seeds_of(row):
            path = c.record_path(row.name, s)
            if not path.is_file():
                missing.append(s)
                continue
            rec = read_record(path)
            diff = config_diff(rec["config"], c.expected(row, s))
            _, corpus = c.prepared(row)
            old_id, new_id = rec.get("corpus"), _corpus_id(corpus.meta)
            if old_id is not None and _normal(old_id) != _normal(new_id):
                sha = lambda m: str((m or {}).get("sha256", "?"))[:12]  # noqa: E731
                diff.append(f"corpus sha256 {sha(old_id)} -> {sha(new_id)}")
            (stale.append((s, "; ".join(diff))) if diff else done.append(s))
        have = {int(m.group(1)) for f in _row_files(c, row) if (m := RECORD_RE.match(f.name))}
        extra = sorted(have - set(c.seeds_of(row)))
        out.append(
            RowPlan(
                row,
                declared_causal(c.experiment, c.scale, row),
                tuple(done),
                tuple(missing),
                tuple(stale),
                tuple(extra),
            )
        )
    return out


def _row_files(c: Campaign, row: Row) -> list[Path]:
    d = c.records_dir / row.name
    return sorted(d.iterdir()) if d.is_dir() else []


def _seeds_text(seeds: Sequence[int]) -> str:
    return ", ".join(str(s) for s in seeds)


def display(row: Row, causal: bool) -> str:
    return row.name + ("" if causal else " (NON-CAUSAL)")


def format_plan(c: Campaign, plans: list[RowPlan]) -> str:
    n_rows = len(plans)
    others = [(p.row.name, len(c.seeds_of(p.row))) for p in plans if p.row.name in c.row_seeds]
    lines = [
        f"campaign {c.experiment.name}, scale {c.scale.name}: {n_rows} rows x "
        f"{len(c.seeds)} seeds ({_seeds_text(c.seeds)})"
        + "".join(f", {r} {k}" for r, k in others)
        + f"; records in {_rel(c.records_dir, c.root)}"
    ]
    width = max(len(display(p.row, p.declared_causal)) for p in plans)
    for p in plans:
        parts = [f"done {len(p.done)}/{len(c.seeds_of(p.row))}"]
        if p.missing:
            parts.append(f"missing seeds {_seeds_text(p.missing)}")
        if p.stale:
            parts.append("STALE " + "; ".join(f"seed {s} ({d})" for s, d in p.stale))
        if p.extra:
            parts.append(f"also seeds {_seeds_text(p.extra)}")
        lines.append(f"  {display(p.row, p.declared_causal):<{width}}  " + ", ".join(parts))
    total = sum(len(c.seeds_of(p.row)) for p in plans)
    missing = sum(len(p.missing) for p in plans)
    stale = sum(len(p.stale) for p in plans)
    lines.append(
        f"total: {total - missing - stale} of {total} runs done, {missing} missing"
        + (f", {stale} stale" if stale else "")
    )
    return "\n".join(lines)


def eta_line(c: Campaign, plans: list[RowPlan]) -> str | None:
    """``campaign status``: the time the missing runs need at the pace this campaign's records
    were made on this kind of machine (None when nothing is missing)."""
    from mope_jax.provenance import environment

    todo = [p for p in plans if p.missing]
    if not todo:
        return None
    runs = sum(len(p.missing) for p in todo)
    how = f"`mope-jax campaign estimate {c.experiment.name} --scale {c.scale.name}` measures"
    est = estimate_from_records(c, environment())
    if est is None:
        return f"ETA: no record of this campaign was made on this kind of machine; {how} it"
    total = sum(est.seconds(p.row.name, len(p.missing)) for p in todo)
    guessed = [p.row.name for p in todo if p.row.name in est.guessed]
    guess = (
        f"; {', '.join(guessed)}: no record of {'its' if len(guessed) == 1 else 'their'} own, "
        "taken at the other rows' median pace: a guess, another model may be several times slower"
        if guessed
        else ""
    )
    return (
        f"ETA ~{_minutes(total)} ({total / 3600:.1f} h) for the {runs} missing runs at the pace "
        f"{est.source} (median per row, whatever ran beside them){guess}; {how} each row now"
    )


def stale_message(c: Campaign, plans: list[RowPlan]) -> str | None:
    bad = [(p.row.name, s, d) for p in plans for s, d in p.stale]
    if not bad:
        return None
    row, seed, diff = bad[0]
    more = f" (and {len(bad) - 1} more stale records)" if len(bad) > 1 else ""
    return (
        f"{_rel(c.record_path(row, seed), c.root)} was made with another config than row "
        f"{row} has now ({diff}){more}; delete the stale records or restore the row/scale, "
        f"then run again (mope-jax campaign status {c.experiment.name} --scale {c.scale.name} "
        "lists them)"
    )


def _rel(path: Path, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- estimates


@dataclass(frozen=True)
class Estimate:
    """Seconds for a row group of k seeds: ``overhead + k * per_run[row]``."""

    per_run: dict[str, float]
    overhead: float
    source: str
    # rows whose pace is a guess: no record of their own (the median of the others) and not
    # measured themselves (another row's measured pace)
    guessed: frozenset[str] = frozenset()
    # per-row overhead where it is not ``overhead``: a measured row's compiles (a pace from
    # records already holds them in its group's wall time, a measured step does not)
    row_overhead: dict[str, float] = field(default_factory=dict)

    def seconds(self, row: str, k: int) -> float:
        return self.row_overhead.get(row, self.overhead) + k * self.per_run[row] if k else 0.0

    def scaled(self, factor: float, source: str) -> Estimate:
        """Every row's seconds times ``factor`` (this machine's load now, measured)."""
        per = {r: s * factor for r, s in self.per_run.items()}
        over = {r: s * factor for r, s in self.row_overhead.items()}
        return Estimate(per, self.overhead * factor, source, self.guessed, over)

    def measured_for_guessed(self, measured: Estimate, row: str) -> Estimate:
        """The rows without records at ``measured``'s pace (measured on ``row``, one of them),
        and with its compiles, instead of the median of rows that may be other models; the
        others stay guesses."""
        per = {r: measured.per_run[r] if r in self.guessed else s for r, s in self.per_run.items()}
        over = dict(self.row_overhead) | {r: measured.overhead for r in self.guessed}
        return Estimate(
            per,
            self.overhead,
            f"{self.source}; rows without one: {measured.source}",
            self.guessed - {row},
            over,
        )

    def with_measured(self, row: str, measured: Estimate) -> Estimate:
        """``row`` at its own measured pace and compiles (no longer a guess); the other rows
        unchanged."""
        per = dict(self.per_run)
        per[row] = measured.per_run[row]
        over = dict(self.row_overhead) | {row: measured.overhead}
        return Estimate(per, self.overhead, self.source, self.guessed - {row}, over)


def _machine(env: dict) -> tuple:
    keys = ("backend", "device", "processor", "cpu_model", "cpu_count", "platform")
    return tuple(env.get(k) for k in keys)


def estimate_from_records(c: Campaign, env: dict) -> Estimate | None:
    """Per-run seconds measured by this campaign's own records made on this kind of machine
    (the wall time of each record's row group / its seeds, or its training time when that is
    longer: a resumed run's wall time is only its last call's; each row its own when it has
    some, else the median of all, and such rows are listed in ``guessed``)."""
    per: dict[str, list[float]] = {}
    for rec in read_records(c.records_dir):
        camp = rec.get("campaign") or {}
        if _machine(rec.get("env") or {}) != _machine(env) or not camp.get("group_seeds"):
            continue
        group_s = max(camp["group_wall_s"], float(rec.get("train_seconds") or 0.0))
        per.setdefault(rec["row"], []).append(group_s / len(camp["group_seeds"]))
    if not per:
        return None
    import numpy as np

    every = float(np.median([x for xs in per.values() for x in xs]))
    return Estimate(
        {r.name: float(np.median(per[r.name])) if r.name in per else every for r in c.rows},
        0.0,
        f"from {sum(map(len, per.values()))} records of this campaign on this machine",
        frozenset(r.name for r in c.rows if r.name not in per),
    )


def measure_step(cfg, steps: int = 3) -> tuple[float, float]:
    """(compile seconds, seconds per step) of one seed of ``cfg``: compile and time ``steps``
    training steps twice."""
    import jax
    import jax.numpy as jnp

    from mope_jax.train import make_train, prepare

    cfg, corpus = prepare(cfg)
    tr = make_train(cfg)
    data = jnp.asarray(corpus.train)
    state = jax.jit(tr.init)(jax.random.PRNGKey(0))
    fn = jax.jit(tr.train_steps, static_argnums=2)
    t0 = time.perf_counter()
    state, m = fn(state, data, steps)
    jax.block_until_ready(m)
    t1 = time.perf_counter()
    state, m = fn(state, data, steps)
    jax.block_until_ready(m)
    t2 = time.perf_counter()
    step = (t2 - t1) / steps
    return max(t1 - t0 - (t2 - t1), 0.0), step


def _run_seconds(cfg, step_s: float) -> float:
    """One run's training and evaluation seconds from its seconds per training step (an
    evaluation batch counted as a forward pass, ~1/3 of a step)."""
    t = cfg.train
    evals = math.ceil(t.max_steps / t.eval_interval)
    return t.max_steps * step_s + evals * 2 * t.eval_batches * step_s / 3


# run_campaign measures a step for its ETA only when a budget needs it or the missing runs
# total at least this many training steps
MEASURE_MIN_STEPS = 1000


def estimate_by_measuring(c: Campaign, row: Row) -> Estimate:
    c.prepared(row)  # its corpus checked, with the hints of a campaign
    cfg = c.config(row)
    compile_s, step_s = measure_step(cfg)
    per_run = _run_seconds(cfg, step_s)
    programs = 3 if c.experiment.audit else 2  # training, evaluation (and the audit's)
    return Estimate(
        {r.name: per_run for r in c.rows},
        programs * compile_s,
        f"measured on {row.name}: {step_s * 1e3:.1f} ms/step, compile {compile_s:.1f} s",
        frozenset(r.name for r in c.rows if r.name != row.name),  # the others: this row's pace
    )


def estimate_rows(c: Campaign, plans: list[RowPlan] | None = None, log=print) -> str:
    """``campaign estimate``: measure one seed's training step of every row with missing seeds
    (compile, then 2 x 3 timed steps; nothing is saved) and return the per-row table and the
    total, for planning before a run."""
    plans = plan(c) if plans is None else plans
    todo = [p for p in plans if p.missing]
    head = f"campaign {c.experiment.name}, scale {c.scale.name}"
    if not todo:
        return f"{head}: nothing to train (every planned run has its record)"
    for p in todo:  # every row's corpus checked first, with the hints of a campaign
        c.prepared(p.row)
    programs = 3 if c.experiment.audit else 2
    width = max(len(p.row.name) for p in todo)
    lines = [
        f"{head}: measured now on this machine, one seed per row (compile, then 2 x 3 timed "
        "steps); a run = its training steps plus evaluation at ~1/3 of a step per batch; a "
        "row's missing seeds train together, one after another",
        f"  {'row':<{width}}  ms/step  compile  per run     missing  row total",
    ]
    total = 0.0
    for p in todo:
        log(f"measuring {p.row.name} ...")
        cfg = c.config(p.row)
        compile_s, step_s = measure_step(cfg)
        per_run = _run_seconds(cfg, step_s)
        row_s = programs * compile_s + len(p.missing) * per_run
        total += row_s
        lines.append(
            f"  {p.row.name:<{width}}  {step_s * 1e3:7.1f}  {compile_s:5.1f} s  "
            f"{_minutes(per_run):>10}  {len(p.missing):7d}  {_minutes(row_s):>9}"
        )
    runs = sum(len(p.missing) for p in todo)
    lines.append(
        f"total: {runs} runs, ~{_minutes(total)} ({total / 3600:.1f} h) for this campaign alone "
        "on this machine; anything running beside it slows it"
    )
    return "\n".join(lines)


def _minutes(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"


# --------------------------------------------------------------------------- running


@dataclass
class CampaignResult:
    trained: list[tuple[str, int]]  # (row, seed) whose record this call wrote
    left: list[tuple[str, int]]  # planned runs still without a record
    table: Path | None
    stopped: str | None = None  # why it stopped early: "budget" or "sigterm"


def run_campaign(
    c: Campaign,
    *,
    strategy: str = "auto",
    budget_s: float | None = None,
    work_dir: str | Path | None = None,
    progress: bool = True,
    command: str | None = None,
    continue_args: Sequence[str] = (),
    estimate: Estimate | None = None,
    log: Callable[[str], None] = print,
    measure: bool = True,
) -> CampaignResult:
    """Train every planned (row, seed) without a record, one sweep per row, then render.

    budget_s: stop at a run boundary: before a row group whose estimate does not fit in what is
    left, train the first seeds of it that fit (then stop), or stop. estimate: seconds per run
    (default: from this campaign's records on this machine, else measured on the first missing
    row; not measured, and no ETA printed, without a budget when the missing runs total fewer
    than MEASURE_MIN_STEPS steps); with a budget, a row whose pace is still another row's is
    measured before its group; after each row group the estimate of the rest is scaled by
    this call's measured / estimated seconds so far (records made under another load mislead
    the budget otherwise).
    continue_args: extra options of the printed command to continue. measure=False: never
    measure a step (no budget allowed; on a borrowed accelerator a measurement is a compile)."""
    from mope_jax.provenance import environment
    from mope_jax.rundir import unwritable

    if not measure and budget_s is not None:
        raise CampaignError("a budget needs each row's pace: measure=False is only without one")
    t_start = time.monotonic()
    plans = plan(c)
    log(format_plan(c, plans))
    msg = stale_message(c, plans)
    if msg:
        raise CampaignError(msg)
    groups = [(p.row, list(p.missing)) for p in plans if p.missing]
    groups.sort(key=lambda g: g[0].init_from is not None)  # rows that start from others last
    work = Path(work_dir) if work_dir is not None else c.root / "runs" / "campaigns"
    work = work / c.experiment.name / c.scale.name
    command = command or c.command(continue_args)
    # before anything is trained: where the records, the table and the checkpoints go
    for d in [c.results_dir, c.records_dir] + [c.records_dir / r.name for r, _ in groups]:
        why = unwritable(d)
        if why:
            raise CampaignError(
                f"cannot write the records and table in {_rel(d, c.root)}: {why}; make it "
                "writable, or run in a writable clone of the repository (--root)"
            )
    from mope_jax.sweep import check_memory

    for r, seeds in groups:  # every row to train fits in memory (issue 43), then its corpus
        check_memory(c.config(r), len(seeds), strategy)
    for r, _ in groups:  # the corpus of every row to train, checked (with --corpus hints)
        c.prepared(r)
    why = unwritable(work) if groups else None
    if why:
        raise CampaignError(
            f"cannot write checkpoints in {work}: {why}; give a writable --work-dir"
        )
    trained: list[tuple[str, int]] = []
    stopped = None
    if not groups:
        log("nothing to train: every planned run has its record")
    else:
        env = environment()
        n_runs = sum(len(s) for _, s in groups)
        steps = sum(len(s) * c.config(r).train.max_steps for r, s in groups)
        # a measurement costs a compile and 6 steps: without a budget to plan, not worth it
        # for short runs (smoke scales, tests), where it is a large part of the whole call
        worth = measure and (budget_s is not None or steps >= MEASURE_MIN_STEPS)
        if estimate is None:
            estimate = estimate_from_records(c, env)
            if worth and estimate is None:
                estimate = estimate_by_measuring(c, groups[0][0])
            elif worth:  # rows without records may be other models: measure the first
                new = next((r for r, _ in groups if r.name in estimate.guessed), None)
                if new is not None:
                    estimate = estimate.measured_for_guessed(
                        estimate_by_measuring(c, new), new.name
                    )
        if estimate is None:
            estimate = Estimate({r.name: 0.0 for r in c.rows}, 0.0, "not measured")
            why = f"fewer than {MEASURE_MIN_STEPS}, and no budget" if measure else "--no-measure"
            log(
                f"ETA not measured: {n_runs} runs, {steps} training steps in all ({why}); "
                "`mope-jax campaign estimate` measures"
            )
        else:
            total = sum(estimate.seconds(r.name, len(s)) for r, s in groups)
            log(f"ETA ~{_minutes(total)} for {n_runs} runs ({estimate.source})")
        planned_s = measured_s = 0.0  # this call's groups: estimated and measured seconds
        base = estimate
        for row, seeds in groups:
            if planned_s > 0:  # what the rows trained now took says how loaded we are now
                estimate = base.scaled(
                    measured_s / planned_s,
                    f"{base.source}, times {measured_s / planned_s:.2f} as measured by this call",
                )
            if budget_s is not None and row.name in estimate.guessed:
                # its pace so far is another row's: another model may be several times slower
                # (Morlet-RoPE at mid: 2 s/step where sin/cos, measured first, took 0.6 s)
                m = estimate_by_measuring(c, row)
                log(f"  {m.source}")
                base = base.with_measured(row.name, m)
                estimate = estimate.with_measured(row.name, m)
            if budget_s is not None:
                left_s = budget_s - (time.monotonic() - t_start)
                k = len(seeds)
                while k and estimate.seconds(row.name, k) > left_s:
                    k -= 1
                if k < len(seeds):
                    stopped = "budget"
                    if k == 0:
                        log(
                            f"budget: {row.name} seeds {_seeds_text(seeds)} need "
                            f"~{_minutes(estimate.seconds(row.name, len(seeds)))}, "
                            f"{_minutes(max(left_s, 0))} left; stopping before it"
                        )
                        break
                    log(
                        f"budget: {_minutes(max(left_s, 0))} left, enough for {k} of the "
                        f"{len(seeds)} missing seeds of {row.name}; training those, then stopping"
                    )
                    seeds = seeds[:k]
            t_group = time.monotonic()
            done = _train_group(c, row, seeds, work, strategy, progress, command, log)
            if done is None:
                stopped = "sigterm"
                break
            trained += [(row.name, s) for s in done]
            write_table(c)  # the records of this group are in the table as soon as they land
            planned_s += base.seconds(row.name, len(seeds))
            measured_s += time.monotonic() - t_group
            if budget_s is not None and planned_s > 0:
                log(f"  ETA now: this call's runs took {measured_s / planned_s:.2f}x the estimate")
            if stopped:
                break
    left = [(p.row.name, s) for p in plans for s in p.missing if (p.row.name, s) not in trained]
    if left:
        by_row: dict[str, list[int]] = {}
        for r, s in left:
            by_row.setdefault(r, []).append(s)
        log(
            f"left: {len(left)} runs ("
            + "; ".join(f"{r}: seeds {_seeds_text(s)}" for r, s in by_row.items())
            + f"); continue with: {c.command(continue_args)}"
        )
    table = write_table(c)
    log(f"table: {_rel(table, c.root)}")
    return CampaignResult(trained, left, table, stopped)


def _train_group(c, row, seeds, work, strategy, progress, command, log) -> list[int] | None:
    """One sweep over ``seeds`` of ``row``, one record per seed; None if SIGTERM stopped it."""
    import jax
    import numpy as np

    from mope_jax.analysis import spectra
    from mope_jax.rundir import atomic_write_text
    from mope_jax.sweep import sweep

    cfg = c.config(row)
    run_dir = work / row.name / ("seeds-" + "-".join(str(s) for s in seeds))
    log(
        f"{display(row, declared_causal(c.experiment, c.scale, row))}: training seeds "
        f"{_seeds_text(seeds)} in {_rel(run_dir, c.root)}"
    )
    t0 = time.perf_counter()
    start, init_from = None, None
    if row.init_from is not None:
        start, init_from = _start_params(c, row, seeds, work, strategy, progress, log)
        if start is None:
            return None
    res = sweep(
        cfg,
        seeds,
        run_dir,
        strategy=strategy,
        progress=progress,
        init_params=start,
        init_from=init_from,
        log=log,
    )
    if res.interrupted:
        log(f"stopped; run the same command again to resume {row.name} from {run_dir}")
        return None
    _, corpus = c.prepared(row)
    extras = []
    for r, seed in enumerate(seeds):
        state = jax.tree_util.tree_map(lambda x: np.asarray(x)[r], res.states)
        run_cfg = dataclasses.replace(res.cfg, train=dataclasses.replace(res.cfg.train, seed=seed))
        extra = {"summary": _jsonable(spectra.eval_summary(run_cfg, state))}
        if c.experiment.audit:
            from mope_jax.analysis.causality import audit_model

            extra["audit"] = _jsonable(audit_model(res.cfg.model, state.params).to_dict())
        analyze = row.analyze or c.experiment.analyze
        if analyze is not None:
            extra["analysis"] = _jsonable(analyze(run_cfg, state, corpus))
        extras.append(extra)
    wall = time.perf_counter() - t0
    date = utc_now()
    for r, seed in enumerate(seeds):
        rec = dict(res.records[r])
        rec.update(extras[r])
        rec.update(
            row=row.name,
            experiment=c.experiment.name,
            scale=c.scale.name,
            command=command,
            date_utc=date,
            corpus=_corpus_id(corpus.meta),
            campaign={"group_seeds": list(seeds), "group_wall_s": wall, "strategy": res.strategy},
        )
        if init_from is not None:
            rec["init_from"] = init_from
        if "env" in rec:  # the run's env was taken when it started; HEAD may have moved since
            rec["env"] = at_write(rec["env"])
        path = c.record_path(row.name, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(_jsonable(rec), indent=1) + "\n")
        metric = rec.get(c.experiment.metric)
        log(f"  {row.name} seed {seed}: {c.experiment.metric} {_f(metric)}")
    log(f"  {row.name}: {len(seeds)} runs in {wall:.0f} s")
    return list(seeds)


def _run_dir_of(work: Path, row: str, seed: int) -> Path | None:
    """The newest finished sweep folder of ``row`` under ``work`` that holds ``seed``."""
    found = sorted(
        (d for d in (work / row).glob("seeds-*") if (d / f"seed{seed}" / "final.json").is_file()),
        key=lambda d: (d / f"seed{seed}" / "final.json").stat().st_mtime,
    )
    return found[-1] if found else None


def _matching_checkpoint(c: Campaign, work: Path, row: str, seed: int, rec: dict, log, left: str):
    """(cfg, state, run folder) of the local checkpoint that made record ``rec``, or None (no
    checkpoint here, or one of another config or step; ``left`` says what stays as it is)."""
    from mope_jax.sweep import load_seed

    where = f"{row} seed {seed}"
    d = _run_dir_of(work, row, seed)
    if d is None:
        log(f"{where}: no checkpoint under {_rel(work, c.root)}; {left}")
        return None
    cfg, state = load_seed(d, seed)
    diff = config_diff(rec["config"], cfg.to_dict())
    if diff or int(state.step) != int(rec["steps"]):
        why = "; ".join(diff) or f"step {int(state.step)} vs {rec['steps']}"
        log(f"{where}: the checkpoint in {_rel(d, c.root)} is another run ({why}); skipped")
        return None
    return cfg, state, d


def analyze_records(
    c: Campaign, *, work_dir: str | Path | None = None, log: Callable[[str], None] = print
) -> list[tuple[str, int]]:
    """Measure the rows' ``analyze`` on the local checkpoint of every current record that has
    no ``analysis`` (an analysis declared after the runs were trained), add it to the record
    and re-render the table; returns the (row, seed) updated. A record whose checkpoint is not
    on this machine, or whose checkpoint has another config or step, is left as it is."""
    import jax
    import numpy as np

    from mope_jax.rundir import atomic_write_text

    work = (Path(work_dir) if work_dir is not None else c.root / "runs" / "campaigns") / (
        f"{c.experiment.name}/{c.scale.name}"
    )
    updated = []
    for p in plan(c):
        analyze = p.row.analyze or c.experiment.analyze
        if analyze is None:
            continue
        for seed in p.done:
            path = c.record_path(p.row.name, seed)
            rec = read_record(path)
            if "analysis" in rec:
                continue
            found = _matching_checkpoint(
                c, work, p.row.name, seed, rec, log, "left without analysis"
            )
            if found is None:
                continue
            cfg, state, d = found
            _, corpus = c.prepared(p.row)
            state = jax.tree_util.tree_map(np.asarray, state)
            rec["analysis"] = _jsonable(analyze(cfg, state, corpus))
            atomic_write_text(path, json.dumps(_jsonable(rec), indent=1) + "\n")
            updated.append((p.row.name, seed))
            log(f"{p.row.name} seed {seed}: analysis added from {_rel(d, c.root)}")
    table = write_table(c)
    log(f"{len(updated)} records updated; table: {_rel(table, c.root)}")
    return updated


SUPERSEDED_AUDITS = ("perturb", "jvp")  # sampled large-T audits that `reaudit` redoes


def reaudit_records(
    c: Campaign, *, work_dir: str | Path | None = None, log: Callable[[str], None] = print
) -> list[tuple[str, int]]:
    """Re-run the causality audit on the local checkpoint of every current record whose audit
    was made by an earlier large-T method: finite differences (``perturb``, the default before
    2026-12-02, whose float32 rounding floor can reach the tolerance for a causal FFT model) or
    derivatives at 16-19 probed positions only (``jvp``, the default on 2026-12-02, blind to a
    leak from an unprobed position). The record's ``audit`` becomes the current method's
    (``jvp-cuts`` at large T: every future position); the old one is kept under
    ``audit_superseded`` with the date it was replaced (and the audit it had superseded, if
    any, inside it: nothing is lost). Re-renders the table and returns the (row, seed)
    updated; records without a matching local checkpoint are left as they are (and named)."""
    import jax
    import numpy as np

    from mope_jax.analysis.causality import audit_model
    from mope_jax.rundir import atomic_write_text

    if not c.experiment.audit:
        raise CampaignError(f"experiment {c.experiment.name} declares no causality audit")
    work = (Path(work_dir) if work_dir is not None else c.root / "runs" / "campaigns") / (
        f"{c.experiment.name}/{c.scale.name}"
    )
    updated = []
    for p in plan(c):
        for seed in p.done:
            path = c.record_path(p.row.name, seed)
            rec = read_record(path)
            old = rec.get("audit")
            if not old or old.get("method") not in SUPERSEDED_AUDITS:
                continue
            found = _matching_checkpoint(c, work, p.row.name, seed, rec, log, "audit left as it is")
            if found is None:
                continue
            cfg, state, _ = found
            params = jax.tree_util.tree_map(np.asarray, state.params)
            new = _jsonable(audit_model(cfg.model, params).to_dict())
            rec["audit"] = new
            earlier = (
                {"audit_superseded": rec["audit_superseded"]} if "audit_superseded" in rec else {}
            )
            rec["audit_superseded"] = old | {"replaced_utc": utc_now()} | earlier  # a chain
            atomic_write_text(path, json.dumps(_jsonable(rec), indent=1) + "\n")
            updated.append((p.row.name, seed))
            log(
                f"{p.row.name} seed {seed}: audit {old['method']} leak_rel {old['leak_rel']:.3g} "
                f"({'causal' if old['causal'] else 'LEAKS'}) -> {new['method']} leak_rel "
                f"{new['leak_rel']:.3g} ({'causal' if new['causal'] else 'LEAKS'})"
            )
    table = write_table(c)
    log(f"{len(updated)} records re-audited; table: {_rel(table, c.root)}")
    return updated


def _start_params(c, row, seeds, work, strategy, progress, log):
    """(stacked final parameters of row ``row.init_from`` for ``seeds``, where they came from),
    or (None, None) when SIGTERM stopped the rebuild of a missing base checkpoint."""
    import jax
    import numpy as np

    from mope_jax.sweep import load_seed

    base = c.experiment.row(row.init_from)
    no_record = [s for s in seeds if not c.record_path(base.name, s).is_file()]
    if no_record:
        raise CampaignError(
            f"row {row.name} starts from row {base.name}, which has no record for seeds "
            f"{_seeds_text(no_record)}; train it first: --rows {base.name},{row.name}"
        )
    lost = [s for s in seeds if _run_dir_of(work, base.name, s) is None]
    if lost:  # a fresh clone: the record is committed, the checkpoint is not
        log(
            f"{row.name} starts from {base.name}, whose checkpoints of seeds {_seeds_text(lost)} "
            "are not on this machine: training them again (no record is written)"
        )
        from mope_jax.sweep import sweep

        rebuilt_dir = work / base.name / ("seeds-" + "-".join(str(s) for s in lost))
        res = sweep(
            c.config(base), lost, rebuilt_dir, strategy=strategy, progress=progress, log=log
        )
        if res.interrupted:
            log(f"stopped; run the same command again to resume {base.name} from {rebuilt_dir}")
            return None, None
        for r, s in enumerate(lost):
            want = read_record(c.record_path(base.name, s)).get(c.experiment.metric)
            got = res.records[r].get(c.experiment.metric)
            same = "equal to" if got == want else f"vs {_f(want)} in"
            log(f"  {base.name} seed {s} rebuilt: {c.experiment.metric} {_f(got)} {same} record")
    params, sources = [], []
    for s in seeds:
        d = _run_dir_of(work, base.name, s)
        _, state = load_seed(d, s)
        params.append(state.params)
        sources.append(f"{_rel(d, c.root)}/seed{s}")
    stacked = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *params)
    return stacked, f"row {base.name}, final parameters of " + ", ".join(sources)


def write_table(c: Campaign) -> Path:
    from mope_jax.rundir import atomic_write_text

    path = c.results_dir / "table.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, render_campaign(c.experiment, c.scale, read_records(c.records_dir)))
    return path


# --------------------------------------------------------------------------- rendering


def by_row(records: list[dict]) -> dict[str, list[dict]]:
    """Records grouped by row, each list sorted by seed."""
    out: dict[str, list[dict]] = {}
    for r in sorted(records, key=lambda r: (r["row"], int(r["seed"]))):
        out.setdefault(r["row"], []).append(r)
    return out


def _f(x, nd: int = 4, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:+.{nd}f}" if sign else f"{x:.{nd}f}"


def _p(p: float) -> str:
    if p is None or math.isnan(p):
        return "n/a"
    return f"{p:.1e}" if p < 1e-3 else f"{p:.3f}"


def _ci(lo: float, hi: float, sign: bool = False) -> str:
    if math.isnan(lo):
        return "n/a"
    return f"[{_f(lo, sign=sign)}, {_f(hi, sign=sign)}]"


def paired(recs: dict[str, list[dict]], a: str, b: str, metric: str):
    """(seeds, paired_t) of a - b over the seeds both rows have (None if no common seed)."""
    from mope_jax.analysis.stats import paired_t

    va = {int(r["seed"]): r[metric] for r in recs.get(a, []) if r.get(metric) is not None}
    vb = {int(r["seed"]): r[metric] for r in recs.get(b, []) if r.get(metric) is not None}
    seeds = sorted(set(va) & set(vb))
    if not seeds:
        return seeds, None
    return seeds, paired_t([va[s] for s in seeds], [vb[s] for s in seeds])


def contrast(recs: dict[str, list[dict]], terms, metric: str):
    """(seeds, per-seed values, paired_t against 0) of sum_i coef_i row_i over the seeds every
    row has (None if there is no such seed)."""
    from mope_jax.analysis.stats import paired_t

    vals = [
        {int(r["seed"]): r[metric] for r in recs.get(row, []) if r.get(metric) is not None}
        for row, _ in terms
    ]
    seeds = sorted(set.intersection(*(set(v) for v in vals)))
    if not seeds:
        return seeds, [], None
    per = [sum(coef * v[s] for (_, coef), v in zip(terms, vals)) for s in seeds]
    return seeds, per, paired_t(per, [0.0] * len(per))


def comparisons_at(experiment: Experiment, scale: Scale | None = None) -> list[Comparison]:
    """The declared comparisons whose rows are all planned at ``scale``."""
    at = experiment.rows if scale is None else experiment.rows_at(scale)
    names = {r.name for r in at}
    return [c for c in experiment.comparisons if all(row in names for row, _ in c.terms)]


def same_data(experiment: Experiment, scale: Scale | None, a: str, b: str) -> bool:
    """Whether rows a and b train on the same data at ``scale`` (their whole ``DataConfig``,
    the row's own data overrides included; the experiment's and the scale's data are common to
    every row). A paired difference of two rows' losses means something only then: on other
    data (another block size, another task) it is a difference between data sets."""
    if scale is None:  # no scale: the rows' own data overrides decide

        def own(name):
            return sorted(o for o in experiment.row(name).overrides if o.startswith("data."))

        return own(a) == own(b)
    ca = row_config(experiment, scale, experiment.row(a))
    cb = row_config(experiment, scale, experiment.row(b))
    return ca.data == cb.data


def comparison_family(experiment: Experiment, scale: Scale | None = None) -> list[tuple[str, ...]]:
    """Every hypothesis Holm adjusts over: each row (planned at ``scale``) on the baseline's
    data against the baseline, then the declared comparisons of rows at ``scale`` (pairs
    (a, b), interactions (a, b, c, d)); a pair asked twice ((a, b) or (b, a)) counts once."""
    keys, seen = [], set()
    at = experiment.rows if scale is None else experiment.rows_at(scale)
    base = experiment.baseline
    cands = [
        (r.name, base) for r in at if r.name != base and same_data(experiment, scale, r.name, base)
    ]
    cands += [c.key for c in comparisons_at(experiment, scale)]
    for key in cands:
        norm = tuple(sorted(key)) if len(key) == 2 else key
        if norm not in seen:
            seen.add(norm)
            keys.append(key)
    return keys


def render_campaign(experiment: Experiment, scale: Scale | str, records: list[dict]) -> str:
    """The campaign's table.md from its records alone (see the module docstring)."""
    from mope_jax.analysis.stats import holm, summarize

    sc = experiment.scale(scale) if isinstance(scale, str) else scale
    metric = experiment.metric
    at = experiment.rows_at(sc)
    rows = {r.name: r for r in at}
    recs = {k: v for k, v in by_row(records).items() if k in rows}
    causal = {r.name: declared_causal(experiment, sc, r) for r in at}
    family = comparison_family(experiment, sc)
    comparisons = comparisons_at(experiment, sc)
    tests, interactions = {}, {}
    for key in family:
        if len(key) == 2:
            tests[key] = paired(recs, *key, metric)
        else:
            comp = next(c for c in comparisons if c.key == key)
            seeds, per, t = contrast(recs, comp.terms, metric)
            tests[key], interactions[key] = (seeds, t), per
    pvals = [t.p if t is not None else float("nan") for _, t in tests.values()]
    adjusted = dict(zip(tests, holm(pvals)))

    def lookup(a, b):
        if (a, b) in tests:
            seeds, t = tests[(a, b)]
            return seeds, t, adjusted[(a, b)]
        seeds, t = tests[(b, a)]  # the same hypothesis, the other sign
        if t is None:
            return seeds, None, adjusted[(b, a)]
        flipped = dataclasses.replace(t, mean=-t.mean, ci_low=-t.ci_high, ci_high=-t.ci_low, t=-t.t)
        return seeds, flipped, adjusted[(b, a)]

    n_tests = sum(1 for p in pvals if not math.isnan(p))
    lines = [f"# {experiment.title} (scale `{sc.name}`)", ""]
    if experiment.claim:
        lines += [f"Claim: {experiment.claim}", ""]
    lines += [
        f"Campaign: `mope-jax campaign run {experiment.name} --scale {sc.name}` "
        f"(records in `records/<row>/seed<s>.json`; re-render with "
        f"`mope-jax report --regenerate experiments/results`).",
        "",
        _describe(sc, recs, experiment),
        "",
        f"`{metric}` per row: n seeds, mean, std (ddof 1), 95% t-interval; the paired difference "
        f"row - `{experiment.baseline}` over the seeds both have, its 95% t-interval and paired-t "
        f"two-sided p (only for rows trained on `{experiment.baseline}`'s data: 'other data' "
        "marks a row whose data differ, where the difference would compare data sets); Holm p "
        f"adjusts over the {n_tests} comparisons of this campaign that have a test (against the "
        "baseline and declared). NON-CAUSAL rows see future tokens: their losses are not "
        "causal-LM losses.",
        "",
    ]
    has_paper = any(r.paper is not None for r in at)
    head = (
        "| row | label | causality | n | mean | std | 95% CI | "
        f"diff vs `{experiment.baseline}` [95% CI] | p | Holm p |"
    )
    lines += [head + (" paper |" if has_paper else ""), "|---" * (10 + has_paper) + "|"]
    for row in at:
        rs = recs.get(row.name, [])
        vals = [r[metric] for r in rs if r.get(metric) is not None]
        caus = _causality_cell(causal[row.name], rs, experiment.audit)
        label = (row.label or row.variant) + ("" if causal[row.name] else " (NON-CAUSAL)")
        cells = [f"`{row.name}`", label, caus, str(len(vals))]
        if vals:
            s = summarize(vals)
            cells += [_f(s.mean), _f(s.std) if s.n > 1 else "n/a", _ci(s.ci_low, s.ci_high)]
        else:
            cells += ["", "", ""]
        if row.name == experiment.baseline or not vals:
            cells += ["", "", ""]
        elif not same_data(experiment, sc, row.name, experiment.baseline):
            cells += ["other data", "", ""]
        else:
            seeds, t, hp = lookup(row.name, experiment.baseline)
            if t is None:
                cells += ["no common seed", "", ""]
            else:
                cells += [
                    f"{_f(t.mean, sign=True)} {_ci(t.ci_low, t.ci_high, sign=True)} (n {t.n})",
                    _p(t.p),
                    _p(hp),
                ]
        if has_paper:
            cells.append("" if row.paper is None else _f(row.paper))
        lines.append("| " + " | ".join(cells) + " |")
    if comparisons:
        lines += [
            "",
            "## Comparisons",
            "",
            f"Paired `{metric}` differences a - b over the seeds both rows have "
            "(negative: a lower)"
            + (
                "; an interaction (a - b) - (c - d) over the seeds all four rows have."
                if any(c.c is not None for c in comparisons)
                else "."
            ),
            "",
            "| a - b | what differs | n | mean [95% CI] | per seed | p | Holm p |",
            "|---|---|---|---|---|---|---|",
        ]
        for comp in comparisons:

            def shown(x: str) -> str:
                return display(rows[x], causal[x])

            name = f"{shown(comp.a)} - {shown(comp.b)}"
            if comp.c is not None:
                name = f"({name}) - ({shown(comp.c)} - {shown(comp.d)})"
                seeds, t = tests[comp.key]
                hp, values = adjusted[comp.key], interactions[comp.key]
            else:
                seeds, t, hp = lookup(comp.a, comp.b)
            if t is None:
                lines.append(f"| {name} | {comp.what} | 0 |  |  |  |  |")
                continue
            if comp.c is None:
                va = {int(r["seed"]): r[metric] for r in recs[comp.a]}
                vb = {int(r["seed"]): r[metric] for r in recs[comp.b]}
                values = [va[s] - vb[s] for s in seeds]
            per = ", ".join(_f(x, sign=True) for x in values)
            lines.append(
                f"| {name} | {comp.what} | {t.n} | {_f(t.mean, sign=True)} "
                f"{_ci(t.ci_low, t.ci_high, sign=True)} | {per} | {_p(t.p)} | {_p(hp)} |"
            )
    for section in experiment.sections:
        text = section(experiment, sc, [r for r in records if r.get("row") in rows]).strip()
        if text:
            lines += ["", text]
    lines += ["", _provenance(records)]
    return "\n".join(lines) + "\n"


def _causality_cell(causal: bool, rs: list[dict], audited: bool) -> str:
    cell = "declared causal" if causal else "**NON-CAUSAL**"
    audits = [r["audit"] for r in rs if r.get("audit")]
    if audited and audits:
        leaks = sum(1 for a in audits if not a["causal"])
        worst = max(float(a["leak_rel"]) for a in audits)
        verdict = "causal" if not leaks else f"LEAKS ({leaks}/{len(audits)} seeds)"
        methods = "/".join(sorted({str(a.get("method")) for a in audits}))
        cell += f"; audit ({methods}): {verdict}, max rel. leak {worst:.1e}"
    return cell


def _describe(sc: Scale, recs: dict[str, list[dict]], experiment: Experiment) -> str:
    """The scale in one sentence, from the declaration and the records' data (no paths)."""
    from mope_jax.config import ModelConfig, TrainConfig

    m, t = ModelConfig(**sc.model), TrainConfig(**sc.train)
    text = (
        f"Scale `{sc.name}`: T={m.block_size}, E={m.n_embd}, {m.n_layer} layers x {m.n_head} "
        f"heads, dropout {m.dropout}; {t.max_steps} steps x {t.batch_size} windows, AdamW lr "
        f"{t.lr:g} (warmup {t.warmup_steps}, cosine), weight decay {t.weight_decay:g}; "
        f"{t.eval_batches} eval batches per split; {sc.seeds} seeds planned"
        + "".join(f", {k} for `{r}`" for r, k in (sc.row_seeds or {}).items())
        + "."
    )
    if sc.row_overrides:
        text += (
            " At this scale also: "
            + "; ".join(
                f"`{r}`: {', '.join(_no_location(x) for x in o)}"
                for r, o in sc.row_overrides.items()
                if o
            )
            + "."
        )
    any_rec = next((rs[0] for rs in recs.values() if rs), None)
    if any_rec is not None:
        d = any_rec.get("config", {}).get("data", {})
        src = d.get("source", "?")
        what = f"`{Path(d['path']).name}`" if src == "text" and d.get("path") else src
        sha = (any_rec.get("corpus") or {}).get("sha256")
        text += f" Data: {what}" + (f" (sha256 {sha[:12]})" if sha else "") + "."
    return text


def _no_location(override: str) -> str:
    """``data.path=/a/b/c.txt`` -> ``data.path=c.txt``: the table names no machine's folders."""
    key, _, value = override.partition("=")
    if key.strip().split(".")[-1] in _LOCATION_FIELDS and value:
        return f"{key}={Path(value).name}"
    return override


def _provenance(records: list[dict]) -> str:
    """The only part of the table that depends on where and when the runs were made."""
    if not records:
        return "## Provenance\n\nNo records yet."
    env = [r.get("env") or {} for r in records]
    machines = sorted(
        {
            f"{cpu_text(e)}, {e.get('cpu_count', '?')} CPUs, "
            f"{e.get('backend', '?')} ({e.get('device', '?')})"
            for e in env
        }
    )
    commits = sorted({str(e.get("git_commit", "unknown")) for e in env})
    dates = sorted(str(r.get("date_utc", "?")) for r in records)
    commands = sorted({str(r.get("command", "?")) for r in records})
    train_s = sum(float(r.get("train_seconds") or 0.0) / _group_size(r) for r in records)
    wall_s = sum(
        float((r.get("campaign") or {}).get("group_wall_s") or 0.0) / _group_size(r)
        for r in records
    )
    return "\n".join(
        [
            "## Provenance",
            "",
            f"- records: {len(records)}",
            f"- machines: {'; '.join(machines)}",
            f"- commits: {', '.join(commits)}",
            f"- dates (UTC): {dates[0]} to {dates[-1]}",
            f"- training: {train_s:.0f} s (every session of a resumed run); wall time of the "
            f"calls that finished the runs, with compilation, evaluation and audit: {wall_s:.0f} s"
            + (" (less than the training: some runs were resumed)" if wall_s < train_s else ""),
            f"- commands: {'; '.join(f'`{c}`' for c in commands)}",
        ]
    )


def _group_size(rec: dict) -> int:
    """Seeds trained in the record's program: its train_seconds and wall time are theirs."""
    return max(1, len((rec.get("campaign") or {}).get("group_seeds") or [None]))


def above_provenance(text: str) -> str:
    """The part of a rendered table that must not depend on how the campaign was run."""
    return text.split("\n## Provenance", 1)[0]
