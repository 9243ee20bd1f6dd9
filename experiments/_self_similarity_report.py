"""What ``experiments.self_similarity`` shows of its results: ``render`` (the markdown made from
the results JSON alone, also by ``mope-jax report --regenerate``: the profiles table, the
collapse and exponent table, the bootstrap verdicts and the half-sample check) and ``plot`` (the
normalised profiles by token and by character distance, with their bootstrap bands)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mope_jax.analysis import stats

from experiments import _paper_b as pb
from experiments._self_similarity_criterion import verdict
from experiments._self_similarity_profiles import FIT_CHARS


def plot(out, name):
    plt = pb.plt()
    pb.RESULTS.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(len(out), 2, figsize=(9, 3.2 * len(out)), squeeze=False)
    for row, (cname, res) in zip(axes, out.items()):
        for k, p in enumerate(res["profiles"]):
            f = np.maximum(np.asarray(p["mi_norm"]), 1e-4)
            lab = f"{p['name']} ({p['chars_per_token']:.2f} ch/tok)"
            d = np.asarray(p["r"]) * p["chars_per_token"]
            row[0].plot(p["r"], f, marker="o", ms=2, color=f"C{k}", label=lab)
            row[1].plot(d, f, marker="o", ms=2, color=f"C{k}", label=lab)
            if "mi_norm_ci" in p:  # 95% block-bootstrap band
                lo, hi = (np.maximum(np.asarray(v), 1e-4) for v in p["mi_norm_ci"])
                row[0].fill_between(p["r"], lo, hi, color=f"C{k}", alpha=0.2, lw=0)
                row[1].fill_between(d, lo, hi, color=f"C{k}", alpha=0.2, lw=0)
        c = res["collapse"]
        row[0].set_title(
            f"{cname}: by token distance (spread {c['spread_tokens']:.3f})", fontsize=8
        )
        row[1].set_title(
            f"{cname}: by character distance (spread {c['spread_chars']:.3f})", fontsize=8
        )
        for ax, xl in zip(row, ("r (tokens)", "r x chars/token")):
            (
                ax.set_xscale("log"),
                ax.set_yscale("log"),
                ax.set_xlabel(xl),
                ax.set_ylabel("I(r) / I(1)"),
            )
        row[0].legend(fontsize=6)
    fig.tight_layout(), fig.savefig(pb.RESULTS / f"{name}.png", dpi=130), plt.close(fig)


def render(payload: dict, json_path: Path) -> dict[str, str]:
    """``<name>.md`` from ``<name>.json`` alone (``mope-jax report --regenerate``)."""
    name = Path(json_path).stem
    return {f"{name}.md": pb.top(payload, json_path) + markdown(payload, name)}


def markdown(payload, name) -> str:
    lines = [
        "Miller-Madow MI between tokens r apart minus its shuffled-stream floor; "
        f"ids beyond the {payload['max_vocab']} most frequent pooled. "
        "Spread = mean std across granularities of log(I(r)/I(1)) on a common distance grid "
        "(0 = perfect collapse).\n",
        "| corpus | granularity | chars/token | tokens | vocab (before pooling) | I(1) nats | "
        "estimator floor (2 shuffles; subtracted) |",
        "|---|---|---|---|---|---|---|",
    ]
    for cname, res in payload["corpora"].items():
        for p in res["profiles"]:
            lines.append(
                f"| {cname} | {p['name']} | {p['chars_per_token']:.2f} | {p['num_tokens']} | "
                f"{p['vocab_size']} | {p['mi'][0]:.4f} | "
                f"{p['shuffled_floor'][0]:.1e}, {p['shuffled_floor'][1]:.1e} |"
            )
    lines += [
        "",
        "| corpus | spread, distance in characters | spread, distance in tokens | ratio | "
        "power-law exponent alpha per granularity (R^2), "
        f"fit over {FIT_CHARS[0]:g}-{FIT_CHARS[1]:g} chars | "
        "alpha mean +- sd |",
        "|---|---|---|---|---|---|",
    ]
    for cname, res in payload["corpora"].items():
        c = res["collapse"]
        al = ", ".join(f"{k} {v['alpha']:.2f} ({v['r2']:.2f})" for k, v in c["power_law"].items())
        lines.append(
            f"| {cname} | {c['spread_chars']:.3f} | {c['spread_tokens']:.3f} | "
            f"{c['ratio']:.2f} | {al} | "
            f"{c['alpha_mean']:.2f} +- {c['alpha_sd']:.2f} |"
        )
    if all("bootstrap" in res for res in payload["corpora"].values()):
        lines += uncertainty(payload)
    lines += [
        "",
        "Reading: for a scale-free (power-law) dependency kernel, I_g(r)/I_g(1) coincide in token "
        "distance and are offset in character distance, with equal exponents; a kernel with a "
        "characteristic length (in characters) collapses in neither and has unequal exponents or a "
        "poor power-law fit.",
        "",
    ]
    lines += ["", f"Figure: `{name}.png`.", ""]
    return "\n".join(lines)


def uncertainty(payload: dict) -> list[str]:
    """The block-bootstrap table and the verdicts of the criterion
    (``experiments.self_similarity`` docstring)."""
    crit = payload["criterion"]
    ci = lambda x: "[{:.2f}, {:.2f}]".format(*stats.percentile_interval(x, crit["confidence"]))  # noqa: E731
    boot = next(iter(payload["corpora"].values()))["bootstrap"]
    lines = [
        "",
        f"Uncertainty: block bootstrap, {boot['resamples']} resamples of blocks of "
        f"{boot['block_chars']} characters (the same text blocks in every tokenisation; each "
        f"resample minus its own shuffled-stream floor), seed {boot['seed']}; "
        f"{crit['confidence']:.0%} percentile intervals. Point values are the whole-corpus fits.",
        "",
        f"Criterion (fixed before the bootstrap run but after the point values of the earlier "
        f"run were known, so not chosen blind; `experiments/self_similarity.py` docstring): "
        f"**self-similar** if every power-law fit over {crit['fit_chars'][0]:g}-"
        f"{crit['fit_chars'][1]:g} chars has R^2 >= {crit['min_r2']:g} and the CI of the alpha "
        f"spread (max - min over granularities) lies below {crit['max_alpha_spread']:g}; "
        f"**not self-similar** if an R^2 is lower or the CI lies above "
        f"{crit['max_alpha_spread']:g}; **undecided** if the CI contains it.",
        "",
        "| corpus | blocks | alpha per granularity [95% CI] | alpha spread (max - min) [95% CI] | "
        "collapse ratio chars/tokens [95% CI] | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for cname, res in payload["corpora"].items():
        b, fits = res["bootstrap"], res["collapse"]["power_law"]
        al = ", ".join(f"{g} {fits[g]['alpha']:.2f} {ci(v)}" for g, v in b["alpha"].items())
        a = np.array(list(b["alpha"].values()))
        point = max(f["alpha"] for f in fits.values()) - min(f["alpha"] for f in fits.values())
        v, why = verdict(res, crit)
        lines.append(
            f"| {cname} | {b['num_blocks']} | {al} | {point:.2f} {ci(a.max(0) - a.min(0))} | "
            f"{res['collapse']['ratio']:.2f} {ci(b['ratio'])} | **{v}** ({why}) |"
        )
    if not all("half_sample" in res for res in payload["corpora"].values()):
        return lines
    lines += [
        "",
        "Sensitivity check, added after the bootstrap run and not part of the criterion: "
        "half-samples (each replicate draws half of the blocks without replacement, so no block "
        "is tallied twice and each replicate's floor is an ordinary estimator floor; for a mean "
        "over blocks they have the full sample's variance). 95% ranges of the replicates, and "
        "what the criterion would say with them in place of the bootstrap CI:",
        "",
        "| corpus | alpha per granularity [95% range] | alpha spread [95% range] | "
        "collapse ratio [95% range] | criterion on these ranges (not the verdict) |",
        "|---|---|---|---|---|",
    ]
    for cname, res in payload["corpora"].items():
        h, fits = res["half_sample"], res["collapse"]["power_law"]
        al = ", ".join(f"{g} {ci(v)}" for g, v in h["alpha"].items())
        a = np.array(list(h["alpha"].values()))
        v, _ = verdict(res | {"bootstrap": h}, crit)
        lines.append(f"| {cname} | {al} | {ci(a.max(0) - a.min(0))} | {ci(h['ratio'])} | {v} |")
    return lines
