"""Figures that ``mope-jax report --regenerate --check`` can verify on any matplotlib.

A figure is two files beside each other:

    <name>.figure.json   its data: canonical JSON (sorted keys, floats at 6 significant digits,
                         NaN as null), compared byte for byte like any rendered table;
    <name>.png           drawn from that data alone, and only when the data text changed or the
                         PNG is missing (PNG bytes differ between matplotlib versions, so they are
                         never compared).

``--check`` reports the data file when its text differs and the PNG when it is missing. The data
holds a digest of the drawing code (``"drawer"``), so a changed drawer changes every data file and
the PNGs are drawn again, never left as the old code drew them (a later drawer's section only its
own figures' data: :func:`drawer_digest`).

Builders are pure functions of records (or of the claims ledger) that return a
:class:`FigureData`; drawers are pure functions of the data (``matplotlib.figure.Figure``, never
pyplot), looked up by the data's ``"figure"`` kind in :data:`DRAWERS`, so a PNG can be redrawn
from its ``.figure.json`` alone (:func:`draw_file`). Matplotlib is optional (the ``plot``,
``analysis`` and ``dev`` extras): without it the data is written and the PNG is not drawn (a
stale PNG is removed, so ``--check`` reports it missing rather than passing a figure that does
not show its data).

The campaigns' own figures are built in :mod:`mope_jax.campaign.figures` from their records;
:func:`ledger_forest` draws the claims ledger's effects (``experiments/results/claims_forest.png``).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

SUFFIX = ".figure.json"
DPI = 100
SIGNIFICANT = 6
MAX_LINES = 12  # curves: more rows than this in one panel are not legible
MADE_BY = "mope-jax report --regenerate experiments/results"

# colours by name (the hex of matplotlib's tab10/tab20, fixed here so the data names them)
TAB20 = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#aec7e8",
    "#ffbb78",
    "#98df8a",
    "#ff9896",
    "#c5b0d5",
    "#c49c94",
    "#f7b6d2",
    "#c7c7c7",
    "#dbdb8d",
    "#9edae5",
)
CAUSAL_COLOR = "#1f77b4"
NONCAUSAL_COLOR = "#d62728"
VERDICT_COLORS = {
    "reproduced": "#2ca02c",
    "contradicted": "#d62728",
    "inconclusive": "#7f7f7f",
    "untestable here": "#bcbd22",
    "leak": "#9467bd",
    "produced by the setup": "#ff7f0e",
    "untested": "#c7c7c7",
    "description": "#17becf",
}
_RC = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "font.family": "DejaVu Sans",
    "svg.hashsalt": "mope-jax",
}


# --------------------------------------------------------------------------- the data


def _clean(x: Any) -> Any:
    """JSON values with floats at :data:`SIGNIFICANT` significant digits (NaN/inf as None)."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if not math.isfinite(x):
            return None
        r = float(f"{x:.{SIGNIFICANT}g}")
        return 0.0 if r == 0 else r
    if x is None or isinstance(x, str):
        return x
    raise TypeError(f"figure data holds a {type(x).__name__}: {x!r}")


def _dump(x: Any, level: int = 0) -> str:
    """Indented JSON: one key a line, a list of plain values on one line (short diffs)."""
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(x, dict):
        if not x:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_dump(x[k], level + 1)}" for k in sorted(x)]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(x, list):
        if all(not isinstance(v, (dict, list)) for v in x):
            return json.dumps(x, allow_nan=False)
        return "[\n" + ",\n".join(inner + _dump(v, level + 1) for v in x) + "\n" + pad + "]"
    return json.dumps(x, allow_nan=False)


def canonical(data: dict) -> str:
    """The data file's text: the same bytes for the same numbers on every machine."""
    return _dump(_clean(data)) + "\n"


@dataclass(frozen=True)
class FigureData:
    """A figure to write: ``kind`` (a key of :data:`DRAWERS`) and its data (JSON values)."""

    kind: str
    data: dict = field(default_factory=dict)

    def payload(self) -> dict:
        return {
            "figure": self.kind,
            "made_by": MADE_BY,
            "drawer": drawer_digest(self.kind),
            **self.data,
        }

    def text(self) -> str:
        return canonical(self.payload())


def drawer_digest(kind: str | None = None) -> str:
    """12 hex digits of the drawing code (this module's drawers section and its style): in the
    data, so a changed drawer changes the data file, and ``--check`` asks for the PNGs to be
    drawn again rather than passing PNGs drawn by the old code. A figure drawn by one of the
    later drawers (:data:`LATER_DRAWERS`, below :data:`LATER_MARK`) hashes that section too;
    the section above it is hashed as it was before the later one existed, so adding a later
    drawer leaves every other figure's data as it was."""
    later = kind in LATER_DRAWERS
    if later not in _DIGEST:
        import hashlib

        text = Path(__file__).read_text()
        start, end = text.index(DRAWERS_MARK), text.index(LATER_MARK)
        code = text[start:end].rstrip("\n") + "\n" + repr(sorted(_RC.items()))
        if later:
            code += text[end:]
        _DIGEST[later] = hashlib.sha256(code.encode()).hexdigest()[:12]
    return _DIGEST[later]


_DIGEST: dict[bool, str] = {}
DRAWERS_MARK = "# " + "-" * 75 + " drawers"
LATER_MARK = "# " + "-" * 75 + " later drawers"


def data_path(png: str | Path) -> Path:
    """``forest.png`` -> ``forest.figure.json``."""
    png = Path(png)
    return png.with_name(png.stem + SUFFIX)


# --------------------------------------------------------------------------- writing and checking


def have_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        return False
    return True


def draw(payload: dict):
    """The ``matplotlib.figure.Figure`` of a figure's data (ImportError without matplotlib)."""
    import matplotlib

    kind = payload.get("figure")
    if kind not in DRAWERS:
        raise ValueError(f"no drawer for figure kind {kind!r}; known: {', '.join(DRAWERS)}")
    with matplotlib.rc_context(_RC):
        return DRAWERS[kind](payload)


PNG_TAG = "mope-jax figure data"  # the PNG text chunk naming the data it was drawn from


def data_tag(text: str) -> str:
    """sha256 (16 hex digits) of a figure's data text: what its PNG says it shows."""
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()[:16]


def png_tag(png: str | Path) -> str | None:
    """The data tag a PNG was drawn with, or None when the file is not a whole PNG (bad
    signature, a chunk cut short or with a wrong CRC, no IEND) or carries no tag."""
    import struct
    import zlib

    try:
        raw = Path(png).read_bytes()
    except OSError:
        return None
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    i, tag = 8, None
    while i + 12 <= len(raw):
        (n,) = struct.unpack(">I", raw[i : i + 4])
        kind, body = raw[i + 4 : i + 8], raw[i + 8 : i + 8 + n]
        if len(body) < n or i + 12 + n > len(raw):
            return None
        (crc,) = struct.unpack(">I", raw[i + 8 + n : i + 12 + n])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            return None
        if kind == b"tEXt" and body.startswith(PNG_TAG.encode() + b"\0"):
            tag = body[len(PNG_TAG) + 1 :].decode("latin-1")
        if kind == b"IEND":
            return tag
        i += 12 + n
    return None


def save_png(payload: dict, png: str | Path, tag: str | None = None) -> bool:
    """Draw ``payload`` into ``png`` (atomically), with ``tag`` (:func:`data_tag` of its data
    text) in a text chunk; False (nothing written) without matplotlib."""
    if not have_matplotlib():
        return False
    import matplotlib

    png = Path(png)
    png.parent.mkdir(parents=True, exist_ok=True)
    tmp = png.with_name(f".{png.name}.{os.getpid()}.tmp")
    meta = {"Software": None} | ({PNG_TAG: tag} if tag else {})
    with matplotlib.rc_context(_RC):
        fig = draw(payload)
        fig.savefig(tmp, dpi=DPI, format="png", metadata=meta)
    os.replace(tmp, png)
    return True


def draw_file(data_file: str | Path, png: str | Path | None = None) -> Path | None:
    """Redraw the PNG of a ``.figure.json`` from that file alone (None without matplotlib)."""
    data_file = Path(data_file)
    png = Path(png) if png else data_file.with_name(data_file.name[: -len(SUFFIX)] + ".png")
    text = data_file.read_text()
    return png if save_png(json.loads(text), png, data_tag(text)) else None


def sync_figure(
    png: str | Path, fig: FigureData, *, check: bool = False, notes: list[str] | None = None
) -> list[Path]:
    """Write (or with ``check`` only compare) one figure; the paths that differed: its data file
    when the text differs (or is missing), its PNG when it is not a whole PNG drawn from that
    very data (:func:`png_tag`: missing, truncated, damaged, or drawn from other data, e.g.
    after a kill between the data file and the PNG). The PNG is drawn when the data changed or
    the PNG does not match it; without matplotlib a note says it was not drawn."""
    png = Path(png)
    dp = data_path(png)
    text = fig.text()
    old = dp.read_text() if dp.is_file() else None
    drift = []
    if old != text:
        drift.append(dp)
    if png_tag(png) != data_tag(text):
        drift.append(png)
    if check or not drift:
        return drift
    dp.parent.mkdir(parents=True, exist_ok=True)
    if old != text:
        from mope_jax.rundir import atomic_write_text

        atomic_write_text(dp, text)
    if not save_png(json.loads(text), png, data_tag(text)):
        stale = png.is_file()
        if stale:
            png.unlink()  # it shows other data: missing is the honest state
        if notes is not None:
            notes.append(
                f"{png}: not drawn (matplotlib is not installed: pip install -e '.[plot]'); its "
                f"data {dp.name} is written" + ("; the stale PNG was removed" if stale else "")
            )
    return drift


# --------------------------------------------------------------------------- campaign figures


# --------------------------------------------------------------------------- the ledger


def _get(x, name: str):
    return x.get(name) if isinstance(x, dict) else getattr(x, name)


def ledger_forest(items, margins: dict | None = None) -> FigureData:
    """The claims ledger's forest plot: one panel a paper and unit (paper A's val-loss
    differences, paper B's, ...: the papers' effects differ by an order of magnitude), one row an
    effect labelled "<claim> <label> (`scale`)", coloured by that comparison's own verdict (the
    claim's where the judge gives none), hollow where not causal, the paper's value as an x, and
    the metric's materiality margin shaded (``margins``: {unit's first word: margin}, e.g.
    ``mope_jax.claims.MARGINS``; about 0 for a difference, about the claimed value for a
    fraction or a law's exponent). The deciding scale's effects come first, then those of any
    `reference` scale shown without a verdict. Fractions are clipped to [0, 1]. ``items``: the
    ledger's ``Judged`` rows, or ``(claim_id, verdict word, effects)`` tuples."""
    MARGINS = dict(margins or {})
    rows = []
    for it in items:
        if hasattr(it, "claim") and hasattr(it, "verdict"):
            cid, word = it.claim.id, it.verdict.verdict
            readings = [
                (r.verdict.effects, r.verdict.verdict)
                for r in getattr(it, "readings", ())
                if r.decisive
            ]
            readings += [
                (r.verdict.effects, "untested")
                for r in getattr(it, "readings", ())
                if not r.decisive and str(r.scale).startswith("reference")
            ]
            if not readings:
                readings = [(it.verdict.effects, word)]
        else:
            cid, word, effects = it
            readings = [(effects, word)]
        for effects, fallback in readings:
            for e in effects:
                lo, hi = _get(e, "ci_low"), _get(e, "ci_high")
                ok = lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi)
                unit = _get(e, "unit") or ""
                mean = _get(e, "mean")
                if unit.startswith("fraction") and ok:
                    lo, hi = max(0.0, lo), min(1.0, hi)
                scale = _get(e, "scale") or ""
                rows.append(
                    {
                        "group": cid[:1],
                        "unit": unit,
                        "label": f"{cid} {_get(e, 'label')}" + (f" (`{scale}`)" if scale else ""),
                        "verdict": _get(e, "verdict") or fallback,
                        "mean": mean,
                        "ci_low": lo if ok else None,
                        "ci_high": hi if ok else None,
                        "n": _get(e, "n"),
                        "paper": _get(e, "paper"),
                        "causal": bool(_get(e, "causal")),
                    }
                )
    keys = list(dict.fromkeys((r["group"], r["unit"]) for r in rows))
    panels = []
    for p, u in keys:
        mine = [r for r in rows if (r["group"], r["unit"]) == (p, u)]
        key = u.split(" ")[0] if u.split(" ")[0] in MARGINS else ""
        m = MARGINS.get(key)
        band, margin = None, None
        papers = {r["paper"] for r in mine if r["paper"] is not None}
        if key in ("nats", "accuracy"):
            margin = m
        elif m is not None and len(papers) == 1:
            v = papers.pop()
            band = [v - m, min(v + m, 1.0) if key == "fraction" else v + m]
        panels.append(
            {
                "title": f"paper {p}" if p in "ABC" else "ours",
                "xlabel": _unit_label(u),
                "labels": [r["label"] for r in mine],
                "margin": margin,
                "band": band,
                "zero": key in ("nats", "accuracy", ""),
                "items": [
                    {k: v for k, v in r.items() if k not in ("unit", "label", "group")} | {"row": i}
                    for i, r in enumerate(mine)
                ],
            }
        )
    return FigureData(
        "margin_forest",
        {
            "title": "Claims ledger: each compared quantity with its 95% interval, coloured by its "
            "own verdict; the shaded band is the metric's materiality margin",
            "source": "experiments/results/CLAIMS.md (mope_jax.claims: Verdict.effects)",
            "verdicts": {w: VERDICT_COLORS[w] for w in VERDICT_COLORS},
            "margin_label": "materiality margin (0.02 nats, 0.05 accuracy or fraction, "
            "0.1 exponent)",
            "ncols": 1,
            "panels": panels,
        },
    )


def _unit_label(unit: str) -> str:
    if unit == "nats":
        return "val-loss difference (nats); negative = the first row lower"
    if unit == "accuracy":
        return "accuracy difference"
    return unit


# --------------------------------------------------------------------------- drawers


def _new_figure(width: float, height: float):
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    return Figure(figsize=(width, height), layout="constrained")


def _wrap(text: str, width_in: float) -> str:
    """A title wrapped to a figure ``width_in`` inches wide (9-point text)."""
    import textwrap

    return textwrap.fill(text, max(30, int(width_in * 13)))


def _label_width(labels: list[str]) -> float:
    return 0.3 + 0.055 * max((len(s) for s in labels), default=10)


def _forest_axis(ax, labels, items, *, color_of, zero=True):
    """Horizontal intervals, one row a label (top to bottom); paper values as x."""
    n = len(labels)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_yticks(range(n))
    ax.set_axisbelow(True)
    ax.grid(axis="x", color="0.9", lw=0.6)
    if zero:
        ax.axvline(0.0, color="k", lw=0.9, zorder=2)
    for it in items:
        y, mean = it["row"], it["mean"]
        if mean is None:
            continue
        color = color_of(it)
        hollow = not it["causal"]
        face = "white" if hollow else color
        if it["ci_low"] is not None:
            ax.errorbar(
                mean,
                y,
                xerr=[[mean - it["ci_low"]], [it["ci_high"] - mean]],
                fmt="o",
                ms=5,
                mfc=face,
                mec=color,
                ecolor=color,
                elinewidth=1.3,
                capsize=2.5,
                zorder=3,
            )
            right = it["ci_high"]
        else:
            ax.plot([mean], [y], "o", ms=5, mfc=face, mec=color, zorder=3)
            right = mean
        if it.get("paper") is not None:
            ax.plot([it["paper"]], [y], "x", ms=6, mew=1.5, color="k", zorder=4)
        ax.annotate(
            f"n {it['n']}",
            (right, y),
            xytext=(4, 0),
            textcoords="offset points",
            fontsize=6,
            va="center",
            color="0.3",
        )
    ax.margins(x=0.12)


def draw_forest(p: dict):
    from matplotlib.lines import Line2D

    labels, panels = p["labels"], p["panels"]
    n = len(labels)
    width = _label_width(labels) + 3.0 * len(panels)
    fig = _new_figure(width, 1.5 + 0.26 * n)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    for ax, panel in zip(axes, panels):
        _forest_axis(
            ax,
            labels,
            panel["items"],
            color_of=lambda it: CAUSAL_COLOR if it["causal"] else NONCAUSAL_COLOR,
        )
        split = p.get("first_vs_baseline")
        if split:  # declared comparisons above, rows against the baseline below
            ax.axhline(split - 0.5, color="0.5", lw=0.7, ls=":")
        ax.set_title(panel["title"])
    axes[0].set_yticklabels(labels)
    fig.supxlabel(p["xlabel"], fontsize=8)
    items = [it for panel in panels for it in panel["items"]]
    handles = []
    if any(it["causal"] for it in items):
        handles.append(Line2D([], [], marker="o", ls="", color=CAUSAL_COLOR, label="causal rows"))
    if not all(it["causal"] for it in items):
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                ls="",
                mfc="white",
                mec=NONCAUSAL_COLOR,
                label="NON-CAUSAL (declared or audit LEAKS)",
            )
        )
    if any(it.get("paper") is not None for it in items):
        handles.append(Line2D([], [], marker="x", ls="", color="k", mew=1.5, label="paper's a - b"))
    fig.legend(  # the title as the legend's title: a suptitle and a legend above collide
        handles=handles,
        loc="outside upper center",
        ncols=3,
        frameon=False,
        title=_wrap(p["title"], width),
        title_fontsize=9,
    )
    return fig


def draw_ledger_forest(p: dict):
    from matplotlib.lines import Line2D

    panels = p["panels"]
    colors = p["verdicts"]
    if not panels:
        fig = _new_figure(6, 1.5)
        fig.text(0.5, 0.5, "no effects in the ledger yet", ha="center", va="center")
        return fig
    labels = [s for panel in panels for s in panel["labels"]]
    heights = [len(panel["labels"]) + 1.6 for panel in panels]
    width = _label_width(labels) + 4.5
    fig = _new_figure(width, 1.2 + 0.26 * sum(heights))
    axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=heights)[:, 0]
    for ax, panel in zip(axes, panels):
        _forest_axis(
            ax,
            panel["labels"],
            panel["items"],
            color_of=lambda it: colors.get(it["verdict"], "k"),
        )
        ax.set_yticklabels(panel["labels"])
        ax.set_xlabel(panel["xlabel"])
    used = list(dict.fromkeys(it["verdict"] for panel in panels for it in panel["items"]))
    handles = [
        Line2D([], [], marker="o", ls="", color=colors.get(w, "k"), label=w)
        for w in colors
        if w in used
    ]
    handles += [
        Line2D([], [], marker="o", ls="", mfc="white", mec="0.3", label="not causal"),
        Line2D([], [], marker="x", ls="", color="k", mew=1.5, label="the paper's value"),
    ]
    fig.legend(
        handles=handles,
        loc="outside upper center",
        ncols=4,
        frameon=False,
        title=_wrap(p["title"], width),
        title_fontsize=9,
    )
    return fig


def draw_xy(p: dict):
    """Panels of series: ``line`` (x, y), ``points`` (x, y, hollow, size), ``errorbar`` (x, y,
    yerr); a panel's ``hyperbola`` b draws y = b / x dashed."""
    from matplotlib import ticker

    panels = p["panels"]
    ncols = max(1, min(int(p.get("ncols", len(panels))), len(panels)))
    nrows = math.ceil(len(panels) / ncols)
    pw, ph = p.get("panel_size", [3.2, 2.6])
    legend = p.get("legend", "first")
    extra = 2.2 if legend == "right" else 0.0
    fig = _new_figure(pw * ncols + extra, ph * nrows + 0.5)
    axes = fig.subplots(
        nrows,
        ncols,
        squeeze=False,
        sharex=bool(p.get("sharex")),
        sharey=bool(p.get("sharey")),
    )
    for i, (ax, panel) in enumerate(zip(axes.flat, panels)):
        for s in panel["series"]:
            x = np.asarray(s["x"], np.float64)
            y = np.asarray([np.nan if v is None else v for v in s["y"]], np.float64)
            kw = {"color": s.get("color"), "label": s.get("label")}
            if s["kind"] == "line":
                ax.plot(
                    x,
                    y,
                    ls=s.get("linestyle", "-"),
                    marker=s.get("marker", "") or None,
                    ms=3,
                    lw=1.2,
                    **kw,
                )
            elif s["kind"] == "errorbar":
                ax.errorbar(
                    x,
                    y,
                    yerr=np.asarray(s["yerr"], np.float64),
                    fmt=s.get("fmt", "o-"),
                    ms=3,
                    capsize=2,
                    lw=1.0,
                    **kw,
                )
            else:
                c = kw.pop("color")
                if s.get("hollow"):
                    ax.scatter(
                        x, y, s=s.get("size", 8), facecolors="none", edgecolors=c, lw=0.6, **kw
                    )
                else:
                    ax.scatter(x, y, s=s.get("size", 8), c=c, lw=0, **kw)
        if panel.get("hyperbola"):
            b = float(panel["hyperbola"])
            xs = [v for s in panel["series"] for v in s["x"] if v]
            lo, hi = (min(xs), max(xs)) if xs else (0.05, 3.3)
            w = np.geomspace(lo / 1.15, hi * 1.15, 100)
            ax.plot(w, b / w, "k--", lw=0.8, zorder=1)
        for key, axis in (("xscale", ax.xaxis), ("yscale", ax.yaxis)):
            value = panel.get(key, p.get(key))
            if value:
                (ax.set_xscale if key == "xscale" else ax.set_yscale)(value)
            if value == "log":  # plain numbers at 1, 2, 3, 5 x 10^k
                axis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 3.0, 5.0)))
                axis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
                axis.set_minor_formatter(ticker.NullFormatter())
        if panel.get("xticks") is not None:
            ax.set_xticks(panel["xticks"])
        ax.set_title(panel.get("title", ""))
        # a panel's own axis labels always; the figure's at the edges (bottom of each column,
        # left of each row)
        xl = panel.get("xlabel") or (p.get("xlabel") if i + ncols >= len(panels) else None)
        yl = panel.get("ylabel") or (p.get("ylabel") if i % ncols == 0 else None)
        if xl:
            ax.set_xlabel(xl)
        if yl:
            ax.set_ylabel(yl)
        for line in ("hlines", "vlines"):
            for v in panel.get(line, []):
                (ax.axhline if line == "hlines" else ax.axvline)(v, color="0.5", lw=0.7, ls=":")
        if legend == "each" or (legend == "first" and i == 0):
            ax.legend(fontsize=6, frameon=False)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    if legend in ("right", "figure"):  # one legend: every label of every panel, once
        handles, labels = {}, []
        for ax in axes.flat:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in handles:
                    handles[lab] = h
                    labels.append(lab)
        if legend == "right":
            fig.legend(
                [handles[lab] for lab in labels], labels, loc="outside right upper", frameon=False
            )
        else:
            fig.legend(
                [handles[lab] for lab in labels],
                labels,
                loc="outside lower center",
                # as many columns as fit the figure's width (7-point text, ~4.3 pt a character)
                ncols=max(
                    1,
                    min(
                        4,
                        len(labels),
                        int((pw * ncols + extra) * 72 / (4.3 * max(map(len, labels)) + 36)),
                    ),
                ),
                frameon=False,
            )
    fig.suptitle(_wrap(p.get("title", ""), pw * ncols + extra), fontsize=9)
    return fig


DRAWERS: dict[str, Callable[[dict], Any]] = {
    "forest": draw_forest,
    "ledger_forest": draw_ledger_forest,
    "xy": draw_xy,
}


# --------------------------------------------------------------------------- later drawers


def _verdict_legend(fig, panels, colors, band, title: str) -> None:
    """The legend of a forest coloured by verdict: the verdicts drawn, the shaded ``band``, and
    the hollow and x markers where used."""
    from matplotlib.lines import Line2D

    items = [it for panel in panels for it in panel["items"]]
    used = {it["verdict"] for it in items}
    handles = [
        Line2D([], [], marker="o", ls="", color=colors[w], label=w) for w in colors if w in used
    ]
    handles.append(band)
    if not all(it["causal"] for it in items):
        handles.append(
            Line2D([], [], marker="o", ls="", mfc="white", mec="0.3", label="not causal")
        )
    if any(it.get("paper") is not None for it in items):
        handles.append(
            Line2D([], [], marker="x", ls="", color="k", mew=1.5, label="the paper's value")
        )
    fig.legend(
        handles=handles,
        loc="outside upper center",
        ncols=4,
        frameon=False,
        title=title,
        title_fontsize=9,
    )


# (added after the figures above were committed: hashed into their own figures' data only,
# see drawer_digest)


def draw_fraction_forest(p: dict):
    """Fractions (of a model's pairs on a boundary, ...) with their intervals, one row a label
    shared by the panels (``ncols`` a row of panels), each point coloured by its own verdict
    (``verdicts``: word -> colour), hollow where not causal, the paper's value as an x, the
    claim's band (``band``: [low, high], ``band_label``) shaded; x from ``xlim``."""
    from matplotlib.patches import Patch

    labels, panels, colors = p["labels"], p["panels"], p["verdicts"]
    ncols = max(1, min(int(p.get("ncols", 1)), len(panels)))
    nrows = math.ceil(len(panels) / ncols)
    width = _label_width(labels) + 3.4 * ncols
    fig = _new_figure(width, 1.5 + (0.26 * len(labels) + 0.7) * nrows)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    lo, hi = p["band"]
    for ax, panel in zip(axes.flat, panels):
        ax.axvspan(lo, hi, color="#2ca02c", alpha=0.15, lw=0, zorder=1)
        _forest_axis(
            ax,
            labels,
            panel["items"],
            color_of=lambda it: colors.get(it["verdict"], "k"),
            zero=False,
        )
        ax.set_xlim(*p.get("xlim", [-0.03, 1.13]))
        ax.set_title(panel["title"])
    for ax in axes[:, 0]:
        ax.set_yticklabels(labels)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    fig.supxlabel(p["xlabel"], fontsize=8)
    band = Patch(color="#2ca02c", alpha=0.15, lw=0, label=p["band_label"])
    _verdict_legend(fig, panels, colors, band, _wrap(p["title"], width))
    return fig


def draw_margin_forest(p: dict):
    """Forest panels in a grid (``ncols`` a row of panels), each with its own rows (``labels``),
    its materiality margin shaded about 0 (``margin``: +-m, within it a difference is
    negligible), each point coloured by its own comparison's verdict (``verdicts``: word ->
    colour), hollow where not causal, the paper's value as an x."""
    from matplotlib.patches import Patch

    panels, colors = p["panels"], p["verdicts"]
    if not panels:
        fig = _new_figure(6, 1.5)
        fig.text(0.5, 0.5, "no comparisons with records yet", ha="center", va="center")
        return fig
    ncols = max(1, min(int(p.get("ncols", 1)), len(panels)))
    nrows = math.ceil(len(panels) / ncols)
    axis_w = 3.0
    pw = _label_width([s for panel in panels for s in panel["labels"]]) + axis_w
    titles = [_wrap(panel["title"], axis_w) for panel in panels]
    heights = [  # a grid row: its panels' rows of points, title lines (~0.55 each), x axis
        max(
            len(panels[i]["labels"]) + 0.55 * titles[i].count("\n")
            for i in range(r * ncols, min((r + 1) * ncols, len(panels)))
        )
        + 2.6
        for r in range(nrows)
    ]
    fig = _new_figure(pw * ncols, 1.3 + 0.26 * sum(heights))
    axes = fig.subplots(nrows, ncols, squeeze=False, height_ratios=heights)
    for ax, panel, title in zip(axes.flat, panels, titles):
        m, band = panel.get("margin"), panel.get("band")
        if m:
            ax.axvspan(-m, m, color="0.5", alpha=0.2, lw=0, zorder=1)
        if band:
            ax.axvspan(band[0], band[1], color="0.5", alpha=0.2, lw=0, zorder=1)
        _forest_axis(
            ax,
            panel["labels"],
            panel["items"],
            color_of=lambda it: colors.get(it["verdict"], "k"),
            zero=panel.get("zero", True),
        )
        ax.set_yticklabels(panel["labels"])
        ax.set_title(title)
        ax.set_xlabel(panel["xlabel"])
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    band = Patch(color="0.5", alpha=0.2, lw=0, label=p["margin_label"])
    _verdict_legend(fig, panels, colors, band, _wrap(p["title"], pw * ncols))
    return fig


LATER_DRAWERS: dict[str, Callable[[dict], Any]] = {
    "fraction_forest": draw_fraction_forest,
    "margin_forest": draw_margin_forest,
}
DRAWERS.update(LATER_DRAWERS)
