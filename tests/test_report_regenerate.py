"""`mope-jax report --regenerate`: every committed table is what its JSON renders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from mope_jax.analysis.report import write_report
from mope_jax.results import regenerate
from mope_jax.cli import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"


def test_committed_tables_match_their_json():
    drift = regenerate([RESULTS], check=True)
    assert drift == [], (
        "tables differ from what their JSON renders; run "
        f"`mope-jax report --regenerate experiments/results`: {[str(p) for p in drift]}"
    )


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "experiments",
        tmp_path / "experiments",
        ignore=shutil.ignore_patterns("__pycache__"),  # with the figures' PNGs: checked too
    )
    return tmp_path / "experiments" / "results"


def test_drift_is_found_and_fixed(tmp_path):
    results = _copy(tmp_path)
    md = results / "paper_a" / "paper_a_cpu.md"
    good = md.read_text()
    assert "| 2.4527 +- 0.0030 |" in good
    md.write_text(good.replace("| 2.4527 +- 0.0030 |", "| 2.4000 +- 0.0030 |"))  # a typed number
    (results / "scaling" / "scaling_smoke.md").unlink()  # a missing file differs too
    drift = regenerate([results], check=True)
    assert sorted(drift) == sorted([md, results / "scaling" / "scaling_smoke.md"])
    assert "2.4000" in md.read_text()  # check mode writes nothing
    assert sorted(regenerate([results])) == sorted(drift)
    assert md.read_text() == good
    assert regenerate([results], check=True) == []


def test_cli_check_exit_codes(tmp_path, capsys):
    results = _copy(tmp_path)
    assert main(["report", "--regenerate", "--check", str(results)]) == 0
    assert "up to date" in capsys.readouterr().out
    md = results / "fourierqk" / "fourierqk_cpu.md"
    md.write_text(md.read_text() + "typed by hand\n")
    assert main(["report", "--regenerate", "--check", str(results / "fourierqk")]) == 1
    out = capsys.readouterr().out.strip().splitlines()
    assert (
        len(out) == 1 and "fourierqk_cpu.md" in out[0] and "mope-jax report --regenerate" in out[0]
    )
    assert main(["report", "--regenerate", str(results / "fourierqk")]) == 0
    assert main(["report", "--regenerate", "--check", str(results)]) == 0
    capsys.readouterr()
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"rows": []}))
    for bad in (tmp_path / "no-such-dir", plain):
        assert main(["report", "--regenerate", "--check", str(bad)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error:")


def test_write_report_json_renders_its_markdown(tmp_path):
    for seed, v in enumerate([2.0, 2.1]):
        d = tmp_path / "runs" / f"seed{seed}"
        d.mkdir(parents=True)
        (d / "final.json").write_text(
            json.dumps(
                {
                    "name": "base",
                    "seed": seed,
                    "final_val_loss": v,
                    "curve": [{"step": 1, "val": v, "train": v}],
                }
            )
        )
    out = write_report([tmp_path / "runs"], tmp_path / "rep" / "t.md", command="test")
    assert json.loads(out.with_suffix(".json").read_text())["records"][1]["final_val_loss"] == 2.1
    assert regenerate([out.with_suffix(".json")], check=True) == []


def test_a_damaged_or_stale_png_fails_check_and_is_redrawn(tmp_path):
    """A figure is checked by its PNG's content, not only by its data: the PNG carries the tag
    of the data it was drawn from (a text chunk), so a truncated PNG, or one left from other
    data (a kill between writing the data file and the PNG), fails --check, and --regenerate
    draws it again."""
    from mope_jax.analysis import figures

    results = _copy(tmp_path) / "omega_sigma_control"  # one campaign's folder is enough
    other = results.parent / "context_extension" / "forest.png"
    png = results / "forest.png"
    data = figures.data_path(png)
    assert figures.png_tag(png) == figures.data_tag(data.read_text())
    whole = png.read_bytes()
    png.write_bytes(whole[:100])  # truncated
    assert figures.png_tag(png) is None
    assert regenerate([results], check=True) == [png]
    assert regenerate([results]) == [png] and figures.png_tag(png) is not None
    assert regenerate([results], check=True) == []
    png.write_bytes(other.read_bytes())  # a whole PNG, drawn from other data
    assert regenerate([results], check=True) == [png]
    regenerate([results])
    flipped = bytearray(png.read_bytes())
    flipped[len(flipped) // 2] ^= 0xFF  # one byte inside a chunk: its CRC no longer matches
    png.write_bytes(bytes(flipped))
    assert regenerate([results], check=True) == [png]
