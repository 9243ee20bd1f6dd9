"""Figures from records (mope_jax.analysis.figures): canonical data checked by `report --check`,
PNGs drawn from the data only, the forest plot's numbers, and no matplotlib needed."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as scipy_stats

from mope_jax import campaign
from mope_jax.analysis import figures
from mope_jax.campaign import figures as campaign_figures
from mope_jax.results import regenerate
from mope_jax.claims import Effect
from mope_jax.cli import main

TINY = """
from mope_jax.campaign import Comparison, Experiment, Row, Scale

MODEL = dict(block_size=16, n_layer=1, n_head=2, n_embd=16, dropout=0.0)
TRAIN = dict(batch_size=4, max_steps=12, lr=1e-2, warmup_steps=2, eval_interval=6)
EXPERIMENT = Experiment(
    name="tiny",
    title="Tiny campaign",
    rows=(
        Row("b", "learned", label="learned table", paper=1.5),
        Row("r", "rope", label="RoPE", paper=1.4),
        Row("g", "a-ega1", label="EGA-1", paper=1.3),
        Row("n", "nope", label="no position"),
    ),
    scales=(
        Scale("smoke", model=MODEL, train=TRAIN, seeds=1),
        Scale("s", model=MODEL, train=TRAIN, seeds=4),
        Scale("one", model=MODEL, train=TRAIN, seeds=1),
    ),
    baseline="b",
    comparisons=(Comparison("r", "b", "rope"), Comparison("g", "r", "gate on rope")),
    claim="a tiny test",
    data=dict(source="blocks", num_tokens=3000),
)
"""

# per-seed final val losses planted at scale "s" (None: no record for that seed)
VALUES = {
    "b": [2.0, 2.1, 2.05, 2.2],
    "r": [1.9, 2.05, 1.97, 2.08],
    "g": [1.5, 1.52, 1.49, 1.55],
    "n": [2.3, 2.31, 2.5, None],
}
ONE = {"b": [2.4], "r": [2.2], "g": [2.0], "n": [2.6]}  # scale "one": one seed a row
LEAKY = {"n"}  # audited LEAKS (declared causal): NON-CAUSAL in the plot


def record(row: str, seed: int, value: float, scale: str) -> dict:
    rec = {
        "row": row,
        "seed": seed,
        "experiment": "tiny",
        "scale": scale,
        "final_val_loss": value,
        "curve": [
            {"step": 6, "val": value + 0.5, "train": value + 0.6},
            {"step": 12, "val": value, "train": value + 0.1},
        ],
        "config": {"model": {}, "train": {}, "data": {"source": "blocks"}},
        "env": {"processor": "p", "cpu_count": 2, "backend": "cpu", "git_commit": "c"},
        "date_utc": "2026-01-01T00:00:00Z",
        "command": f"mope-jax campaign run tiny --scale {scale}",
        "train_seconds": 1.0,
    }
    if row in LEAKY:
        rec["audit"] = {"causal": False, "leak_rel": 0.5, "method": "jvp"}
    return rec


def plant(root: Path, scale: str, values: dict) -> None:
    for row, vals in values.items():
        for seed, v in enumerate(vals):
            if v is None:
                continue
            path = root / "experiments/results/tiny" / scale / "records" / row / f"seed{seed}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(record(row, seed, v, scale)))


@pytest.fixture
def root(tmp_path) -> Path:
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "__init__.py").write_text('CAMPAIGNS = ("tiny",)\n')
    (tmp_path / "experiments" / "tiny.py").write_text(TINY)
    plant(tmp_path, "s", VALUES)
    plant(tmp_path, "one", ONE)
    plant(tmp_path, "smoke", {"b": [9.0], "r": [1.0]})  # never drawn
    return tmp_path


def expected(a: str, b: str) -> tuple[float, float, float, int]:
    """(mean, lo, hi, n) of a - b over the common seeds: numpy and scipy's t quantile."""
    d = np.array([x - y for x, y in zip(VALUES[a], VALUES[b]) if x is not None and y is not None])
    half = scipy_stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return d.mean(), d.mean() - half, d.mean() + half, len(d)


def test_canonical_text_is_deterministic():
    a = figures.FigureData("xy", {"b": [1 / 3, np.float32(2.5)], "a": {"z": np.nan, "y": -0.0}})
    b = figures.FigureData("xy", {"a": {"y": 0.0, "z": float("inf")}, "b": [0.333333333, 2.5]})
    assert a.text() == b.text()  # key order, 6 significant digits, NaN/inf as null, -0.0
    data = json.loads(a.text())
    assert data["figure"] == "xy" and data["b"] == [0.333333, 2.5] and data["a"]["z"] is None
    assert a.text().endswith("\n") and '"b": [0.333333, 2.5]' in a.text()  # lists on one line
    assert figures.data_path("x/forest.png") == Path("x/forest.figure.json")
    with pytest.raises(TypeError):
        figures.FigureData("xy", {"bad": object()}).text()


def test_forest_data_of_a_planted_campaign(root):
    exp = campaign.load_experiment("tiny", root)
    by_scale = campaign_figures.records_by_scale(exp, root / "experiments/results/tiny")
    fig = campaign_figures.forest_data(exp, by_scale)
    data = json.loads(fig.text())
    assert [p["title"] for p in data["panels"]] == ["scale `s`", "scale `one`"]  # no smoke
    # declared comparisons first (in their order), then the rows against the baseline
    assert data["labels"] == [
        "r - b",
        "g (NON-CAUSAL) - r",
        "g (NON-CAUSAL) - b",
        "n (NON-CAUSAL) - b",
    ]
    assert data["first_vs_baseline"] == 2
    assert "negative = a lower" in data["xlabel"] and "nats/token" in data["xlabel"]
    s = {data["labels"][it["row"]]: it for it in data["panels"][0]["items"]}
    cases = {
        "r - b": (("r", "b"), -0.1, True),
        "g (NON-CAUSAL) - r": (("g", "r"), -0.1, False),  # declared non-causal (a-ega1)
        "g (NON-CAUSAL) - b": (("g", "b"), -0.2, False),
        "n (NON-CAUSAL) - b": (("n", "b"), None, False),  # audit LEAKS; no paper number for n
    }
    for label, ((a, b), paper, causal) in cases.items():
        mean, lo, hi, n = expected(a, b)
        it = s[label]
        assert it["n"] == n and it["causal"] is causal
        for got, want in ((it["mean"], mean), (it["ci_low"], lo), (it["ci_high"], hi)):
            assert got == pytest.approx(want, rel=1e-5, abs=1e-9)
        assert it["paper"] == (None if paper is None else pytest.approx(paper, abs=1e-9))
    assert s["n (NON-CAUSAL) - b"]["n"] == 3  # seed 3 of n is missing: paired over 0-2
    # the numbers are table.md's: its Comparisons row for r - b
    table = campaign.render_campaign(exp, "s", by_scale["s"])
    mean, lo, hi, _ = expected("r", "b")
    assert f"| r - b | rope | 4 | {mean:+.4f} [{lo:+.4f}, {hi:+.4f}] |" in table
    # one seed: a point without an interval, n 1
    one = data["panels"][1]["items"]
    assert {it["n"] for it in one} == {1}
    assert all(it["ci_low"] is None and it["ci_high"] is None for it in one)
    r_b = next(it for it in one if data["labels"][it["row"]] == "r - b")
    assert r_b["mean"] == pytest.approx(2.2 - 2.4)


def test_without_comparisons_each_row_is_drawn_against_the_baseline(root):
    exp = campaign.load_experiment("tiny", root)
    import dataclasses

    bare = dataclasses.replace(exp, comparisons=())
    by_scale = campaign_figures.records_by_scale(exp, root / "experiments/results/tiny")
    data = json.loads(campaign_figures.forest_data(bare, by_scale).text())
    assert data["labels"] == ["r - b", "g (NON-CAUSAL) - b", "n (NON-CAUSAL) - b"]
    assert data["first_vs_baseline"] == 0


def test_check_reports_changed_data_and_missing_png(root, capsys):
    pytest.importorskip("matplotlib")
    results = root / "experiments" / "results"
    tiny = results / "tiny"
    drift = regenerate([results])
    for name in ("forest", "curves"):
        assert tiny / f"{name}.png" in drift and (tiny / f"{name}.png").stat().st_size > 0
        assert tiny / f"{name}.figure.json" in drift
    assert regenerate([results], check=True) == []
    png = (tiny / "forest.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and b"Software" not in png
    # a changed record: the figure's data file differs (and the table), nothing is written
    path = tiny / "s" / "records" / "r" / "seed0.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | {"final_val_loss": 1.7}))
    before = (tiny / "forest.figure.json").read_text()
    drift = regenerate([results], check=True)
    assert tiny / "forest.figure.json" in drift and tiny / "s" / "table.md" in drift
    assert tiny / "forest.png" in drift  # the PNG shows the old data: it differs too
    assert (tiny / "forest.figure.json").read_text() == before
    assert main(["report", "--regenerate", "--check", str(results)]) == 1
    out = capsys.readouterr().out
    assert "drift: " in out and "forest.figure.json differs" in out
    curves = (tiny / "curves.png").stat().st_mtime_ns
    drift = regenerate([results])
    assert tiny / "forest.figure.json" in drift and tiny / "curves.figure.json" not in drift
    assert (tiny / "forest.figure.json").read_text() != before
    assert (tiny / "forest.png").read_bytes() != png  # redrawn: its data changed
    assert (tiny / "curves.png").stat().st_mtime_ns == curves  # its data did not: not redrawn
    assert regenerate([results], check=True) == []
    # a missing PNG is reported, and drawn again from the data alone
    (tiny / "curves.png").unlink()
    assert regenerate([results], check=True) == [tiny / "curves.png"]
    assert main(["report", "--regenerate", "--check", str(results)]) == 1
    assert "curves.png is missing" in capsys.readouterr().out
    assert main(["report", "--regenerate", str(results)]) == 0
    assert (tiny / "curves.png").is_file() and regenerate([results], check=True) == []
    # and from its .figure.json alone
    other = root / "again.png"
    assert figures.draw_file(tiny / "curves.figure.json", other) == other and other.is_file()


def test_nothing_breaks_without_matplotlib(root, monkeypatch, capsys):
    results = root / "experiments" / "results"
    tiny = results / "tiny"
    for mod in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, mod)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib: ImportError
    assert not figures.have_matplotlib()
    notes: list[str] = []
    drift = regenerate([results], notes=notes)
    assert (tiny / "forest.figure.json").is_file() and not (tiny / "forest.png").exists()
    assert tiny / "forest.png" in drift
    assert any("forest.png: not drawn (matplotlib is not installed" in n for n in notes)
    assert regenerate([results], check=True) == [tiny / "forest.png", tiny / "curves.png"]
    assert main(["report", "--regenerate", str(results)]) == 0
    assert "not drawn" in capsys.readouterr().err
    # a PNG whose data changed cannot be redrawn: it is removed, not left stale
    (tiny / "forest.png").write_bytes(b"old")
    path = tiny / "s" / "records" / "b" / "seed0.json"
    path.write_text(json.dumps(json.loads(path.read_text()) | {"final_val_loss": 2.01}))
    notes = []
    regenerate([results], notes=notes)
    assert not (tiny / "forest.png").exists() and any("stale PNG was removed" in n for n in notes)
    with pytest.raises(ImportError):
        figures.draw(json.loads((tiny / "forest.figure.json").read_text()))


def test_ledger_forest_panels_per_unit():
    items = [
        ("A0", "contradicted", (Effect("x - base", 0.06, 0.04, 0.08, 5, -0.12, True),)),
        (
            "C1",
            "leak",
            (Effect("f - base", -0.5, -0.6, -0.4, 3, -0.87, False),),
        ),
        (
            "B1",
            "contradicted",
            (Effect("copy: free slope", 0.58, 0.46, 0.7, 25, 1.0, unit="slope"),),
        ),
        ("R1", "inconclusive", (Effect("one seed", 0.01, math.nan, math.nan, 1),)),
        ("B4", "inconclusive", ()),
    ]
    data = json.loads(figures.ledger_forest(items, {"nats": 0.02, "slope": 0.1}).text())
    assert data["figure"] == "margin_forest"
    # one panel a paper and unit, in the order met: A nats, C nats, B slope, R nats
    assert [p["labels"] for p in data["panels"]] == [
        ["A0 x - base"],
        ["C1 f - base"],
        ["B1 copy: free slope"],
        ["R1 one seed"],
    ]
    assert [p["xlabel"] for p in data["panels"]][2] == "slope"
    (a0,), (c1,), _, (r1,) = (p["items"] for p in data["panels"])
    assert a0["verdict"] == "contradicted" and a0["paper"] == -0.12 and a0["causal"] is True
    assert c1["causal"] is False and c1["verdict"] == "leak" and c1["row"] == 0
    assert r1["ci_low"] is None and r1["n"] == 1  # no interval: a point
    assert data["verdicts"]["reproduced"] and data["verdicts"]["leak"]
    # the margin: about 0 for a difference, about the paper's value for an exponent
    assert [(p["margin"], p["band"]) for p in data["panels"]] == [
        (0.02, None), (0.02, None), (None, [0.9, 1.1]), (0.02, None)
    ]  # fmt: skip
    # a fraction's interval is clipped to [0, 1]
    frac = Effect("cell", 0.98, 0.93, 1.01, 3, 1.0, unit="fraction on omega sigma = 5")
    (panel,) = json.loads(figures.ledger_forest([("A5", "x", (frac,))]).text())["panels"]
    assert panel["items"][0]["ci_high"] == 1.0 and panel["band"] is None  # no margins given

    class Judged:  # the ledger's rows are accepted as they are
        def __init__(self, cid, verdict, effects):
            self.claim = type("C", (), {"id": cid})()
            self.verdict = type("V", (), {"verdict": verdict, "effects": effects})()

    same = figures.ledger_forest([Judged(*it) for it in items])
    assert same.text() == figures.ledger_forest(items).text()
    if figures.have_matplotlib():
        fig = figures.draw(same.payload())
        assert len(fig.axes) == 4  # a panel per paper and unit
