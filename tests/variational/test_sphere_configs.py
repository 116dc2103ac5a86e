"""Sec. 3 on symmetric configurations: Fig. 3's closed form against Eq. 4 on the points and the
uniform limit against quadrature; Prop. 3.1's gradient (Eq. 7) against autodiff; Thm. 3.2
stationarity on the product of spheres; the Riemannian Hessian against geodesic second derivatives;
Prop. A.1's stationary maps; Lemma A.2 inside its region."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.variational import ntxent
from ccdyn.variational import sphere_configs as sc


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
