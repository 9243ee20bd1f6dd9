"""Fixed costs of a campaign row on this machine: what a row and each of its seeds cost beyond
training, and how many XLA programs they build (on a lent GPU these fixed costs, not
training, took two thirds of each row).

Command:  python -m experiments.bench.fixed_costs --label after [--repo PATH --label before]
          (each call adds one label to experiments/results/bench/fixed_costs.json and re-renders
          fixed_costs.md; ``--repo`` runs the code of another checkout, e.g. a git worktree of
          an earlier commit, on the same rows)
Measures: ``mope-jax campaign run paper_a --scale smoke --rows a-baseline,a-ega-morlet`` with
          1 seed and with 3 seeds, each in a fresh process in a scratch clone (its experiments
          copied, no results), with TinyShakespeare from ../shared (or --corpus). Per row: the
          group's wall time, the time inside ``mope_jax.sweep.sweep`` (training, its compiles
          included), the rest (after training: audit, summaries, analysis, records), and the XLA
          programs built (jax.monitoring's backend-compile event). Per seed = (3 seeds - 1 seed)
          / 2; per row = the 1-seed value minus one seed's. No persistent compilation cache.
Time it on a quiet machine (no campaign or test suite beside it): the file records the load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "experiments" / "results" / "bench" / "fixed_costs.json"
ROWS = ("a-baseline", "a-ega-morlet")

# runs in the child: counts programs by name and times sweep() per row, then runs the CLI
DRIVER = r"""
import json, sys, time
import jax.monitoring
events = []
def on(event, dur, **kw):
    if event == "/jax/core/compile/backend_compile_duration":
        events.append((time.perf_counter(), str(kw.get("fun_name", "?")), dur))
jax.monitoring.register_event_duration_secs_listener(on)
import mope_jax.sweep as sw
real, spans = sw.sweep, []
def timed(*a, **k):
    t0 = time.perf_counter()
    try:
        return real(*a, **k)
    finally:
        spans.append((t0, time.perf_counter()))
sw.sweep = timed
from mope_jax.cli import main
t0 = time.perf_counter()
rc = main(sys.argv[2:])
wall = time.perf_counter() - t0
json.dump({"rc": rc, "wall": wall, "events": events, "spans": spans, "t0": t0},
          open(sys.argv[1], "w"))
"""


def run_once(repo: Path, seeds: int, corpus: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="fixed-costs-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(
            repo / "experiments", root / "experiments", ignore=shutil.ignore_patterns("results")
        )
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-c", DRIVER, str(out), "campaign", "run", "paper_a"]
        cmd += ["--scale", "smoke", "--rows", ",".join(ROWS), "--seeds", str(seeds)]
        cmd += ["--root", str(root), "--corpus", str(corpus), "--no-progress"]
        env = dict(os.environ, PYTHONPATH=str(repo), JAX_PLATFORMS="cpu")
        env.pop("JAX_COMPILATION_CACHE_DIR", None)
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True)
        res = json.loads(out.read_text())
        recs = {
            r: json.loads(
                (root / f"experiments/results/paper_a/smoke/records/{r}/seed0.json").read_text()
            )
            for r in ROWS
        }
    rows = {}
    for r, (a, b) in zip(ROWS, res["spans"]):
        group = recs[r]["campaign"]["group_wall_s"]
        # programs built from the start of this row's sweep to the start of the next one's
        end = next((s for s, _ in res["spans"] if s > b), float("inf"))
        built = [n for t, n, _ in res["events"] if a <= t < end]
        during = [n for t, n, _ in res["events"] if a <= t < b]
        rows[r] = {
            "group_wall_s": group,
            "train_s": b - a,
            "after_training_s": group - (b - a),
            "programs_training": len(during),
            "programs_after_training": len(built) - len(during),
        }
    return {"seeds": seeds, "wall_s": res["wall"], "rows": rows}


def derive(one: dict, three: dict) -> dict:
    out = {}
    for r in ROWS:
        a, b = one["rows"][r], three["rows"][r]
        per_seed = (b["after_training_s"] - a["after_training_s"]) / 2
        out[r] = {
            "after_training_per_seed_s": per_seed,
            "after_training_per_row_s": a["after_training_s"] - per_seed,
            "programs_after_training_per_seed": (
                b["programs_after_training"] - a["programs_after_training"]
            )
            / 2,
            "programs_training_1_vs_3_seeds": [a["programs_training"], b["programs_training"]],
        }
    return out


def render(doc: dict, json_path) -> dict[str, str]:
    """``fixed_costs.md`` from ``fixed_costs.json`` alone (``mope-jax report --regenerate``)."""
    lines = [
        "# Fixed costs of a campaign row (CPU)",
        "",
        "Made by `python -m experiments.bench.fixed_costs` (its docstring says what is "
        "measured): `mope-jax campaign run paper_a --scale smoke --rows a-baseline,a-ega-morlet` "
        "with 1 and with 3 seeds, fresh processes, no compilation cache. After training = the "
        "row's wall time minus its time in `sweep` (audit, summaries, analysis, records); per "
        "seed = (3 seeds - 1 seed) / 2. Programs: XLA programs built (compiled).",
        "",
        "| label | commit | machine | load | row | after training, per row (s) | per seed (s) "
        "| programs after training per seed | training programs (1 / 3 seeds) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, m in doc["labels"].items():
        for r, d in m["derived"].items():
            lines.append(
                f"| {label} | {m['commit']} | {m['machine']} | {m['load']} | `{r}` | "
                f"{d['after_training_per_row_s']:.2f} | {d['after_training_per_seed_s']:.2f} | "
                f"{d['programs_after_training_per_seed']:g} | "
                f"{d['programs_training_1_vs_3_seeds'][0]} / "
                f"{d['programs_training_1_vs_3_seeds'][1]} |"
            )
    lines += [
        "",
        "Per label: "
        + "; ".join(f"{k}: {m['date_utc']}, `{m['command']}`" for k, m in doc["labels"].items()),
        "",
    ]
    return {Path(json_path).with_suffix(".md").name: "\n".join(lines)}


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--label", required=True)
    ap.add_argument("--repo", type=Path, default=ROOT, help="checkout whose code runs")
    ap.add_argument(
        "--corpus",
        type=Path,
        default=ROOT / ".." / "shared" / "data" / "tinyshakespeare" / "input.txt",
    )
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    from mope_jax.analysis.report import publish
    from mope_jax.provenance import environment, utc_now

    repo = args.repo.resolve()
    commit = (
        subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or "?"
    )
    one, three = run_once(repo, 1, args.corpus), run_once(repo, 3, args.corpus)
    env = environment()
    doc = (
        json.loads(args.out.read_text())
        if args.out.is_file()
        else {"renderer": "experiments/bench/fixed_costs.py:render", "labels": {}}
    )
    doc["labels"][args.label] = {
        "commit": commit,
        "command": "python -m experiments.bench.fixed_costs "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "date_utc": utc_now(),
        "machine": f"{env.get('cpu_model', env.get('processor', '?'))}, {os.cpu_count()} CPUs",
        "load": f"{os.getloadavg()[0]:.1f} (1-min load average at the end)",
        "runs": [one, three],
        "derived": derive(one, three),
    }
    publish(args.out, doc, render)
    print(render(doc, args.out)[args.out.with_suffix(".md").name])
    return doc


if __name__ == "__main__":
    main()
