"""ccdyn.one_layer.kink_probe (numpy only): the probe's energies, r_geo and the judgement rule.

The kink points are found without ccdyn: in d = 3 every crossing of two hyperplanes, w = +-x_i x x_j / |.|,
is a candidate; r_geo > 0 must mean no rise anywhere in the geodesic ball of that radius (random points at
random radii up to r_geo, and r_geo itself), and a candidate whose multipliers leave (0, 1) must be exceeded at
a small radius (it is not a maximum)."""

import ast
import inspect

import numpy as np
import pytest

from ccdyn.one_layer import kink_probe as kp


def _cloud(seed, n=10, d=3):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)), np.full(n, 1.0 / n)


def _crossings(x):
    out = []
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            c = np.cross(x[i], x[j])
            out += [c / np.linalg.norm(c), -c / np.linalg.norm(c)]
    return out


def _ball_rise(x, p, w, tau, r_max, rng, m=1500):
    """Largest F(v) - F(w) over m random points v at geodesic distance uniform in (0, r_max] (and r_max)."""
    t = rng.standard_normal((m, w.size))
    t -= np.outer(t @ w, w)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    r = np.concatenate([rng.uniform(0, r_max, m // 2), np.full(m - m // 2, r_max)])[:, None]
    return float(np.max(kp.potential(x, p, np.cos(r) * w + np.sin(r) * t, tau)) - kp.potential(x, p, w, tau)[0])


def test_c3_is_the_largest_third_derivative_factor():
    v = np.linspace(-12, 12, 240_001)
    grid = np.max(np.abs(v ** 3 - 3 * v) * np.exp(-v ** 2 / 2))
    assert grid <= kp.C3 < grid + 1e-8


def test_the_module_imports_nothing_of_ccdyn():
    tree = ast.parse(inspect.getsource(kp))
    mods = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + \
        [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not any(m and m.startswith("ccdyn") for m in mods)


@pytest.mark.parametrize("tau", [None, 1.0])
def test_r_geo_is_a_radius_where_no_point_rises(tau):
    x, p = _cloud(6, n=8)
    rng = np.random.default_rng(0)
    certified = refused = 0
    for w in _crossings(x):
        geo = kp.extent(x, p, w, tau)
        if geo["r_geo"] > 0:
            certified += 1
            assert geo["kink_views"] == 2 and 0 < geo["r_geo"] <= geo["rho"]
            assert _ball_rise(x, p, w, tau, geo["r_geo"], rng) < 0
        elif geo["reason"] == "a multiplier outside (0, 1)" and min(geo["multipliers"]) < -1e-3 or \
                geo["reason"] == "a multiplier outside (0, 1)" and max(geo["multipliers"]) > 1 + 1e-3:
            refused += 1
            assert _ball_rise(x, p, w, tau, min(1e-3, geo["rho"] / 2), rng) > 0
    assert certified >= 3 and refused >= 10


def test_uniform_alpha_exact_along_each_geodesic_and_the_bound_below_every_first_rise():
    """E(w(r)) - E(w) = 1/2 sin r cos r (tan r Q + 2 L) inside rho; the first radius where it turns positive,
    per direction, is never below r_geo."""
    x, p = _cloud(6, n=8)
    rng = np.random.default_rng(1)
    done = 0
    for w in _crossings(x):
        geo = kp.extent(x, p, w)
        if geo["r_geo"] <= 0:
            continue
        a = np.maximum(x @ w, 0) * (np.abs(x @ w) > 1e-9)
        for t in rng.standard_normal((100, 3)):
            t -= (t @ w) * w
            t /= np.linalg.norm(t)
            b = np.where(np.abs(x @ w) <= 1e-9, np.maximum(x @ t, 0), np.where(x @ w > 0, x @ t, 0))
            L = p @ ((a - p @ a) * b)
            Q = p @ (b - p @ b) ** 2 - p @ (a - p @ a) ** 2
            r = 0.5 * geo["rho"]
            got = kp.potential(x, p, np.cos(r) * w + np.sin(r) * t)[0] - kp.potential(x, p, w)[0]
            assert got == pytest.approx(0.5 * np.sin(r) * np.cos(r) * (np.tan(r) * Q + 2 * L), abs=1e-14)
            if Q > 0:
                assert np.arctan(-2 * L / Q) >= geo["r_geo"] * (1 - 1e-12)
        done += 1
    assert done >= 3


def test_a_smooth_maximum_and_a_point_off_the_optimum():
    """No view on a kink: r_geo is the distance to the nearest hyperplane (uniform alpha is quadratic there,
    a top eigenvector of the region matrix is its maximum); a point 1e-3 rad off is not stationary."""
    x, p = _cloud(0, n=12)
    w = np.ones(3) / np.sqrt(3)
    for _ in range(300):  # the region's top eigenvector, by power iteration on its covariance
        g = (x @ w > 0)[:, None] * x
        c = g.T @ (p[:, None] * g) - np.outer(g.T @ p, g.T @ p)
        w = c @ w / np.linalg.norm(c @ w)
    geo = kp.extent(x, p, w)
    assert geo["kink_views"] == 0 and geo["r_geo"] == geo["rho"] > 0
    assert _ball_rise(x, p, w, None, geo["r_geo"], np.random.default_rng(2)) < 0
    off = kp.extent(x, p, np.cos(1e-3) * w + np.sin(1e-3) * np.cross(w, x[0]) / np.linalg.norm(np.cross(w, x[0])))
    assert off["r_geo"] == 0 and off["reason"] == "not stationary on the kinks' intersection"


def test_judge():
    radii = (1e-6, 1e-4, 1e-2)
    assert kp.judge(radii, [-1, -1, -1], 1e-3) == "strict max"
    assert kp.judge(radii, [-1, -1, 1e-9], 1e-3) == "narrow max"
    assert kp.judge(radii, [-1, 1e-9, -1], 1e-5) == "narrow max"
    assert kp.judge(radii, [-1, 1e-9, -1], 1e-3) == "not a max"
    assert kp.judge(radii, [-1, -1, -1], 0.0) == "max by the probe only"
    assert kp.judge(radii, [-1, -1, 1e-9], 0.0) == "not a max"
    assert list(kp.count_judgements([{"judgement": "narrow max"}]).values()) == [0, 1, 0, 0]
