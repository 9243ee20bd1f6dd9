"""What an experiment declares: ``EXPERIMENT = Experiment(name, title, rows, scales, baseline,
...)`` in ``experiments/<name>.py``, with its :class:`Row` s, :class:`Scale` s and
:class:`Comparison` s. Frozen data, checked when it is built; nothing here reads a file, derives a
config or trains (:mod:`mope_jax.campaign.configs` makes a row's config at a scale)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from mope_jax.errors import CampaignError


# a row's or scale's name: a folder name (records/<row>/, results/<name>/<scale>/)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


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

    data: ``DataConfig`` fields; None = TinyShakespeare as a text file, through
    tensorflow-datasets or a folder holding karpathy's input.txt (``--tfds-manual-dir DIR`` /
    ``$MOPE_JAX_TFDS_MANUAL_DIR``; :func:`mope_jax.campaign.configs.default_data`);
    ``--corpus PATH`` replaces it.
    sections: pure renderers ``fn(experiment, scale, records) -> markdown`` appended after the
    tables (records: every record of the scale, as :func:`read_records` returns them).
    claims: the paper claims judged from this campaign's records (:mod:`mope_jax.claims`;
    rendered into the claims ledger by ``mope-jax report --regenerate``).
    analyze: a bespoke measurement of each trained run, ``fn(cfg, state, corpus) -> dict``
    (JSON values; cfg has the corpus vocabulary, state is that seed's TrainState with numpy
    leaves), stored in the record as ``analysis`` for the sections to render.
    paper_scale: the paper's own training budget in words (parameters, training tokens, seeds),
    which the claims ledger states beside ours; "" when the paper gives none.
    outdated: ``fn(record) -> str | None``: why a record's ``analysis`` was made with a definition
    that has since changed (None when current). Such a record is kept and rendered (its sections
    mark it); ``mope-jax campaign status`` lists it, and only re-training the seed replaces it
    (its config is unchanged, so it is not stale).
    figures: ``fn(experiment, records_by_scale) -> {path under the results folder: FigureData}``,
    the experiment's own figures beside the ones every campaign gets.
    prepare_data: ``fn(scale name)`` that writes the generated corpora the scale's rows read
    (called before a campaign reads its corpus; never while results are only rendered).
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
    outdated: Callable | None = None
    figures: Callable | None = None
    prepare_data: Callable | None = None

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
            bad = [n for n in names if not NAME_RE.match(n)]
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
