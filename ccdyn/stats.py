"""Statistics of basin counts: Wilson intervals, their overlaps, Pearson's chi-square test, the
basin mass of optima not seen yet, the smallest basin that cannot have been missed, simultaneous
intervals for all basin fractions, the number of optima (Chao1); and a t interval for a mean over seeds.

A basin fraction is a binomial proportion count / n over random initializations; these functions
turn counts into 95% intervals, test whether several counts are compatible with equal
probabilities (e.g. the members of a shift orbit, App. B.5) and bound the missing mass. The
derivations and the coverage measured by simulation are in docs/statistics.md.
"""

from __future__ import annotations

import jax.scipy.stats
import numpy as np

__all__ = ["wilson_interval", "intervals_overlap", "covering_intervals", "equal_counts_pvalue", "unseen_mass",
           "finite_mean", "t_interval", "miss_bound", "inits_for_miss", "round_up", "miss_phrase",
           "simultaneous_intervals", "richness", "basin_statistics", "MIN_CONVERGED_SHARE", "coverage",
           "tipping_intervals"]


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


def finite_mean(values) -> float:
    """The mean of the finite entries of ``values``; NaN, without numpy's "Mean of empty slice" warning,
    when there is none (e.g. every seed of a setting went non-finite)."""
    v = np.asarray(values, np.float64)
    return float(v[np.isfinite(v)].mean()) if np.isfinite(v).any() else float("nan")


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


# ---- per-basin miss bound, simultaneous intervals, richness (docs/statistics.md) ----------------------

def _union_bound(eps, n: int):
    """floor(1/eps) (1 - eps)^n: a bound on P(some basin of mass >= eps is unseen in n inits)."""
    eps = np.asarray(eps, np.float64)
    with np.errstate(divide="ignore"):  # eps = 1: log1p(-1) = -inf, the bound 0
        return np.floor(1.0 / eps) * np.exp(n * np.log1p(-eps))


def miss_bound(n: int, confidence: float = 0.95) -> float:
    """The smallest basin mass eps such that, with probability >= ``confidence`` over ``n`` independent
    inits, every optimum whose basin holds >= eps of the inits was reached at least once.

    Distribution-free: at most floor(1/eps) basins hold >= eps, each is unseen with probability
    <= (1 - eps)^n, so P(miss) <= floor(1/eps) (1 - eps)^n (docs/statistics.md). The bound does not depend
    on the counts, only on n (all inits, converged or not, with masses as fractions of all inits). The
    union bound is non-increasing in eps; the value returned is the upper end of a float64 bisection
    bracket, so the bound holds at it exactly, and lies within 1e-12 relative of the infimum.
    """
    if n < 1 or not 0 < confidence < 1:
        raise ValueError(f"n={n} must be >= 1 and confidence={confidence} in (0, 1)")
    delta = 1.0 - confidence
    lo, hi = 0.0, 1.0  # _union_bound(1) = 0 <= delta; at lo -> 0 it tends to infinity (> delta)
    # closed-form start: the bound is <= (1/eps) e^{-n eps}, which is delta / ln(n/delta) <= delta at
    # eps = ln(n/delta)/n when n/delta >= e (checked, else the bracket stays [0, 1])
    guess = min(1.0, np.log(n / delta) / n)
    if _union_bound(guess, n) <= delta:
        hi = guess
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if _union_bound(mid, n) <= delta:
            hi = mid
        else:
            lo = mid
    return float(hi)


def inits_for_miss(eps: float, confidence: float = 0.95) -> int:
    """The fewest inits n for which :func:`miss_bound` (n, confidence) <= eps: the smallest n with
    floor(1/eps) (1 - eps)^n <= 1 - confidence (757 for eps = 0.01 at 95%; the simpler sufficient
    ln(1 / (eps delta)) / eps gives 761)."""
    if not 0 < eps <= 1 or not 0 < confidence < 1:
        raise ValueError(f"eps={eps} must be in (0, 1] and confidence={confidence} in (0, 1)")
    if eps == 1.0:
        return 1
    delta = 1.0 - confidence
    n = max(1, int(np.ceil(np.log(delta / np.floor(1.0 / eps)) / np.log1p(-eps))))
    while n > 1 and _union_bound(eps, n - 1) <= delta:  # guard the rounding of the closed form
        n -= 1
    while _union_bound(eps, n) > delta:
        n += 1
    return n


def round_up(x: float, digits: int = 2) -> float:
    """x rounded up to ``digits`` significant digits (a stated bound is never below the true one by more
    than 1e-12 relative, the slack that keeps 0.1 from printing as 0.11)."""
    if x <= 0:
        return 0.0
    scale = 10.0 ** (digits - 1 - int(np.floor(np.log10(x))))
    return float(np.ceil(x * scale * (1 - 1e-12)) / scale)


def miss_phrase(n: int, confidence: float = 0.95) -> str:
    """The per-basin bound in words, e.g. 'no optimum with a basin >= 0.076% of inits was missed (95%)'."""
    pct = round_up(100.0 * miss_bound(n, confidence))
    return f"no optimum with a basin >= {pct:g}% of inits was missed ({100 * confidence:g}%)"


def _bisect(pred, lo, hi, iters: int = 200):
    """Vectorized bisection of a predicate true on [lo, x*] and false on (x*, hi]: returns (a, b) with
    pred(a) true, pred(b) false (or b = hi untested), b - a <= 1e-10 b."""
    lo, hi = np.array(lo, np.float64), np.array(hi, np.float64)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        ok = pred(mid)
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
        if np.all(hi - lo <= 1e-10 * np.maximum(hi, 1e-300)):
            break
    return lo, hi


def simultaneous_intervals(counts, n: int, confidence: float = 0.95, method: str = "mass_weighted"):
    """Intervals (k, 2) for the basin fractions p_i of counts (k,) out of n inits that hold for all
    basins at once with probability >= ``confidence``; clipped to [0, 1] by construction.

    ``mass_weighted`` (default): basin i's interval inverts a two-sided binomial test of level
    alpha p_i (alpha = 1 - confidence): {p : P(Bin(n,p) >= c) > alpha p / 2 and P(Bin(n,p) <= c) > alpha
    p / 2}. The union bound gives P(some p_i outside) <= sum_i alpha p_i <= alpha over every basin of the
    landscape, seen or not, whatever their number: no count of basins enters. Lower end 0 for c <= 1.
    ``bonferroni``: Clopper-Pearson at level alpha / k, k = len(counts); guaranteed when counts list
    every basin of positive mass (k known), not when k is the number of basins seen (docs/statistics.md).
    """
    from scipy.special import betaincinv

    c = np.asarray(counts, np.float64)
    if n < 1 or not 0 < confidence < 1 or np.any(c < 0) or np.any(c > n) or np.any(c != np.round(c)):
        raise ValueError(f"counts must be integers in [0, n={n}], n >= 1 and confidence={confidence} in (0, 1)")
    alpha = 1.0 - confidence
    if method == "bonferroni":
        beta = alpha / max(c.size, 1)
        lo = np.where(c > 0, betaincinv(np.maximum(c, 1), n - c + 1, beta / 2), 0.0)
        hi = np.where(c < n, betaincinv(c + 1, np.maximum(n - c, 1), 1 - beta / 2), 1.0)
        return np.stack([lo, hi], axis=-1)
    if method != "mass_weighted":
        raise ValueError(f"method={method!r} must be 'mass_weighted' or 'bonferroni'")
    return _mass_weighted(c, np.full(c.shape, float(n)), np.full(c.shape, alpha))


def _mass_weighted(c, n, alpha):
    """The mass-weighted intervals (..., 2) of counts c out of n at levels alpha (arrays of one shape),
    by vectorized bisection over the distinct (c, n, alpha) triples."""
    from scipy.special import bdtr, bdtrc

    shape = np.shape(c)
    triples = np.stack([np.ravel(c), np.ravel(n), np.ravel(alpha)], axis=1).astype(np.float64)
    if triples.shape[0] == 0:
        return np.zeros(shape + (2,))
    uniq, inv = np.unique(triples, axis=0, return_inverse=True)
    uc, ua = uniq[:, 0], uniq[:, 2]
    un = uniq[:, 1].astype(np.int64)  # scipy deprecates a non-integer n

    def upper_ok(p):
        """p not above the interval. P(Bin <= c) decreases in p and alpha p / 2 increases: one crossing."""
        return bdtr(uc, un, p) > ua * p / 2

    def lower_out(p):
        """p below the interval. P(Bin >= c) / p rises from 0 then falls to 1 (P(Bin >= c) is convex then
        concave in p), so the set where it is <= alpha / 2 is [0, L]."""
        return bdtrc(np.maximum(uc, 1) - 1, un, p) <= ua * p / 2

    # the median of Bin(n, c/n) is c: both conditions hold at p = c/n, which brackets both crossings
    _, hi = _bisect(upper_ok, uc / un, np.ones_like(uc))
    hi = np.where(uc >= un, 1.0, hi)
    lo, _ = _bisect(lower_out, np.zeros_like(uc), uc / un)
    lo = np.where(uc <= 1, 0.0, lo)
    return np.stack([lo, hi], axis=-1)[np.ravel(inv)].reshape(shape + (2,))


def richness(counts, confidence: float = 0.95) -> dict:
    """Chao1 (bias-corrected, Chao 2005) estimate of the number of optima with an interval, from the
    inits per optimum found (counts; zeros ignored; n = their sum).

    S = S_obs + (n-1)/n f1 (f1 - 1) / (2 (f2 + 1)), f_j the optima reached exactly j times; the interval is
    Chao's (1987) log-normal one for the unseen part T = S - S_obs, [S_obs + T/K, S_obs + T K],
    K = exp(z sqrt(ln(1 + var / T^2))), so its lower end is >= S_obs. When T = 0 (f1 <= 1) the interval is
    S_obs / (1 - P) -+ z sqrt(var_obs) / (1 - P), P = sum_j f_j e^{-j} / S_obs, clipped below at S_obs.
    Chao1 estimates a lower bound of the number of optima: basins too small to be reached are invisible
    to any estimator (docs/statistics.md); :func:`miss_bound` bounds their mass.
    """
    from scipy.special import ndtri

    c = np.asarray(counts).ravel()
    c = c[c > 0].astype(np.int64)
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence} must be in (0, 1)")
    s_obs, n = int(c.size), int(c.sum())
    if n == 0:
        return {"chao1": 0.0, "low": 0.0, "high": float("inf"), "observed": 0, "f1": 0, "f2": 0,
                "variance": float("nan"), "confidence": confidence}
    z = float(ndtri(0.5 + confidence / 2))
    f1, f2 = int(np.sum(c == 1)), int(np.sum(c == 2))
    a = (n - 1) / n
    t = a * f1 * (f1 - 1) / (2 * (f2 + 1))
    s = s_obs + t
    if t > 0:
        if f2 > 0:
            var = (a * f1 * (f1 - 1) / (2 * (f2 + 1)) + a * a * f1 * (2 * f1 - 1) ** 2 / (4 * (f2 + 1) ** 2)
                   + a * a * f1 * f1 * f2 * (f1 - 1) ** 2 / (4 * (f2 + 1) ** 4))
        else:
            var = a * f1 * (f1 - 1) / 2 + a * a * f1 * (2 * f1 - 1) ** 2 / 4 - a * a * f1 ** 4 / (4 * s)
        k = np.exp(z * np.sqrt(np.log1p(var / t ** 2)))
        low, high = s_obs + t / k, s_obs + t * k
    else:
        e = np.exp(-c.astype(np.float64))
        var = float(np.sum(e - e * e) - np.sum(c * e) ** 2 / n)
        p = float(np.sum(e)) / s_obs
        half = z * np.sqrt(max(var, 0.0)) / (1 - p)
        low, high = max(s_obs, s_obs / (1 - p) - half), s_obs / (1 - p) + half
    return {"chao1": float(s), "low": float(low), "high": float(high), "observed": s_obs, "f1": f1, "f2": f2,
            "variance": float(var), "confidence": confidence}


def basin_statistics(counts, n: int, confidence: float = 0.95) -> dict:
    """The three answers of docs/statistics.md for one run, JSON-ready: ``counts`` the inits per optimum
    found, ``n`` all inits (converged or not; the masses are fractions of all inits, and Chao1 counts
    the converged ones, sum(counts)).

    {"miss_bound": eps, "miss_phrase": str, "intervals": [[lo, hi], ...] in the order of counts,
    "interval_method": "mass_weighted", "richness": :func:`richness`, "confidence": confidence} and
    the share of the inits they speak for, :func:`coverage` of the converged inits sum(counts): without
    ``claims`` (few converged) the miss bound and Chao1 are kept in the record but claim nothing.
    """
    c = np.asarray(counts)
    if c.sum() > n:
        raise ValueError(f"the counts sum to {int(c.sum())} > n={n} inits")
    return {"miss_bound": miss_bound(n, confidence), "miss_phrase": miss_phrase(n, confidence),
            "intervals": simultaneous_intervals(c, n, confidence).tolist(), "interval_method": "mass_weighted",
            "richness": richness(c, confidence), "confidence": confidence, **coverage(int(c.sum()), n)}


MIN_CONVERGED_SHARE = 0.9  # below this share of converged inits a run claims nothing about missed optima


def coverage(converged: int, n: int, min_share: float = MIN_CONVERGED_SHARE) -> dict:
    """Which share of the inits a run's statistics speak for (docs/statistics.md section 7): the
    ``converged`` of the ``n`` inits, each counted in the basin of the optimum it reached; the others
    reached none, and the optimum each would reach is unknown.

    Every statement of :func:`basin_statistics` is about the event "init converges to optimum i", exact
    for it: the intervals bound the share of all inits that converged to i, the miss bound the optima that
    a share >= eps of all inits converged to, Chao1 the optima the converged inits reach. None of them
    says where the n - converged others go: an optimum reached only by them (a kink maximum that power
    iteration circles, say) may hold up to their share of the landscape and be missing from the table,
    and the converged inits may be a biased part of it. So a run claims nothing about missed optima or
    their number when fewer than ``min_share`` of its inits converged (``claims`` False), and otherwise
    says the claims cover the converged share (``converged_share``).
    """
    if n < 1 or not 0 <= converged <= n or not 0 < min_share <= 1:
        raise ValueError(f"converged={converged} must lie in [0, n={n}], n >= 1 and min_share={min_share} in (0, 1]")
    share = converged / n
    return {"converged": int(converged), "converged_share": share, "min_converged_share": min_share,
            "claims": bool(share >= min_share)}


def tipping_intervals(overlaps, confidence: float = 0.95) -> list:
    """Simultaneous intervals for every entry of one or more tipping matrices P = O / row sums.

    ``overlaps``: a list of count matrices O (k_a, k_b + 1) (the last column: inits that did not
    converge), O[a, b] the inits of basin a at one value that land in b at the next. Returns one array
    (k_a, k_b + 1, 2) per matrix: every entry of every matrix inside its interval with probability
    >= ``confidence``, whatever the number of basins.

    Given the basins at the first value, the n_a inits of basin a land independently (init i is one
    point, drawn uniformly from basin a), so row a is Multinomial(n_a, P[a]); its entries get the
    mass-weighted intervals of :func:`simultaneous_intervals` at level alpha_a = alpha n_a / N over
    all the rows of all the matrices (N = sum of all n_a), which miss together with probability
    <= sum_b alpha_a P[a, b] = alpha_a; the conditional errors sum to <= alpha, so the bound holds
    unconditionally (docs/statistics.md section 6). Rows with n_a = 0 get [0, 1].
    """
    mats = [np.asarray(O, np.int64) for O in overlaps]
    if not 0 < confidence < 1 or any(O.ndim != 2 or np.any(O < 0) for O in mats):
        raise ValueError(f"overlaps must be 2-D non-negative counts and confidence={confidence} in (0, 1)")
    total = max(sum(int(O.sum()) for O in mats), 1)
    out = []
    for O in mats:
        n_a = np.broadcast_to(O.sum(axis=1, keepdims=True), O.shape)
        ci = _mass_weighted(O, np.maximum(n_a, 1), (1 - confidence) * n_a / total)
        out.append(np.where((n_a > 0)[..., None], ci, [0.0, 1.0]))
    return out
