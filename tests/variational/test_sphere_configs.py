"""Sec. 3 on symmetric configurations: Fig. 3's closed form against Eq. 4 on the points and the
uniform limit against quadrature; Prop. 3.1's gradient (Eq. 7) against autodiff; Thm. 3.2
stationarity on the product of spheres; the Riemannian Hessian against geodesic second derivatives;
Prop. A.1's stationary maps; Lemma A.2 inside its region."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.variational import ntxent
from ccdyn.variational import sphere_configs as sc
from tests.variational.mp_reference import eq4_grad_hessian_mp


def test_fig3_closed_form_equals_eq4_on_the_points_and_the_plateau_is_the_uniform_measure():
    for K in (6,):
        chex.assert_trees_all_close(sc.fig3_loss(K, 0.3),
                                    ntxent.eq4_loss(sc.evenly_spaced(K), jnp.full((K,), 1.0 / K), 0.3), rtol=1e-12)
    t = np.linspace(0, 2 * np.pi, 200001)
    for tau in (0.1,):
        quad = np.log1p(np.trapezoid(np.exp((np.cos(t) - 1) / tau), t) / (2 * np.pi))
        chex.assert_trees_all_close(sc.uniform_loss(tau), quad, rtol=1e-10)
    assert float(sc.fig3_loss(1, 0.3)) == pytest.approx(np.log(2))


def test_plateau_threshold_and_linear_fit_on_known_curves():
    Ks = np.arange(2, 200)
    s = sc.min_sq_distance(Ks)
    plateau = 2.0
    losses = plateau * (1 + np.exp(-0.5 / s))  # excess exp(-0.5/s) = 1e-3 at s* = 0.5 / log(1e3)
    assert sc.plateau_threshold(Ks, losses, plateau, 1e-3) == pytest.approx(0.5 / np.log(1e3), rel=2e-3)
    assert np.isnan(sc.plateau_threshold(Ks[:3], losses[:3], plateau, 1e-3))
    fit = sc.linear_fit([0, 1, 2, 3], [1, 3, 5, 7])
    assert fit["slope"] == pytest.approx(2) and fit["intercept"] == pytest.approx(1) and fit["r2"] == pytest.approx(1)


@pytest.mark.slow
def test_prop31_gradient_eq7_matches_autodiff(key):
    z = jax.random.normal(key, (6, 3))
    p = jax.random.dirichlet(jax.random.PRNGKey(2), jnp.ones(6))
    tau = 0.4
    e = jnp.exp(-ntxent.sq_dists(z) / (2 * tau))
    G = e @ p
    dpsi = 1 / (1 + G)
    eta_prime = -e / tau
    eq7 = jnp.einsum("j,ij,ijd->id", p, (dpsi[:, None] + dpsi[None, :]) * eta_prime, z[:, None] - z[None])
    chex.assert_trees_all_close(sc.euclidean_grad(z, p, tau), eq7, rtol=1e-10)


def test_thm32_symmetric_measures_are_stationary_on_the_spheres_and_others_are_not(key):
    """Each symmetric configuration has a control of the same shape that is not stationary (the same
    compiled gradient judges both); tests/variational/... slow tests and sphere.json cover more."""
    tau, q = 0.3, jnp.full((8,), 1 / 8)
    stat = lambda z, p: float(jnp.abs(sc.riemannian_grad(z, p, tau)).max())  # noqa: E731
    assert stat(sc.evenly_spaced(8), q) < 1e-13
    assert stat(jnp.repeat(sc.evenly_spaced(4), 2, 0), q) < 1e-13  # 4 clusters of 2 equal points (Lemma A.2)
    assert stat(sc.evenly_spaced(8), jnp.arange(1.0, 9.0) / 36) > 1e-3  # uneven weights
    assert stat(sc.polytope("cube"), q) < 1e-13
    rand = jax.random.normal(key, (8, 3))
    assert stat(rand / jnp.linalg.norm(rand, axis=1, keepdims=True), q) > 1e-3


@pytest.mark.slow
def test_riemannian_hessian_equals_second_derivative_along_geodesics(key):
    z = jax.random.normal(key, (4, 3))
    z = z / jnp.linalg.norm(z, axis=1, keepdims=True)
    p, tau = jnp.full((4,), 0.25), 0.5
    h, E = sc.riemannian_hessian(z, p, tau)
    c = jax.random.normal(jax.random.PRNGKey(3), (h.shape[0],))
    v = (E @ c).reshape(4, 3)
    nv = jnp.linalg.norm(v, axis=1, keepdims=True)
    geo = lambda t: ntxent.eq4_loss(jnp.cos(t * nv) * z + jnp.sin(t * nv) * v / nv, p, tau)
    chex.assert_trees_all_close(jax.grad(jax.grad(geo))(0.0), c @ h @ c, rtol=1e-9)
    # rotations are zero modes at a symmetric configuration
    zc = sc.polytope("octahedron")
    hc, Ec = sc.riemannian_hessian(zc, jnp.full((6,), 1 / 6), tau)
    r = sc.rotation_modes(zc, Ec)
    assert r.shape[1] == 3 and float(jnp.abs(hc @ r).max()) < 1e-12


@pytest.mark.slow
def test_propA1_constant_map_and_scaled_maps_are_stationary(key):
    z0 = jnp.tile(jnp.array([[0.3, -1.2, 0.5]]), (5, 1))
    p = jnp.full((5,), 0.2)
    assert float(jnp.abs(sc.euclidean_grad(z0, p, 0.3)).max()) < 1e-14
    # ... but in R^d the constant map is a local maximum of Eq. 4, not a minimizer
    hess = jax.hessian(lambda f: ntxent.eq4_loss(f.reshape(5, 3), p, 0.3))(z0.reshape(-1))
    assert float(jnp.linalg.eigvalsh(hess)[-1]) < 1e-12 and float(jnp.linalg.eigvalsh(hess)[0]) < -1e-3
    z = jax.random.normal(key, (5, 3))
    norms = [float(jnp.linalg.norm(sc.euclidean_grad(k * z, p, 0.3))) for k in (1.0, 2.0, 4.0, 8.0)]
    assert all(b < a for a, b in zip(norms, norms[1:])) and norms[-1] < 1e-8


@pytest.mark.slow
def test_lemmaA2_inside_its_region_and_the_splitting_saddle(key):
    for K, tau in ((2, 0.2), (3, 0.05)):
        r = sc.lemma_check(K, tau, key, n_dirs=2048)
        assert r["lemma_region"] and r["n_admitted"] > 0 and r["min_second_variation_admitted"] > 0
    assert float(sc.lemma_sigma(sc.evenly_spaced(2), jnp.array([[0.0, 1.0], [0.0, 1.0]]))) == np.inf
    # K clusters of two equal points each: splitting a cluster lowers the loss (outside the lemma's h)
    z = jnp.repeat(sc.evenly_spaced(2), 2, 0)
    assert sc.min_hessian_eig(z, jnp.full((4,), 0.25), 0.2) < -0.1
    assert sc.min_hessian_eig(sc.evenly_spaced(2), jnp.full((2,), 0.5), 0.2) > 0


# Exact second derivatives at small tau: closed forms (docs/variational.md) and a 200-digit reference against
# the implementation, to relative accuracy where entries are 1e-83. Distances formed as |a|^2 + |b|^2 - 2 a b^T
# fail all of these.

def _rel(a, b):
    a, b = np.asarray(a), np.asarray(b)
    nz = b != 0
    return float(np.max(np.abs(a[nz] / b[nz] - 1))), float(np.max(np.abs(a[~nz]), initial=0.0))


def test_antipodal_pair_gradient_and_hessian_equal_their_closed_form_to_relative_accuracy():
    z, p = jnp.array([[1.0, 0.0], [-1.0, 0.0]]), jnp.full((2,), 0.5)  # exact points (evenly_spaced rounds sin(pi))
    for tau in (0.01, 0.05, 0.3):
        grad, hess, lam = sc.antipodal_grad_hessian(tau)
        loss = functools.partial(ntxent.eq4_loss, p=p, tau=tau, dists="diff")
        autodiff = jax.hessian(lambda f: loss(f.reshape(2, 2)))(z.reshape(-1))  # noqa: B023
        g, g_err, h, h_err = ntxent.eq4_grad_hessian(z, p, tau)
        for route in (autodiff, h):                                  # 2 / tau is rounded in the closed form: 1e-13
            rel, zeros = _rel(route, hess)
            assert rel < 1e-13 and zeros == 0, (tau, rel, zeros)
        assert _rel(sc.euclidean_grad(z, p, tau), grad / 0.5)[0] < 1e-13 and _rel(g, grad)[0] < 1e-13
        eig, bound = sc.min_hessian_eig_bound(z, p, tau)             # rotation removed: 2 e / (tau (3 + e))
        assert abs(eig / lam - 1) < 1e-12 and bound < 1e-10 * lam
    assert float(sc.antipodal_grad_hessian(0.01)[1][0, 0]) == pytest.approx(1.8405823805598607e-83, rel=1e-14)


def test_evenly_spaced_riemannian_hessian_equals_its_closed_form_to_relative_accuracy():
    K, p = 8, jnp.full((8,), 1 / 8)
    z = sc.evenly_spaced(K)
    for tau in (0.01, 1.0):                                          # entries 8e-86 to 5e-11; 2e-3 to 2e-2
        h, E = sc.riemannian_hessian(z, p, tau)
        theta = 2 * np.pi * np.arange(K) / K
        t = np.stack([-np.sin(theta), np.cos(theta)], -1)            # d/dtheta_a; E's columns are +-t_a
        s = np.array([np.asarray(E)[2 * a:2 * a + 2, a] @ t[a] for a in range(K)])
        assert np.allclose(np.abs(s), 1, atol=1e-14)
        closed = np.sign(s)[:, None] * sc.evenly_spaced_angle_hessian(K, tau) * np.sign(s)[None, :]
        rel, _ = _rel(h, closed)
        assert np.all(closed != 0) and rel < 1e-12, (tau, rel)
        lam = np.sort(sc.evenly_spaced_hessian_eigs(K, tau))
        assert lam[0] == 0 and lam[1] > 0                             # the rotation, then all stable
        ev = np.linalg.eigvalsh(sc.evenly_spaced_angle_hessian(K, tau))
        assert np.allclose(np.sort(ev), lam, rtol=0, atol=1e-13 * np.abs(lam).max())
        eig, bound = sc.min_hessian_eig_bound(z, p, tau)
        assert abs(eig / lam[1] - 1) < 1e-10 and bound < 1e-8 * lam[1], (tau, eig, lam[1])


def test_riemannian_hessian_error_bound_holds_against_200_digits():
    """K = 4 at tau = 0.01 (entries 1e-44 and 1e-83): the float64 Riemannian Hessian is within
    riemannian_hessian_err of the same projection of a 200-digit finite-difference Hessian at the same points."""
    z, p, tau = sc.evenly_spaced(4), jnp.full((4,), 0.25), 0.01
    g_mp, h_mp = eq4_grad_hessian_mp(z, p, tau)
    h, E = sc.riemannian_hessian(z, p, tau)
    E = np.asarray(E)
    ref = E.T @ h_mp @ E - np.diag(np.repeat(np.sum(np.asarray(z) * g_mp, -1), 1))
    err = np.asarray(sc.riemannian_hessian_err(z, p, tau))
    assert np.all(np.abs(np.asarray(h) - ref) <= err) and np.all(err < 1e-11 * np.abs(ref))


def test_lemmaA2_second_variations_are_resolved_at_small_tau(key):
    """Three evenly spaced points, tau = 0.01 (interactions e^{-150}): every admitted direction's second
    variation is ~1e-62 and its sign is resolved; the smallest Riemannian eigenvalue is the closed form's."""
    r = sc.lemma_check(3, 0.01, key, n_dirs=256)
    assert r["n_admitted"] > 0 and r["admitted_resolved"] and r["n_admitted_resolved"] == r["n_admitted"]
    assert r["n_admitted_resolved_negative"] == 0
    assert 0 < r["min_second_variation_admitted_err"] < 1e-6 * r["min_second_variation_admitted"]
    lam = np.sort(sc.evenly_spaced_hessian_eigs(3, 0.01))[1]
    assert r["riemannian_eig_resolved"] and r["min_riemannian_eig"] == pytest.approx(lam, rel=1e-12)
