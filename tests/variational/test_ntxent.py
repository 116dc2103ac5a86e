"""Eq. 1 / Eq. 4 losses on weighted point sets against explicit loops, and Prop. 2.1 (an invariant map
makes the loss a function of the latent distribution only) on two different input distributions."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.variational import ntxent
from tests.variational.mp_reference import eq4_grad_hessian_mp


def _eq4_loop(z, p, tau):
    z, p = np.asarray(z), np.asarray(p)
    out = 0.0
    for i in range(len(p)):
        g = sum(p[j] * np.exp(-np.sum((z[i] - z[j]) ** 2) / (2 * tau)) for j in range(len(p)))
        out += p[i] * np.log1p(g)
    return out


def _eq1_loop(z, p, q, tau, exclude_self):
    z, p, q = np.asarray(z), np.asarray(p), np.asarray(q)
    cos = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    out = 0.0
    for i in range(z.shape[0]):
        for v in range(z.shape[1]):
            for w in range(z.shape[1]):
                num = sum(p[j] * (np.exp(cos(z[i, v], z[j, v]) / tau) + np.exp(cos(z[i, v], z[j, w]) / tau))
                          for j in range(z.shape[0]) if not (exclude_self and j == i))
                out += p[i] * q[v] * q[w] * np.log1p(num / np.exp(cos(z[i, v], z[i, w]) / tau))
    return out


@pytest.mark.slow
def test_eq4_matches_a_loop_and_views_reduce_to_it(key):
    z = jax.random.normal(key, (7, 3))
    p = jax.random.dirichlet(jax.random.PRNGKey(1), jnp.ones(7))
    chex.assert_trees_all_close(ntxent.eq4_loss(z, p, 0.3), _eq4_loop(z, p, 0.3), rtol=1e-12)
    same_views = jnp.repeat(z[:, None], 3, 1)
    chex.assert_trees_all_close(ntxent.eq4_loss_views(same_views, p, jnp.array([0.2, 0.3, 0.5]), 0.3),
                                ntxent.eq4_loss(z, p, 0.3), rtol=1e-12)


@pytest.mark.slow
def test_eq4_with_views_against_its_definition(key):
    z = jax.random.normal(key, (4, 2, 3))
    p, q = jnp.array([0.1, 0.2, 0.3, 0.4]), jnp.array([0.3, 0.7])
    zn, pn, qn = map(np.asarray, (z, p, q))
    e = lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * 0.4))
    ref = sum(pn[i] * qn[v] * qn[w] * np.log1p(sum(pn[j] * e(zn[i, v], zn[j, w]) for j in range(4)) / e(zn[i, v], zn[i, w]))
              for i in range(4) for v in range(2) for w in range(2))
    chex.assert_trees_all_close(ntxent.eq4_loss_views(z, p, q, 0.4), ref, rtol=1e-12)
    chex.assert_trees_all_close(ntxent.eq4_loss_views(z, p, q, 0.4, dists="diff"), ref, rtol=1e-12)


@pytest.mark.parametrize("exclude", ["none", "self"])
@pytest.mark.slow
def test_eq1_matches_a_loop(key, exclude):
    z = jax.random.normal(key, (5, 2, 3))
    p, q = jnp.full((5,), 0.2), jnp.array([0.5, 0.5])
    chex.assert_trees_all_close(ntxent.eq1_loss_views(z, p, q, 0.5, exclude),
                                _eq1_loop(z, p, q, 0.5, exclude == "self"), rtol=1e-12)


@pytest.mark.slow
def test_eq5_gaussian_similarity_is_the_cosine_on_the_sphere(key):
    u = jax.random.normal(key, (6, 4))
    u = u / jnp.linalg.norm(u, axis=1, keepdims=True)
    tau = 0.2
    chex.assert_trees_all_close(jnp.exp(-ntxent.sq_dists(u) / (2 * tau)),
                                jnp.exp(-1 / tau) * jnp.exp(ntxent.cosine(u) / tau), rtol=1e-12)


def _invariant_inputs(u, r, D, per_atom, n_views, seed):
    """Inputs in R^D whose first two coordinates are positive multiples of the latent points u_k and whose
    views add noise in the other coordinates: f(x) = x[:2] (cosine-normalized) is invariant."""
    rng = np.random.default_rng(seed)
    xs, ps = [], []
    for k, m in enumerate(per_atom):
        for _ in range(m):
            base = np.concatenate([rng.uniform(0.5, 3.0) * np.asarray(u[k]), np.zeros(D - 2)])
            views = [base + np.concatenate([np.zeros(2), rng.normal(size=D - 2)]) for _ in range(n_views)]
            xs.append(views)
            ps.append(float(r[k]) / m)
    q = rng.dirichlet(np.ones(n_views))
    return jnp.asarray(np.array(xs)), jnp.asarray(ps), jnp.asarray(q)


def test_prop21_invariant_map_gives_the_latent_form_whatever_the_input():
    u = jnp.array([[1.0, 0.0], [0.0, 1.0], [-0.6, -0.8]])
    r = jnp.array([0.5, 0.3, 0.2])
    f = lambda x: x[..., :2]
    a = _invariant_inputs(u, r, D=4, per_atom=(2, 1, 3), n_views=2, seed=0)
    b = _invariant_inputs(u, r, D=6, per_atom=(1, 4, 1), n_views=3, seed=1)
    la = ntxent.eq1_loss_views(f(a[0]), a[1], a[2], 0.5, "none")
    lb = ntxent.eq1_loss_views(f(b[0]), b[1], b[2], 0.5, "none")
    latent = ntxent.latent_loss(u, r, 0.5, "none", positive=True)
    chex.assert_trees_all_close(la, latent, rtol=1e-12)
    chex.assert_trees_all_close(lb, latent, rtol=1e-12)


@pytest.mark.slow
def test_prop21_for_the_generalized_loss_eq4():
    u = jnp.array([[1.0, 0.0], [0.0, 1.0], [-0.6, -0.8]])
    r = jnp.array([0.5, 0.3, 0.2])
    a = _invariant_inputs(u, r, D=4, per_atom=(2, 1, 3), n_views=2, seed=0)
    b = _invariant_inputs(u, r, D=6, per_atom=(1, 4, 1), n_views=3, seed=1)
    unit = lambda x: x[..., :2] / jnp.linalg.norm(x[..., :2], axis=-1, keepdims=True)  # noqa: E731
    e4 = lambda s: ntxent.eq4_loss_views(unit(s[0]), s[1], s[2], 0.5)  # noqa: E731
    chex.assert_trees_all_close(e4(a), e4(b), rtol=1e-12)
    chex.assert_trees_all_close(e4(a), ntxent.eq4_loss(u, r, 0.5), rtol=1e-12)


@pytest.mark.slow
def test_prop21_readings_that_break_it():
    """The formula as printed (no positive-pair denominator e^{1/tau}) and the per-sample indicator on an
    input that f merges are not the latent form: the checks above can fail."""
    u = jnp.array([[1.0, 0.0], [0.0, 1.0]])
    r = jnp.array([0.5, 0.5])
    x, p, q = _invariant_inputs(u, r, D=3, per_atom=(2, 2), n_views=1, seed=0)
    eq1 = ntxent.eq1_loss_views(x[..., :2], p, q, 0.5, "none")
    assert abs(float(ntxent.latent_loss(u, r, 0.5, "none", positive=False) - eq1)) > 0.1
    self_excl = ntxent.eq1_loss_views(x[..., :2], p, q, 0.5, "self")
    atom = ntxent.latent_loss(u, r, 0.5, "atom", positive=True)
    assert abs(float(self_excl - atom)) > 1e-3


@pytest.mark.slow
def test_bad_exclude_is_refused():
    with pytest.raises(ValueError, match="exclude"):
        ntxent.latent_loss(jnp.eye(2), jnp.array([0.5, 0.5]), exclude="others")


@pytest.mark.slow  # 3 s; the default form's Hessian against its closed form stays in the fast suite
def test_both_distance_forms_give_second_derivatives_within_the_200_digit_bound(key):
    """Both forms give the same values; the written-out gradient and Hessian, and autodiff of Eq. 4 through
    either form (the default GEMM through its custom JVP), are within the stated bounds of a 200-digit
    finite-difference reference on random points with a coincident pair."""
    z = jax.random.normal(key, (4, 3))
    z = z.at[3].set(z[2])                                             # two coincident points
    chex.assert_trees_all_close(ntxent.sq_dists_diff(z), ntxent.sq_dists(z), atol=1e-14)
    assert float(ntxent.sq_dists_diff(z)[2, 3]) == 0.0
    p, tau = jnp.array([0.1, 0.2, 0.3, 0.4]), 0.2
    g_mp, h_mp = eq4_grad_hessian_mp(z, p, tau)
    g, g_err, h, h_err = ntxent.eq4_grad_hessian(z, p, tau)
    routes = [h] + [jax.hessian(lambda x: ntxent.eq4_loss(x.reshape(4, 3), p, tau, dists=d))(z.reshape(-1))  # noqa: B023
                    for d in ntxent.DISTS]
    for route in routes:
        assert np.all(np.abs(np.asarray(route) - h_mp) <= np.asarray(h_err))
    assert np.all(np.abs(np.asarray(g) - g_mp) <= np.asarray(g_err))
    assert float(jnp.max(h_err)) < 1e-12 * float(jnp.max(jnp.abs(h)))


def _two_point_hessian(z, p, tau):
    """Closed form of Eq. 4's Hessian for two points (derived in docs/variational.md, "Two points"), in
    NumPy float64 from the difference Delta = z_0 - z_1: with e = exp(-|Delta|^2 / 2 tau), G_0 = p_0 + p_1 e,
    G_1 = p_1 + p_0 e, c_i = 1 / (1 + G_i), L = p_0 log(1 + G_0) + p_1 log(1 + G_1) depends on z only through
    e, so H = p_0 p_1 (c_0 + c_1) hess(e) - p_0 p_1 (p_1 c_0^2 + p_0 c_1^2) grad(e) grad(e)^T with
    grad(e) = (-e Delta / tau, e Delta / tau) and hess(e) = [[M, -M], [-M, M]], M = e (Delta Delta^T / tau^2 - I / tau)."""
    z, p = np.asarray(z, np.float64), np.asarray(p, np.float64)
    delta = z[0] - z[1]
    e = np.exp(-np.sum(delta * delta) / (2 * tau))
    c0, c1 = 1 / (1 + p[0] + p[1] * e), 1 / (1 + p[1] + p[0] * e)
    m = e * (np.outer(delta, delta) / tau ** 2 - np.eye(len(delta)) / tau)
    grad_e = np.concatenate([-e * delta / tau, e * delta / tau])
    return (p[0] * p[1] * (c0 + c1) * np.block([[m, -m], [-m, m]])
            - p[0] * p[1] * (p[1] * c0 ** 2 + p[0] * c1 ** 2) * np.outer(grad_e, grad_e))


@pytest.mark.parametrize("tau", [1.0, 0.1, 0.03, 0.01])
def test_default_hessian_of_eq4_equals_the_two_point_closed_form(key, tau):
    """jax.hessian of eq4_loss with its default arguments (GEMM values, custom JVP) equals the two-point
    closed form entrywise to relative accuracy, down to tau = 0.01: at the antipodal pair (d^2 L / dz_0x^2 =
    1.84e-83 at tau = 0.01, where naive autodiff of the GEMM gave -1.8e-15 at tau = 0.015) and at random
    points of S^2 with unequal weights (entries ~ e^-100 and below). Exact zeros stay exactly 0."""
    cases = [(jnp.array([[1.0, 0.0], [-1.0, 0.0]]), jnp.array([0.5, 0.5]))]
    z = jax.random.normal(key, (2, 3))
    cases.append((z / jnp.linalg.norm(z, axis=1, keepdims=True), jnp.array([0.3, 0.7])))
    for z, p in cases:
        n, d = z.shape
        got = np.asarray(jax.hessian(lambda x: ntxent.eq4_loss(x.reshape(n, d), p, tau))(z.reshape(-1)))  # noqa: B023
        want = _two_point_hessian(z, p, tau)
        assert np.all(np.abs(got - want) <= 1e-12 * np.abs(want)), (tau, got, want)
        assert np.all((got == 0) == (want == 0))
    if tau == 0.01:
        assert float(got[0, 0]) != 0.0 and float(jax.hessian(lambda x: ntxent.eq4_loss(
            x.reshape(2, 2), cases[0][1], tau))(cases[0][0].reshape(-1))[0, 0]) == pytest.approx(
            1.8405823805598607e-83, rel=1e-13)


def test_gemm_distances_keep_the_gemm_values_and_zero_self_tangents(key):
    """The default distances' values are the GEMM form's bits (throughput unchanged); their JVP is the
    differences' (2 (a_i - b_j) . (da_i - db_j)), exactly 0 on the diagonal, where naive autodiff of the GEMM
    leaves rounding."""
    a, da = jax.random.normal(key, (2, 5, 3))
    gemm = jnp.sum(a * a, -1)[:, None] + jnp.sum(a * a, -1)[None, :] - 2.0 * a @ a.T
    assert np.array_equal(np.asarray(ntxent.sq_dists(a)), np.asarray(gemm))
    out, tangent = jax.jvp(ntxent.sq_dists, (a,), (da,))
    _, want = jax.jvp(ntxent.sq_dists_diff, (a,), (da,))
    chex.assert_trees_all_close(tangent, want, rtol=1e-14, atol=1e-14)
    assert np.all(np.diagonal(np.asarray(tangent)) == 0.0)
    b, db = a[:3] + 0.1, da[:3]
    _, t2 = jax.jvp(ntxent.sq_dists, (a, b), (da, db))
    chex.assert_trees_all_close(t2, jax.jvp(ntxent.sq_dists_diff, (a, b), (da, db))[1], rtol=1e-13, atol=1e-14)


def test_unknown_distance_form_is_refused(key):
    z = jax.random.normal(key, (4, 3))
    with pytest.raises(ValueError, match="dists"):
        ntxent.pairwise_sq_dists(z, dists="cosine")
