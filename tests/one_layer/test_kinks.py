"""Kink optima of the ReLU energy (ccdyn/one_layer/kinks.py) against independent routes: one-sided fields by
finite differences, multipliers in closed form, refinement against a dense grid in d = 3, and every optimum
labelled stable against a float64 perturbation probe written here in numpy (energy computed outside ccdyn)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.spatial import cKDTree

from ccdyn import activations, data, pairwise
from ccdyn.one_layer import basins, certify, dynamics, engine, kinks

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def _numpy_energy(x, p, W):
    """E(w) = 1/2 sum_i p_i (h_i - sum_j p_j h_j)^2 with h = relu(x w), uniform alpha, plain numpy."""
    f = np.maximum(W @ x.T, 0.0)
    return 0.5 * np.sum(p * (f - (f @ p)[:, None]) ** 2, axis=1)


def _probe_rise(x, p, w, rng, n_dirs=1000):
    """Largest E(probe) - E(w) over probes at 1e-6 .. 1e-2 rad along n_dirs random tangent directions."""
    dirs = rng.standard_normal((n_dirs, w.size))
    dirs -= np.outer(dirs @ w, w)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    e0 = _numpy_energy(x, p, w[None])[0]
    return max(np.max(_numpy_energy(x, p, np.cos(r) * w + np.sin(r) * dirs)) - e0
               for r in (1e-6, 1e-5, 1e-4, 1e-3, 1e-2))


@pytest.mark.parametrize("name,kind", [("relu", "uniform"), ("leaky_relu", "uniform"), ("relu", "gaussian")])
def test_one_sided_fields_are_affine_in_the_gates(name, kind):
    """The field just off a point on two hyperplanes, on each of the 4 sides, is u_0 + sum_i g_i c_i x_i."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 4)) + np.array([0.7, 0.0, 0.0, 0.0])
    ds = data.make_dataset(x, dtype=jnp.float64)
    act, pw = activations.get_activation(name), pairwise.get_pairwise(kind, 1.0)
    xs = x[:2]
    w = rng.standard_normal(4)
    w -= xs.T @ np.linalg.solve(xs @ xs.T, xs @ w)  # on both hyperplanes
    w /= np.linalg.norm(w)
    c = np.asarray(kinks.gate_coefficients(ds, act, pw, jnp.asarray(w)))[:2]
    base = np.asarray(x @ w > 0)
    base[:2] = False
    u0 = np.asarray(kinks.one_sided_field(ds, act, pw, jnp.asarray(w), jnp.asarray(base)))
    dual = xs.T @ np.linalg.inv(xs @ xs.T)  # x_j^T dual_i = delta_ij
    for g in itertools.product((0, 1), repeat=2):
        want = u0 + sum(gi * ci * xi for gi, ci, xi in zip(g, c, xs))
        for eps in (1e-6, 1e-8):
            we = w + eps * dual @ (2 * np.asarray(g) - 1.0)
            got = np.asarray(dynamics.ascent(ds, act, jnp.asarray(we / np.linalg.norm(we))[None], pw))[0]
            assert np.max(np.abs(got - want)) <= 50 * eps * np.max(np.abs(want)), (g, eps)
        assert np.max(np.abs(want - u0)) > 1e-3 * np.max(np.abs(u0)) or not any(g)  # the gates matter


def _hand_made(xb, xc):
    """2-D: x_a = (0, 1) active at w = (1, 0); x_b, x_c given; p = 1/3 each."""
    x = np.array([[0.0, 1.0], xb, xc])
    return x, data.make_dataset(x, dtype=jnp.float64)


def _ref(w, x, active):
    return {"w": jnp.asarray([w]), "sign": jnp.asarray([x @ w > 0]), "active": jnp.asarray([[active]], jnp.int32),
            "active_mask": jnp.asarray([[True]]), "status": np.array([1]), "iterations": np.array([0])}


@pytest.mark.slow  # 4 s; fast: every stable optimum against an independent float64 probe
def test_multipliers_match_the_closed_form():
    """x_b = (1, 2), x_c = (1, -1). At w = (1, 0): s = (0, 1, 1), L s = p (s - 2/3) = (-2/9, 1/9, 1/9), so
    c_a = -2/9, u_0 = (x_b + x_c) / 9 = (2/9, 1/9) and lam = -x_a^T u_0 / (c_a |x_a|^2) = 1/2, mu = 2/9."""
    x, ds = _hand_made([1.0, 2.0], [1.0, -1.0])
    w = np.array([1.0, 0.0])
    k = jax.device_get(kinks.kink_certificate(ds, RELU, UNIFORM, _ref(w, x, 0)))
    np.testing.assert_allclose(k["multipliers"][0, 0], 0.5, atol=1e-15)
    np.testing.assert_allclose(k["gate_coefficients"][0, 0], -2 / 9, atol=1e-15)
    np.testing.assert_allclose(k["mu"][0], 2 / 9, atol=1e-15)
    assert k["kkt_ok"][0] and k["smooth_ok"][0] and k["stationarity"][0] < 1e-15  # V cap T = {0} in 2-D
    # refined from a nearby start, certified as a kink maximum, and a maximum of E on the circle
    row = certify.assess(ds, RELU, UNIFORM, np.array([1.0, 0.01]))
    np.testing.assert_allclose(row["w"], w, atol=1e-15)
    assert row["certificate"] == "kink-kkt" and row["kink_rank"] == 1 and row["stable"]
    theta = np.linspace(-0.1, 0.1, 2001)
    e = _numpy_energy(x, np.full(3, 1 / 3), np.stack([np.cos(theta), np.sin(theta)], 1))
    assert np.argmax(e) == 1000


def test_a_kink_point_that_is_not_stationary_is_not_certified():
    """x_b = (1, 1), x_c = (1, -2): u_0 = (2/9, -1/9), lam = -(x_a^T u_0) / (c_a |x_a|^2) = -1/2, outside
    [0, 1]: E rises to first order on the negative side of x_a."""
    x, ds = _hand_made([1.0, 1.0], [1.0, -2.0])
    w = np.array([1.0, 0.0])
    k = jax.device_get(kinks.kink_certificate(ds, RELU, UNIFORM, _ref(w, x, 0)))
    np.testing.assert_allclose(k["multipliers"][0, 0], -0.5, atol=1e-15)
    assert not k["kkt_ok"][0] and k["one_sided_max"][0] > 0
    rows = certify.assess_many(ds, RELU, UNIFORM, jnp.asarray([w]), kink_ref=_ref(w, x, 0))
    assert rows[0]["certificate"] == "none" and not rows[0]["stable"]


def test_a_one_sided_saddle_refines_uphill():
    """Fig. 8's circle: at w = (0, 1) the view x = (1, 0) is on its hyperplane with multiplier 0: E falls
    to first order on its positive side (theta < pi/2) and the negative side's field vanishes there, but
    that side's critical point is not a maximum (E rises to second order towards 0.7 pi). The flow can
    stop next to it (the field is small there); refinement must leave it uphill to the dense grid's
    maximum at 0.7 pi, not certify or keep it."""
    ds = data.circle()
    half = np.array([[0.0, 1.0]])
    k = jax.device_get(kinks.kink_certificate(ds, RELU, UNIFORM, _ref(half[0], np.asarray(ds.x), 4)))
    assert k["stationarity"][0] < 1e-12 and k["flat_kinks"][0] == 1 and k["jacobian_v_max"][0] > 0
    theta = np.linspace(0.45, 0.75, 30001) * np.pi
    e = _numpy_energy(np.asarray(ds.x), np.asarray(ds.p), np.stack([np.cos(theta), np.sin(theta)], 1))
    assert e[4999] < e[5000] < e[5001] and np.argmax(e) == np.argmin(np.abs(theta - 0.7 * np.pi))
    for start in (half, np.array([[np.cos(0.5 * np.pi + 5e-6), np.sin(0.5 * np.pi + 5e-6)]])):
        ref = kinks.refine(ds, RELU, UNIFORM, start)
        assert int(ref["status"][0]) == kinks.RefineStatus.CONVERGED
        np.testing.assert_allclose(np.arctan2(ref["w"][0, 1], ref["w"][0, 0]), 0.7 * np.pi, atol=1e-12)
        row = certify.assess_many(ds, RELU, UNIFORM, ref["w"], kink_ref=ref)[0]
        assert row["certificate"] == "kink-kkt" and row["stable"]

def test_a_smooth_saddle_is_not_certified(key):
    """u_m of latent summation with q = 0.45 > 0.382 is a critical point but not an LME (Eq. 9)."""
    u = data.near_orthogonal_basis(key, 5, 5)
    ds = data.latent_summation(u, 0.45)
    w = np.asarray(u[:, 0])
    ref = _ref(w, np.asarray(ds.x), 0) | {"active_mask": jnp.asarray([[False]])}
    rows = certify.assess_many(ds, RELU, UNIFORM, jnp.asarray([w]), kink_ref=ref)
    assert rows[0]["kink_rank"] == 0 and rows[0]["certificate"] == "none" and rows[0]["residual"] < 1e-12


def _fibonacci_sphere(n):
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    phi = np.pi * (1 + 5**0.5) * i
    r = np.sqrt(1 - z**2)
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], 1)


@pytest.mark.slow  # 4 s; fast: the closed-form multipliers and the independent probe below
def test_refinement_matches_the_dense_grid_in_3d():
    """Every local maximum of E on a dense grid of S^2 refines to a certified optimum within the grid's
    spacing, whose energy no grid point near it exceeds."""
    rng = np.random.default_rng(2024)
    x = rng.standard_normal((14, 3))
    p = np.full(14, 1 / 14)
    ds = data.make_dataset(x, dtype=jnp.float64)
    grid = _fibonacci_sphere(100_000)
    e = _numpy_energy(x, p, grid)
    spacing = np.sqrt(4 * np.pi / grid.shape[0])
    # grid local maxima: no higher among the 30 nearest grid points
    _, nbr = cKDTree(grid).query(grid, k=31)
    peaks = np.flatnonzero(e >= np.max(e[nbr], axis=1))
    assert 2 <= peaks.size <= 40
    rows = certify.assess_many(ds, RELU, UNIFORM, (ref := kinks.refine(ds, RELU, UNIFORM, grid[peaks]))["w"],
                               kink_ref=ref)
    w = np.asarray(ref["w"])
    assert np.all(np.asarray(ref["status"]) == kinks.RefineStatus.CONVERGED)
    assert all(r["stable"] for r in rows), [(r["certificate"], r["certificate_note"]) for r in rows]
    assert any(r["kink_rank"] > 0 for r in rows)
    np.testing.assert_array_less(np.linalg.norm(w - grid[peaks], axis=1), 3 * spacing)
    for wk in w:  # no grid point within 0.05 rad is higher
        assert np.max(e[grid @ wk >= np.cos(0.05)]) <= _numpy_energy(x, p, wk[None])[0] + 1e-15


@pytest.mark.parametrize("seed,n,d", [(31, 18, 3), pytest.param(32, 24, 4, marks=pytest.mark.slow),
                                      pytest.param(33, 20, 5, marks=pytest.mark.slow)])
def test_every_stable_optimum_survives_an_independent_probe(seed, n, d):
    """Random Gaussian clouds (not used for tuning): the pipeline's optima labelled stable are local maxima
    of the numpy energy at every probe radius from 1e-6 to 1e-2 rad; the endpoints form a few optima."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d))
    ds = data.make_dataset(x, dtype=jnp.float64)
    dyn = engine.Dynamics(method="flow")
    res = engine.collect(engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=128), jax.random.PRNGKey(seed), 256, 256,
                         jnp.float64)
    an = basins.analyze(ds, RELU, UNIFORM, dyn, res, cluster_tol=1e-2)
    stable = [r for r in an["rows"] if r["stable"]]
    assert stable and len(an["rows"]) <= 20
    assert sum(r["count"] for r in stable) >= 0.9 * an["status_counts"]["converged"]
    for r in stable:
        rise = _probe_rise(x, np.full(n, 1 / n), np.asarray(r["w"]), rng)
        assert rise < 0, (r["certificate"], rise)
