"""Small-sample statistics for multi-seed comparisons (no scipy needed).

Student-t tails come from the regularised incomplete beta function
(``jax.scipy.special.betainc``, evaluated in float64 numpy-side via a continued fraction):
    P(|T| > t) = I_{nu / (nu + t^2)}(nu / 2, 1 / 2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def _betacf(a: float, b: float, x: float, iters: int = 300, eps: float = 3e-16) -> float:
    """Continued fraction for the incomplete beta function (Numerical Recipes 6.4)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
    h = d
    for m in range(1, iters + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1.0 + aa / c if abs(1.0 + aa / c) > 1e-300 else 1e-300
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b), float64."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbeta = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbeta) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbeta) * _betacf(b, a, 1.0 - x) / b


def t_sf2(t: float, nu: float) -> float:
    """Two-sided tail P(|T| > |t|) of Student's t with nu degrees of freedom."""
    return betainc(nu / 2.0, 0.5, nu / (nu + t * t))


def t_quantile(p: float, nu: float) -> float:
    """q with P(T <= q) = p (p > 0.5), by bisection on the two-sided tail."""
    target = 2.0 * (1.0 - p)
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf2(mid, nu) > target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class Summary:
    n: int
    mean: float
    std: float  # sample std (ddof=1); 0 for n = 1
    ci_low: float
    ci_high: float  # 95% t-interval of the mean (nan for n = 1)

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2


def summarize(values, confidence: float = 0.95) -> Summary:
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0:
        raise ValueError("no values to summarise")
    mean = float(x.mean())
    if n == 1:
        return Summary(1, mean, 0.0, float("nan"), float("nan"))
    std = float(x.std(ddof=1))
    h = t_quantile(0.5 + confidence / 2, n - 1) * std / math.sqrt(n)
    return Summary(n, mean, std, mean - h, mean + h)


@dataclass(frozen=True)
class Welch:
    diff: float  # mean(a) - mean(b)
    t: float
    df: float
    p: float  # two-sided


def welch(a, b) -> Welch:
    """Welch's unequal-variance t-test of mean(a) - mean(b)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if len(a) < 2 or len(b) < 2:
        return Welch(float(a.mean() - b.mean()), float("nan"), float("nan"), float("nan"))
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    diff = float(a.mean() - b.mean())
    se = math.sqrt(va + vb)
    if se == 0:
        return Welch(diff, float("inf") if diff else 0.0, float("nan"), 0.0 if diff else 1.0)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    t = diff / se
    return Welch(diff, t, df, t_sf2(t, df))


@dataclass(frozen=True)
class Paired:
    """Paired comparison of a - b over matched units (seeds): the differences d_i = a_i - b_i."""

    n: int
    mean: float  # mean of d
    std: float  # sample std of d (ddof=1); nan for n = 1
    ci_low: float
    ci_high: float  # t-interval of mean(d) (nan for n < 2)
    t: float
    p: float  # two-sided paired t-test of mean(d) = 0 (nan for n < 2)


def paired_t(a, b, confidence: float = 0.95) -> Paired:
    """Paired t-test of a - b (same length): t = mean(d) / (std(d) / sqrt(n)), n - 1 degrees of
    freedom, the two-sided p of ``scipy.stats.ttest_rel``. With std(d) = 0 the test degenerates:
    p = 0 for a nonzero mean (t = +-inf), p = 1 for mean 0 (t = 0), where scipy gives nan."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired_t needs two 1-D arrays of one length, got {a.shape}, {b.shape}")
    d = a - b
    n = len(d)
    nan = float("nan")
    if n == 0:
        raise ValueError("no pairs to compare")
    mean = float(d.mean())
    if n == 1:
        return Paired(1, mean, nan, nan, nan, nan, nan)
    std = float(d.std(ddof=1))
    se = std / math.sqrt(n)
    h = t_quantile(0.5 + confidence / 2, n - 1) * se
    if se == 0:
        t = math.copysign(float("inf"), mean) if mean else 0.0
        return Paired(n, mean, std, mean - h, mean + h, t, 0.0 if mean else 1.0)
    t = mean / se
    return Paired(n, mean, std, mean - h, mean + h, t, t_sf2(t, n - 1))


def holm(pvalues) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (same order as given): with the m
    finite p sorted ascending, p_adj(i) = max_{j <= i} min(1, (m - j + 1) p(j)). A nan p (a
    comparison without a test) stays nan and does not count in m."""
    p = [float(x) for x in pvalues]
    idx = sorted((i for i, x in enumerate(p) if not math.isnan(x)), key=lambda i: p[i])
    m = len(idx)
    out = [float("nan")] * len(p)
    running = 0.0
    for rank, i in enumerate(idx):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@dataclass(frozen=True)
class LineFit:
    """Least squares y = intercept + slope x, with the t-interval of the slope (n - 2 dof)."""

    n: int
    slope: float
    intercept: float
    ci_low: float  # nan for n < 3
    ci_high: float
    r2: float


def line_fit(x, y, confidence: float = 0.95) -> LineFit:
    """Ordinary least squares of y on x (1-D, same length, at least two distinct x)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(set(x.tolist())) < 2:
        raise ValueError("line_fit needs two 1-D arrays of one length with two distinct x")
    n = len(x)
    xm, ym = x.mean(), y.mean()
    sxx = float(((x - xm) ** 2).sum())
    slope = float(((x - xm) * (y - ym)).sum() / sxx)
    intercept = float(ym - slope * xm)
    resid = y - (intercept + slope * x)
    sst = float(((y - ym) ** 2).sum())
    r2 = 1.0 - float(resid @ resid) / sst if sst > 0 else 1.0
    if n < 3:
        return LineFit(n, slope, intercept, float("nan"), float("nan"), r2)
    se = math.sqrt(float(resid @ resid) / (n - 2) / sxx)
    h = t_quantile(0.5 + confidence / 2, n - 2) * se
    return LineFit(n, slope, intercept, slope - h, slope + h, r2)


# --------------------------------------------------------------------------- bootstrap


def bootstrap_weights(num_units: int, num_resamples: int, *, seed: int) -> np.ndarray:
    """(B, n) int64: how often each of n units (e.g. blocks of a stream) is drawn in each of B
    resamples of n draws with replacement (each row ~ Multinomial(n, 1/n), rows sum to n).

    A statistic that is a sum over units (a histogram, a count) of a resample is then
    ``weights @ per_unit_values``; deterministic given ``seed``."""
    if num_units < 1 or num_resamples < 1:
        raise ValueError(f"need >= 1 unit and resample, got {num_units}, {num_resamples}")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, num_units, size=(num_resamples, num_units))
    rows = np.arange(num_resamples)[:, None] * num_units
    counts = np.bincount((rows + draws).ravel(), minlength=num_resamples * num_units)
    return counts.reshape(num_resamples, num_units)


def percentile_interval(samples, confidence: float = 0.95, axis: int = 0):
    """(low, high): the (1 - confidence)/2 and (1 + confidence)/2 quantiles of bootstrap
    replicates along ``axis`` (the percentile interval; nan if any replicate is nan)."""
    x = np.asarray(samples, np.float64)
    if x.shape[axis] < 2:
        raise ValueError(f"need >= 2 replicates along axis {axis}, got shape {x.shape}")
    q = np.quantile(x, [(1 - confidence) / 2, (1 + confidence) / 2], axis=axis)
    return q[0], q[1]


def half_sample_weights(num_units: int, num_resamples: int, *, seed: int) -> np.ndarray:
    """(B, n) int64 0/1: each row draws n // 2 of n units without replacement (half-sampling).

    No unit is drawn twice, so a plug-in estimate of a replicate is an ordinary estimate on
    half the data; for a mean over units, sampling half of n without replacement has variance
    (1 / (n/2) - 1 / n) s^2 = s^2 / n, that of the full-sample mean (the finite-population
    correction), so the replicates' spread estimates the full estimate's without rescaling."""
    if num_units < 2 or num_resamples < 1:
        raise ValueError(f"need >= 2 units and >= 1 resample, got {num_units}, {num_resamples}")
    rng = np.random.default_rng(seed)
    keys = rng.random((num_resamples, num_units))
    chosen = np.argsort(keys, axis=1)[:, : num_units // 2]
    w = np.zeros((num_resamples, num_units), np.int64)
    np.put_along_axis(w, chosen, 1, axis=1)
    return w
