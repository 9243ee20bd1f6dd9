"""The renderer of the results of this experiment's earlier single-script version:
``results/paper_b/freq_matching{,_repeat}.json`` name ``experiments/freq_matching.py:render``
(served by this package, which re-exports :func:`render`), and ``mope-jax report
--regenerate`` writes ``<name>.md`` from the JSON alone, with the fits recomputed from its
per-run values."""

from __future__ import annotations

from pathlib import Path

from experiments import _paper_b as pb

from .sections import _body


def render(payload: dict, json_path: Path) -> dict[str, str]:
    """``<name>.md`` from ``<name>.json`` alone (``mope-jax report --regenerate``)."""
    name = Path(json_path).stem
    return {f"{name}.md": pb.top(payload, json_path) + markdown(payload, name)}


def markdown(payload: dict, name: str) -> str:
    """The fits are recomputed from the per-run values (``fit_law``), as the single script's
    ``main`` computed them."""
    steps = payload["config"]["train"]["max_steps"]
    lines = _body(payload["runs"], payload["task"], payload["W_definition"], steps)
    lines += [
        f"Figures: `{name}_heatmap.png` "
        "(p_i against training step from the runs' metrics.jsonl, seed 0, "
        "mean over layers and heads), "
        f"`{name}_spectra.png` (final p_i per layer). theta_eff against W is drawn from the "
        "campaign's records at each scale by `mope-jax report --regenerate` "
        "(`../freq_matching/<scale>/fit.png`; this script's cpu-scale fit is no longer kept).",
        "",
    ]
    return "\n".join(lines)
