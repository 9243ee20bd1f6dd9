"""Regenerate every committed result from its source: the orchestration above the campaigns,
the claims ledger and the figures (``mope-jax report --regenerate [--check] PATHS``).

    render_all(paths)     {path: text or FigureData}: each campaign's ``table.md`` and figures
                          (:mod:`mope_jax.campaign`), each results JSON's rendered files
                          (:func:`mope_jax.analysis.report.render_json`), and the claims ledger
                          (:func:`mope_jax.claims.render`: CLAIMS.md, README's blocks, its plot)
    regenerate(paths)     render_all, then write what differs (``check=True``: only compare)

It sits above :mod:`mope_jax.campaign`, :mod:`mope_jax.claims` and :mod:`mope_jax.analysis`,
which never import it (``tests/test_layers.py``).
"""

from __future__ import annotations

from pathlib import Path

from mope_jax import campaign, claims
from mope_jax.analysis.figures import FigureData
from mope_jax.analysis.report import (
    REGENERATE_DEFAULT,
    ReportError,
    find_root,
    read_payload,
    renderer_module,
    rendered_jsons,
    sync,
)
from mope_jax.campaign.discover import import_module
from mope_jax.errors import MopeError

__all__ = [
    "REGENERATE_DEFAULT",
    "campaign_record_dirs",
    "regenerate",
    "render_all",
    "render_campaigns",
    "render_claims",
    "render_json",
]


def render_all(paths: list[str | Path]) -> dict[Path, str | FigureData]:
    """Every file ``regenerate`` writes: {path: text, or a figure's data at its PNG path}."""
    files: dict[Path, str | FigureData] = render_campaigns(paths)
    for j in rendered_jsons(paths, required=not files):
        files.update(render_json(j))
    files.update(render_claims(paths))
    return files


def load_renderer(renderer: str, json_path: str | Path):
    """The ``render(payload, json_path) -> {file name: text}`` function a JSON names, imported
    by module name: a module of the experiments package from the repository root that holds the
    JSON (:func:`mope_jax.campaign.discover.import_module`), any other from the installed
    packages. No file is executed by path."""
    import importlib

    try:
        module, func = renderer_module(renderer)
    except ReportError as e:
        raise ReportError(f"{json_path}: {e}") from None
    if module == "experiments" or module.startswith("experiments."):
        root = find_root(json_path, renderer)
        if root is None:
            raise ReportError(
                f"{json_path}: renderer {renderer} lies in an experiments package, but no folder "
                "above the JSON holds experiments/__init__.py"
            )
        try:
            mod = import_module(module, root)
        except MopeError as e:
            raise ReportError(f"{json_path}: renderer {renderer}: {e}") from None
    else:
        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            raise ReportError(
                f"{json_path}: renderer module {module} cannot be imported ({e})"
            ) from None
    fn = getattr(mod, func, None)
    if not callable(fn):
        raise ReportError(f"{json_path}: renderer {renderer} has no function {func!r}")
    return fn


def render_json(json_path: str | Path) -> dict[Path, str]:
    """The files one rendered JSON produces: {path beside the JSON: full text}."""
    json_path = Path(json_path)
    payload = read_payload(json_path)
    render = load_renderer(payload["renderer"], json_path)
    try:
        out = render(payload, json_path)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
        if isinstance(e, MopeError):
            raise
        raise ReportError(
            f"{json_path}: {payload['renderer']} cannot read it ({type(e).__name__}: "
            f"{' '.join(str(e).split())[:200]}); the JSON is damaged or from an older format: "
            "restore it (git checkout -- PATH) or re-run the command that wrote it"
        ) from None
    if not isinstance(out, dict) or not all(isinstance(v, (str, FigureData)) for v in out.values()):
        raise ReportError(
            f"{json_path}: {payload['renderer']} returned no {{file name: text}} dict; fix the "
            "renderer"
        )
    files = {}
    for name, text in out.items():
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ReportError(
                f"{json_path}: renderer output {name!r} is not a file name beside the JSON"
            )
        files[json_path.parent / name] = text
    return files


def render_claims(paths: list[str | Path]) -> dict[Path, str | FigureData]:
    """The claims ledger (``experiments/results/CLAIMS.md`` and README.md's ledger block) of
    every repository whose ``experiments/results`` folder is among ``paths``."""
    files: dict[Path, str | FigureData] = {}
    for p in map(Path, paths):
        p = p.resolve()
        if p.name == "results" and p.parent.name == "experiments":
            if (p.parent / "__init__.py").is_file():
                files.update(claims.render(p.parent.parent))
    return files


def campaign_record_dirs(paths: list[str | Path]) -> list[Path]:
    """Every ``<experiment>/<scale>/records`` folder at or below ``paths`` (campaign records)."""
    found = []
    for p in map(Path, paths):
        if not p.is_dir():
            continue
        cands = [p] if p.name == "records" else []
        cands += sorted(d for d in p.rglob("records") if d.is_dir())
        found += [d for d in cands if any(x.is_dir() for x in d.iterdir())]
    return list(dict.fromkeys(d.resolve() for d in found))


def render_campaigns(paths: list[str | Path]) -> dict[Path, str | FigureData]:
    """``table.md`` of every campaign whose records are at or below ``paths``, rendered by
    :func:`mope_jax.campaign.render_campaign` with the experiment imported from the repository
    root that holds the results folder (``experiments.<experiment>``), and the figures of each
    such experiment (:func:`mope_jax.campaign.campaign_figures`: drawn from the records of all
    its scales)."""
    files: dict[Path, str | FigureData] = {}
    experiments = {}
    for records in campaign_record_dirs(paths):
        scale_dir = records.parent
        exp_name = scale_dir.parent.name
        root = next(
            (d for d in scale_dir.parents if (d / "experiments" / "__init__.py").is_file()), None
        )
        if root is None:
            raise ReportError(
                f"{records}: campaign records outside a repository (no experiments/__init__.py "
                "in any folder above)"
            )
        exp = campaign.load_experiment(exp_name, root)
        files[scale_dir / "table.md"] = campaign.render_campaign(
            exp, scale_dir.name, campaign.read_records(records, [r.name for r in exp.rows])
        )
        experiments.setdefault(scale_dir.parent, (exp, root))
    for exp_dir, (exp, root) in experiments.items():
        files.update(campaign.campaign_figures(exp, exp_dir))
    return files


def regenerate(
    paths: list[str | Path], *, check: bool = False, notes: list[str] | None = None
) -> list[Path]:
    """Re-render every file made from a JSON with a ``"renderer"`` at or below ``paths``, and
    the campaigns' tables and figures.

    Write mode rewrites the files whose text changed (and draws the figures whose data changed
    or whose PNG is missing); ``check=True`` writes nothing. Either way the return value is the
    files that differed from the rendering (a missing file differs; a figure differs by its
    ``.figure.json`` text or a missing PNG)."""
    return sync(render_all(paths), check=check, notes=notes)
