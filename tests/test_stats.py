"""Basin statistics: Wilson intervals, their overlaps, Pearson's chi-square p-value, the unseen mass, the
per-basin miss bound, simultaneous intervals, Chao1, and their coverage by simulation."""

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


# ---- per-basin miss bound, simultaneous intervals, richness, and their coverage (docs/statistics.md) ------

def _union(eps, n):
    return np.floor(1 / eps) * (1 - eps) ** n


@pytest.mark.parametrize("n", [1, 10, 757, 10_000, 1_000_000])
def test_miss_bound_is_the_smallest_eps_of_the_union_bound(n):
    """The returned eps satisfies floor(1/eps)(1-eps)^n <= 0.05 and a dense grid finds no smaller one."""
    eps = stats.miss_bound(n)
    assert _union(eps, n) <= 0.05 < _union(eps * (1 - 1e-9), n)
    grid = np.geomspace(eps / 4, eps, 200_001)
    ok = grid[_union(grid, n) <= 0.05]
    assert ok.min() >= eps * (1 - 1e-12) and ok.min() - eps <= 2 * (grid[-1] - grid[-2])


def test_inits_for_miss_inverts_the_bound_and_beats_the_simple_sufficient_count():
    assert stats.inits_for_miss(0.01) == 757 and _union(0.01, 756) > 0.05 >= _union(0.01, 757)
    for eps in (0.3, 0.01, 1e-3, 1e-4):
        n = stats.inits_for_miss(eps)
        assert stats.miss_bound(n) <= eps < stats.miss_bound(n - 1) if n > 1 else stats.miss_bound(1) <= eps
        assert n <= np.log(1 / (eps * 0.05)) / eps + 1  # the sufficient ln(1/(eps delta))/eps
    assert stats.inits_for_miss(0.001, confidence=0.99) > stats.inits_for_miss(0.001)
    for bad in (lambda: stats.miss_bound(0), lambda: stats.inits_for_miss(0.0), lambda: stats.miss_bound(5, 1.0)):
        with pytest.raises(ValueError):
            bad()


def test_miss_phrase_rounds_the_bound_up():
    assert stats.miss_phrase(10_000) == "no optimum with a basin >= 0.1% of inits was missed (95%)"
    eps = stats.miss_bound(100_000, 0.99)  # 1.35e-4
    phrase = stats.miss_phrase(100_000, 0.99)
    pct = float(phrase.split(">= ")[1].split("%")[0])
    assert eps * 100 <= pct <= eps * 100 * 1.1 and phrase.endswith("(99%)")


def test_miss_bound_is_nearly_attained_on_its_worst_case():
    """floor(1/eps) basins of mass eps exactly: P(one unseen) by inclusion-exclusion is <= 5% and close to
    it (the union bound is tight here), and a simulation agrees."""
    from math import comb

    n = 2000
    eps = stats.miss_bound(n)
    k = int(np.floor(1 / eps))
    p_miss = sum((-1) ** (j + 1) * comb(k, j) * (1 - j * eps) ** n for j in range(1, k + 1) if j * eps < 1)
    assert 0.045 < p_miss <= 0.05
    p = np.r_[np.full(k, eps), 1 - k * eps]
    counts = np.random.default_rng(1).multinomial(n, p, size=4000)
    assert abs(np.mean(np.any(counts[:, :k] == 0, axis=1)) - p_miss) < 4 * np.sqrt(p_miss / 4000)


def _acceptance_by_enumeration(n, c, p_grid, alpha):
    """Brute force: the grid points p where c is inside the binomial test of level alpha p (exact pmf)."""
    from math import comb

    pmf = np.array([[comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(n + 1)] for p in p_grid])
    upper_tail = pmf[:, c:].sum(1)  # P(X >= c)
    lower_tail = pmf[:, :c + 1].sum(1)  # P(X <= c)
    return (upper_tail > alpha * p_grid / 2) & (lower_tail > alpha * p_grid / 2)


def test_mass_weighted_intervals_invert_the_test_found_by_enumeration():
    n, alpha = 30, 0.05
    grid = np.linspace(1e-6, 1, 2001)
    ci = stats.simultaneous_intervals(np.arange(n + 1), n)
    for c in range(n + 1):
        inside = _acceptance_by_enumeration(n, c, grid, alpha)
        assert np.all(np.diff(inside.astype(int)) != 2)  # one interval
        lo, hi = grid[inside].min(), grid[inside].max()
        step = grid[1] - grid[0]
        assert lo - step - 1e-12 <= ci[c, 0] <= lo + 1e-12
        assert hi - 1e-12 <= ci[c, 1] <= hi + step + 1e-12


def test_mass_weighted_ends_solve_their_equations_at_large_n():
    """The interval ends are the crossings P(Bin >= c) = alpha L / 2 and P(Bin <= c) = alpha U / 2."""
    from scipy.special import bdtr, bdtrc

    for n in (10**4, 10**6):
        c = np.array([0, 1, 2, 3, 40, n // 700, n // 2, n])
        ci = stats.simultaneous_intervals(c, n)
        np.testing.assert_allclose(bdtrc(c[2:] - 1, n, ci[2:, 0]), 0.025 * ci[2:, 0], rtol=1e-8)
        np.testing.assert_allclose(bdtr(c[:-1], n, ci[:-1, 1]), 0.025 * ci[:-1, 1], rtol=1e-8)
        assert np.all(ci[:2, 0] == 0) and ci[-1, 1] == 1 and np.all(ci[:, 0] <= c / n) and np.all(c / n <= ci[:, 1])


def test_basin_statistics_counts_all_inits_for_masses_and_converged_ones_for_richness():
    import json

    counts, n = np.array([600, 300, 40, 2, 1, 1]), 1000  # 56 inits did not converge
    out = json.loads(json.dumps(stats.basin_statistics(counts, n)))
    assert out["miss_bound"] == stats.miss_bound(1000) and out["miss_phrase"] == stats.miss_phrase(1000)
    np.testing.assert_array_equal(out["intervals"], stats.simultaneous_intervals(counts, 1000))
    assert out["richness"] == stats.richness(counts) and stats.richness(counts)["chao1"] == pytest.approx(
        6 + 943 / 944 * 2 * 1 / (2 * 2))
    with pytest.raises(ValueError):
        stats.basin_statistics(counts, 900)


def test_bonferroni_clopper_pearson_endpoints_solve_the_binomial_tails():
    from scipy.special import bdtr, bdtrc

    counts, n = np.array([0, 1, 7, 300, 1000]), 1000
    ci = stats.simultaneous_intervals(counts, n, method="bonferroni")
    tail = 0.05 / counts.size / 2
    np.testing.assert_allclose(bdtrc(counts[1:] - 1, n, ci[1:, 0]), tail, rtol=1e-8)
    np.testing.assert_allclose(bdtr(counts[:-1], n, ci[:-1, 1]), tail, rtol=1e-8)
    assert ci[0, 0] == 0 and ci[-1, 1] == 1 and np.all((0 <= ci) & (ci <= 1))
    with pytest.raises(ValueError):
        stats.simultaneous_intervals([3], 10, method="goodman")
    with pytest.raises(ValueError):
        stats.simultaneous_intervals([11], 10)


def _distributions():
    z, g = 1.0 / np.arange(1, 701), 0.99 ** np.arange(700)
    return {"10 large + 500 at 1e-4": np.r_[np.full(10, 0.095), np.full(500, 1e-4)],
            "Zipf, 700": z / z.sum(), "geometric 0.99^k, 700": g / g.sum(), "uniform, 700": np.full(700, 1 / 700)}


def _exact_noncoverage(p, n, method):
    """sum_i P(p_i outside basin i's interval), exactly from the binomial pmf: the union bound on the
    simultaneous non-coverage (<= alpha for a valid method)."""
    from scipy.special import bdtr, bdtrc

    ci = stats.simultaneous_intervals(np.arange(n + 1), n)
    if method == "bonferroni":  # level alpha / k with k the true number of basins
        from scipy.special import betaincinv

        c, b = np.arange(n + 1.0), 0.05 / p.size
        ci = np.stack([np.where(c > 0, betaincinv(np.maximum(c, 1), n - c + 1, b / 2), 0),
                       np.where(c < n, betaincinv(c + 1, np.maximum(n - c, 1), 1 - b / 2), 1)], -1)
    c_min = np.searchsorted(ci[:, 1], p, side="left")  # first c whose upper end reaches p
    c_max = np.searchsorted(ci[:, 0], p, side="right") - 1  # last c whose lower end is <= p
    return float(np.sum(np.where(c_min > 0, bdtr(c_min - 1, n, p), 0) + bdtrc(c_max, n, p)))


@pytest.mark.parametrize("n", [1000] + [pytest.param(n, marks=pytest.mark.slow) for n in (3000, 10_000)])
def test_simultaneous_intervals_exact_union_bound_on_known_distributions(n):
    for p in _distributions().values():
        assert _exact_noncoverage(p, n, "mass_weighted") <= 0.05
        assert _exact_noncoverage(p, n, "bonferroni") <= 0.05


def _simulate(p, n, reps, rng):
    """Coverage of every new bound, and of two intervals too narrow on purpose, in ``reps`` multinomial
    draws of n inits from the basin masses p; mean interval widths over the basins seen; Chao1's mean."""
    from scipy.special import ndtri

    counts = rng.multinomial(n, p, size=reps)
    eps = stats.miss_bound(n)
    uniq, inv = np.unique(counts, return_inverse=True)
    ci = stats.simultaneous_intervals(uniq, n)[inv.reshape(counts.shape)]
    seen = counts > 0
    out = {"miss": np.mean(~np.any((counts == 0) & (p >= eps), axis=1)),
           "mass_weighted": np.mean(np.all((ci[..., 0] <= p) & (p <= ci[..., 1]), axis=1)),
           "width_mass_weighted": np.sum((ci[..., 1] - ci[..., 0]) * seen) / np.sum(seen)}
    rows = {k: [] for k in ("bonferroni_seen", "wilson", "wald_bonferroni", "chao1", "chao1_low", "chao1_mean",
                            "width_bonferroni_seen", "width_wilson")}
    for c in counts:
        cs, ps = c[c > 0], p[c > 0]
        q, zb = cs / n, ndtri(1 - 0.05 / (2 * cs.size))
        wald = np.stack([q - zb * np.sqrt(q * (1 - q) / n), q + zb * np.sqrt(q * (1 - q) / n)], -1)
        for key, iv in (("bonferroni_seen", stats.simultaneous_intervals(cs, n, method="bonferroni")),
                        ("wilson", stats.wilson_interval(cs, n)), ("wald_bonferroni", wald)):
            rows[key].append(np.all((iv[:, 0] <= ps) & (ps <= iv[:, 1])))
            if "width_" + key in rows:
                rows["width_" + key].append(np.sum(iv[:, 1] - iv[:, 0]))
        r = stats.richness(cs)
        rows["chao1"].append(r["low"] <= np.sum(p > 0) <= r["high"])
        rows["chao1_low"].append(r["low"] <= np.sum(p > 0))
        rows["chao1_mean"].append(r["chao1"])
    out.update({k: float(np.mean(v)) for k, v in rows.items() if not k.startswith("width")})
    for k in ("width_bonferroni_seen", "width_wilson"):
        out[k] = float(np.sum(rows[k]) / np.sum(seen))
    return out


def _below(coverage, reps, nominal=0.95):
    """One-sided binomial p-value of a coverage this low if the true coverage were ``nominal``."""
    from scipy.stats import binom

    return float(binom.cdf(round(coverage * reps), reps, nominal))


@pytest.mark.slow  # 3.7 s of simulation
def test_coverage_of_the_new_bounds_by_simulation_and_detection_of_narrow_intervals():
    """The per-basin miss bound and the mass-weighted intervals cover at >= 95% (no significant shortfall)
    on distributions with many rare basins; pointwise Wilson intervals and Wald intervals with a
    Bonferroni z are detected as under-covering."""
    rng, reps = np.random.default_rng(0), 300
    wald_low = []
    for name, p in _distributions().items():
        for n in (1000, 10_000):
            cov = _simulate(p, n, reps, rng)
            assert cov["miss"] >= 0.95 and _below(cov["mass_weighted"], reps) > 1e-3, (name, n, cov)
            assert _below(cov["wilson"], reps) < 1e-6, (name, n, cov)  # 500-700 pointwise intervals
            wald_low.append(_below(cov["wald_bonferroni"], reps))
    assert min(wald_low) < 1e-6 and sum(w < 1e-3 for w in wald_low) >= 4


def test_bonferroni_over_the_basins_seen_fails_on_a_continuum_of_tiny_basins():
    """10 basins of 0.095 and 5% of the mass spread over basins too small to be reached twice: a basin seen
    once has Clopper-Pearson lower end > 0 (its true mass ~ 0), so Bonferroni over the basins seen
    under-covers; the mass-weighted intervals (lower end 0 for a count of 1) keep their level."""
    rng, reps, n = np.random.default_rng(2), 300, 2000
    big = rng.multinomial(n, np.r_[np.full(10, 0.095), 0.05], size=reps)
    mw = bonf = 0
    for row in big:
        counts = np.r_[row[:10], np.ones(row[10], int)]  # each tail init in its own basin of mass ~0
        p = np.r_[np.full(10, 0.095), np.zeros(row[10])]
        for method in ("mass_weighted", "bonferroni"):
            iv = stats.simultaneous_intervals(counts, n, method=method)
            ok = np.all((iv[:, 0] <= p) & (p <= iv[:, 1]))
            mw, bonf = (mw + ok, bonf) if method == "mass_weighted" else (mw, bonf + ok)
    assert mw / reps >= 0.93 and bonf / reps < 0.01


def test_richness_variance_is_chao_delta_method_by_autodiff():
    """f2 = 0: the variance equals the delta method with multinomial covariances cov(f_i, f_j) =
    f_i (delta_ij - f_j / S) exactly; f2 > 0: Chao's form is f0 + the Poisson delta method of f0 (the
    -1/S terms dropped), within 1% of the full one."""
    import jax
    import jax.numpy as jnp

    def s_hat(f, n):
        return jnp.sum(f) + (n - 1) / n * f[0] * (f[0] - 1) / (2 * (f[1] + 1))

    for f, counts in (([12, 0, 5, 4], [1] * 12 + [3] * 5 + [4] * 4),
                      ([7, 3, 5, 4], [1] * 7 + [2] * 3 + [3] * 5 + [9] * 4)):
        f = jnp.array(f, jnp.float64)
        n = sum(counts)
        r = stats.richness(np.array(counts + [0, 0]))
        assert r["chao1"] == pytest.approx(float(s_hat(f, n)), rel=1e-14) and r["observed"] == len(counts)
        g = jax.grad(s_hat)(f, n)
        full = float(g @ (jnp.diag(f) - jnp.outer(f, f) / s_hat(f, n)) @ g)
        if f[1] == 0:
            assert r["variance"] == pytest.approx(full, rel=1e-12)
        else:
            g0 = jax.grad(lambda f: s_hat(f, n) - jnp.sum(f))(f)
            assert r["variance"] == pytest.approx(float(s_hat(f, n) - f.sum() + g0 ** 2 @ f), rel=1e-12)
            assert r["variance"] == pytest.approx(full, rel=0.01)
        t = r["chao1"] - r["observed"]
        k = np.exp(1.959963984540054 * np.sqrt(np.log(1 + r["variance"] / t ** 2)))
        assert (r["low"], r["high"]) == pytest.approx((r["observed"] + t / k, r["observed"] + t * k), rel=1e-12)


def test_richness_without_singletons_and_edge_cases():
    r = stats.richness([5, 6, 7, 1])  # f1 = 1: the bias-corrected estimate adds nothing
    assert r["chao1"] == 4 and r["low"] == 4 <= r["high"] < 6 and r["f1"] == 1
    r = stats.richness([50, 60, 70])
    assert r["chao1"] == 3 and 3 == r["low"] <= r["high"] < 3.01
    assert stats.richness([])["high"] == float("inf") and stats.richness([0, 0])["observed"] == 0
    with pytest.raises(ValueError):
        stats.richness([1, 2], confidence=1.0)


def test_richness_is_nearly_unbiased_when_basins_are_equal():
    """Uniform 700 basins at n = 1000 (many seen once): Chao1's mean is within 3% of 700, while the count
    of basins seen is 24% short."""
    counts = np.random.default_rng(3).multinomial(1000, np.full(700, 1 / 700), size=100)
    est = np.array([stats.richness(c)["chao1"] for c in counts])
    seen = np.mean(np.sum(counts > 0, 1))
    assert abs(est.mean() / 700 - 1) < 0.03 and seen < 0.8 * 700


@pytest.mark.slow
def test_coverage_table():
    """The coverage study of docs/statistics.md (1000 draws per row; ``pytest tests/test_stats.py -m slow -k
    coverage_table -s`` prints it): every new bound covers at >= 95% up to sampling noise."""
    rng, reps = np.random.default_rng(0), 1000
    print("\n| basins | n | miss bound | mass-weighted | Bonferroni (seen) | Wilson | Wald-Bonf. | Chao1 2-sided "
          "| Chao1 low | Chao1 mean (S) | width MW / Bonf. / Wilson |")
    for name, p in _distributions().items():
        for n in (1000, 10_000, 100_000):
            cov = _simulate(p, n, reps, rng)
            print(f"| {name} | {n} | {cov['miss']:.3f} | {cov['mass_weighted']:.3f} | {cov['bonferroni_seen']:.3f} "
                  f"| {cov['wilson']:.3f} | {cov['wald_bonferroni']:.3f} | {cov['chao1']:.3f} | {cov['chao1_low']:.3f} "
                  f"| {cov['chao1_mean']:.0f} ({np.sum(p > 0)}) | {cov['width_mass_weighted']:.2g} / "
                  f"{cov['width_bonferroni_seen']:.2g} / {cov['width_wilson']:.2g} |", flush=True)
            assert cov["miss"] >= 0.95 and _below(cov["mass_weighted"], reps) > 1e-3, (name, n, cov)


def _covers(cis, mats, overlaps) -> bool:
    """Every entry of every row that has inits inside its interval."""
    return all(np.all(((ci[..., 0] <= P) & (P <= ci[..., 1]))[O.sum(axis=1) > 0]) for ci, P, O in zip(cis, mats, overlaps))


@pytest.mark.slow  # 4 s; fast: the coverage of the other new bounds below
def test_tipping_intervals_cover_every_entry_of_every_matrix_together():
    """Simulated paired tipping: basins at v0 with masses q (many rare ones), each basin's inits spread by
    its own row of P (rare destinations included); the joint coverage of all entries of two steps at
    once is >= 95% (each row conditionally multinomial, alpha split by row size). Per-row Wilson
    intervals, each right on its own, are jointly right far less often."""
    rng = np.random.default_rng(3)
    k = 40
    q = np.r_[np.full(5, 0.18), np.full(k - 5, 0.1 / (k - 5))]
    mats = [rng.dirichlet(np.r_[np.full(6, 0.3), np.full(k - 5, 0.02)], size=k) for _ in range(2)]
    n, draws, ok, wilson_ok = 2000, 200, 0, 0
    for _ in range(draws):
        labels = rng.choice(k, size=n, p=q)
        overlaps = [np.stack([rng.multinomial(np.sum(labels == a), P[a]) for a in range(k)]) for P in mats]
        ok += _covers(stats.tipping_intervals(overlaps), mats, overlaps)
        wilson = [np.stack([stats.wilson_interval(O[a], max(O[a].sum(), 1)) for a in range(k)]) for O in overlaps]
        wilson_ok += _covers(wilson, mats, overlaps)
    print(f"tipping intervals: joint coverage {ok / draws:.3f}, per-row Wilson {wilson_ok / draws:.3f} ({draws} draws)")
    assert ok / draws >= 0.95 - 2 * np.sqrt(0.05 * 0.95 / draws), ok / draws
    assert wilson_ok / draws < 0.5, wilson_ok / draws
    with pytest.raises(ValueError, match="non-negative counts"):
        stats.tipping_intervals([np.array([[-1, 2]])])
    empty = stats.tipping_intervals([np.array([[0, 0], [3, 1]])])[0]
    np.testing.assert_array_equal(empty[0], [[0.0, 1.0], [0.0, 1.0]])  # a basin of no init: anything


def test_coverage_says_which_share_the_statistics_speak_for_and_claims_nothing_below_it():
    """basin_statistics speaks for the converged inits, sum(counts) of n; below MIN_CONVERGED_SHARE it claims
    nothing (the record keeps the numbers); the boundary is inclusive, and bad arguments are refused."""
    assert stats.MIN_CONVERGED_SHARE == 0.9
    out = stats.basin_statistics([600, 300, 40, 2, 1, 1], 1000)  # 944 of 1000 converged
    assert out["converged"] == 944 and out["converged_share"] == 0.944 and out["claims"]
    assert out["min_converged_share"] == stats.MIN_CONVERGED_SHARE
    assert stats.basin_statistics([899], 1000)["claims"] is False and stats.basin_statistics([900], 1000)["claims"]
    none = stats.basin_statistics([], 50)
    assert none["converged"] == 0 and none["converged_share"] == 0.0 and not none["claims"]
    assert none["miss_bound"] == stats.miss_bound(50)  # kept for a reader, claimed by nobody
    assert stats.coverage(5, 10, min_share=0.5)["claims"] and not stats.coverage(4, 10, min_share=0.5)["claims"]
    for bad in ((11, 10), (-1, 10), (0, 0)):
        with pytest.raises(ValueError):
            stats.coverage(*bad)
