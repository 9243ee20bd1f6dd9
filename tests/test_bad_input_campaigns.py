"""Bad experiment code, damaged records and damaged result trees: each is one ``error:`` line
naming the file and the fix, exit 2, no traceback, before any work; reading results writes
nothing.

A tmp repository root holds the registry (``experiments/__init__.py``), a tiny campaign with
planted records (no training), a rendered results JSON and an analysis; each case damages one
thing in a fresh copy and runs ``campaign status`` or ``report --regenerate [--check]``
in-process through the CLI's ``main``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mope_jax.cli import main

TINY = """
from mope_jax.campaign import Experiment, Row, Scale


def analysis_section(experiment, scale, records):
    return "ks: " + ", ".join(str(r["analysis"]["k"]) for r in records if "analysis" in r)


def render(payload, json_path):
    return {"tiny.md": "".join(f"{row['name']}: {row['loss']:.3f}\\n" for row in payload["rows"])}


EXPERIMENT = Experiment(
    name="tiny",
    title="Tiny",
    rows=(Row("base", "learned"), Row("other", "rope")),
    scales=(Scale("t", model=dict(block_size=16, n_layer=1, n_head=2, n_embd=16),
                  train=dict(batch_size=4, max_steps=2), seeds=2),),
    baseline="base",
    data=dict(source="blocks", num_tokens=3000),
    sections=(analysis_section,),
)
"""

ANALYSIS = """
from mope_jax.claims import Analysis, Claim, Verdict


def judge(analysis, payload):
    return Verdict("description", str(payload["x"]), scale="cpu")


ANALYSIS = Analysis("study", "study.json", (Claim("R9", "a study", "x", judge, "run it"),))
"""

REGISTRY = "CAMPAIGNS = ('tiny',)\nANALYSES = ('study',)\n"
RECORDS = Path("experiments/results/tiny/t/records")


def _record(row: str, seed: int) -> dict:
    return {
        "row": row,
        "seed": seed,
        "experiment": "tiny",
        "scale": "t",
        "final_val_loss": 2.0 + 0.1 * seed + (0.05 if row == "other" else 0.0),
        "config": {"model": {}, "train": {}, "data": {"source": "blocks"}},
        "analysis": {"k": seed},
        "env": {"processor": "p", "cpu_count": 2, "backend": "cpu", "git_commit": "c"},
        "date_utc": "2026-01-01T00:00:00Z",
        "command": "mope-jax campaign run tiny --scale t",
        "train_seconds": 1.0,
    }


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A rendered repository root: registry, campaign, analysis, records, results JSON and
    every file ``report --regenerate`` makes from them."""
    root = tmp_path_factory.mktemp("template")
    exp = root / "experiments"
    exp.mkdir()
    (exp / "__init__.py").write_text(REGISTRY)
    (exp / "tiny.py").write_text(TINY)
    (exp / "study.py").write_text(ANALYSIS)
    for row in ("base", "other"):
        for seed in (0, 1):
            path = root / RECORDS / row / f"seed{seed}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(_record(row, seed)))
    results = exp / "results"
    payload = {"renderer": "experiments/tiny.py:render", "rows": [{"name": "a", "loss": 1.5}]}
    (results / "tiny.json").write_text(json.dumps(payload))
    (results / "study.json").write_text(json.dumps({"x": 1}))
    assert main(["report", "--regenerate", str(results)]) == 0
    assert (results / "tiny" / "t" / "table.md").is_file() and (results / "tiny.md").is_file()
    assert "ks: 0, 1" in (results / "tiny" / "t" / "table.md").read_text()
    return root


@pytest.fixture
def root(template, tmp_path) -> Path:
    shutil.copytree(template, tmp_path / "r")
    return tmp_path / "r"


def one_line(argv: list[str], capsys) -> str:
    capsys.readouterr()
    code = main(argv)
    out, err = capsys.readouterr()
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]


def status(root: Path) -> list[str]:
    return ["campaign", "status", "tiny", "--scale", "t", "--root", str(root)]


def check(root: Path) -> list[str]:
    return ["report", "--regenerate", str(root / "experiments" / "results"), "--check"]


# --------------------------------------------------------------------------- discovery

BROKEN_MODULES = [
    ("def (\n", "experiments/tiny.py:1: invalid syntax"),
    ("import no_such_module_xyz\n", "No module named 'no_such_module_xyz'"),
    ("raise RuntimeError('boom')\n", "fails while importing (RuntimeError: boom)"),
    (b"\xff\xfe EXPERIMENT = 1\n", "experiments/tiny.py"),
    ("EXPERIMENT = 3\n", "defines no EXPERIMENT = Experiment(...) (found int)"),
]


@pytest.mark.parametrize("text,fragment", BROKEN_MODULES)
def test_a_broken_campaign_module_is_one_line_naming_its_file(text, fragment, root, capsys):
    path = root / "experiments" / "tiny.py"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    line = one_line(status(root), capsys)
    assert fragment in line and "experiments/tiny.py" in line


def test_a_module_that_is_no_campaign_is_not_listed_among_the_campaigns(root, capsys):
    (root / "experiments" / "tiny.py").write_text("EXPERIMENT = 3\n")
    line = one_line(status(root), capsys)
    assert "the other campaigns: none" in line and "CAMPAIGNS" in line


def test_unrelated_broken_files_change_nothing_for_the_others(root, capsys):
    """A non-UTF-8 module, a syntax error, a failing import and a folder named like a module,
    none of them listed in the registry: status of the campaign is untouched."""
    exp = root / "experiments"
    (exp / "latin1.py").write_bytes(b"# caf\xe9\nEXPERIMENT = 1\n")
    (exp / "syntax.py").write_text("def (\n")
    (exp / "imports.py").write_text("import no_such_module_xyz\n")
    (exp / "folder.py").mkdir()
    capsys.readouterr()
    assert main(status(root)) == 0
    assert "total: 0 of 4 runs done, 0 missing, 4 stale" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name,fragment",
    [
        ("nosuch", "unknown experiment 'nosuch'; the campaigns in"),
        ("study", "experiments/study.py is not listed in CAMPAIGNS"),
        ("../x", "unknown experiment '../x'"),
    ],
)
def test_an_unknown_or_unlisted_experiment_is_one_line(name, fragment, root, capsys):
    line = one_line(["campaign", "status", name, "--scale", "t", "--root", str(root)], capsys)
    assert fragment in line and "tiny" in line


def test_a_listed_module_that_is_missing_is_named(root, capsys):
    (root / "experiments" / "__init__.py").write_text("CAMPAIGNS = ('tiny', 'gone')\n")
    line = one_line(["campaign", "status", "gone", "--scale", "t", "--root", str(root)], capsys)
    assert "listed in experiments/__init__.py but experiments/gone.py is missing" in line


@pytest.mark.parametrize(
    "registry,fragment",
    [
        ("", "declares no CAMPAIGNS = (...)"),
        ("CAMPAIGNS = 'tiny'\n", "CAMPAIGNS must be a tuple of module names"),
        ("CAMPAIGNS = ('tiny',\n", "experiments/__init__.py:1"),
    ],
)
def test_a_bad_registry_is_one_line(registry, fragment, root, capsys):
    (root / "experiments" / "__init__.py").write_text(registry)
    assert fragment in one_line(status(root), capsys)


def test_an_init_that_is_a_folder_is_named_as_such(root, capsys):
    init = root / "experiments" / "__init__.py"
    init.unlink()
    init.mkdir()
    assert "__init__.py is not a file" in one_line(status(root), capsys)


def test_a_users_own_repository_with_a_package_experiment_runs_by_root(tmp_path, capsys):
    """A user's repository elsewhere, its campaign a package (``experiments/mine/``): found
    through its registry with --root, from any working directory."""
    pkg = tmp_path / "elsewhere" / "experiments" / "mine"
    pkg.mkdir(parents=True)
    (pkg.parent / "__init__.py").write_text("CAMPAIGNS = ('mine',)\n")
    (pkg / "rows.py").write_text(TINY.replace('name="tiny"', 'name="mine"'))
    (pkg / "__init__.py").write_text("from .rows import EXPERIMENT\n")
    capsys.readouterr()
    argv = ["campaign", "status", "mine", "--scale", "t", "--root", str(pkg.parents[1])]
    assert main(argv) == 0
    assert "total: 0 of 4 runs done, 4 missing" in capsys.readouterr().out


# --------------------------------------------------------------------------- records


def _damage(root: Path, how: str) -> None:
    path = root / RECORDS / "base" / "seed0.json"
    rec = json.loads(path.read_text())
    if how == "nested":
        path.write_text("[" * 100_000 + "]" * 100_000)
        return
    if how == "duplicate":
        (path.parent / "seed00.json").write_text(path.read_text())
        return
    if how == "huge seed":
        (path.parent / "seed4294967296.json").write_text(json.dumps(rec | {"seed": 2**32}))
        return
    if how == "no row":
        other = root / RECORDS / "not-a-row"
        other.mkdir()
        (other / "seed0.json").write_text(json.dumps(rec | {"row": "not-a-row"}))
        return
    change = {
        "data str": lambda r: r["config"].__setitem__("data", "x"),
        "data list": lambda r: r["config"].__setitem__("data", [1]),
        "no metric": lambda r: r.pop("final_val_loss"),
        "analysis list": lambda r: r.__setitem__("analysis", [1, 2]),
        "analysis key": lambda r: r["analysis"].pop("k"),
    }[how]
    change(rec)
    path.write_text(json.dumps(rec))


RECORD_CASES = [
    ("data str", "its config is not an object holding model, train and data"),
    ("data list", "its config is not an object holding model, train and data"),
    ("no metric", "it has no final_val_loss; delete it to retrain that run"),
    ("nested", "not a readable campaign record (RecursionError)"),
    ("analysis list", "its analysis is a list, not an object"),
    ("duplicate", "move it to records/base/seed0.json or delete it"),
    ("huge seed", "is not a seed number (an integer in [0, 4294967295])"),
    ("no row", "no row of the experiment is named 'not-a-row'"),
]


@pytest.mark.parametrize("how,fragment", RECORD_CASES)
def test_a_damaged_record_is_one_line_for_status_and_report(how, fragment, root, capsys):
    _damage(root, how)
    for argv in (status(root), check(root)):
        assert fragment in one_line(argv, capsys)


def test_an_analysis_a_section_cannot_read_names_that_record(root, capsys):
    """The record is valid in form, but the experiment's section reads a key it lacks: the
    record is found by leaving each out, and named."""
    _damage(root, "analysis key")
    line = one_line(check(root), capsys)
    assert "records/base/seed0.json of tiny/t: section analysis_section" in line
    assert "KeyError" in line and "delete it to retrain that run" in line


# --------------------------------------------------------------------------- results trees


@pytest.mark.parametrize(
    "payload,fragment",
    [
        ({"renderer": "experiments/tiny.py:render"}, "cannot read it (KeyError: 'rows')"),
        ({"renderer": "experiments/tiny.py:render", "rows": 3}, "cannot read it (TypeError"),
        ({"renderer": "experiments/tiny.py:nothing", "rows": []}, "has no function 'nothing'"),
        ({"renderer": "experiments/gone.py:render"}, "experiments/gone.py does not exist"),
        ({"renderer": "/etc/passwd.py:render"}, "must lie in the experiments package"),
    ],
)
def test_a_damaged_results_json_is_one_line(payload, fragment, root, capsys):
    (root / "experiments" / "results" / "tiny.json").write_text(json.dumps(payload))
    line = one_line(check(root), capsys)
    assert "tiny.json" in line and fragment in line


def test_a_renderer_that_fails_to_import_is_one_line(root, capsys):
    (root / "experiments" / "tiny.py").write_text(TINY + "\nimport no_such_module_xyz\n")
    line = one_line(check(root), capsys)
    assert "experiments/tiny.py" in line and "no_such_module_xyz" in line


def test_a_missing_analysis_file_is_named_not_judged_untested(root, capsys):
    (root / "experiments" / "results" / "study.json").unlink()
    line = one_line(check(root), capsys)
    assert "experiments/results/study.json is missing" in line and "R9" in line
    assert "git checkout" in line


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in root.rglob("*")
        if "__pycache__" not in p.parts
    }


def test_regenerate_of_a_current_tree_writes_nothing(root, capsys, monkeypatch):
    """Reading results writes nothing: not a file changed or added anywhere under the root
    (no runs/ folder, no generated corpus), in write mode as in --check."""
    monkeypatch.chdir(root)
    before = _snapshot(root)
    for argv in (check(root), ["report", "--regenerate", str(root / "experiments/results")]):
        capsys.readouterr()
        assert main(argv) == 0, capsys.readouterr().err
    assert _snapshot(root) == before


def test_a_file_it_cannot_write_is_one_line(root, capsys, monkeypatch):
    """A full disk (or any write error) while regenerating is one line naming the file and
    --check; the file keeps its old text (the write is atomic)."""
    import mope_jax.rundir as rundir

    table = root / "experiments" / "results" / "tiny.md"
    table.write_text("stale\n")

    def full(path, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(rundir, "atomic_write_text", full)
    line = one_line(["report", "--regenerate", str(root / "experiments" / "results")], capsys)
    assert "tiny.md: cannot write it (No space left on device)" in line and "--check" in line
    assert table.read_text() == "stale\n"


@pytest.mark.skipif(shutil.which("chattr") is None, reason="no chattr")
def test_an_immutable_table_is_one_line(root, capsys):
    table = root / "experiments" / "results" / "tiny.md"
    table.write_text("stale\n")
    if subprocess.run(["chattr", "+i", str(table)], capture_output=True).returncode != 0:
        pytest.skip("this filesystem has no immutable attribute")
    try:
        line = one_line(["report", "--regenerate", str(root / "experiments" / "results")], capsys)
        assert "tiny.md: cannot write it" in line
    finally:
        subprocess.run(["chattr", "-i", str(table)], check=True)
    assert table.read_text() == "stale\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_tree_that_is_current_renders(root, capsys):
    for p in [root, *root.rglob("*")]:
        if p.is_dir():
            p.chmod(0o555)
    try:
        capsys.readouterr()
        assert main(["report", "--regenerate", str(root / "experiments/results")]) == 0
    finally:
        for p in [root, *root.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
