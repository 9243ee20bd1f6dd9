"""A row's config at a scale (its declaration made a :class:`mope_jax.config.Config`), and what
differs between the config a record was made with and the row's config now: a record is *stale*
when anything does. The corpus is compared by digest, not by path (``LOCATION_FIELDS``: where a
corpus lives on this machine, not what it is), so a clone elsewhere keeps its records valid."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from mope_jax.campaign.spec import Experiment, Row, Scale
from mope_jax.config import BOOKKEEPING_FIELDS, LOCATION_FIELDS
from mope_jax.errors import CampaignError
from mope_jax.provenance import jsonable


# how a campaign command names the two ways to the default corpus
MANUAL_DIR_OPTION = "--tfds-manual-dir"
CORPUS_FIX = "give --corpus PATH (a copy of karpathy's input.txt)"


def default_data(root: Path | None = None, *, tfds_manual_dir: str = "") -> dict:
    """The campaigns' default corpus, TinyShakespeare, as a text file: the input.txt of
    ``tfds_manual_dir`` (else of ``$MOPE_JAX_TFDS_MANUAL_DIR``), else the copy tensorflow-datasets
    built (downloaded once, kept in ``~/.cache/mope_jax``); see
    :func:`mope_jax.data.tfds_source.tiny_shakespeare_file`. Its sha256 is checked, so every
    way gives the same corpus; only the path (a location field) differs. ``root`` is unused.

    DataError (one line naming ``--corpus PATH`` and ``--tfds-manual-dir DIR`` /
    ``$MOPE_JAX_TFDS_MANUAL_DIR``) where none of them has it."""
    from mope_jax.data.tfds_source import tiny_shakespeare_file

    path = tiny_shakespeare_file(
        manual_dir=tfds_manual_dir or "", option=MANUAL_DIR_OPTION, fix=CORPUS_FIX
    )
    return {"source": "text", "path": str(Path(path).resolve())}


def data_fields(
    experiment: Experiment,
    scale: Scale,
    root: Path,
    corpus: str | Path | None = None,
    *,
    tfds_manual_dir: str = "",
) -> dict:
    """The data fields of the experiment at this scale: the experiment's (default: text), the
    scale's on top, ``corpus`` as the text file where given; a text source with no file gets
    :func:`default_data` (only then is TinyShakespeare looked for)."""
    d = dict(experiment.data) if experiment.data is not None else {"source": "text"}
    d.update(scale.data or {})
    if corpus is not None:
        d.update(source="text", path=str(Path(corpus).expanduser().resolve()))
    elif d.get("source") == "text" and not d.get("path"):
        d.update(default_data(root, tfds_manual_dir=tfds_manual_dir))
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
        sec: _normal(jsonable(dataclasses.asdict(getattr(cfg, sec))))
        for sec in ("model", "data", "train")
    }


def config_diff(old: dict, new: dict) -> list[str]:
    """``section.key: old -> new`` for every field that differs (location fields and
    ``BOOKKEEPING_FIELDS`` left out: where the corpus is and how often the run saved and logged).

    A field the old record does not have at all was added to the config after the record was
    written; it counts as equal when the new config keeps it at its default (a field is only
    added with a default that keeps the earlier computation, e.g. ``model.attn_layout``)."""
    old, new = _normal(old), _normal(new)
    defaults = _field_defaults()
    out = []
    for sec in ("model", "data", "train"):
        a, b = old.get(sec, {}), new.get(sec, {})
        for k in sorted(set(a) | set(b)):
            if sec == "data" and k in LOCATION_FIELDS:
                continue
            if sec == "train" and k in BOOKKEEPING_FIELDS:  # how the run was kept, not what
                continue
            if k not in a and k in defaults.get(sec, {}) and b.get(k) == defaults[sec][k]:
                continue
            if a.get(k) != b.get(k):
                out.append(f"{sec}.{k}: {a.get(k)!r} -> {b.get(k)!r}")
    if old.get("name") != new.get("name"):
        out.append(f"name: {old.get('name')!r} -> {new.get('name')!r}")
    return out


def corpus_id(meta: dict) -> dict:
    """What the corpus is, without where it is on this machine."""
    return {k: v for k, v in (meta or {}).items() if k not in LOCATION_FIELDS}


def corpus_diff(old_id: dict | None, meta: dict) -> list[str]:
    """``corpus sha256 <old> -> <new>`` when a record's corpus (``old_id``, its
    :func:`corpus_id`) is not the corpus ``meta`` describes now; [] when it is, or when the record
    names none."""
    new_id = corpus_id(meta)
    if old_id is None or _normal(old_id) == _normal(new_id):
        return []
    sha = lambda m: str((m or {}).get("sha256", "?"))[:12]  # noqa: E731
    return [f"corpus sha256 {sha(old_id)} -> {sha(new_id)}"]
