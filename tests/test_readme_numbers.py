"""The prose about paper A's `mid` campaign quotes numbers the generated tables hold.

The ledger rows are generated; the sentences around them are written by hand from
`experiments/results/paper_a/mid/table.md` (and the cpu tables they contrast it with). These
tests re-read those sentences and look every quoted interval "d [lo, hi]", "mean +- std" and
Holm-adjusted p up in the tables, at the precision the sentence prints, so a sentence left
behind by a new record fails here instead of going stale.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER_A = ROOT / "experiments" / "results" / "paper_a"
NUM = r"[+-]?\d+\.\d+"
INTERVAL = re.compile(rf"({NUM}) \[({NUM}),\s+({NUM})\]")
MEAN_STD = re.compile(r"(?<![\d.])(\d+\.\d{4}) \+- (\d+\.\d{4})")
HOLM = re.compile(r"Holm-adjusted(?: p)?(?: over [^)]*?)?\s+(\d\.\d{3})")


def _tables() -> str:
    return "\n".join(p.read_text() for p in sorted(PAPER_A.rglob("*.md")) if p.name != "README.md")


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
    known = _intervals(tables)
    assert known, "no intervals found in the paper_a tables"
    return [
        " [".join((d, f"{lo}, {hi}]"))
        for d, lo, hi in _intervals(prose)
        if not any(all(map(_close, (d, lo, hi), k)) for k in known)
    ]


PROSE = {
    "paper_a README section 0": lambda: _section(
        (PAPER_A / "README.md").read_text(), "## 0. Mid scale", "\n## 1."
    ),
    "README paper-A paragraph": lambda: _section(
        (ROOT / "README.md").read_text(), "- **Paper A**", "- **Paper B**"
    ),
}


@pytest.mark.parametrize("where", sorted(PROSE))
def test_every_quoted_interval_is_in_a_paper_a_table(where):
    prose = PROSE[where]()
    assert _intervals(prose), f"{where}: found no quoted intervals (did the heading move?)"
    missing = _check_intervals(prose, _tables())
    assert missing == [], f"{where} quotes intervals no paper_a table holds: {missing}"


def test_quoted_means_and_holm_p_are_in_the_mid_table():
    prose = " ".join(PROSE["paper_a README section 0"]().split())
    table = (PAPER_A / "mid" / "table.md").read_text()
    rows = {(m, s) for m, s in re.findall(r"\| (\d\.\d{4}) \| (\d\.\d{4}) \|", table)}
    for pair in MEAN_STD.findall(prose):
        assert pair in rows, f"'val {pair[0]} +- {pair[1]}' is not a row of mid/table.md"
    holm = re.findall(r"\| (\d\.\d{3}) \|\s*$", table, flags=re.M)
    readme = " ".join(PROSE["README paper-A paragraph"]().split())
    quoted = HOLM.findall(prose) + HOLM.findall(readme)
    assert quoted, "no Holm-adjusted p quoted (did the sentences move?)"
    for p in quoted:
        assert p in holm, f"Holm-adjusted p {p} is not in mid/table.md's Holm column"


def test_the_number_of_holm_comparisons_is_the_tables():
    table = (PAPER_A / "mid" / "table.md").read_text()
    (n,) = re.findall(r"adjusts over the (\d+) comparisons", table)
    for where, prose in PROSE.items():
        for said in re.findall(r"over the campaign's (\d+) comparisons", " ".join(prose().split())):
            assert said == n, f"{where} says {said} comparisons; mid/table.md adjusts over {n}"


RUN_COUNTS = {
    "paper_a README section 0": PROSE["paper_a README section 0"],
    "README's results introduction": lambda: _section(
        (ROOT / "README.md").read_text(),
        "## The papers: what our measurements say",
        "The result tables are not typed",
    ),
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
    tables = _tables()
    good = "a-rope - a-baseline -0.3256 [-0.3732, -0.2781]"
    assert _check_intervals(good, tables) == []
    assert _check_intervals("-0.326 [-0.373, -0.278]", tables) == []  # rounded is fine
    assert _check_intervals("-0.3256 [-0.3732, -0.2791]", tables) != []
    assert _check_intervals("-0.327 [-0.373, -0.278]", tables) != []
