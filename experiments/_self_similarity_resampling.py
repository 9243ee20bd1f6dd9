"""The uncertainty of ``experiments.self_similarity`` (its docstring has the design): the block
bootstrap that the criterion reads, and the post-hoc half-sample check beside it. One set of
block draws serves every granularity of a corpus, so differences between granularities keep
their correlation."""

from __future__ import annotations

from mope_jax.analysis import stats
from mope_jax.data import mutual_info as mi

from experiments._self_similarity_profiles import MAX_VOCAB, power_law, spreads

BOOT_SEED = 0
CONFIDENCE = 0.95


def replicates(toks: list[mi.Tokenized], profiles: list[dict], sc: dict, weights) -> tuple:
    """Every granularity's alpha and R^2 and the collapse spreads of each resample (row of
    ``weights``, one set of block draws for all granularities), and the (B, R) floor-corrected
    profiles."""
    reps = []  # per granularity: (B, R)
    for tok, p in zip(toks, profiles):
        ids = mi.cap_vocab(tok.ids, MAX_VOCAB)
        raw, floor = mi.bootstrap_mi_profile(
            ids, mi.char_blocks(tok, sc["block_chars"]), p["r"], weights, seed=BOOT_SEED
        )
        reps.append(raw - floor[:, None])
    out = {"alpha": {}, "r2": {}, "spread_chars": [], "spread_tokens": [], "ratio": []}
    for p, rep in zip(profiles, reps):
        fits = [power_law(p | {"mi": row.tolist()}) for row in rep]
        out["alpha"][p["name"]] = [round(f["alpha"], 6) for f in fits]
        out["r2"][p["name"]] = [round(f["r2"], 6) for f in fits]
    for b in range(len(weights)):
        norm = [p | {"mi_norm": (rep[b] / rep[b, 0]).tolist()} for p, rep in zip(profiles, reps)]
        a, t = spreads(norm)
        out["spread_chars"].append(round(a, 6))
        out["spread_tokens"].append(round(t, 6))
        out["ratio"].append(round(a / t, 6))
    return out, reps


def bootstrap(toks: list[mi.Tokenized], profiles: list[dict], sc: dict, num_chars: int) -> dict:
    """The block bootstrap of the criterion (``experiments.self_similarity`` docstring); adds
    each profile's 95% band of I(r)/I(1) as ``mi_norm_ci``."""
    num_blocks = -(-num_chars // sc["block_chars"])
    weights = stats.bootstrap_weights(num_blocks, sc["resamples"], seed=BOOT_SEED)
    out, reps = replicates(toks, profiles, sc, weights)
    for p, rep in zip(profiles, reps):
        lo, hi = stats.percentile_interval(rep / rep[:, :1], CONFIDENCE)
        p["mi_norm_ci"] = [lo.tolist(), hi.tolist()]
    return {
        "block_chars": sc["block_chars"],
        "num_blocks": num_blocks,
        "resamples": sc["resamples"],
        "seed": BOOT_SEED,
    } | out


def half_sample(toks: list[mi.Tokenized], profiles: list[dict], sc: dict, num_chars: int) -> dict:
    """Post-hoc sensitivity check, NOT part of the criterion (added after the criterion's
    run): the same blocks, each replicate half of them drawn without replacement, so no block
    is tallied twice and each replicate's shuffled floor is an ordinary estimator floor (the
    bootstrap's duplicated blocks make its floor correction approximate; the first run showed
    right-skewed word exponents and a collapse ratio outside its own interval). For a mean
    over blocks half-samples have the full sample's variance (stats.half_sample_weights)."""
    num_blocks = -(-num_chars // sc["block_chars"])
    weights = stats.half_sample_weights(num_blocks, sc["resamples"], seed=BOOT_SEED)
    out, _ = replicates(toks, profiles, sc, weights)
    return {"resamples": sc["resamples"], "seed": BOOT_SEED} | out
