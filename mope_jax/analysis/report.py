"""Turn run records (``final.json`` of ``run``/``sweep``) into tables and plots.

Records are grouped by config name (seeds pooled); each row gets n, mean, std and a 95%
t-interval of the final val loss, the difference to a baseline row with Welch's test, and
the causality declaration of the variant. Every file written says which command made it,
when, and on what machine.

Committed tables are never typed: every results JSON that names a ``"renderer"``
(``experiments/paper_a.py:render``: the module ``experiments.paper_a`` of the repository that
holds the JSON, imported by name, or ``package.module:function``) is re-rendered by
``regenerate`` (``mope-jax report --regenerate``; ``--check`` compares instead of writing).
A renderer is ``render(payload, json_path) -> {file name beside the JSON: text}`` and must be
a pure function of the JSON: no clock, no environment lookups.

This module renders what one JSON names and writes rendered files (:func:`sync`); the
orchestration over campaigns, the claims ledger and figures (``regenerate``) lives above the
campaigns, in :mod:`mope_jax.results`: nothing here imports a campaign or the ledger.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import platform
import shlex
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from mope_jax.analysis.figures import FigureData
from mope_jax.analysis.stats import summarize, welch
from mope_jax.errors import MopeError
from mope_jax.provenance import save_json, write_json

REQUIRED_KEYS = ("name", "seed", "final_val_loss")


def load_records(paths: list[str | Path]) -> list[dict[str, Any]]:
    """Every final.json at or below the given paths (a path may also be a final.json). A path
    that does not exist, or a record that is not a complete JSON record, is a ReportError
    naming the file."""
    recs = []
    for p in map(Path, paths):
        if not p.exists():
            raise ReportError(f"{p}: no such file or folder")
        files = [p] if p.is_file() else sorted(p.rglob("final.json"))
        for f in files:
            try:
                rec = json.loads(f.read_text())
            except (OSError, UnicodeDecodeError, ValueError) as e:
                raise ReportError(
                    f"{f}: not a readable run record ({type(e).__name__}: {e}); rerun the same "
                    "train/sweep command to rebuild it, or leave the folder out"
                ) from None
            missing = [k for k in REQUIRED_KEYS if not isinstance(rec, dict) or k not in rec]
            if missing:
                raise ReportError(
                    f"{f}: not a run record (no {', '.join(missing)}); give run or sweep folders"
                )
            rec["_path"] = str(f)
            recs.append(rec)
    return recs


def group(
    records: list[dict[str, Any]], metric: str = "final_val_loss"
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {"values": [], "seeds": [], "records": []})
    for r in records:
        g = out[r["name"]]
        g["values"].append(r[metric])
        g["seeds"].append(r["seed"])
        g["records"].append(r)
    return dict(out)


def _fmt(x: float, nd: int = 4) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{nd}f}"


def table(
    records: list[dict[str, Any]], *, baseline: str | None = None, metric: str = "final_val_loss"
) -> str:
    groups = group(records, metric)
    names = sorted(groups)
    if baseline is not None and baseline not in groups:
        raise ReportError(f"baseline {baseline!r} is not among the configs: {', '.join(names)}")
    lines = [
        f"| config | n | mean {metric} | std | 95% CI | diff vs {baseline or '-'} "
        "| Welch p | tokens/s | causal |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        g = groups[name]
        s = summarize(g["values"])
        ci = "n/a" if s.n < 2 else f"[{s.ci_low:.4f}, {s.ci_high:.4f}]"
        if baseline is not None and name != baseline:
            w = welch(g["values"], groups[baseline]["values"])
            diff, p = f"{w.diff:+.4f}", _fmt(w.p, 3)
        else:
            diff, p = "-", "-"
        caus = g["records"][0].get("causality", {})
        verdict = "yes" if caus.get("declared_causal", True) else "**NON-CAUSAL**"
        rates = [r["tokens_per_s"] for r in g["records"] if r.get("tokens_per_s")]
        rate = f"{np.mean(rates):,.0f}" if rates else "n/a"
        lines.append(
            f"| {name} | {s.n} | {s.mean:.4f} | {_fmt(s.std)} | {ci} "
            f"| {diff} | {p} | {rate} | {verdict} |"
        )
    return "\n".join(lines)


def provenance(command: str | None = None) -> str:
    from mope_jax.provenance import environment

    env = environment()
    cmd = command or " ".join(shlex.quote(a) for a in ["mope-jax", *sys.argv[1:]])
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"Generated by `{cmd}` on {now}; "
        f"machine: {platform.node() or 'unknown'} ({env['processor']}, "
        f"{env['cpu_count']} CPUs, backend {env['backend']} x{env['device_count']}); "
        f"jax {env['jax']}, flax {env['flax']}; commit {env['git_commit']}."
    )


def plot_curves(records: list[dict[str, Any]], path: str | Path) -> Path | None:
    """Val-loss curves, mean over seeds with a +-1 std band, one line per config."""
    try:
        from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone
    except ImportError:
        return None
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for name, g in sorted(group(records).items()):
        curves = [r["curve"] for r in g["records"] if r.get("curve")]
        if not curves:
            continue
        steps = [c["step"] for c in curves[0]]
        vals = np.array(
            [[c["val"] for c in cv][: len(steps)] for cv in curves if len(cv) >= len(steps)]
        )
        mean, std = vals.mean(0), vals.std(0)
        ax.plot(steps, mean, label=f"{name} (n={len(vals)})")
        if len(vals) > 1:
            ax.fill_between(steps, mean - std, mean + std, alpha=0.2)
    ax.set_xlabel("step")
    ax.set_ylabel("val loss (nats/token)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=120)
    return path


RECORD_KEYS = (
    "name",
    "seed",
    "final_val_loss",
    "best_val_loss",
    "tokens_per_s",
    "causality",
    "curve",
)
RECORDS_TEXT = (
    "Final val loss in nats/token; mean, sample std and 95% t-interval over seeds; "
    "Welch's two-sided test against the baseline; tokens/s is the median training throughput "
    "of each run (per seed)."
)


def plot_spectra(records: list[dict[str, Any]], path: str | Path) -> Path | None:
    """The learned MOPE spectra of every config: sigma against omega of all its seeds pooled,
    with the hyperbola omega sigma = bound (None when no record holds MOPE spectra)."""
    panels, bound = {}, None
    for name, g in sorted(group(records).items()):
        sp = [r.get("spectra") or {} for r in g["records"]]
        sp = [x for x in sp if "mope_omega" in x and "mope_sigma" in x]
        if not sp:
            continue
        panels[f"{name} ({len(sp)} seeds)"] = {
            "omega": np.concatenate([np.ravel(x["mope_omega"]) for x in sp]),
            "sigma": np.concatenate([np.ravel(x["mope_sigma"]) for x in sp]),
        }
        bound = bound or g["records"][0].get("config", {}).get("model", {}).get("mope_bound")
    if not panels:
        return None
    try:
        from mope_jax.analysis.spectra import plot_sigma_omega

        return plot_sigma_omega(path, panels, bound=bound or 5.0)
    except ImportError:  # matplotlib is optional
        return None


def write_report(
    paths: list[str | Path],
    out: str | Path,
    *,
    baseline: str | None = None,
    command: str | None = None,
    title: str = "Results",
    notes: str = "",
) -> Path:
    """Markdown table (+ PNG curves and the JSON it is rendered from, beside it) from the records
    under ``paths``. The JSON keeps the records, so ``mope-jax report --regenerate`` re-renders
    the markdown without the run folders."""
    records = load_records(paths)
    if not records:
        raise ReportError(
            f"no final.json records under {', '.join(map(str, paths))}; train or sweep first"
        )
    if baseline is not None:
        table(records, baseline=baseline)  # an unknown baseline fails before anything is written
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    png = plot_curves(records, out.with_suffix(".png"))
    spectra_png = plot_spectra(records, out.with_name(out.stem + "_spectra.png"))
    payload = {
        "renderer": "mope_jax.analysis.report:render_records",
        "title": title,
        "command": command or " ".join(shlex.quote(a) for a in ["mope-jax", *sys.argv[1:]]),
        "provenance": provenance(command),
        "baseline": baseline,
        "notes": notes,
        "plot": None if png is None else png.name,
        "spectra_plot": None if spectra_png is None else spectra_png.name,
        "records": [{k: r[k] for k in RECORD_KEYS if k in r} for r in records],
        "summary": {
            name: {"values": g["values"], "seeds": g["seeds"], **summarize(g["values"]).__dict__}
            for name, g in group(records).items()
        },
    }
    json_path = out.with_suffix(".json")
    save_json(json_path, payload)
    (text,) = render_records(payload, json_path).values()
    out.write_text(text)
    return out


def publish(
    json_path: str | Path,
    payload: dict[str, Any],
    render_fn,
    *,
    command: str | None = None,
    nan_as_null: bool = False,
) -> dict[str, str]:
    """How an experiment writes its results: the JSON at ``json_path`` (atomically; stamped with
    the command, date and machine when ``command`` is given), then beside it the files
    ``render_fn(payload, json_path)`` makes of that JSON (``payload["renderer"]`` names the same
    function for ``mope-jax report --regenerate``). Returns {file name: text}."""
    if command is not None:
        write_json(json_path, payload, command=command)
    else:
        save_json(json_path, payload, nan_as_null=nan_as_null)
    return write_rendered(json_path, render_fn)


def write_rendered(json_path: str | Path, render_fn) -> dict[str, str]:
    """Write beside ``json_path`` what ``render_fn(payload, json_path)`` makes of the JSON just
    written there (``mope-jax report --regenerate`` makes the same files from the same JSON);
    returns {file name: text}. Experiments call it right after writing their results JSON."""
    json_path = Path(json_path)
    files = render_fn(json.loads(json_path.read_text()), json_path)
    for name, text in files.items():
        (json_path.parent / name).write_text(text)
    return files


def render_records(payload: dict[str, Any], json_path: str | Path) -> dict[str, str]:
    """The markdown of ``write_report`` from its JSON (the records it used), nothing else."""
    body = [
        f"# {payload['title']}",
        "",
        payload["provenance"],
        "",
        rendered_note(payload, json_path),
        "",
        RECORDS_TEXT,
        "",
        table(payload["records"], baseline=payload.get("baseline")),
        "",
    ]
    if payload.get("notes"):
        body += [payload["notes"], ""]
    if payload.get("plot"):
        body += [f"![val loss curves]({payload['plot']})", ""]
    if payload.get("spectra_plot"):
        body += [
            f"![learned spectra: sigma against omega of every seed]({payload['spectra_plot']})",
            "",
        ]
    return {Path(json_path).with_suffix(".md").name: "\n".join(body)}


# --------------------------------------------------------------------------- regenerate


class ReportError(MopeError, ValueError):
    """Bad input to ``report`` or ``regenerate``.

    The CLI prints it as one ``error:`` line and exits 2.
    """


REGENERATE_DEFAULT = "experiments/results"


def _split_renderer(spec: str) -> tuple[str, str]:
    target, sep, func = str(spec).rpartition(":")
    if not sep or not target or not func:
        raise ReportError(
            f"renderer {spec!r}: write it as path/to/file.py:function or package.module:function"
        )
    return target, func


def find_root(json_path: str | Path, renderer: str) -> Path | None:
    """The repository root of a rendered JSON: the nearest folder above it that holds
    ``experiments/__init__.py`` (None when there is none); ``renderer`` is checked for form."""
    _split_renderer(renderer)
    for d in Path(json_path).resolve().parents:
        if (d / "experiments" / "__init__.py").is_file():
            return d
    return None


def regenerate_dir(payload: dict[str, Any], json_path: str | Path) -> str:
    """The folder of a rendered JSON as ``mope-jax report --regenerate`` is given it.

    The path is repo-relative.
    """
    json_path = Path(json_path)
    root = find_root(json_path, payload.get("renderer", "")) if payload.get("renderer") else None
    if root is None:
        return json_path.parent.name or "."
    return json_path.resolve().parent.relative_to(root).as_posix()


def rendered_note(payload: dict[str, Any], json_path: str | Path) -> str:
    """The line every regenerated file carries: where its numbers come from, how to re-render it."""
    return (
        f"Tables rendered from `{Path(json_path).name}` by "
        f"`mope-jax report --regenerate {regenerate_dir(payload, json_path)}`."
    )


def renderer_module(renderer: str) -> tuple[str, str]:
    """(module, function) a JSON's ``renderer`` names: ``experiments/bench/report.py:render``
    (a file of the repository's experiments package) is the module ``experiments.bench.report``;
    ``package.module:function`` is taken as written."""
    target, func = _split_renderer(renderer)
    if target.endswith(".py"):
        parts = Path(target).with_suffix("").parts
        if not parts or parts[0] != "experiments" or any(p in ("", ".", "..") for p in parts):
            raise ReportError(
                f"renderer {renderer!r}: a renderer file must lie in the experiments package, "
                "e.g. experiments/paper_a.py:render"
            )
        target = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return target, func


def rendered_jsons(paths: list[str | Path], *, required: bool = True) -> list[Path]:
    """Every ``*.json`` at or below ``paths`` with a top-level ``"renderer"`` (a JSON given
    explicitly must have one; with ``required``, a folder must hold one)."""
    found: list[Path] = []
    for p in map(Path, paths):
        if not p.exists():
            raise ReportError(f"{p}: no such file or folder")
        if p.is_file():
            if not isinstance(read_payload(p), dict) or "renderer" not in read_payload(p):
                raise ReportError(f'{p}: no "renderer" key, so no table is rendered from it')
            found.append(p)
            continue
        hits = [
            f
            for f in sorted(p.rglob("*.json"))
            if isinstance(d := read_payload(f), dict) and "renderer" in d
        ]
        if not hits and required:
            raise ReportError(
                f'{p}: no JSON with a "renderer" key (nor campaign records) at or below it'
            )
        found += hits
    return list(dict.fromkeys(found))


def read_payload(path: Path):
    """A results JSON's contents; an unreadable file is a :class:`ReportError`."""
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ReportError(f"{path}: not readable as JSON ({e})") from None


def sync(
    files: dict[Path, str | FigureData], *, check: bool = False, notes: list[str] | None = None
) -> list[Path]:
    """Write the rendered files (or with ``check``, only compare); the files that differed.

    A :class:`~mope_jax.analysis.figures.FigureData` value at ``<name>.png`` is a figure: its
    data file ``<name>.figure.json`` is compared byte for byte, the PNG by the tag of the data
    it was drawn from (a text chunk of a whole, CRC-checked PNG: a truncated, damaged or stale
    PNG differs), and the PNG is drawn when it does not match its data
    (:func:`mope_jax.analysis.figures.sync_figure`; ``notes`` gets a line for each PNG that
    could not be drawn, without matplotlib)."""
    from mope_jax.analysis.figures import sync_figure
    from mope_jax.rundir import atomic_write_text

    drift = []
    for path, text in files.items():
        try:
            if isinstance(text, FigureData):
                drift += sync_figure(path, text, check=check, notes=notes)
                continue
            old = path.read_text() if path.is_file() else None
            if old != text:
                drift.append(path)
                if not check:
                    atomic_write_text(path, text)
        except (OSError, UnicodeDecodeError) as e:
            what = "read" if check or isinstance(e, UnicodeDecodeError) else "write"
            why = getattr(e, "strerror", None) or type(e).__name__
            raise ReportError(
                f"{path}: cannot {what} it ({why}); make the folder readable and writable and "
                "free disk space, or run with --check, which only reads"
            ) from None
    return drift
