"""Small-sample statistics for multi-seed comparisons, on ``scipy.stats``.

scipy gives the t distribution (quantiles, tails), the paired and Welch t-tests and the line
fit's slope error; what it lacks, or gives in another form, is here: summaries with a t-interval
of the mean, a paired comparison with its interval (``ttest_rel`` gives p, not the interval of
the mean difference; with zero spread we return p 0 or 1 where scipy gives nan), Holm's
step-down adjustment, and the seeded resampling weights of the block bootstrap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _st


def t_sf2(t: float, nu: float) -> float:
    """Two-sided tail P(|T| > |t|) of Student's t with nu degrees of freedom."""
    return float(2.0 * _st.t.sf(abs(t), nu))


def t_quantile(p: float, nu: float) -> float:
    """q with P(T <= q) = p, Student's t with nu degrees of freedom."""
    return float(_st.t.ppf(p, nu))


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
    """Welch's unequal-variance t-test of mean(a) - mean(b) (``scipy.stats.ttest_ind`` with
    ``equal_var=False``); fewer than two values on a side: no test (nan); zero spread on both
    sides: p 0 for a nonzero difference, 1 for none (scipy gives nan)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    diff = float(a.mean() - b.mean())
    if len(a) < 2 or len(b) < 2:
        return Welch(diff, float("nan"), float("nan"), float("nan"))
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    if va + vb == 0:
        return Welch(diff, float("inf") if diff else 0.0, float("nan"), 0.0 if diff else 1.0)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    r = _st.ttest_ind(a, b, equal_var=False)
    return Welch(diff, float(r.statistic), float(df), float(r.pvalue))


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
    """Paired t-test of a - b (same length): t and the two-sided p of ``scipy.stats.ttest_rel``
    (t = mean(d) / (std(d) / sqrt(n)), n - 1 degrees of freedom), with the t-interval of
    mean(d). With std(d) = 0 the test degenerates: p = 0 for a nonzero mean (t = +-inf), p = 1
    for mean 0 (t = 0), where scipy gives nan."""
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
    r = _st.ttest_rel(a, b)
    return Paired(n, mean, std, mean - h, mean + h, float(r.statistic), float(r.pvalue))


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
    """Ordinary least squares of y on x (1-D, same length, at least two distinct x):
    ``scipy.stats.linregress``, with the t-interval of the slope from its standard error."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(set(x.tolist())) < 2:
        raise ValueError("line_fit needs two 1-D arrays of one length with two distinct x")
    n = len(x)
    r = _st.linregress(x, y)
    slope, intercept = float(r.slope), float(r.intercept)
    r2 = float(r.rvalue) ** 2 if np.ptp(y) > 0 else 1.0
    if n < 3:
        return LineFit(n, slope, intercept, float("nan"), float("nan"), r2)
    h = t_quantile(0.5 + confidence / 2, n - 2) * float(r.stderr)
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
