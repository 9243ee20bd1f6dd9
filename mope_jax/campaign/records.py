"""A campaign (one experiment at one scale in one repository: where its records and table are,
the config each record should hold) and its records, one JSON file per (row, seed), each read
through :func:`validate_record` so that every reader (status, run, report, claims) gets valid
records."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence, TypeVar

from mope_jax.campaign.configs import data_fields, row_config
from mope_jax.campaign.discover import find_root, load_experiment
from mope_jax.campaign.spec import NAME_RE, Experiment, Row, Scale
from mope_jax.errors import CampaignError

T = TypeVar("T")
RESULTS = ("experiments", "results")  # <root>/experiments/results/<name>/<scale>/
RECORD_RE = re.compile(r"^seed(\d+)\.json$")  # records/<row>/seed<s>.json
SEED_MAX = 2**32 - 1  # what jax.random.PRNGKey keeps unwrapped
_SECTIONS = ("model", "train", "data")  # the config sections every record holds
# a record's losses: each a finite number where present
_LOSS_FIELDS = ("final_val_loss", "final_train_loss", "best_val_loss")


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
        tfds_manual_dir: str | Path | None = None,
    ) -> "Campaign":
        """``corpus``: a text file in place of the default corpus; ``tfds_manual_dir``: a folder
        holding karpathy's input.txt, where the default corpus (TinyShakespeare) is read offline
        (:func:`mope_jax.campaign.configs.default_data`)."""
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
            data_fields(experiment, sc, root, corpus, tfds_manual_dir=str(tfds_manual_dir or "")),
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
            if self.experiment.prepare_data is not None:
                self.experiment.prepare_data(self.scale.name)
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
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CampaignError(
            f"{path}: not a readable campaign record ({type(e).__name__}); delete it to retrain "
            "that run"
        ) from None
    validate_record(path, rec)
    return rec


def validate_record(path: Path, rec) -> None:
    """CampaignError (naming the file, what is wrong and the fix) unless ``rec`` is a JSON
    object whose ``config`` holds ``model``, ``train`` and ``data`` objects, whose ``row``
    (where present) is its folder's name and ``seed`` (an integer in [0, 2**32 - 1]) the number
    in its file name, written ``seed<s>.json`` without leading zeros (so one seed has one file),
    whose ``final_val_loss`` is present and whose losses are finite numbers, and whose
    ``analysis`` (where present) is an object."""
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
    if not isinstance(row, str) or not NAME_RE.match(row):
        raise CampaignError(f"{path}: its row {row!r} is not a row name; {retrain}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise CampaignError(
            f"{path}: its seed {seed!r} is not a seed number (an integer in [0, {SEED_MAX}]); "
            f"{retrain}"
        )
    m = RECORD_RE.match(path.name)
    if m is None or m.group(1) != str(seed) or row != path.parent.name:
        raise CampaignError(
            f"{path}: the record is row {row} seed {seed}, its path says row {path.parent.name} "
            f"{path.stem}; move it to records/{row}/seed{seed}.json or delete it"
        )
    if "final_val_loss" not in rec:
        raise CampaignError(f"{path}: it has no final_val_loss; {retrain}")
    if rec.get("analysis") is not None and not isinstance(rec["analysis"], dict):
        raise CampaignError(
            f"{path}: its analysis is a {type(rec['analysis']).__name__}, not an object; {retrain}"
        )
    for key in _LOSS_FIELDS:
        v = rec.get(key)
        if v is not None and (
            isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
        ):
            raise CampaignError(f"{path}: its {key} is {v!r}, not a finite number; {retrain}")


def read_records(records_dir: str | Path, rows: Iterable[str] | None = None) -> list[dict]:
    """Every ``<row>/seed<s>.json`` under ``records_dir``, sorted by (row, seed); each gets
    ``row`` (its folder) if it lacks one. Temporary files of an interrupted write are skipped.

    rows: the experiment's row names; a folder of records named otherwise is a
    :class:`CampaignError` (its records would be counted nowhere, or silently in the provenance).
    """
    out = []
    d = Path(records_dir)
    if not d.is_dir():
        return out
    known = None if rows is None else set(rows)
    for row_dir in sorted(p for p in d.iterdir() if p.is_dir()):
        files = [f for f in sorted(row_dir.iterdir()) if RECORD_RE.match(f.name)]
        if known is not None and row_dir.name not in known and files:
            raise CampaignError(
                f"{row_dir}: no row of the experiment is named {row_dir.name!r}; move its "
                "records into their row's folder or delete the folder"
            )
        for f in files:
            rec = read_record(f)
            rec.setdefault("row", row_dir.name)
            out.append(rec)
    return sorted(out, key=lambda r: (r["row"], int(r["seed"])))


def blame_record(call: Callable[[list[dict]], T], records: list[dict], what: str) -> T:
    """``call(records)``; where it fails reading a record's fields (a damaged ``analysis``, a
    key missing), the record it fails on alone (found by leaving each out) is a
    :class:`CampaignError` naming its file and the fix. A failure no single record explains
    keeps its traceback: it is a bug of ``call``."""
    try:
        return call(records)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
        if isinstance(e, CampaignError):
            raise
        for r in records:
            try:
                call([x for x in records if x is not r])
            except Exception:
                continue
            where = f"records/{r.get('row')}/seed{r.get('seed')}.json"
            raise CampaignError(
                f"{where} of {r.get('experiment', '?')}/{r.get('scale', '?')}: {what} cannot read "
                f"it ({type(e).__name__}: {' '.join(str(e).split())}); the record is damaged or "
                "made by another definition: delete it to retrain that run"
            ) from None
        raise


def by_row(records: list[dict]) -> dict[str, list[dict]]:
    """Records grouped by row, each list sorted by seed."""
    out: dict[str, list[dict]] = {}
    for r in sorted(records, key=lambda r: (r["row"], int(r["seed"]))):
        out.setdefault(r["row"], []).append(r)
    return out
