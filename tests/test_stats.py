"""Basin statistics: Wilson intervals, their overlaps, and Pearson's chi-square p-value."""

import numpy as np
import pytest

from ccdyn import stats


def test_wilson_interval():
    lo, hi = stats.wilson_interval(np.array([0, 50, 100]), 100).T
    np.testing.assert_allclose([lo[1], hi[1]], [0.4038, 0.5962], atol=1e-4)  # textbook value
    assert abs(lo[0]) < 1e-15 and abs(hi[2] - 1) < 1e-15 and 0 < hi[0] < 0.04


def test_wilson_interval_brackets_the_proportion_and_shrinks_with_n():
    ci = stats.wilson_interval(np.array([0, 3, 10]), 10)
    assert ci[0, 0] == 0.0 and ci[2, 1] == pytest.approx(1.0)
    p = np.array([0, 0.3, 1.0])
    assert np.all(ci[:, 0] <= p) and np.all(p <= ci[:, 1] + 1e-12)
    wide, narrow = stats.wilson_interval(30, 100), stats.wilson_interval(3000, 10000)
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_overlap_and_covering_of_equal_and_unequal_counts():
    assert stats.intervals_overlap([500, 510, 490], 3000) and stats.covering_intervals([500, 510, 490], 3000) == 3
    assert not stats.intervals_overlap([100, 900], 1000) and stats.covering_intervals([100, 900], 1000) == 0


def test_equal_counts_pvalue_against_the_closed_form_for_two_counts():
    """For k = 2 the chi-square statistic has 1 degree of freedom: sf(x) = erfc(sqrt(x / 2))."""
    from math import erfc, sqrt

    c = np.array([460.0, 540.0])
    stat = np.sum((c - c.mean()) ** 2) / c.mean()
    assert stats.equal_counts_pvalue(c) == pytest.approx(erfc(sqrt(stat / 2)), rel=1e-9)
    assert stats.equal_counts_pvalue([7]) == 1.0 and stats.equal_counts_pvalue([0, 0]) == 1.0


def test_unseen_mass_against_simulated_missing_mass():
    """On a known distribution of 'basins' with many rare ones, Good-Turing's estimate is unbiased up to
    1/n (E[G] - E[M0] = sum p^2 (1-p)^(n-1)) and the 95% upper bound covers the true missing mass."""
    rng = np.random.default_rng(0)
    p = 0.97 ** np.arange(400)
    p /= p.sum()
    n, trials = 300, 2000
    draws = rng.choice(p.size, size=(trials, n), p=p)
    counts = np.stack([np.bincount(d, minlength=p.size) for d in draws])
    missing = (counts == 0) @ p
    est = [stats.unseen_mass(c[c > 0], n) for c in counts]
    g = np.array([e["good_turing"] for e in est])
    bias = np.sum(p ** 2 * (1 - p) ** (n - 1))
    assert abs((g - missing).mean() - bias) < 4 * (g - missing).std() / np.sqrt(trials)
    assert np.mean(missing <= np.array([e["upper"] for e in est])) >= 0.95
    assert stats.unseen_mass([3, 1, 1, 7], 12) == {"good_turing": 2 / 12, "upper": 1.0, "singletons": 2,
                                                   "confidence": 0.95}
    with pytest.raises(ValueError):
        stats.unseen_mass([1], 0)
