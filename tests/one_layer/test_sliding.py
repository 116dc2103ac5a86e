"""The flow on ReLU kinks (:mod:`ccdyn.one_layer.sliding`, the sliding branch of the engine's flow):
the one-sided fields against each adjacent region's field (autodiff of A_R, one-sided limits), the
minimum-norm element of the Clarke box against a dense grid, a kink maximum in d = 3 reached where the
flow that stops when pinned falls short, the statuses, and power iteration / euler_halving bit for bit
against results stored before the sliding flow."""

import functools
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, pairwise, parallel
from ccdyn.one_layer import basins, dynamics, engine, kink_probe, kinks, sliding
from ccdyn.one_layer.methods import sliding_flow
from tests.one_layer import engine_reference

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def _on_two_kinks(ds, views, rng):
    """A unit w orthogonal to the two given views (random inside their intersection)."""
    x = np.asarray(sliding.flat_views(ds)[0])
    q = np.linalg.qr(x[list(views)].T, mode="complete")[0][:, 2:]
    w = q @ rng.standard_normal(q.shape[1])
    return w / np.linalg.norm(w)


@pytest.mark.parametrize("act,pw,aug", [("relu", "uniform", False), ("leaky_relu", "uniform", False),
                                        ("relu", "gaussian", False),
                                        pytest.param("relu", "uniform", True, marks=pytest.mark.slow)])
def test_one_sided_fields_are_affine_in_the_gates(act, pw, aug):
    """u_g = u_0 + sum_i g_i c_i x_i for every gate pattern g of two active views: against the limit of
    A(w') w' from inside each adjacent region and, for uniform alpha, A_R w with A_R the autodiff
    Jacobian of the field inside the region (A(w) w is linear there)."""
    rng = np.random.default_rng(11)
    act = activations.get_activation(act)
    pw = pairwise.get_pairwise(pw, tau=1.0) if pw == "gaussian" else UNIFORM
    x = rng.standard_normal((12, 4))
    extra = dict(x_aug=x[:, None] + 0.3 * rng.standard_normal((12, 3, 4)), p_aug=np.full((12, 3), 1 / 3)) if aug else {}
    ds = data.make_dataset(x=x, dtype=jnp.float64, **extra)
    w = _on_two_kinks(ds, (0, 5), rng)
    a = sliding.active_set(ds, act, pw, jnp.asarray(w[None]), delta=1e-12, m=4)
    assert int(a.n_near[0]) == 2 and sorted(np.asarray(a.views[0])[:2]) == [0, 5]
    # the one one-sided field (sliding.gated_field, also behind kinks.one_sided_field) is A(w) w off the kinks
    off = w + 1e-3 * rng.standard_normal(w.size)
    off /= np.linalg.norm(off)
    side = np.asarray(sliding.flat_views(ds)[0]) @ off > 0
    np.testing.assert_allclose(kinks.one_sided_field(ds, act, pw, jnp.asarray(off), jnp.asarray(side)),
                               dynamics.ascent(ds, act, jnp.asarray(off[None]), pw)[0], rtol=1e-13, atol=1e-13)
    X = np.asarray(a.x[0, :2])
    field = lambda v: dynamics.ascent(ds, act, v[None], pw)[0]
    for g in itertools.product((0, 1), repeat=2):
        into = X.T @ np.linalg.solve(X @ X.T, 2.0 * np.array(g) - 1)  # x_i . into = +1 (gate 1) or -1 (gate 0)
        predicted = np.asarray(a.u0[0]) + np.asarray(a.c[0, :2] * np.array(g)) @ X
        scale = np.abs(predicted).max()
        np.testing.assert_allclose(field(jnp.asarray(w + 1e-9 * into)), predicted, atol=1e-7 * scale)
        if pw.kind == "uniform":
            A_R = np.asarray(jax.jacfwd(field)(jnp.asarray(w + 1e-3 * into)))
            np.testing.assert_allclose(A_R @ w, predicted, atol=1e-12 * scale)


def test_min_norm_element_against_a_dense_grid_and_kkt():
    """The minimum-norm point of {t0 + sum lam_i B_i : lam in [0,1]^m} is never beaten by a dense grid of
    the box, and meets the KKT conditions (gradient c_i x_i . v zero at free, signed at bound multipliers);
    dependent B (B_3 = B_1 + B_2) included."""
    rng = np.random.default_rng(5)
    solve = jax.jit(sliding.min_norm)
    for trial in range(40):
        m, d = int(rng.integers(1, 4)), 5
        B = rng.standard_normal((1, 4, d))
        if trial % 4 == 0 and m == 3:
            B[0, 2] = B[0, 0] + B[0, 1]
        mask = np.arange(4)[None] < m
        B = B * mask[..., None]
        t0 = rng.standard_normal((1, d)) * rng.uniform(0.1, 3)
        res = solve(jnp.asarray(t0), jnp.asarray(B), jnp.asarray(mask))
        lam, v = np.asarray(res.lam[0]), np.asarray(res.v[0])
        grid = np.array(list(itertools.product(np.linspace(0, 1, 41), repeat=m)))
        best = np.min(np.linalg.norm(t0 + grid @ B[0, :m], axis=1))
        assert np.linalg.norm(v) <= best + 1e-12 and np.all(lam[m:] == 0)
        np.testing.assert_allclose(v, t0[0] + lam @ B[0], atol=1e-12)
        grad = B[0, :m] @ v  # d/dlam_i of ||v||^2 / 2
        tol = 1e-9 * np.linalg.norm(B[0]) * max(np.linalg.norm(t0), 1)
        assert np.all(np.where(lam[:m] <= 0, grad >= -tol, True) & np.where(lam[:m] >= 1, grad <= tol, True))
        assert np.all(np.abs(np.where((lam[:m] > 0) & (lam[:m] < 1), grad, 0)) <= tol)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_a_rows_min_norm_is_the_same_bits_whatever_the_rows_beside_it(dtype):
    """min_norm's sweeps stop at the last live view of any row (exact no-ops beyond it), so a row's multipliers
    do not depend on how many views the other rows hold: the same bits beside rows with one view (the sweeps stop
    at this row's last view) and beside rows with every view live (they run to m), at either place in a batch of
    8 (XLA rounds a product differently at other batch sizes: not this test's)."""
    rng = np.random.default_rng(7)
    k, m, d = 6, 16, 9
    counts = np.array([1, 2, 3, 5, 8, 16])
    B = rng.standard_normal((k, m, d)) * (np.arange(m)[None] < counts[:, None])[..., None]
    B[2, 2] = B[2, 0] + B[2, 1]  # dependent views: the polish's face system is singular there
    mask = np.arange(m)[None] < counts[:, None]
    t0 = rng.standard_normal((k, d))
    arrays = lambda rows: (jnp.asarray(t0[rows], dtype), jnp.asarray(B[rows], dtype), jnp.asarray(mask[rows]))
    for i in range(k - 1):
        got = _alone_and_beside(jax.jit(sliding.min_norm), arrays, i, k - 1)
        assert np.all(np.asarray(got.lam)[counts[i]:] == 0)


def _alone_and_beside(fn, arrays, i: int, last: int):
    """Row i's output of ``fn(*arrays(rows))`` in a batch of 8: beside copies of row 0 and of row ``last``, and
    last in the batch; asserts the three equal bit for bit and returns it (a pytree of rows)."""
    got = [fn(*arrays([i] + [filler] * 7)) for filler in (0, last)] + [fn(*arrays([last] * 7 + [i]))]
    row = lambda out, j: jax.tree.map(lambda a: np.asarray(a[j]), out)
    for g, j in zip(got, (0, 0, 7)):
        jax.tree.map(np.testing.assert_array_equal, row(g, j), row(got[0], 0))
    return row(got[0], 0)


def _ridge_cloud():
    return engine_reference.cloud()  # 20 Gaussian points in d = 3: maxima on kinks and ridges


@functools.lru_cache(maxsize=1)
def _ridge_runs():
    """300 inits on the ridge cloud: (W, the flow that stops where pinned, the sliding flow)."""
    ds = _ridge_cloud()
    W = parallel.init_weights(jax.random.PRNGKey(1), 0, 300, 3, jnp.float64)
    old = engine.converge(ds, RELU, UNIFORM, engine.Dynamics(method="flow", sliding=False), W)
    return W, old, engine.converge(ds, RELU, UNIFORM, engine.Dynamics(method="flow"), W)


@pytest.mark.slow  # 9 s (two flows compiled); the d = 3 kink maximum test below is the fast check
def test_sliding_reaches_kink_maxima_where_stopping_when_pinned_falls_short():
    """d = 3: the flow that stops where pinned leaves inits on kink ridges (short of the maximum along
    them, residual up to ~1e-2); the sliding flow ends every init at a Clarke-stationary point (sliding
    residual <= tol; 0 in the projected Clarke box), on few optima, never lower in E than it started."""
    ds = _ridge_cloud()
    W, old, new = _ridge_runs()
    assert np.all(old["status"] == engine.Status.CONVERGED) and np.all(new["status"] == engine.Status.CONVERGED)
    assert old["residual"].max() > 1e-3  # stopped on ridges, short of the maxima
    u = np.asarray(dynamics.ascent(ds, RELU, jnp.asarray(new["w"]), UNIFORM))
    assert np.all(new["residual"] <= 1e-6 * np.linalg.norm(u, axis=1))
    n_old = basins.cluster(old["w"], 1e-2)[1].shape[0]
    n_new = basins.cluster(new["w"], 1e-2)[1].shape[0]
    assert n_new <= 6 < n_old, (n_new, n_old)
    e0, e1 = (np.asarray(dynamics.energy(ds, RELU, jnp.asarray(v), UNIFORM)) for v in (W, new["w"]))
    assert np.all(e1 >= e0 - 1e-12)
    # every endpoint is a Clarke-stationary point: 0 in P^perp dE(w) (min-norm element of the box ~ 0)
    an = sliding.analyse(ds, RELU, UNIFORM, jnp.asarray(new["w"]), delta=sliding_flow.KINK_DELTA * 1e-6, m=4)
    assert np.all(np.linalg.norm(an.v, axis=1) <= 1e-5 * np.linalg.norm(u, axis=1))
    assert np.mean(np.asarray(an.active.n_near) >= 1) > 0.3  # many of them sit on kinks


@pytest.mark.slow  # 5 s; fast: tests/one_layer/test_flow.py (kink maxima converge, exact 2-D arcs)
def test_a_kink_maximum_in_d3_is_reached_to_tolerance():
    """One init on a ridge: the sliding flow's endpoint is the maximum along the ridge computed
    independently (a dense scan of E on the great circle w . x_i = 0 in float64)."""
    ds = _ridge_cloud()
    W, old, new = _ridge_runs()
    k = int(np.argmax(old["residual"]))  # the init that stopped furthest from a critical point
    x = np.asarray(ds.x)
    i = int(np.argmin(np.abs(x @ old["w"][k]) / np.linalg.norm(x, axis=1)))  # the ridge it stopped on
    q = np.linalg.qr(x[i:i + 1].T, mode="complete")[0][:, 1:]  # the great circle orthogonal to x_i
    theta = np.linspace(-np.pi, np.pi, 1 << 18, endpoint=False)
    circle = np.cos(theta)[:, None] * q[:, 0] + np.sin(theta)[:, None] * q[:, 1]
    e = np.asarray(dynamics.energy(ds, RELU, jnp.asarray(circle), UNIFORM))
    j = int(np.argmin(np.linalg.norm(circle - old["w"][k], axis=1)))
    while True:  # walk uphill along the ridge from where the old flow stopped
        nxt = max((j - 1) % e.size, j, (j + 1) % e.size, key=lambda t: e[t])
        if nxt == j:
            break
        j = nxt
    assert abs(x[i] @ new["w"][k]) <= 1e-12 * np.linalg.norm(x[i])
    assert np.linalg.norm(new["w"][k] - circle[j]) <= 1e-4, np.linalg.norm(new["w"][k] - circle[j])
    assert np.linalg.norm(old["w"][k] - circle[j]) > 1e-3  # the old flow stopped short


def test_power_iteration_and_euler_halving_are_bit_identical_and_circling_kinks_is_named():
    """The stored runs (made before the sliding flow) are reproduced: the float64 runs bit for bit, the
    float32 runs within float32 rounding (XLA's CPU code for float32 depends on the CPU's vector
    instructions, e.g. AVX2 against AVX-512 sums in another order: on an AMD EPYC without AVX-512 the
    stored Intel runs differ by <= 5.1e-7 in w and by one step for 23 of 400 inits). The only change of
    status is that power iteration's inits that were not converged and cross a kink are now CIRCLING_KINK."""
    ref = np.load(engine_reference.PATH)
    new = engine_reference.runs()
    for key in ref:
        if key.endswith("_status"):
            a, b = ref[key], new[key]
            moved = a != b
            assert np.all((a[moved] == engine.Status.NOT_CONVERGED) & (b[moved] == engine.Status.CIRCLING_KINK)), key
        elif ref[key].dtype == np.float32 or key.startswith("default_"):  # the float32 runs (default data)
            if key.endswith("_steps"):
                assert np.max(np.abs(ref[key] - new[key])) <= 1 and np.mean(ref[key] != new[key]) <= 0.1, key
            else:
                np.testing.assert_allclose(ref[key], new[key], rtol=0, atol=2e-6, err_msg=key)
        else:
            np.testing.assert_array_equal(ref[key], new[key], err_msg=key)
    assert np.sum(new["cloud_power_status"] == engine.Status.CIRCLING_KINK) > 50  # the cloud's circling inits


def test_statuses_and_hints():
    assert engine.Status.CIRCLING_KINK == 8 and engine.Status.KINK_LIMIT == 9
    assert "--method=auto" in basins.STATUS_HINTS[engine.Status.CIRCLING_KINK] and basins.STATUS_HINTS[engine.Status.KINK_LIMIT]
    # under auto the circling rows were never handed to the flow: the hint names --max_steps, not auto itself
    auto = {"n_init": 10, "n_circling_kink": 2, "config": {"dynamics": {"method": "auto"}}}
    line = basins.warning_line(auto)[0]
    assert "--max_steps" in line and "--method=auto" not in line
    assert "--method=auto" in basins.warning_line(dict(auto, config={"dynamics": {"method": "power"}}))[0]
    assert engine.Status.CIRCLING_KINK.text == "circling a kink"
    # linear activation: no kinks, power iteration's non-converged inits stay NOT_CONVERGED
    ds = _ridge_cloud()
    W = parallel.init_weights(jax.random.PRNGKey(0), 0, 8, 3, jnp.float64)
    lin = activations.get_activation("linear")
    out = engine.converge(ds, lin, UNIFORM, engine.Dynamics(method="power", max_steps=1), W)
    assert np.all(out["status"] == engine.Status.NOT_CONVERGED)


def test_basis_and_projection():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((3, 4, 6))
    X[:, 2] = X[:, 0] - 2 * X[:, 1]  # dependent: dropped
    keep = np.array([[True, True, True, False]] * 3)
    Q = np.asarray(sliding.basis(jnp.asarray(X), jnp.asarray(keep)))
    np.testing.assert_allclose(np.einsum("kmd,knd->kmn", Q, Q), np.diag([1.0, 1, 0, 0])[None].repeat(3, 0), atol=1e-12)
    v = rng.standard_normal((3, 6))
    pv = np.asarray(sliding.project(jnp.asarray(Q), jnp.asarray(v)))
    np.testing.assert_allclose(np.einsum("kmd,kd->km", X[:, :3], pv), 0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(sliding.project(jnp.asarray(Q), jnp.asarray(pv))), pv, atol=1e-12)  # idempotent


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_basis_drops_dependent_views_in_either_precision(dtype):
    """x_a, x_b and x_a + x_b (the latent data's dependent views): the basis has 2 directions, not a third made
    of float32 rounding noise (which would cut a random direction out of the sliding subspace V)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 10))
    X = jnp.asarray(np.stack([a, b, a + b, 3 * a - b])[None], dtype)
    q = sliding.basis(X, jnp.ones((1, 4), bool))
    norms = np.linalg.norm(np.asarray(q[0], np.float64), axis=1)
    np.testing.assert_allclose(norms, [1, 1, 0, 0], atol=1e-6)
    v = np.asarray(sliding.project(q, jnp.asarray(rng.standard_normal((1, 10)), dtype)), np.float64)
    for x in (a, b):  # P_V v is orthogonal to both views
        assert abs(v[0] @ x) < 1e-5 * np.linalg.norm(x) * np.linalg.norm(v)


def test_first_true_picks_the_first_m_true_columns_in_index_order():
    """The active set's pick (bits packed into 32-bit words) against numpy's ``flatnonzero`` row by row: masks of
    every density, widths below, at and across a word (1, 31, 32, 33, 400, 1797), m larger than the True count."""
    rng = np.random.default_rng(11)
    pick = jax.jit(sliding._first_true, static_argnums=1)
    for n, m in [(1, 2), (31, 4), (32, 16), (33, 16), (400, 14), (1797, 16)]:
        for density in (0.0, 0.002, 0.05, 0.5, 1.0):
            mask = rng.random((9, n)) < density
            mask[0, -1] = True  # the last column alone (the padding bits of its word stay clear)
            mask[0, :-1] = False
            got = np.asarray(pick(jnp.asarray(mask), m))
            for row, g in zip(mask, got):
                want = np.flatnonzero(row)[:m]
                np.testing.assert_array_equal(g, np.concatenate([want, np.full(m - want.size, -1)]),
                                              err_msg=f"n={n}, m={m}, density={density}")


def test_the_carried_basis_is_the_basis_of_the_carried_kinks():
    """The sliding flow carries the ridges' basis, computed only in a step where some row's kinks change: after
    every step of 64 inits on the ridge cloud, where rows' kinks change many times, the carried basis equals, bit
    for bit, the basis of the carried kinks computed on its own. (Taking it from the snap's basis inside the
    analysis instead, one basis a step fewer, rounded differently with the program around it: the values-axis
    and buffer tests caught it.)"""
    ds = _ridge_cloud()
    dyn = engine.Dynamics(method="flow")
    method = sliding_flow.method()
    step = jax.jit(lambda s: engine.step(ds, RELU, UNIFORM, dyn, s, method))
    x = sliding.flat_views(ds)[0]
    fresh = jax.jit(lambda k: sliding.basis(jnp.where((k >= 0)[..., None], x[jnp.maximum(k, 0)], 0.0), k >= 0))
    st = engine.initial_state(parallel.init_weights(jax.random.PRNGKey(3), 0, 64, 3, jnp.float64), dyn, RELU)
    changes = 0
    for _ in range(300):
        old = st.carry.kinks
        st = step(st)
        changes += int(jnp.sum(jnp.any(st.carry.kinks != old, axis=1)))
        np.testing.assert_array_equal(np.asarray(st.carry.q), np.asarray(fresh(st.carry.kinks)))
    assert changes > 64, changes  # the kinks changed, on most rows more than once


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_a_rows_basis_is_the_same_bits_whatever_the_rows_beside_it(dtype):
    """basis's loop stops past the last kept vector of any row (an exact no-op beyond it: the columns stay 0), so a
    row's basis does not depend on how many vectors the other rows keep: the same bits beside rows keeping one
    vector and beside rows keeping all 16, at either place in a batch of 8, with dropped and dependent vectors
    among them; the columns past a row's kept vectors are 0."""
    rng = np.random.default_rng(8)
    k, m, d = 6, 16, 9
    counts = np.array([1, 2, 3, 5, 8, 16])
    X = rng.standard_normal((k, m, d))
    X[2, 2] = X[2, 0] - X[2, 1]  # dependent: a zero column
    keep = np.arange(m)[None] < counts[:, None]
    keep[4, 1] = False  # a dropped vector before kept ones
    arrays = lambda rows: (jnp.asarray(X[rows], dtype), jnp.asarray(keep[rows]))
    for i in range(k - 1):
        q = _alone_and_beside(jax.jit(sliding.basis), arrays, i, k - 1)
        assert np.all(q[counts[i]:] == 0)
        q = q.astype(np.float64)
        kept = np.linalg.norm(q, axis=1) > 0
        np.testing.assert_allclose(q[kept] @ q[kept].T, np.eye(kept.sum()), atol=1e-5)
        assert kept.sum() == np.linalg.matrix_rank(X[i][keep[i]])


def test_a_pinned_init_stops_only_where_the_clarke_box_holds_0():
    """Issue #22's false stop (uniform-alpha cloud 2002, d = 5: 5 of 1000 inits ended `converged` on the crossing
    of views 2 and 20, sliding residual 0.045, where E still rises): in d = 3, inits pinned (a reversal within
    tol) exactly on the crossing w = +-x_a x x_b of two hyperplanes that are not ridges, sliding on nothing. The
    rule before stopped them there; now one step moves each at least tol, along the minimum-norm element v of
    the projected Clarke box, to a higher E. Independent route (numpy, scipy): the one-sided fields of
    E = 1/2 Var_p relu(Xw) (gradient sum_i p_i (h_i - mean h) h'(x_i . w) x_i, a view on its hyperplane gated
    0 or 1), v by box-constrained least squares; E from ``kink_probe.potential``."""
    from scipy.optimize import lsq_linear  # noqa: PLC0415

    ds = _ridge_cloud()
    x = np.asarray(ds.x)
    n = x.shape[0]
    p = np.full(n, 1.0 / n)
    pairs = [(0, 1), (0, 3)]
    W = np.array([s * np.cross(x[a], x[b]) for a, b in pairs for s in (1, -1)])
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    dyn = engine.Dynamics(method="flow")
    k = W.shape[0]  # the state of engine.initial_state, pinned (numpy: no small programs compiled)
    carry = sliding_flow.Carry(np.zeros_like(W), np.full(k, dyn.step_size), np.full((k, sliding.max_active(3)), -1, np.int32),
                               np.ones(k, bool), np.zeros(k), np.zeros((k, sliding.max_active(3), 3)),
                               np.zeros(k, np.int32), np.tile([-np.inf, np.inf], (k, 1)))
    st = engine.State(W, np.zeros(k, np.int32), np.zeros(k, np.int32), np.full(k, np.inf), carry)
    out = jax.jit(lambda s: engine.step(ds, RELU, UNIFORM, dyn, s, sliding_flow.method()))(st)
    assert np.all(np.asarray(out.status) == engine.Status.RUNNING)  # the rule before: all CONVERGED
    w1 = np.asarray(out.w)
    e0, e1 = kink_probe.potential(x, p, W, None), kink_probe.potential(x, p, w1, None)
    for j, (a, b) in enumerate(pair for pair in pairs for _ in (1, -1)):
        w, h = W[j], np.maximum(x @ W[j], 0.0)
        off = np.abs(x @ w) > 1e-12  # every view but a and b
        base = ((p * (h - p @ h)) * (off & (x @ w > 0))) @ x  # the field with both gates at 0
        tang = lambda v: v - (v @ w) * w  # noqa: E731
        cols = np.stack([tang(-p[i] * (p @ h) * x[i]) for i in (a, b)], axis=1)  # gate i on: + c_i x_i, c_i < 0
        lam = lsq_linear(cols, -tang(base), bounds=(0, 1), method="bvls").x
        v = tang(base) + cols @ lam
        assert np.all((lam < 1e-9) | (lam > 1 - 1e-9)), lam  # no ridge: nothing to slide on
        speed = np.linalg.norm(base + (cols @ lam))
        assert np.linalg.norm(v) >= 0.2 * speed  # far from Clarke-stationary
        step = w1[j] - w
        assert np.linalg.norm(step) >= 0.99 * dyn.tol and step @ v >= 0.9 * np.linalg.norm(step) * np.linalg.norm(v)
        assert e1[j] > e0[j]


def test_a_row_without_progress_for_stall_steps_ends_stalled():
    """The sliding flow's stall rule: a row that makes no progress (E no higher, the residual no lower than
    its best so far) for the STALL_STEPS-th step in a row ends STALLED; one step fewer, or a row with
    progress, keeps running (its count reset)."""
    ds = _ridge_cloud()
    W = parallel.init_weights(jax.random.PRNGKey(0), 0, 4, 3, jnp.float64)
    dyn = engine.Dynamics(method="flow")
    method = sliding_flow.method()
    carry = method.init(W, dyn)
    u = dynamics.ascent(ds, RELU, W, UNIFORM)
    energy = jnp.sum(W * u, axis=1) / 2
    # rows 0, 1: their best is this very point (E here, a residual of 0 no step can beat); rows 2, 3: none yet
    best = jnp.stack([energy, jnp.zeros(4)], axis=1).at[2:].set(jnp.array([-jnp.inf, jnp.inf]))
    idle = jnp.array([sliding_flow.STALL_STEPS - 1, sliding_flow.STALL_STEPS - 2] * 2, jnp.int32)
    st = engine.State(W, jnp.zeros(4, jnp.int32), jnp.full(4, 5, jnp.int32), jnp.full(4, jnp.inf),
                      carry._replace(eta=jnp.full(4, 1e-3), idle=idle, u=u, best=best))
    out = jax.jit(lambda s: engine.step(ds, RELU, UNIFORM, dyn, s, method))(st)
    assert list(np.asarray(out.status)) == [engine.Status.STALLED] + [engine.Status.RUNNING] * 3
    assert list(np.asarray(out.carry.idle)) == [sliding_flow.STALL_STEPS, sliding_flow.STALL_STEPS - 1, 0, 0]


def test_with_gaussian_alpha_progress_is_a_move():
    """Gaussian alpha: the flow has no potential, so a row that moves makes progress whatever its E (the
    rows of the test above whose best is this point keep running), and one that does not move does not."""
    ds = _ridge_cloud()
    gauss = pairwise.get_pairwise("gaussian", tau=1.0)
    W = parallel.init_weights(jax.random.PRNGKey(0), 0, 2, 3, jnp.float64)
    dyn = engine.Dynamics(method="flow")
    method = sliding_flow.method()
    u = dynamics.ascent(ds, RELU, W, gauss)
    best = jnp.stack([jnp.sum(W * u, axis=1) / 2, jnp.zeros(2)], axis=1)
    idle = jnp.full(2, sliding_flow.STALL_STEPS - 1, jnp.int32)
    eta = jnp.array([1e-3, 1e3])  # row 0 moves, row 1's step is rejected (w stays)
    st = engine.State(W, jnp.zeros(2, jnp.int32), jnp.full(2, 5, jnp.int32), jnp.full(2, jnp.inf),
                      method.init(W, dyn)._replace(eta=eta, idle=idle, u=u, best=best))
    out = jax.jit(lambda s: engine.step(ds, RELU, gauss, dyn, s, method))(st)
    moved = np.any(np.asarray(out.w) != np.asarray(W), axis=1)
    assert list(moved) == [True, False]
    assert list(np.asarray(out.status)) == [engine.Status.RUNNING, engine.Status.STALLED]


def test_progress_is_a_new_best_energy_or_residual_not_a_return_to_an_old_one():
    """sliding_flow.progress: E must rise past the best at a step with progress (by PROGRESS_E |E|), or the
    residual fall PROGRESS_RES below the lowest; a cycle that comes back to the same E and residual makes none,
    a slow climb makes progress once its rises add up, and a row's first step always does."""
    w, u = jnp.array([[1.0, 0.0]]), jnp.array([[0.6, 0.0]])  # E = w.u / 2 = 0.3 (p = 1)
    best = jnp.array([[0.3, 1e-2]])
    made = lambda w, u, res, best, steps=5: sliding_flow.progress(RELU, w, u, jnp.array([res]), jnp.array([steps]),
                                                                  best)
    assert not bool(made(w, u, 1e-2, best)[0][0])  # the same point again: a cycle
    ok, new = made(w, u * (1 + 1e-7), 1e-2, best)  # a rise below PROGRESS_E of |E|: none, the best stays
    assert not bool(ok[0]) and float(new[0, 0]) == 0.3
    assert bool(made(w, u * (1 + 1.2e-6), 1e-2, new)[0][0])  # small rises add up against the kept best
    ok, new = made(w, u * (1 + 1e-5), 1e-2, best)
    assert bool(ok[0]) and float(new[0, 0]) > 0.3 and float(new[0, 1]) == 1e-2
    ok, new = made(w, u, 0.98e-2, best)  # the residual 2% lower
    assert bool(ok[0]) and float(new[0, 1]) == 0.98e-2 and float(new[0, 0]) == 0.3
    assert not bool(made(w, u, 0.995e-2, best)[0][0])  # 0.5% lower: not yet
    assert bool(made(w, u * 0.5, 1.0, best, steps=0)[0][0])  # a first step resets the best


def test_statuses_stalled_named():
    assert engine.Status.STALLED.text == "stalled on kinks" and engine.Status.STALLED in basins.STATUS_HINTS
