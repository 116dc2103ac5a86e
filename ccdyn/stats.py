"""Statistics of basin counts: Wilson intervals, their overlaps, Pearson's chi-square test, and the
basin mass of optima not seen yet; and a t interval for a mean over seeds.

A basin fraction is a binomial proportion count / n over random initializations; these functions
turn counts into 95% intervals, test whether several counts are compatible with equal
probabilities (e.g. the members of a shift orbit, App. B.5) and bound the missing mass.
"""

from __future__ import annotations

import jax.scipy.stats
import numpy as np

__all__ = ["wilson_interval", "intervals_overlap", "covering_intervals", "equal_counts_pvalue", "unseen_mass",
           "t_interval"]


def wilson_interval(count, n, z: float = 1.959963984540054):
    """95% Wilson score interval for a binomial proportion count / n."""
    count, n = np.asarray(count, float), float(n)
    p = count / n
    denom = 1.0 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.stack([np.maximum(center - half, 0.0), np.minimum(center + half, 1.0)], axis=-1)


def intervals_overlap(counts, n: int) -> bool:
    """True when the 95% Wilson intervals of all the proportions counts / n share a common point."""
    ci = wilson_interval(np.asarray(counts), n).reshape(-1, 2)
    return bool(np.max(ci[:, 0]) <= np.min(ci[:, 1]))


def covering_intervals(counts, n: int) -> int:
    """How many of the 95% Wilson intervals of counts / n contain the mean proportion of all of them.

    Under equal probabilities each interval covers the common value with probability ~0.95, so with k
    members about 0.05 k misses are expected; :func:`equal_counts_pvalue` is the joint test.
    """
    c = np.asarray(counts, np.float64)
    ci = wilson_interval(c, n).reshape(-1, 2)
    mean = c.mean() / n
    return int(np.sum((ci[:, 0] <= mean) & (mean <= ci[:, 1])))


def equal_counts_pvalue(counts) -> float:
    """p-value of Pearson's chi-square test that counts (k,) come from k equally likely outcomes.

    1.0 for a single count (nothing to compare); small values reject equal basins.
    """
    c = np.asarray(counts, np.float64)
    if c.size < 2 or c.sum() == 0:
        return 1.0
    expected = c.mean()
    stat = float(np.sum((c - expected) ** 2) / expected)
    return float(jax.scipy.stats.chi2.sf(stat, c.size - 1))


def unseen_mass(counts, n: int, confidence: float = 0.95) -> dict:
    """The basin mass of optima that none of ``n`` inits reached: Good-Turing's estimate and an upper
    confidence bound, from the inits per optimum found (``counts``).

    The estimate is G = N1 / n, N1 the number of optima reached exactly once. The bound holds with
    probability >= ``confidence`` for any distribution of basins: E[G] >= E[M0] (the missing mass),
    M0 has upper deviations P(M0 >= E M0 + e) <= exp(-n e^2) (McAllester & Ortiz 2003, sharpened by
    Berend & Kontorovich 2013), and N1 changes by at most 2 when one init changes, so by McDiarmid
    P(G <= E G - e) <= exp(-n e^2 / 2). Splitting 1 - confidence between the two:
    M0 <= G + (1 + sqrt 2) sqrt(ln(2 / (1 - confidence)) / n): conservative, about 0.046 at n = 10^4 and
    0.0046 at n = 10^6 (docs/reproducibility.md).
    """
    counts = np.asarray(counts)
    if n < 1 or not 0 < confidence < 1:
        raise ValueError(f"n={n} must be >= 1 and confidence={confidence} in (0, 1)")
    singletons = int(np.sum(counts == 1))
    estimate = singletons / n
    margin = (1 + np.sqrt(2)) * np.sqrt(np.log(2 / (1 - confidence)) / n)
    return {"good_turing": estimate, "upper": float(min(1.0, estimate + margin)), "singletons": singletons,
            "confidence": confidence}


def t_interval(values, confidence: float = 0.95) -> tuple:
    """(mean, low, high): Student's t interval for the mean of ``values`` (e.g. per-seed paired
    differences), mean +- t_{n-1} s / sqrt(n); (mean, -inf, inf) for n < 2, (nan, nan, nan) for n = 0."""
    from scipy.special import stdtrit  # the t quantile; scipy comes with scikit-learn

    v = np.asarray(values, np.float64).ravel()
    if v.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(v.mean())
    if v.size < 2:
        return mean, float("-inf"), float("inf")
    half = float(stdtrit(v.size - 1, 0.5 + confidence / 2) * v.std(ddof=1) / np.sqrt(v.size))
    return mean, mean - half, mean + half
