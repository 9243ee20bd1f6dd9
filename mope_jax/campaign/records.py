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
from typing import Sequence

from mope_jax.campaign.configs import data_fields, row_config
from mope_jax.campaign.discover import find_root, load_experiment
from mope_jax.campaign.spec import NAME_RE, Experiment, Row, Scale
from mope_jax.errors import CampaignError

RESULTS = ("experiments", "results")  # <root>/experiments/results/<name>/<scale>/
RECORD_RE = re.compile(r"^seed(\d+)\.json$")  # records/<row>/seed<s>.json
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
    if not isinstance(row, str) or not NAME_RE.match(row):
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


def by_row(records: list[dict]) -> dict[str, list[dict]]:
    """Records grouped by row, each list sorted by seed."""
    out: dict[str, list[dict]] = {}
    for r in sorted(records, key=lambda r: (r["row"], int(r["seed"]))):
        out.setdefault(r["row"], []).append(r)
    return out
