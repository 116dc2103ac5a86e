"""ccdyn.one_layer.saddles: paths, the string with a climbing image, exact refinement, certificates and the
barrier graph, each against an independent route (exact 2-D minima by a dense grid and bisection on
dE/dtheta, the closed-form spectrum of a linear node, autodiff Hessians, float64 probes, brute force)."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, pairwise, sphere
from ccdyn.data import models
from ccdyn.data.dataset import make_dataset
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import certify, dynamics, exact2d, kinks, landscape, saddles
from ccdyn.one_layer.studies.flow_accuracy import random_angles

jax.config.update("jax_enable_x64", True)
RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def potential_2d(ds, act, pw):
    """theta -> the function the flow climbs on the circle, written here on its own: E for uniform alpha
    (ccdyn's energy), tau/2 sum_ij p_i p_j (1 - exp(-(h_i - h_j)^2 / 2 tau)) for Gaussian alpha (whose
    tangent gradient is the flow: test_landscape_gradient_is_the_flow)."""
    if pw.kind == "uniform":
        return lambda t: dynamics.energy(ds, act, landscape.circle_weights(t)[None], pw)[0]
    x, p = ds.x, ds.p

    def psi(t):
        f = act.h(x @ jnp.stack([jnp.cos(t), jnp.sin(t)]))
        return pw.tau / 2 * jnp.sum(p[:, None] * p[None] * (1 - jnp.exp(-(f[:, None] - f[None]) ** 2 / (2 * pw.tau))))

    return psi


def arc_minima(ds, act, pw, n_grid=1 << 18):
    """The exact route: maxima on a dense grid (exact2d), then per arc between neighbouring maxima the grid
    minimum bracketed by its neighbours and bisected on the sign of dE/dtheta (autodiff, float64).
    Returns (start angle, arc length, theta of the minimum, E there, flat) per arc. Gaussian alpha: the same
    for the potential of the flow (:func:`potential_2d`)."""
    fn = potential_2d(ds, act, pw)
    th = 2 * np.pi * np.arange(n_grid) / n_grid
    if pw.kind == "uniform":
        e = exact2d.circle_energy(ds, act, pw, n_grid)
    else:
        e = np.concatenate([np.asarray(jax.jit(jax.vmap(fn))(jnp.asarray(th[i:i + 4096])))
                            for i in range(0, n_grid, 4096)])
    m = exact2d.circle_basins(e)["theta"]
    de = jax.jit(jax.grad(fn))
    out = []
    for k in range(len(m)):
        a, b = m[k], m[(k + 1) % len(m)]
        span = (b - a) % (2 * np.pi)
        idx = (int(round(a / (2 * np.pi) * n_grid)) + np.arange(int(round(span / (2 * np.pi) * n_grid)) + 1)) % n_grid
        j = idx[int(np.argmin(e[idx]))]
        lo, hi = th[j] - 2 * np.pi / n_grid, th[j] + 2 * np.pi / n_grid
        for _ in range(70):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if float(de(mid)) > 0 else (mid, hi)
        t = 0.5 * (lo + hi)
        et = float(fn(jnp.asarray(t)))
        out.append((a, span, t % (2 * np.pi), et, int(np.sum(np.abs(e[idx] - e[j]) <= 1e-14)) > 1))
    return out


def check_2d(ds, act=RELU, pw=UNIFORM):
    """Saddles from the string + refinement against the exact arc minima: (max angle error, max E error, all
    certified, number of kink saddles)."""
    arcs = [a for a in arc_minima(ds, act, pw) if not a[4]]  # flat arcs of minima have no single saddle
    assert arcs
    a0 = np.array([a[0] for a in arcs])
    path = saddles.great_circle_paths(np.stack([np.cos(a0), np.sin(a0)], 1), None, 13,
                                      direction=np.stack([-np.sin(a0), np.cos(a0)], 1), angle=[a[1] for a in arcs])
    st = saddles.string(ds, act, pw, path, n_steps=600)
    climb = np.asarray(st.path)[np.arange(len(arcs)), np.asarray(st.climb)]
    ref = saddles.refine(ds, act, pw, climb)
    cert = saddles.certificate(ds, act, pw, ref)
    w = np.asarray(ref["w"])
    th = np.arctan2(w[:, 1], w[:, 0])
    dth = np.abs((th - np.array([a[2] for a in arcs]) + np.pi) % (2 * np.pi) - np.pi)
    de = np.abs(np.array([c["energy"] for c in cert]) - np.array([a[3] for a in arcs]))
    return float(dth.max()), float(de.max()), all(c["certified"] for c in cert), sum(c["kink_rank"] > 0 for c in cert)


def gaussian_2d(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13))
    return make_dataset(rng.standard_normal((n, 2)), rng.dirichlet(np.ones(n)), dtype=jnp.float64)


def test_2d_saddles_are_the_minima_of_e_on_the_arcs():
    """The paper's nine circle points (Fig. 8; the slow test: 40 unseen random sets)."""
    dth, de, ok, _ = check_2d(models.circle().astype(jnp.float64))
    assert dth <= 1e-8 and de <= 1e-8 and ok, (dth, de, ok)


@pytest.mark.slow
def test_2d_saddles_on_40_unseen_sets():
    """20 random circle sets and 20 random Gaussian 2-D sets with random weights, 6-12 points each (none
    used while developing: that used seeds 0-2 of the circle sets and the paper's points)."""
    worst = [check_2d(models.circle(random_angles(s, 6, 12)).astype(jnp.float64)) for s in range(300, 320)]
    worst += [check_2d(gaussian_2d(s)) for s in range(400, 420)]
    assert all(w[2] for w in worst) and max(w[0] for w in worst) <= 1e-8 and max(w[1] for w in worst) <= 1e-8, worst


@pytest.mark.slow  # 3 s; fast: the exact 2-D saddles and the kink-saddle probe
def test_linear_node_saddle_is_the_second_eigenvector():
    """h linear: E = w^T C w / 2 with C the covariance; the maxima are +-phi_1 and the saddle between them is
    +-phi_2 (energy lambda_2 / 2), an index-1 saddle with Jacobian eigenvalues lambda_k - lambda_2."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((40, 5)) * np.array([3.0, 2.0, 1.5, 1.0, 0.5])
    ds = make_dataset(x, dtype=jnp.float64)
    c = np.cov(x.T, bias=True)
    lam, vec = np.linalg.eigh(c)
    lin = activations.get_activation("linear")
    path = saddles.great_circle_paths(vec[:, -1][None], -vec[:, -1][None], 15,
                                      direction=(vec[:, 0] + vec[:, -2])[None] / np.sqrt(2), angle=[np.pi])
    st = saddles.string(ds, lin, UNIFORM, path, n_steps=1500)
    ref = saddles.refine(ds, lin, UNIFORM, np.asarray(st.path)[0, int(st.climb[0])][None])
    cert = saddles.certificate(ds, lin, UNIFORM, ref)[0]
    w = np.asarray(ref["w"][0])
    assert abs(abs(w @ vec[:, -2]) - 1) <= 1e-12 and abs(cert["energy"] - lam[-2] / 2) <= 1e-12
    assert cert["certified"] and cert["index"] == 1
    np.testing.assert_allclose(np.array(cert["jacobian_eigs"]) * cert["scale"],
                               np.sort(np.delete(lam, 3) - lam[-2])[::-1], atol=1e-10)


@pytest.mark.slow  # 6 s; fast: the exact 2-D saddles and the kink-saddle probe
def test_reparametrize_spaces_the_images_equally_on_the_path():
    rng = np.random.default_rng(1)
    path = sphere.normalize(jnp.asarray(rng.standard_normal((3, 9, 4))))
    out = np.asarray(saddles.reparametrize(path))
    ang = 2 * np.arctan2(np.linalg.norm(out[:, 1:] - out[:, :-1], axis=-1), np.linalg.norm(out[:, 1:] + out[:, :-1], axis=-1))
    old = 2 * np.arctan2(np.linalg.norm(path[:, 1:] - path[:, :-1], axis=-1), np.linalg.norm(path[:, 1:] + path[:, :-1], axis=-1))
    # each new image lies on the old polyline, so the new chord lengths can only shorten it; on a great circle
    # (one segment) they are exactly equal
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), 1, atol=1e-14)
    np.testing.assert_allclose(out[:, [0, -1]], np.asarray(path)[:, [0, -1]])
    assert np.all(ang.sum(1) <= old.sum(1) + 1e-12)
    g = saddles.great_circle_paths(np.eye(4)[:1], np.eye(4)[1:2], 9)
    warped = saddles.great_circle_paths(np.eye(4)[:1], None, 9, direction=np.eye(4)[1:2],
                                        angle=[np.pi / 2])[:, np.array([0, 1, 1, 2, 3, 5, 7, 7, 8])]
    rep = np.asarray(saddles.reparametrize(warped))
    np.testing.assert_allclose(rep, np.asarray(g), atol=1e-12)


@pytest.mark.slow  # 5 s; fast: the exact 2-D saddles and the kink-saddle probe
def test_certificate_jacobian_is_the_autodiff_riemannian_hessian_at_a_smooth_saddle():
    ds = models.circle().astype(jnp.float64)
    t = arc_minima(ds, RELU, UNIFORM, 1 << 14)[0][2]
    ref = saddles.refine(ds, RELU, UNIFORM, np.array([[np.cos(t), np.sin(t)]]) + 1e-4)
    cert = saddles.certificate(ds, RELU, UNIFORM, ref)[0]
    assert cert["kink_rank"] == 0
    hess = np.linalg.eigvalsh(np.asarray(certify.riemannian_hessian(ds, RELU, jnp.asarray(ref["w"][0]), UNIFORM)))
    np.testing.assert_allclose(np.array(cert["jacobian_eigs"]) * cert["scale"], hess[::-1], rtol=1e-10, atol=1e-14)
    assert cert["index"] == 1 and hess[-1] > 0


@pytest.mark.slow  # 6 s; fast: the exact 2-D saddles
def test_kink_saddle_directional_derivatives_match_a_float64_probe():
    """The default data (latent summation, d = 10): the saddle between the optima near u3 and u8 sits on a
    ReLU ridge. Along random tangent directions d the first-order change of E is
    sum_{i active} c_i (1[x_i^T d > 0] - lam_i) x_i^T d (docs/saddles.md): against finite differences."""
    ds = build_dataset(DataSpec(), jnp.float64)
    pat = np.asarray(ds.patterns) / np.linalg.norm(np.asarray(ds.patterns), axis=1, keepdims=True)
    st = saddles.string(ds, RELU, UNIFORM, saddles.great_circle_paths(pat[3][None], pat[8][None], 9), n_steps=400)
    ref = saddles.refine(ds, RELU, UNIFORM, np.asarray(st.path)[0, int(st.climb[0])][None])
    cert = saddles.certificate(ds, RELU, UNIFORM, ref)[0]
    assert cert["certified"] and cert["kink_rank"] >= 1 and cert["n_ridge"] >= 1, cert["note"]
    w = np.asarray(ref["w"][0])
    x = np.asarray(ds.x)
    xa = x[cert["active_views"]]
    lam, c = np.array(cert["multipliers"]), np.array(cert["gate_coefficients"])
    inactive = np.setdiff1d(np.arange(x.shape[0]), cert["active_views"])
    r = min(1e-7, 0.1 * float(np.min(np.abs(x[inactive] @ w) / np.linalg.norm(x[inactive], axis=1))))
    dirs = np.asarray(sphere.tangent(w, np.random.default_rng(0).standard_normal((24, w.size))))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    e0 = cert["energy"]
    e = np.asarray(dynamics.energy(ds, RELU, jnp.asarray(np.cos(r) * w + np.sin(r) * dirs), UNIFORM))
    z = dirs @ xa.T
    want = ((z > 0) - lam[None]) * c[None] * z @ np.ones(len(lam))
    np.testing.assert_allclose((e - e0) / r, want, atol=1e-7)
    assert np.max(np.abs(want)) > 1e-5  # the kink terms are there to be checked


def test_refinement_failures_are_named_not_certified():
    ds = models.circle().astype(jnp.float64)
    ref = saddles.refine(ds, RELU, UNIFORM, np.array([[1.0, 0.0]]), cand_tol=0.0, z_tol=-1.0)
    cert = saddles.certificate(ds, RELU, UNIFORM, ref)[0]
    assert not cert["certified"] and cert["note"].startswith("refinement:")
    # a maximum is a critical point of index 0, not a saddle
    m = exact2d.circle_basins(exact2d.circle_energy(ds, RELU, UNIFORM, 1 << 14))["theta"][0]
    ref = saddles.refine(ds, RELU, UNIFORM, np.array([[np.cos(m), np.sin(m)]]))
    cert = saddles.certificate(ds, RELU, UNIFORM, ref)[0]
    assert not cert["certified"] and "index 0" in cert["note"]


def _maximin_brute(n, edges, i, j):
    best = np.nan
    adj = {}
    for e, a, b in edges:
        adj.setdefault((min(a, b), max(a, b)), []).append(e)
    for k in range(0, n - 1):
        for mid in itertools.permutations([v for v in range(n) if v not in (i, j)], k):
            nodes = (i, *mid, j)
            es = [max(adj.get((min(a, b), max(a, b)), [np.nan])) for a, b in zip(nodes, nodes[1:])]
            if not np.any(np.isnan(es)):
                best = np.nanmax([best, min(es)])
    return best


def test_barrier_matrix_is_the_maximin_over_every_path_by_brute_force():
    rng = np.random.default_rng(3)
    n = 6
    energies = rng.uniform(1.0, 2.0, n)
    edges = [(float(rng.uniform(0, 1)), a, b) for a, b in itertools.combinations(range(n), 2) if rng.uniform() < 0.5]
    edges.append((0.3, 0, 1))  # a second, lower saddle of one pair
    b = saddles.barrier_matrix(energies, edges)
    for i, j in itertools.combinations(range(n), 2):
        want = _maximin_brute(n, edges, i, j)
        assert (np.isnan(want) and np.isnan(b[i, j])) or b[i, j] == want, (i, j, b[i, j], want)
    np.testing.assert_array_equal(np.diag(b), energies)
    assert len(saddles.merge_tree(n, edges)) == n - len({tuple(sorted(set(g))) for g in _components(n, edges)})


def _components(n, edges):
    comp = {i: {i} for i in range(n)}
    for _, a, b in edges:
        u = comp[a] | comp[b]
        for v in u:
            comp[v] = u
    return [frozenset(c) for c in comp.values()]


def test_classify_kind():
    assert saddles.classify_kind([2, 0], (0, 2)) == "direct"
    assert saddles.classify_kind([1, 0], (0, 2)) == "joins another pair"
    assert saddles.classify_kind([1, 1], (0, 1)) == "both ends reach the same optimum"
    assert saddles.classify_kind([-1, 1], (0, 1)).startswith("an end reaches no")


BOX = jax.jit(kinks._box_solution, static_argnums=(3, 4))


def box(b, lam, k=8):
    """kinks._box_solution for the columns b (d, s) and t = b lam, padded to k views with inactive ones."""
    d, s = b.shape
    bp = np.zeros((6, k))  # one shape (one compile) for every problem: zero rows change nothing
    bp[:d, :s] = b
    act = np.arange(k) < s
    t = np.zeros(6)
    t[:d] = b @ lam
    got, m, fits = jax.device_get(BOX(jnp.asarray(bp), jnp.asarray(t), jnp.asarray(act), 1e-10, k))
    assert fits and np.all(got[s:] == 0)
    return got[:s], float(m)


@pytest.mark.slow  # 4 s (compiles the linear program); fast: test_kinks' dependent views (the same routine)
def test_largest_margin_multipliers_on_dependent_views():
    """Columns c_i x_i with x_3 = x_1 + x_2 (the latent data's dependent views): the solutions of
    B lam = t are a line; the one farthest inside [0, 1]^3 against a dense scan of that line."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6))
    xs = np.stack([x[0], x[1], x[0] + x[1]], 1)  # (d, 3)
    c = np.array([-0.3, -1.2, -0.7])
    b = xs * c
    lam = np.array([0.4, 0.0, 0.2])  # a solution with a multiplier at 0
    null = np.array([1 / c[0], 1 / c[1], -1 / c[2]])  # b @ null = 0
    s = np.linspace(-10, 10, 20_001)
    line = lam[None] + s[:, None] * null[None]
    margins = np.min(np.minimum(line, 1 - line), axis=1)
    got, m = box(b, lam)
    np.testing.assert_allclose(b @ got, b @ lam, atol=1e-13)
    assert m > 0.05 and abs(m - margins.max()) <= 5e-3 and m >= margins.max() - 1e-12
    assert abs(m - np.min(np.minimum(got, 1 - got))) <= 1e-12
    # independent views: the one solution, returned as is
    got, m = box(b[:, :2], lam[:2])
    np.testing.assert_allclose(got, lam[:2], atol=1e-13)
    assert abs(m) <= 1e-13


def _vertex_margin(b, t):
    """The largest margin by brute force: every vertex of {(lam, m): b lam = t, m <= lam_i <= 1 - m} (k + 1
    tight constraints of the equations and the 2k inequalities, a square system), the best feasible one."""
    d, k = b.shape
    r = np.linalg.matrix_rank(b, 1e-10)
    rows_b = np.linalg.svd(b)[2][:r]  # b lam = t  <=>  rows_b lam = rows_b lam_ls (t in b's range)
    eq = np.c_[rows_b, np.zeros((r, 1))]
    rhs_eq = rows_b @ np.linalg.lstsq(b, t, rcond=None)[0]
    ineq = np.block([[np.eye(k), -np.ones((k, 1))], [-np.eye(k), -np.ones((k, 1))]])  # lam - m >= 0, 1 - lam - m >= 0
    rhs_in = np.r_[np.zeros(k), -np.ones(k)]
    best = -np.inf
    for rows in itertools.combinations(range(2 * k), k + 1 - r):
        a = np.vstack([eq, ineq[list(rows)]])
        if abs(np.linalg.det(a)) < 1e-12:
            continue
        z = np.linalg.solve(a, np.r_[rhs_eq, rhs_in[list(rows)]])
        if np.all(ineq @ z >= rhs_in - 1e-10) and np.allclose(b @ z[:k], t, atol=1e-9):
            best = max(best, z[-1])
    return best


@pytest.mark.slow  # 4 s (compiles the linear program); fast: test_kinks' dependent views (the same routine)
def test_largest_margin_multipliers_against_vertex_enumeration():
    """The linear program (a dense simplex on the device) against brute force over the vertices of the
    polytope, on 20 random sets of 2-5 dependent columns (rank 1-3) at scales 1e-6 to 1e2, t inside or
    outside the box."""
    rng = np.random.default_rng(11)
    for _ in range(20):
        r = int(rng.integers(1, 4))
        k = int(rng.integers(r + 1, 6))
        comb = np.c_[np.eye(r), rng.integers(-1, 2, (r, k - r))]
        b = rng.standard_normal((4, r)) @ comb * rng.uniform(-2, 2, k) * 10.0 ** rng.uniform(-6, 2)
        lam = rng.uniform(-0.4, 1.4, k)
        got, m = box(b, lam)
        np.testing.assert_allclose(b @ got, b @ lam, atol=1e-11)
        assert abs(m - _vertex_margin(b, b @ lam)) <= 1e-10


@pytest.mark.slow  # 27 s; fast: test_kinks' dependent views (the multiplier routine)
def test_dependent_views_saddle_is_a_strict_ridge_by_a_float64_probe():
    """The default data, optima near u5 and u2 (pair (6, 9) of results/saddles/default): the saddle sits on
    4 dependent active views (rank 3). The multipliers nearest 1/2 put one at 0; the largest-margin ones
    lie inside (0, 1), so it is certified, and E falls to first order along every direction of the active
    views' span (tangent part) by finite differences in float64."""
    ds = build_dataset(DataSpec(), jnp.float64)
    pat = np.asarray(ds.patterns) / np.linalg.norm(np.asarray(ds.patterns), axis=1, keepdims=True)
    st = saddles.string(ds, RELU, UNIFORM, saddles.great_circle_paths(pat[5][None], pat[2][None], 17), n_steps=3000)
    ref = saddles.refine(ds, RELU, UNIFORM, np.asarray(st.path)[0, int(st.climb[0])][None])
    cert = saddles.certificate(ds, RELU, UNIFORM, ref)[0]
    x = np.asarray(ds.x)
    xa = x[cert["active_views"]]
    assert len(cert["active_views"]) == 4 and np.linalg.matrix_rank(xa, 1e-10) == 3
    assert cert["certified"] and cert["multiplier_margin"] > 0.01, cert["note"]
    w = np.asarray(ref["w"][0])
    q = np.linalg.qr(xa.T)[0]
    dirs = np.asarray(sphere.tangent(w, np.random.default_rng(1).standard_normal((64, 4)) @ q.T))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    r = 1e-7
    e = np.asarray(dynamics.energy(ds, RELU, jnp.asarray(np.cos(r) * w + np.sin(r) * dirs), UNIFORM))
    slope = (e - cert["energy"]) / r
    assert np.all(slope < -1e-6), slope.max()


_SHARDED = """
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
from ccdyn import activations, pairwise, parallel
from ccdyn.data import models
from ccdyn.one_layer import exact2d, saddles
assert len(jax.devices()) == 3
relu, uni = activations.get_activation("relu"), pairwise.get_pairwise("uniform")
ds = models.circle().astype(jnp.float64)
th = exact2d.circle_basins(exact2d.circle_energy(ds, relu, uni, 1 << 14))["theta"]
m = np.stack([np.cos(th), np.sin(th)], 1)
a, b = m[:8], np.roll(m, -1, axis=0)[:8]  # 8 neighbouring pairs: padded to 9 on 3 devices
out = []
for mesh in (None, parallel.device_mesh()):
    st = saddles.string(ds, relu, uni, saddles.great_circle_paths(a, b, 9), n_steps=300, mesh=mesh)
    climb = np.asarray(st.path)[np.arange(8), np.asarray(st.climb)]
    ref = saddles.refine(ds, relu, uni, climb, mesh=mesh)
    cert = saddles.certificate(ds, relu, uni, ref, mesh=mesh)
    out.append((np.asarray(st.path), np.asarray(ref["w"]), [c["certified"] for c in cert],
                np.array([c["energy"] for c in cert])))
(p1, w1, c1, e1), (p3, w3, c3, e3) = out
assert p3.shape == p1.shape and w3.shape == w1.shape
np.testing.assert_allclose(p3, p1, atol=1e-12)
np.testing.assert_allclose(w3, w1, atol=1e-12)
np.testing.assert_allclose(e3, e1, atol=1e-14)
assert c1 == c3 and all(c1), (c1, c3)
print("ok")
"""


@pytest.mark.slow  # 37 s in a subprocess; fast: test_on_mesh_pads_and_cuts_the_pair_axis
def test_pair_axis_sharded_over_3_devices_gives_the_same_saddles():
    import os
    import subprocess
    import sys
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=3".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "-c", _SHARDED], capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]


def test_on_mesh_runs_batched_lapack_stages_unsplit_on_a_cpu_mesh():
    """A stage with batched LAPACK calls (``lapack=True``: the refinement, the certificate) on a mesh of several CPU
    devices runs unsplit (its devices' concurrent batched calls can deadlock XLA's CPU pool: the 3-device test above
    hung): fn sees every row at once, unpadded; without ``lapack`` the rows are split as before."""
    from types import SimpleNamespace

    seen = []
    fn = lambda d, t: (seen.append(t.shape), {"y": t * d["s"]})[1]  # noqa: E731
    cpus = SimpleNamespace(devices=np.array([SimpleNamespace(platform="cpu")] * 3, dtype=object))
    rows = np.arange(7, dtype=np.float64)[:, None] * np.ones((1, 2))
    out = saddles.on_mesh(fn, {"s": jnp.float64(3.0)}, rows, cpus, lapack=True)
    assert seen == [(7, 2)] and isinstance(out["y"], np.ndarray)
    np.testing.assert_array_equal(out["y"], 3.0 * rows)


def test_on_mesh_pads_and_cuts_the_pair_axis():
    """on_mesh on this process's devices: rows padded to a multiple of the devices, each row its own result."""
    from ccdyn import parallel
    mesh = parallel.device_mesh()
    rows = np.arange(5 * mesh.devices.size + 1, dtype=np.float64)[:, None] * np.ones((1, 3))
    out = saddles.on_mesh(lambda d, t: {"y": t * d["s"] + 1.0}, {"s": jnp.float64(2.0)}, rows, mesh)
    np.testing.assert_array_equal(out["y"], 2.0 * rows + 1.0)


@pytest.mark.slow  # 3 s (imports scipy.optimize); fast: test_kinks' dependent views (the same routine)
def test_largest_margin_multipliers_against_linprog():
    """300 random problems (2-8 views of rank 1-5 among 12, 4 of them padding): the margin equals scipy's
    linprog (HiGHS) on the problem in lam itself (max m, b lam = t, m <= lam <= 1 - m), to 1e-8 (HiGHS
    solves to its feasibility tolerance, 1e-7; the vertex enumeration above is the exact check)."""
    from scipy.optimize import linprog  # noqa: PLC0415
    rng = np.random.default_rng(12)
    for _ in range(300):
        d = int(rng.integers(2, 6))
        r = int(rng.integers(1, d + 1))
        k = int(rng.integers(r, 9))
        comb = np.c_[np.eye(r), rng.integers(-1, 2, (r, k - r))]
        b = rng.standard_normal((d, r)) @ comb * rng.uniform(-2, 2, k)
        lam = rng.uniform(-0.3, 1.3, k)
        a_ub = np.block([[-np.eye(k), np.ones((k, 1))], [np.eye(k), np.ones((k, 1))]])
        res = linprog(np.r_[np.zeros(k), -1.0], A_ub=a_ub, b_ub=np.r_[np.zeros(k), np.ones(k)],
                      A_eq=np.c_[b, np.zeros((d, 1))], b_eq=b @ lam, bounds=[(None, None)] * (k + 1), method="highs")
        got, m = box(b, lam, 12)
        assert res.status == 0 and abs(m - res.x[-1]) <= 1e-8, (m, res.x[-1])
        np.testing.assert_allclose(b @ got, b @ lam, atol=1e-9)


def test_landscape_gradient_is_the_flow():
    """saddles.landscape with Gaussian alpha (the potential): its tangent gradient (autodiff) is the flow's
    field P^perp A(w) w (Lemma 3); that of E_alpha with alpha moving with w is not."""
    rng = np.random.default_rng(8)
    ds = make_dataset(rng.standard_normal((7, 3)), rng.dirichlet(np.ones(7)), dtype=jnp.float64)
    w = sphere.normalize(jnp.asarray(rng.standard_normal(3)))
    gauss = pairwise.get_pairwise("gaussian", 0.3)

    @jax.jit
    def fields(w):  # uniform alpha: landscape is dynamics.energy, whose gradient the engine's tests check
        g = jax.grad(lambda v: saddles.landscape(ds, RELU, gauss, v[None])[0])(w)
        moving = jax.grad(lambda v: dynamics.energy_given_alpha(ds, RELU, v, gauss.matrix(RELU.h(ds.x @ v), False)))(w)
        u = dynamics.ascent(ds, RELU, w[None], gauss)[0]
        return sphere.tangent(w, g), sphere.tangent(w, u), sphere.tangent(w, moving)

    g, u, moving = fields(w)
    np.testing.assert_allclose(g, u, atol=1e-13)
    assert np.max(np.abs(moving - u)) > 1e-3


@pytest.mark.slow  # about 4 min on 2 busy cores (each tau compiles its own string)
def test_2d_saddles_with_gaussian_alpha():
    """Gaussian alpha (Cor. 2): the saddles between neighbouring maxima of the flow are the minima of its
    potential on the arcs (the exact 2-D route above), to 1e-8, all certified: the paper's nine points at
    tau = 1, 0.2, 0.05 and 6 random Gaussian 2-D sets (seeds 400-405) at tau = 0.2."""
    worst = [check_2d(models.circle().astype(jnp.float64), pw=pairwise.get_pairwise("gaussian", t))
             for t in (1.0, 0.2, 0.05)]
    worst += [check_2d(gaussian_2d(s), pw=pairwise.get_pairwise("gaussian", 0.2)) for s in range(400, 406)]
    assert all(w[2] for w in worst) and max(w[0] for w in worst) <= 1e-8 and max(w[1] for w in worst) <= 1e-8, worst
