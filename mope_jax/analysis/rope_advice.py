"""RoPE advice from data: measure the dependency kernel K(r) and width W of a token stream,
and recommend a RoPE base and a context-extension schedule (paper B, DESIGN.md section 3).

**Status: checked by training only at CPU scale.** The check is the campaign
``rope_advice_check`` (experiments/rope_advice_check.py: the advised base against base 10000,
paired seeds, on TinyShakespeare and the copy task); its verdict is row R1 of the claims
ledger (README, experiments/results/CLAIMS.md). Read the output as what the paper's law plus
our heuristics predict, not as a result.

What is the paper's, and what is ours
-------------------------------------
Paper B (law):
  * RoPE frequencies theta_i = base^(-2i/D), i = 0..D/2-1 (rad/token); theta_0 = 1 always,
    so the base only moves the slowest frequency theta_min = base^(-(D-2)/D) and the spacing.
  * A frequency is *admissible* for a dependency of width W if theta <= pi / W (its phase
    does not wrap over the width); the best admissible one is theta* = c / W (c = pi in
    theory; the paper's fit c ~ 3.02). Among admissible frequencies a higher one has more
    positional contrast (resolution).
  * Position interpolation (PI, theta_i -> theta_i / s) works when the test-time dependency
    structure is a dilation of the training one (self-similar data, e.g. language) and fails
    when the dependency sits at a fixed offset (arithmetic).

Ours (heuristics, derived below; the paper gives no rule for choosing a base):
  * W is measured with :mod:`mope_jax.data.dependency` (first r with K(r) >= 1/2 max K).
  * **Base rule.** Score a grid by its contrast-weighted number of admissible frequencies,
    S(base) = sum over i with theta_i <= theta* of theta_i / theta*: a frequency exactly at
    theta* counts 1, one at theta*/2 counts 1/2, an inadmissible one 0 (contrast taken
    proportional to theta is our modelling choice; the paper only says higher is better
    within the admissible band). Treat the D/2 frequencies as spread evenly in log theta
    over [theta_min, 1] (density n / b, with n = D/2 and b = ln(1/theta_min)); then for
    b >= ln(W/c)
        S(b) = (n/b) * integral over [theta_min, theta*] of (theta/theta*) dln(theta)
             = (n/b) * (1 - e^-b W/c).
    dS/db = 0 gives  e^b = (W/c) (1 + b),  i.e.  theta_min = theta* / (1 + b): the grid
    should reach a factor (1 + ln(1/theta_min)) below theta*. A lower theta_min spreads the
    frequencies thinner (fewer near theta*), a higher one leaves too few admissible. This
    b_W rises with W, so base_W = exp(b_W D/(D-2)) does. When W <= c (theta* >= 1, the
    fastest RoPE frequency) every frequency is admissible and S alone would collapse the
    grid onto 1 rad/token, so W sets no bound (b_W = 0).
    *Field floor:* the slowest frequency must be admissible for a dependency as wide as the
    training window L, theta_min <= pi / L, i.e. base_L = (L/pi)^(D/(D-2)); without it no
    frequency resolves every distance the model sees.
    **Recommended base = max(base_W, base_L)** (rounded up to 3 significant digits; every
    number reported for it is computed from the rounded value). base_W alone is reported
    too, as the grid matched to W that ignores distances beyond its field.
    Limits: the rule sees the kernel only through W (the first strong dependency) and its
    shape; a second, wider strong dependency inside L is served only by the field floor.
  * **Shape of K** (a single-stream proxy for the paper's multi-granularity self-similarity
    test, experiments/self_similarity.py): *fixed offset* if K drops, one step either side
    of W, by at least ``SHARP_PEAK`` of its height above the median of K ("peak
    sharpness"); *self-similar* if instead K(r) is above noise at >= ``MIN_COVERAGE`` of
    ~32 log-spaced distances, a power law K ~ r^-alpha fits them with R^2 >=
    ``MIN_POWER_R2`` and log K is not concave in log r (quadratic coefficient >=
    ``MIN_CURVATURE``; concave = a decay with a characteristic length, e.g. the problem
    length of arithmetic text). A power law is scale-free: K(s r) / K(s) = K(r) / K(1), so
    the structure at s L is the training one dilated by s. Otherwise *unclear*. These
    thresholds were set by looking at three corpora (TinyShakespeare: R^2 0.95, curvature
    +0.08 at L = 256; iGSM-style arithmetic text: R^2 0.90, curvature -0.18 at L = 128; a
    3-state Markov chain: coverage 0.35, curvature -0.16): thin calibration.
  * **Extension rule per factor s = L'/L:** self-similar -> PI (the paper's condition).
    Fixed offset -> keep every frequency that resolves W and interpolate only the slow ones:
    YaRN with beta = L theta_W / (2 pi), theta_W the fastest admissible grid frequency (the
    one that serves W; beta = the turns it makes over L, and YaRN keeps every frequency with
    at least beta turns exactly) and alpha = min(1, beta/2). Unclear -> NTK
    (keeps theta_0, divides the slowest frequency by s: a middle course). Our CPU pilot
    (experiments/results/paper_b/context_extension*.md) found PI worse than no scaling
    without fine-tuning, and equal to it after a 150-step fine-tune at 2L, on language.

numpy except for the frequency formulas of :mod:`mope_jax.encodings.rope` (reused, not
copied). Bad input raises :class:`mope_jax.errors.DataError` / ``UsageError`` with the fix.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from mope_jax.data.dependency import block_copy_width, block_repeat_stream, dependency_kernel
from mope_jax.errors import DataError, UsageError

C_THEORY = math.pi  # the paper's theoretical constant in theta* = c / W
C_PAPER_FIT = 3.02  # the paper's fitted constant (synthetic block data)
SHARP_PEAK = 0.75  # peak sharpness at or above which K is called a fixed-offset dependency
MIN_COVERAGE = 0.8  # fraction of log-spaced distances with K above noise, for a power law
MIN_POWER_R2 = 0.9  # R^2 of the log-log fit for a power-law (scale-free) reading
MIN_CURVATURE = -0.05  # log-log curvature below this = a characteristic length, not a power law
NOISE_SD = 4.0  # "above noise" = more than this many sd of the shuffled-stream kernel
KINDS = ("auto", "mi", "match")
STRUCTURES = ("self-similar", "fixed-offset", "unclear")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Tokens:
    """A token stream to advise on: ``ids`` (N,), a label, and what is known about it."""

    name: str
    ids: np.ndarray
    vocab_size: int
    description: str
    synthetic: bool = False  # a built-in copy task (the "auto" kernel is then "match")
    expected_width: int | None = None  # W built into a synthetic task


_SPEC_KEYS = {"blocks": ("B", "K", "N", "seed"), "repeat": ("W", "K", "N", "seed")}


def _parse_spec(spec: str) -> tuple[str, dict[str, int]]:
    kind, _, rest = spec.partition(":")
    keys = _SPEC_KEYS[kind]
    example = "blocks:B=10" if kind == "blocks" else "repeat:W=8"
    out = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in keys:
            raise UsageError(
                f"--data {spec!r}: {item!r} is not one of {', '.join(k + '=INT' for k in keys)}; "
                f"write e.g. --data {example},K=16"
            )
        try:
            out[key.strip()] = int(value)
        except ValueError:
            raise UsageError(
                f"--data {spec!r}: {key}={value!r} is not an integer; write e.g. --data {example}"
            ) from None
    return kind, out


def min_symbols(kind: str, size: int) -> int:
    """The fewest symbols K for which the built-in copy of a ``blocks`` (size = B) or
    ``repeat`` (size = W) stream is its measured width W.

    The excess-match kernel (``--kernel match``, what ``auto`` uses for these tasks) of such a
    stream is, in expectation (x = 1/K, b = the block length):

    * blocks, B: K(B - 2) b^2 = (B - 1) - x (B + 1) at the copy; K(B) b^2 = (B - 1)(1 + x) at
      the marker's period B, the largest value;
    * repeat, W (b = 2W + 1): K(W) b^2 = 2W^2 + W - 1 - x (2W^2 + W + 1) at the copy;
      K(b) b^2 = 2W (1 + x) at the period.

    W = first r with K(r) >= max K / 2 is the copy's distance only when the copy reaches half
    the period's height: K > (3B + 1) / (B - 1) for blocks (4 or more for every B >= 6),
    K > (2W^2 + 2W + 1) / (2W^2 - 1) for repeat (2 or more for W >= 2). At K = 1 every symbol
    is the same: the copy carries no information and K(r) shows the period alone.
    """
    if kind == "blocks":
        num, den = 3 * size + 1, size - 1
    else:
        num, den = 2 * size * size + 2 * size + 1, 2 * size * size - 1
    return num // den + 1  # the first integer strictly above num / den


def load_tokens(spec: str, *, tfds_manual_dir: str = "") -> Tokens:
    """The training tokens named by ``spec`` (what a model trained on that data would see).

    * ``tinyshakespeare``: the train split (first 90%) of TinyShakespeare through
      tensorflow-datasets (``tfds_manual_dir`` = a folder holding karpathy's input.txt);
    * ``blocks`` / ``blocks:B=10[,K=16,N=200000,seed=0]``: the block-copy train stream of
      :mod:`mope_jax.data.synthetic` (built-in width W = B - 2);
    * ``repeat:W=8[,K=16,N=200000,seed=0]``: blocks [0, a_1..a_W, a_1..a_W]
      (:func:`mope_jax.data.dependency.block_repeat_stream`; built-in width W);
    * anything else: a UTF-8 text file, characters, its train split (first 90%).
    """
    from mope_jax.config import SEED_MAX, DataConfig
    from mope_jax.data import load_corpus

    kind = spec.partition(":")[0]
    if kind in _SPEC_KEYS:
        _, opts = _parse_spec(spec)
        k, n, seed = opts.get("K", 16), opts.get("N", 200_000), opts.get("seed", 0)
        w = opts.get("W", 8)
        b = opts.get("B", DataConfig.block_len)
        if (b < 3 if kind == "blocks" else w < 1) or k < 1 or n < 1:
            what = "B >= 3" if kind == "blocks" else "W >= 1"
            raise UsageError(
                f"--data {spec!r}: needs {what}, K >= 1 and N >= 1; write e.g. "
                f"--data {'blocks:B=10' if kind == 'blocks' else 'repeat:W=8'}"
            )
        if not 0 <= seed <= SEED_MAX:
            raise UsageError(
                f"--data {spec!r}: seed={seed} is out of range; seeds are integers in "
                f"[0, {SEED_MAX}] (numpy's and jax's generators take 32-bit seeds); write e.g. "
                f"--data {kind}:{'B' if kind == 'blocks' else 'W'}="
                f"{b if kind == 'blocks' else w},seed=0"
            )
        width, period = (b - 2, b) if kind == "blocks" else (w, 2 * w + 1)
        k_min = min_symbols(kind, b if kind == "blocks" else w)
        if k < k_min:
            raise UsageError(
                f"--data {spec!r}: K={k} symbols is too few: below K={k_min} the copy at "
                f"r={width} shows less than half the excess matches of the block marker at its "
                f"period r={period}, so K(r) would read the period as the width W (at K=1 every "
                f"symbol is the same and the copy carries nothing); write K={k_min} or more, "
                f"e.g. --data {kind}:{'B' if kind == 'blocks' else 'W'}="
                f"{b if kind == 'blocks' else w},K={max(k_min, 16)}"
            )
        from mope_jax import memory

        memory.check(  # before the stream is drawn
            memory.Estimate({"the token stream": (memory.STREAM_BYTES_PER_TOKEN * n, "N")}),
            f"--data {spec}",
        )
        if kind == "blocks":
            if b > n:
                raise UsageError(
                    f"--data {spec!r}: B={b} is longer than the stream (N={n}), so it holds no "
                    f"whole block; write e.g. --data blocks:B={b},N={max(200_000, 2 * b)}"
                )
            cfg = DataConfig(
                source="blocks", block_len=b, num_symbols=k, num_tokens=n, data_seed=seed
            )
            corpus = load_corpus(cfg, 1, longer=f"write a larger N, e.g. --data blocks:B={b}")
            return Tokens(
                name=f"blocks:B={b}",
                ids=np.asarray(corpus.train, np.int64),
                vocab_size=k + 1,
                description=f"block-copy task, B = {b}, K = {k} symbols, {n} tokens, seed {seed}",
                synthetic=True,
                expected_width=block_copy_width(b),
            )
        return Tokens(
            name=f"repeat:W={w}",
            ids=block_repeat_stream(n, width=w, num_symbols=k, seed=seed).astype(np.int64),
            vocab_size=k + 1,
            description=f"repeat task [0, a_1..a_W, a_1..a_W], W = {w}, K = {k}, {n} tokens, "
            f"seed {seed}",
            synthetic=True,
            expected_width=w,
        )
    if spec == "tinyshakespeare":
        cfg = DataConfig(source="tinyshakespeare", tfds_manual_dir=tfds_manual_dir)
        name = "tinyshakespeare"
    else:
        if not Path(spec).expanduser().is_file():
            raise DataError(
                f"--data {spec!r} is not a file, nor tinyshakespeare, blocks:B=INT or "
                "repeat:W=INT; give a UTF-8 text file or one of those"
            )
        cfg = DataConfig(source="text", path=spec)
        name = Path(spec).name
    corpus = load_corpus(cfg, 1, option="--data", longer="give --data a longer corpus")
    return Tokens(
        name=name,
        ids=np.asarray(corpus.train, np.int64),
        vocab_size=corpus.vocab_size,
        description=f"{name}, characters, train split ({cfg.train_fraction:.0%}), "
        f"vocab {corpus.vocab_size}",
    )


# --------------------------------------------------------------------------- the kernel


@dataclass(frozen=True)
class Kernel:
    """K(r) for r = 1..R after subtracting the shuffled-stream floor, and its reading."""

    kind: str
    values: list[float]  # K(r), index r-1
    floor: float  # mean of the kernel of a shuffled copy (estimator bias; subtracted)
    noise: float  # sd of the kernel of a shuffled copy
    width: int  # W: first r with K(r) >= frac * max K (paper's width, dependency.kernel_width)
    frac: float
    peak_sharpness: float  # (K(W) - max K(W +- 1)) / (K(W) - median K)
    coverage: float  # fraction of ~32 log-spaced r with K(r) > NOISE_SD * noise
    power_slope: float | None  # alpha in K ~ r^-alpha (those r, least squares in log-log)
    power_r2: float | None
    power_curvature: float | None  # quadratic coefficient of log K in log r (< 0: a cutoff)
    structure: str  # one of STRUCTURES


def measure_kernel(
    ids: np.ndarray, max_distance: int, *, kind: str = "mi", frac: float = 0.5, seed: int = 0
) -> Kernel:
    """K(r), r = 1..max_distance, of a stream (N,), its width W and its shape (module doc)."""
    ids = np.asarray(ids, np.int64)
    if kind not in ("mi", "match"):
        raise UsageError(f"unknown kernel {kind!r}; use --kernel mi or --kernel match")
    if not 0 < max_distance < len(ids) // 4:
        raise UsageError(
            f"max distance {max_distance} (--max-distance, default --context) needs a "
            "stream of more than 4x as many tokens "
            f"(it has {len(ids)}); use --max-distance {max(1, len(ids) // 4 - 1)} or less, "
            "or more data"
        )
    raw = dependency_kernel(ids, max_distance, kind=kind)
    shuffled = np.random.default_rng(seed).permutation(ids)
    probe = [r for r in (1, 2, 3, 5, 8, 13, 21, 34) if r <= max_distance] or [1]
    null = dependency_kernel(shuffled, max(probe), kind=kind)[np.asarray(probe) - 1]
    floor, noise = float(null.mean()), float(null.std(ddof=1)) if len(probe) > 1 else 0.0
    k = raw - floor
    if not k.max() > NOISE_SD * noise:
        raise DataError(
            f"the data show no dependency above noise within r <= {max_distance} "
            f"(max K = {k.max():.2e}, noise sd {noise:.2e}); use more tokens or a larger "
            "--max-distance"
        )
    w = int(np.flatnonzero(k >= frac * k.max())[0]) + 1
    med = float(np.median(k))
    nbr = max(k[i] for i in (w - 2, w) if 0 <= i < len(k)) if len(k) > 1 else med
    sharp = float((k[w - 1] - nbr) / (k[w - 1] - med)) if k[w - 1] > med else 0.0
    r = np.unique(np.round(np.geomspace(1, max_distance, 32)).astype(int))  # log-spaced
    above = k[r - 1] > NOISE_SD * noise
    coverage = float(above.mean())
    r = r[above]
    slope = r2 = curvature = None
    if len(r) >= 5 and r[-1] >= 4 * r[0]:
        x, y = np.log(r), np.log(k[r - 1])
        a, b = np.polyfit(x, y, 1)
        resid = y - (a * x + b)
        r2 = float(1.0 - resid.var() / y.var()) if y.var() > 0 else 0.0
        slope = float(-a)
        curvature = float(np.polyfit(x, y, 2)[0])
    if sharp >= SHARP_PEAK:
        structure = "fixed-offset"
    elif (
        coverage >= MIN_COVERAGE
        and r2 is not None
        and r2 >= MIN_POWER_R2
        and slope > 0
        and curvature >= MIN_CURVATURE
    ):
        structure = "self-similar"
    else:
        structure = "unclear"
    return Kernel(
        kind=kind,
        values=[float(v) for v in k],
        floor=floor,
        noise=noise,
        width=w,
        frac=frac,
        peak_sharpness=sharp,
        coverage=coverage,
        power_slope=slope,
        power_r2=r2,
        power_curvature=curvature,
        structure=structure,
    )


# --------------------------------------------------------------------------- the grid


def grid(base: float, head_dim: int) -> np.ndarray:
    """theta_i = base^(-2i/D), (D/2,) float64 (the formula of encodings/rope.py, unscaled)."""
    return float(base) ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def width_matched_log_span(width: float, c: float = C_THEORY) -> float:
    """b_W = ln(1/theta_min) solving e^b = (W/c)(1 + b); 0 when W <= c (module doc)."""
    a = width / c
    if a <= 1.0:
        return 0.0
    b = max(math.log(a), 1.0)
    for _ in range(200):  # b = ln(a (1 + b)) is a contraction for b > 0 (slope 1/(1+b))
        b_new = math.log(a * (1.0 + b))
        if abs(b_new - b) < 1e-13:
            break
        b = b_new
    return b_new


def base_for_log_span(b: float, head_dim: int) -> float:
    """The base whose slowest frequency is e^-b: base = exp(b D / (D - 2))."""
    return math.exp(b * head_dim / (head_dim - 2))


def round_sig(x: float, digits: int = 3, *, up: bool = True) -> float:
    """x > 0 rounded up (or down) to ``digits`` significant digits, so that a bound the
    unrounded value meets still holds for the printed one."""
    e = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    q = math.ceil(x / e - 1e-9) if up else math.floor(x / e + 1e-9)
    return float(f"{q * e:.{digits}g}")


@dataclass(frozen=True)
class GridStats:
    """What a base's grid offers the data (D/2 frequencies)."""

    base: float
    theta_min: float
    field_tokens: float  # pi / theta_min: the widest dependency its slowest frequency resolves
    admissible: int  # frequencies with theta <= pi / W (paper's admissibility)
    beyond_context: int  # theta < pi / L (1% tolerance): its best width c/theta exceeds L
    contrast_count: float  # S = sum_{theta_i <= theta*} theta_i / theta*
    nearest_index: int  # the admissible frequency closest to theta* (the one that serves W)
    nearest_theta: float


def grid_stats(base: float, head_dim: int, width: int, context: int, c: float) -> GridStats:
    th = grid(base, head_dim)
    star = c / width
    ok = th <= star * (1 + 1e-12)
    idx = int(np.flatnonzero(ok)[0]) if ok.any() else len(th) - 1
    return GridStats(
        base=float(base),
        theta_min=float(th[-1]),
        field_tokens=float(math.pi / th[-1]),
        admissible=int((th <= math.pi / width * (1 + 1e-12)).sum()),
        beyond_context=int((th < 0.99 * math.pi / context).sum()),  # 1%: the rounded base
        contrast_count=float((th[ok] / star).sum()),
        nearest_index=idx,
        nearest_theta=float(th[idx]),
    )


# --------------------------------------------------------------------------- extension


@dataclass(frozen=True)
class RuleEffect:
    """A context-extension rule on the recommended grid at factor s."""

    rule: str
    theta_w_ratio: float  # theta'(i*) / theta(i*): what happens to the frequency serving W
    field_tokens: float  # pi / theta'_min
    covers: bool  # field_tokens >= s L


@dataclass(frozen=True)
class ExtensionStep:
    factor: float
    rule: str  # the chosen rule: pi | yarn | ntk
    overrides: str  # config overrides for mope-jax (eval at s L with model.block_size=s L)
    reason: str
    effects: list[RuleEffect]


def _rule_freqs(rule, base, head_dim, s, context, alpha, beta) -> np.ndarray:
    from mope_jax.encodings.rope import rope_frequencies

    scaling = "yarn" if rule == "yarn-keep" else rule
    kw = dict(yarn_alpha=alpha, yarn_beta=beta) if rule == "yarn-keep" else {}
    return np.asarray(
        rope_frequencies(head_dim, base, scaling=scaling, factor=s, original_length=context, **kw),
        np.float64,
    )


def yarn_keep_ramp(theta_w: float, context: int) -> tuple[float, float]:
    """(alpha, beta) in turns over L: beta = L theta_W / (2 pi), alpha = min(1, beta/2),
    each rounded down to 3 significant digits.

    YaRN keeps theta exactly where L theta / (2 pi) >= beta, so every frequency from theta_W
    (the fastest admissible one, which serves W) up is left as trained."""
    beta = round_sig(context * theta_w / (2 * math.pi), up=False)  # down: theta_W stays kept
    return min(1.0, round_sig(beta / 2, up=False)), beta


def extension_schedule(
    structure: str, base: float, head_dim: int, context: int, width: int, c: float, factors
) -> list[ExtensionStep]:
    stats = grid_stats(base, head_dim, width, context, c)
    i_star = stats.nearest_index
    alpha, beta = yarn_keep_ramp(stats.nearest_theta, context)
    theta = grid(base, head_dim)
    common = f"model.rope_base={base:g} model.rope_original_length={context}"
    steps = []
    for s in factors:
        effects = []
        for rule in ("none", "pi", "ntk", "yarn", "yarn-keep"):
            th = _rule_freqs(rule, base, head_dim, s, context, alpha, beta)
            field_tokens = float(math.pi / th[-1])
            effects.append(
                RuleEffect(
                    rule=rule,
                    theta_w_ratio=float(th[i_star] / theta[i_star]),
                    field_tokens=field_tokens,
                    covers=field_tokens >= s * context * (1 - 1e-9),
                )
            )
        scaled = f"model.block_size={int(math.ceil(s * context))} model.rope_factor={s:g}"
        if structure == "self-similar":
            rule = "pi"
            overrides = f"{common} model.rope_scaling=pi {scaled}"
            reason = (
                "K is scale-free, so at s L the dependencies are the training ones dilated "
                "by s and each one's best frequency moves from c/r to c/(s r): PI divides "
                "every theta by s (the paper's condition for PI; PI's own protocol "
                "fine-tunes at s L; our CPU pilot found PI worse than no scaling without "
                "that fine-tune: experiments/results/paper_b/context_extension.md)"
            )
        elif structure == "fixed-offset":
            rule = "yarn"
            overrides = (
                f"{common} model.rope_scaling=yarn {scaled} "
                f"model.rope_yarn_alpha={alpha:.3g} model.rope_yarn_beta={beta:.3g}"
            )
            reason = (
                f"the dependency sits at a fixed offset W = {width} that does not grow with "
                "the context, so the frequencies that resolve it must not move: YaRN with "
                f"beta = L theta_W/(2 pi) = {beta:.3g} turns keeps theta_W = "
                f"{stats.nearest_theta:.3g} (i = {i_star}, the fastest admissible) and every "
                "faster theta exactly, and interpolates only those with < alpha turns over L "
                "(PI would divide theta_W by s, costing that factor of contrast at W)"
            )
        else:
            rule = "ntk"
            overrides = f"{common} model.rope_scaling=ntk {scaled}"
            reason = (
                "K is neither a clean power law (so no evidence that the structure dilates "
                "with the context, which PI assumes) nor a sharp peak: NTK keeps the fastest "
                "frequency and divides the slowest by s, a middle course (our default, "
                "no law behind it)"
            )
        steps.append(ExtensionStep(float(s), rule, overrides, reason, effects))
    return steps


# --------------------------------------------------------------------------- advice


@dataclass(frozen=True)
class Advice:
    data: str
    description: str
    num_tokens: int
    vocab_size: int
    head_dim: int
    context: int
    c: float
    kernel: Kernel
    expected_width: int | None
    theta_star: float  # c / W
    admissible_max: float  # pi / W
    base_width: float  # base_W (unrounded; 1.0 when W <= c sets no bound)
    base_field: float  # base_L = (L/pi)^(D/(D-2))
    base_recommended: float  # max(base_W, base_L), 3 significant digits
    binding: str  # "width" or "context": which bound set the recommendation
    grids: dict[str, GridStats]  # "current", "recommended", "width-matched"
    extension: list[ExtensionStep]
    overrides: str  # the training overrides for the recommended grid
    status: str = (
        "a prediction: checked by training only at CPU scale (mope-jax campaign run "
        "rope_advice_check --scale cpu); the verdict is row R1 of the claims ledger"
    )
    notes: list[str] = field(default_factory=list)

    @property
    def width(self) -> int:
        return self.kernel.width

    def to_dict(self) -> dict:
        """JSON-ready: every field, plus ``width`` (W) and ``structure`` at the top level."""
        return {"width": self.width, "structure": self.kernel.structure, **asdict(self)}


def advise(
    tokens: Tokens | np.ndarray,
    *,
    head_dim: int = 32,
    context: int = 256,
    base: float = 10000.0,
    max_distance: int | None = None,
    kind: str = "auto",
    c: float = C_THEORY,
    frac: float = 0.5,
    factors=(2.0, 4.0),
) -> Advice:
    """Measure K(r) and W of ``tokens`` and derive the advice (rules in the module doc).

    Args:
      tokens: a :class:`Tokens` (from :func:`load_tokens`) or a raw stream (N,) of ids.
      head_dim: D, the RoPE head dimension (D/2 frequencies).
      context: L, the training length in tokens.
      base: the base to compare against (the current grid).
      max_distance: largest r of K(r) (default: L; dependencies beyond the window cannot be
        used in training).
      kind: "mi", "match", or "auto" (match for the built-in copy tasks, mi otherwise).
      c: theta* = c / W (pi = the paper's theory, 3.02 its fit).
      frac: W = first r with K(r) >= frac max K.
      factors: extension factors s = L'/L for the schedule.
    """
    if not isinstance(tokens, Tokens):
        ids = np.asarray(tokens, np.int64)
        tokens = Tokens("stream", ids, int(ids.max()) + 1, f"token stream of {len(ids)} ids")
    if head_dim < 4 or head_dim % 2:
        raise UsageError(f"--head-dim {head_dim} must be even and at least 4; e.g. --head-dim 32")
    if context < 2:
        raise UsageError(f"--context {context} must be at least 2; e.g. --context 256")
    if not (math.isfinite(base) and base > 1):
        raise UsageError(f"--base {base} must be a number > 1; e.g. --base 10000")
    if not (math.isfinite(c) and c > 0):
        raise UsageError(f"c = {c} must be positive; use pi (theory) or 3.02 (the paper's fit)")
    if not 0 < frac <= 1:
        raise UsageError(f"frac = {frac} must be in (0, 1]; the paper's width uses 0.5")
    factors = tuple(float(s) for s in factors)
    if not factors or any(not (math.isfinite(s) and s > 1) for s in factors):
        raise UsageError(f"--factors {factors} must be numbers > 1; e.g. --factors 2,4")
    if kind not in KINDS:
        raise UsageError(f"--kernel {kind!r} is unknown; use one of {', '.join(KINDS)}")
    if kind == "auto":
        kind = "match" if tokens.synthetic else "mi"
    r_max = max_distance or context
    kern = measure_kernel(tokens.ids, r_max, kind=kind, frac=frac)
    w = kern.width

    b_w = width_matched_log_span(w, c)
    base_w = base_for_log_span(b_w, head_dim)
    base_l = base_for_log_span(math.log(context / math.pi), head_dim) if context > math.pi else 1.0
    rec = round_sig(max(base_w, base_l, 1.0 + 1e-3))
    binding = "width" if base_w > base_l else "context"
    grids = {
        "current": grid_stats(base, head_dim, w, context, c),
        "recommended": grid_stats(rec, head_dim, w, context, c),
    }
    if b_w > 0:
        grids["width-matched"] = grid_stats(round_sig(base_w), head_dim, w, context, c)
    notes = []
    if w <= c:
        notes.append(
            f"W = {w} <= c: theta* = {c / w:.3g} >= 1 rad/token, the fastest RoPE frequency, so "
            "every frequency is admissible and W sets no bound on the base; the context does"
        )
    if kern.width == r_max:
        notes.append(
            f"W = max distance {r_max}: the first strong dependency may lie beyond it; "
            "rerun with a larger --max-distance"
        )
    if tokens.expected_width is not None and tokens.expected_width != w:
        notes.append(
            f"measured W = {w} differs from the W = {tokens.expected_width} built into the "
            f"task (kernel {kind}; the mi kernel of block-copy data finds the marker period B)"
        )
    return Advice(
        data=tokens.name,
        description=tokens.description,
        num_tokens=int(len(tokens.ids)),
        vocab_size=int(tokens.vocab_size),
        head_dim=head_dim,
        context=context,
        c=float(c),
        kernel=kern,
        expected_width=tokens.expected_width,
        theta_star=c / w,
        admissible_max=math.pi / w,
        base_width=base_w,
        base_field=base_l,
        base_recommended=rec,
        binding=binding,
        grids=grids,
        extension=extension_schedule(kern.structure, rec, head_dim, context, w, c, factors),
        overrides=f"model.rope_base={rec:g}",
        notes=notes,
    )


# --------------------------------------------------------------------------- text


def _profile_points(n: int) -> list[int]:
    pts = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
    return [r for r in pts if r <= n] + ([n] if n not in pts else [])


def _wrap(text: str, first: str, rest: str, width: int = 96) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest)


def format_advice(a: Advice) -> str:
    """The advice as text: the reasoning, with every number it used."""
    k, d, n = a.kernel, a.head_dim, a.head_dim // 2
    kname = {
        "mi": "mutual information I(x_t; x_t+r), Miller-Madow, nats",
        "match": "excess exact matches P(x_t = x_t+r) - sum_v P(v)^2",
    }[k.kind]
    out = [
        f"rope-advice: {a.description} ({a.num_tokens:,} tokens)",
        f"status: {a.status}",
        "",
        f"1. Dependency kernel K(r), r = 1..{len(k.values)}  [measured]",
        f"   kernel: {kname}; minus the shuffled-stream floor {k.floor:.2e} "
        f"(noise sd {k.noise:.2e})",
    ]
    pts = _profile_points(len(k.values))
    out.append("   r    " + " ".join(f"{r:>9d}" for r in pts))
    out.append("   K(r) " + " ".join(f"{k.values[r - 1]:>9.2e}" for r in pts))
    known = ""
    if a.expected_width is not None:
        same = "matches" if a.expected_width == k.width else "DIFFERS from"
        known = f"; {same} the W = {a.expected_width} built into the task"
    out.append(
        f"   W = {k.width}: first r with K(r) >= {k.frac:g} x max K "
        f"(max at r = {int(np.argmax(k.values)) + 1}){known}"
    )
    fit = (
        f"power-law fit K ~ r^-alpha: alpha {k.power_slope:.2f}, R^2 {k.power_r2:.2f} "
        f"(self-similar if >= {MIN_POWER_R2}), log-log curvature {k.power_curvature:+.2f} "
        f"(>= {MIN_CURVATURE})"
        if k.power_r2 is not None
        else "too few distances above noise for a power-law fit"
    )
    out += [
        *_wrap(
            f"shape [our heuristic]: peak sharpness {k.peak_sharpness:.2f} (fixed offset if "
            f">= {SHARP_PEAK}); K above noise at {k.coverage:.0%} of log-spaced r (>= "
            f"{MIN_COVERAGE:.0%}); {fit}",
            "   ",
            "     ",
        ),
        f"   -> {k.structure}",
        "",
        f"2. Frequency targets [paper B's law], D = {d}: {n} frequencies theta_i = base^(-2i/D)",
        f"   admissible for W: theta <= pi/W = {a.admissible_max:.4g} rad/token",
        f"   optimum: theta* = c/W = {a.theta_star:.4g} rad/token (c = {a.c:.4g}; theory pi, "
        f"paper's fit {C_PAPER_FIT})",
        "",
        "3. Base [our rule: max S = sum_{theta_i <= theta*} theta_i/theta*, floor: field covers L]",
    ]
    if a.base_width > 1.0:
        b_w = math.log(a.base_width) * (d - 2) / d
        out.append(
            f"   width-matched: e^b = (W/c)(1 + b) -> b = {b_w:.3f}, theta_min = theta*/(1+b) = "
            f"{math.exp(-b_w):.4g}, base_W = e^(b D/(D-2)) = {a.base_width:.4g}"
        )
    else:
        out.append(f"   width-matched: none (W = {k.width} <= c; every frequency is admissible)")
    out += [
        f"   field floor: theta_min <= pi/L = {math.pi / a.context:.4g} (L = {a.context}) -> "
        f"base_L = (L/pi)^(D/(D-2)) = {a.base_field:.4g}",
        f"   recommended: max(base_W, base_L) = {a.base_recommended:g} (set by the {a.binding})",
        "",
        "   grid           base   theta_min  field(tok)  admissible  beyond L   S   theta at W",
    ]
    for name, g in a.grids.items():
        out.append(
            f"   {name:<13}{g.base:>7.4g}  {g.theta_min:>9.3g}  {g.field_tokens:>10.4g}  "
            f"{g.admissible:>5d}/{n:<4d}  {g.beyond_context:>6d}  {g.contrast_count:>5.2f}  "
            f"i={g.nearest_index} {g.nearest_theta:.3g}"
        )
    out += [
        "   (admissible: theta <= pi/W; beyond L: theta < pi/L, its half turn exceeds the window;",
        "    S: contrast-weighted admissible frequencies; theta at W: the fastest admissible)",
        f"   train with: {a.overrides}",
        "",
        f"4. Context extension from L = {a.context} [paper's PI condition + our rule choice]",
    ]
    if a.extension:
        first = a.extension[0]
        out += [f"   rule: {first.rule}", *_wrap(f"why: {first.reason}", "   ", "     ")]
    for step in a.extension:
        s = step.factor
        eff = ", ".join(
            f"{e.rule} {e.theta_w_ratio:.2f}{'' if e.covers else '*'}" for e in step.effects
        )
        out += [
            f"   s = {s:g} (L' = {int(math.ceil(s * a.context))}): {step.overrides}",
            f"     theta_W after/before by rule: {eff}",
        ]
    out.append("     (* = the slowest frequency no longer covers s L: theta'_min > pi/(s L))")
    for note in a.notes:
        out += _wrap(f"note: {note}", "", "  ")
    return "\n".join(out)
