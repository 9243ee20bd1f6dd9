"""The benchmark's report: ``render`` (a bench JSON's renderer, which
``mope-jax report --regenerate`` calls) writes bench_<size>.md and the bench README from the
JSON alone. The parts live beside it: the headline numbers and target verdicts
(``summarize``, report_summary.py), the tables (``markdown``, report_tables.py) and the README
(``readme``, report_readme.py); this module re-exports them."""

from __future__ import annotations

from pathlib import Path

from experiments.bench.report_readme import readme
from experiments.bench.report_summary import best_round, config_rows, summarize
from experiments.bench.report_tables import markdown

__all__ = ["best_round", "config_rows", "markdown", "readme", "render", "summarize"]


def render(doc: dict, json_path) -> dict[str, str]:
    """bench_<size>.md and README.md (README_tiny.md for --tiny) from bench_<size>.json alone
    (``mope-jax report --regenerate``)."""
    from mope_jax.analysis.report import rendered_note

    json_path = Path(json_path)
    note = rendered_note(doc, json_path)
    return {
        json_path.with_suffix(".md").name: markdown(doc, note),
        "README.md" if doc["size"] != "tiny" else "README_tiny.md": readme(
            doc, json_path.name, note
        ),
    }
