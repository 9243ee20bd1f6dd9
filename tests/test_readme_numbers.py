"""The prose about the papers' results quotes numbers the generated tables hold.

The ledger rows and the tables are generated; the sentences around them are written by hand:
each paper's results README (`experiments/results/{paper_a,paper_b,fourierqk}/README.md`,
whose "In brief" sections were the top-level README's paper paragraphs) and the top-level
README's "Results" section. These tests re-read those sentences and look every quoted interval
"d [lo, hi]", "mean +- std", Holm-adjusted p and run count up in the tables of that paper's
campaigns, at the precision the sentence prints, so a sentence left behind by a new record (or
a number typed from memory) fails here instead of going stale.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
PAPER_A = RESULTS / "paper_a"
NUM = r"[+-]?\d+\.\d+"
INTERVAL = re.compile(rf"({NUM}) \[({NUM}),\s+({NUM})\]")
# the other ways a generated table prints a value with its interval (paper B's fit lines)
TABLE_INTERVALS = (
    INTERVAL,
    re.compile(rf"({NUM}),? 95% CI \(({NUM}), ({NUM})[;)]"),  # "c = 1.649, 95% CI (1.342, 2.026)"
    re.compile(rf"({NUM}) \(95% CI ({NUM}), ({NUM})[;)]"),  # "slope 0.091 (95% CI 0.036, 0.146)"
    re.compile(rf"({NUM}) \(({NUM}), ({NUM})\)"),  # a cell "0.879 (0.727, 1.064)"
)
MEAN_STD = re.compile(r"(?<![\d.])(\d+\.\d{4}) \+- (\d+\.\d{4})")
HOLM = re.compile(r"Holm-adjusted(?: p)?(?: over [^)]*?)?\s+(\d\.\d{3})")

# each results README with the result folders its numbers may come from
PAPERS = {
    "paper_a": ("paper_a", "omega_sigma_control"),
    "fourierqk": ("fourierqk",),
    "paper_b": ("paper_b", "freq_matching", "context_extension", "igsm_ops", "rope_advice_check"),
}


def _tables(*folders: str) -> str:
    """Every generated markdown file under the folders; READMEs and superseded records excluded."""
    return "\n".join(
        p.read_text()
        for folder in folders
        for p in sorted((RESULTS / folder).rglob("*.md"))
        if p.name != "README.md" and "superseded" not in str(p.relative_to(RESULTS)).lower()
    )


def _section(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i : text.index(end, i)]


def _close(quoted: str, exact: str) -> bool:
    """`quoted` is `exact` printed with fewer (or as many) decimals, either rounding at a tie."""
    q, e = Decimal(quoted), Decimal(exact)
    places = -q.as_tuple().exponent
    return abs(e - q) <= Decimal(5) / Decimal(10) ** (places + 1)


def _intervals(text: str) -> list[tuple[str, str, str]]:
    return INTERVAL.findall(" ".join(text.split()))


def _check_intervals(prose: str, tables: str) -> list[str]:
    flat = " ".join(tables.split())
    known = [k for pattern in TABLE_INTERVALS for k in pattern.findall(flat)]
    assert known, "no intervals found in the tables"
    return [
        " [".join((d, f"{lo}, {hi}]"))
        for d, lo, hi in _intervals(prose)
        if not any(all(map(_close, (d, lo, hi), k)) for k in known)
    ]


def _readme(name: str) -> str:
    return (RESULTS / name / "README.md").read_text()


PROSE = {
    "paper_a README in brief": lambda: _section(
        _readme("paper_a"), "## In brief", "\n## Implementation"
    ),
    "paper_a README section 0": lambda: _section(_readme("paper_a"), "## 0. Mid scale", "\n## 1."),
}
# every quoted interval of these texts is looked up in the tables of these folders
QUOTES = {
    **{
        f"{name}/README.md": (lambda name=name: _readme(name), folders)
        for name, folders in PAPERS.items()
    },
    "README.md Results": (
        lambda: _section((ROOT / "README.md").read_text(), "## Results", "<!-- claims ledger -->"),
        tuple(sorted({f for folders in PAPERS.values() for f in folders})),
    ),
}
# sections a reader starts from: each must quote intervals (a moved heading fails here)
SUMMARIES = {
    **PROSE,
    "fourierqk README in brief": lambda: _section(
        _readme("fourierqk"), "## In brief", "\n## The cpu study"
    ),
    "fourierqk README results at mid": lambda: _section(
        _readme("fourierqk"), "## Results at `mid`", "\n## The recipe"
    ),
    "paper_b README in brief": lambda: _section(_readme("paper_b"), "## In brief", "\n## 1."),
    "paper_b README section 5 (B2)": lambda: _section(_readme("paper_b"), "## 5.", "\n## 6."),
    "README.md Results": QUOTES["README.md Results"][0],
}


@pytest.mark.parametrize("where", sorted(SUMMARIES))
def test_each_summary_quotes_intervals(where):
    assert _intervals(SUMMARIES[where]()), (
        f"{where}: found no quoted intervals (did the heading move?)"
    )


@pytest.mark.parametrize("where", sorted(QUOTES))
def test_every_quoted_interval_is_in_a_table_of_its_paper(where):
    prose, folders = QUOTES[where]
    missing = _check_intervals(prose(), _tables(*folders))
    assert missing == [], f"{where} quotes intervals no table in {folders} holds: {missing}"


@pytest.mark.parametrize("where", sorted(PROSE))
def test_every_quoted_interval_is_in_a_paper_a_table(where):
    missing = _check_intervals(PROSE[where](), _tables("paper_a"))
    assert missing == [], f"{where} quotes intervals no paper_a table holds: {missing}"


def test_quoted_means_and_holm_p_are_in_the_mid_table():
    prose = " ".join(PROSE["paper_a README section 0"]().split())
    table = (PAPER_A / "mid" / "table.md").read_text()
    rows = {(m, s) for m, s in re.findall(r"\| (\d\.\d{4}) \| (\d\.\d{4}) \|", table)}
    for pair in MEAN_STD.findall(prose):
        assert pair in rows, f"'val {pair[0]} +- {pair[1]}' is not a row of mid/table.md"
    holm = re.findall(r"\| (\d\.\d{3}) \|\s*$", table, flags=re.M)
    brief = " ".join(PROSE["paper_a README in brief"]().split())
    quoted = HOLM.findall(prose) + HOLM.findall(brief)
    assert quoted, "no Holm-adjusted p quoted (did the sentences move?)"
    for p in quoted:
        assert p in holm, f"Holm-adjusted p {p} is not in mid/table.md's Holm column"


def test_the_number_of_holm_comparisons_is_the_tables():
    table = (PAPER_A / "mid" / "table.md").read_text()
    (n,) = re.findall(r"adjusts over the (\d+) comparisons", table)
    for where, prose in PROSE.items():
        for said in re.findall(r"over the campaign's (\d+) comparisons", " ".join(prose().split())):
            assert said == n, f"{where} says {said} comparisons; mid/table.md adjusts over {n}"


def _paper_a_section_1() -> str:
    return " ".join(
        _section(_readme("paper_a"), "## 1. The paper's table at CPU scale", "\n## 2.").split()
    )


def test_paper_a_cpu_section_quotes_the_campaign_records_only():
    """Section 1 reads `cpu/table.md` (the records the ledger reads), not the single-script
    `paper_a_cpu.md`, whose values differ from the records' in the fourth decimal; the one
    interval it quotes from that file is named as the file's."""
    prose = _paper_a_section_1()
    table = (PAPER_A / "cpu" / "table.md").read_text()
    quoted_from_file = "-0.0043 [-0.0195, +0.0109] in the file"
    assert quoted_from_file in prose
    assert _check_intervals(prose.replace(quoted_from_file, ""), table) == []
    assert _check_intervals(quoted_from_file, (PAPER_A / "paper_a_cpu.md").read_text()) == []
    holm = re.findall(r"\| (\d\.\d{3}) \|\s*$", table, flags=re.M)
    quoted = re.findall(r"Holm-adjusted p (\d\.\d{3}) and (\d\.\d{3})", prose)
    assert quoted, "section 1 quotes no Holm-adjusted p (did the sentence move?)"
    assert all(p in holm for pair in quoted for p in pair), (
        f"{quoted} not in cpu/table.md's Holm column"
    )
    (n,) = re.findall(r"adjusts over the (\d+) comparisons", table)
    assert re.findall(r"over the campaign's (\d+) comparisons", prose) == [n]


def _cpu_record_val(row: str, seed: int) -> float:
    path = PAPER_A / "cpu" / "records" / row / f"seed{seed}.json"
    return json.loads(path.read_text())["final_val_loss"]


def test_paper_a_cpu_section_states_how_the_file_and_the_records_differ():
    """'21 of the 30 final val losses equal the file's bit for bit, the other 9 differ by up to
    2.5e-4', recomputed from `paper_a_cpu.json` and `cpu/records`."""
    said = re.search(
        r"(\d+) of the (\d+) final val losses equal the file's bit for bit, the other (\d+) differ "
        r"by up to (\d\.\de-\d+)",
        _paper_a_section_1(),
    )
    assert said, "section 1 no longer says how the single-script file and the records differ"
    rows = json.loads((PAPER_A / "paper_a_cpu.json").read_text())["rows"]
    diffs = [
        abs(_cpu_record_val(r["variant"], s["seed"]) - s["val_loss"])
        for r in rows
        for s in r["seeds"]
    ]
    equal = sum(d == 0 for d in diffs)
    assert (int(said[1]), int(said[2]), int(said[3])) == (equal, len(diffs), len(diffs) - equal)
    assert float(f"{max(diffs):.1e}") == float(said[4]), f"largest difference {max(diffs):.2e}"


def test_fourierqk_means_at_mid_are_rows_of_the_mid_table():
    prose = " ".join(SUMMARIES["fourierqk README results at mid"]().split())
    table = (RESULTS / "fourierqk" / "mid" / "table.md").read_text()
    rows = set(re.findall(r"\| (\d\.\d{4}) \| (\d\.\d{4}) \|", table))
    quoted = MEAN_STD.findall(prose)
    assert quoted, "no 'mean +- std' quoted at mid (did the sentences move?)"
    for pair in quoted:
        assert pair in rows, f"'{pair[0]} +- {pair[1]}' is not a row of fourierqk/mid/table.md"


RUN_COUNTS = {
    "paper_a README section 0": PROSE["paper_a README section 0"],
    "README's Results section": QUOTES["README.md Results"][0],
}


@pytest.mark.parametrize("where", sorted(RUN_COUNTS))
def test_the_run_count_is_the_number_of_records(where):
    n = len(list((PAPER_A / "mid" / "records").glob("*/seed*.json")))
    prose = " ".join(RUN_COUNTS[where]().split())
    said = re.search(r"(\d+) runs(?: so far)?", prose)
    assert said and int(said.group(1)) == n, (
        f"{where} says {said and said.group(0)!r}; paper_a/mid/records holds {n} runs"
    )


def test_a_stale_number_is_caught():
    tables = _tables("paper_a")
    good = "a-rope - a-baseline -0.3256 [-0.3732, -0.2781]"
    assert _check_intervals(good, tables) == []
    assert _check_intervals("-0.326 [-0.373, -0.278]", tables) == []  # rounded is fine
    assert _check_intervals("-0.3256 [-0.3732, -0.2791]", tables) != []
    assert _check_intervals("-0.327 [-0.373, -0.278]", tables) != []


def test_a_stale_number_is_caught_for_papers_b_and_c():
    c = _tables(*PAPERS["fourierqk"])
    assert _check_intervals("causal-morlet -0.220 [-0.268, -0.172]", c) == []
    assert _check_intervals("causal-gauss at cpu -0.1035 [-0.1626, -0.0444]", c) == []
    assert _check_intervals("causal-morlet -0.220 [-0.268, -0.162]", c) != []
    assert _check_intervals("-0.104 [-0.163, -0.044]", c) == []  # a tie may round either way
    assert _check_intervals("-0.105 [-0.163, -0.044]", c) != []
    b = _tables(*PAPERS["paper_b"])
    assert _check_intervals("slope 0.58 [0.46, 0.70]", b) == []  # from "0.581 (95% CI 0.464, 0.698"
    assert _check_intervals("c = 1.65 [1.34, 2.03]", b) == []  # from "1.649, 95% CI (1.342, 2.026)"
    assert _check_intervals("accuracy -0.193 [-0.312, -0.075]", b) == []
    assert _check_intervals("accuracy by 0.193 [0.075, 0.312]", b) != []  # the sign matters
    assert _check_intervals("slope 0.58 [0.46, 0.71]", b) != []
    # a number of paper C is not evidence for a sentence about paper B
    assert _check_intervals("-0.220 [-0.268, -0.172]", b) != []
