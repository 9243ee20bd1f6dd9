"""The measurements of ``experiments.self_similarity`` (its docstring has the setup): one corpus
tokenised at several granularities, each granularity's mutual-information profile minus its
estimator floor, the power-law fit of a profile and the collapse spreads of the normalised
profiles in character and in token distance."""

from __future__ import annotations

import numpy as np

from mope_jax.data import mutual_info as mi

MAX_VOCAB = 256
FIT_CHARS = (4.0, 200.0)  # character-distance window of the power-law fits


def granularities(text: str, sc: dict) -> list[mi.Tokenized]:
    out = [mi.char_tokenize(text)]
    for n in sc["merges"]:
        vocab, merges = mi.train_merges(
            text[: sc["merge_train"]], n, alphabet="".join(sorted(set(text)))
        )
        out.append(mi.apply_merges(text, vocab, merges))
    out.append(mi.word_tokenize(text))
    return out


def profile(tok: mi.Tokenized, sc: dict) -> dict:
    ids = mi.cap_vocab(tok.ids, MAX_VOCAB)
    r_max = max(2, int(sc["max_chars"] / tok.chars_per_token))
    r = np.unique(np.round(np.geomspace(1, r_max, sc["points"])).astype(int))
    raw = mi.mi_profile(ids, r)
    # what the estimator returns for independent pairs with these marginals and N: the mean
    # over two random permutations of the stream (Miller-Madow leaves a positive bias when most
    # joint bins are empty); subtracted from every r
    rng = np.random.default_rng(0)
    floors = [float(mi.mi_profile(rng.permutation(ids), [1])[0]) for _ in range(2)]
    prof = raw - np.mean(floors)
    return {
        "name": tok.name,
        "chars_per_token": tok.chars_per_token,
        "num_tokens": len(ids),
        "vocab_size": len(tok.vocab),
        "r": r.tolist(),
        "mi_raw": raw.tolist(),
        "shuffled_floor": floors,
        "mi": prof.tolist(),
        "mi_norm": (prof / prof[0]).tolist(),
    }


def power_law(p: dict) -> dict:
    """Least-squares fit log I(r) = a - alpha log(r c) over r c in FIT_CHARS (I > 0 only)."""
    d = np.asarray(p["r"], float) * p["chars_per_token"]
    y = np.asarray(p["mi"], float)
    keep = (d >= FIT_CHARS[0]) & (d <= FIT_CHARS[1]) & (y > 0)
    x, ly = np.log(d[keep]), np.log(y[keep])
    A = np.stack([x, np.ones_like(x)], 1)
    coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
    resid = ly - A @ coef
    return {
        "alpha": float(-coef[0]),
        "r2": float(1 - resid @ resid / max(((ly - ly.mean()) ** 2).sum(), 1e-30)),
        "points": int(keep.sum()),
    }


def spreads(profiles: list[dict]) -> tuple[float, float]:
    """collapse_spread of I(r)/I(1) with distance in characters, and in tokens."""
    rescaled = {
        p["name"]: (np.asarray(p["r"]) * p["chars_per_token"], np.asarray(p["mi_norm"]))
        for p in profiles
    }
    raw = {p["name"]: (np.asarray(p["r"], float), np.asarray(p["mi_norm"])) for p in profiles}
    return mi.collapse_spread(rescaled), mi.collapse_spread(raw)


def collapse(profiles: list[dict]) -> dict:
    """Spreads of I(r)/I(1) with distance in characters and in tokens, and power-law exponents.

    For a scale-free kernel I(d) ~ d^-alpha (d in characters), I_g(r)/I_g(1) = r^-alpha for
    every granularity: the normalised profiles coincide in TOKEN distance and are offset by
    c_g^alpha in character distance; the exponents alpha_g agree in both cases."""
    a, b = spreads(profiles)
    fits = {p["name"]: power_law(p) for p in profiles}
    alphas = np.array([f["alpha"] for f in fits.values()])
    return {
        "spread_chars": a,
        "spread_tokens": b,
        "ratio": a / b,
        "power_law": fits,
        "alpha_sd": float(alphas.std(ddof=1)),
        "alpha_mean": float(alphas.mean()),
    }
