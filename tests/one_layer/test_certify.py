"""Certificates (Def. 3, Thm. 1): closed forms of Eq. 8-9 and the Riemannian Hessian by finite differences."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, one_layer, pairwise, sphere
from ccdyn.one_layer import certify

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


@pytest.mark.parametrize("q", [0.30, 0.37, 0.39, 0.45])
def test_latent_summation_lme_threshold(key, q):
    """u_m is an LME (and stable) exactly when q < (3 - sqrt 5)/2 ~ 0.382 (Eq. 9)."""
    u = data.near_orthogonal_basis(key, 6, 6)
    ds = data.latent_summation(u, q)
    certs = jax.vmap(lambda w: certify.certify(ds, RELU, w, UNIFORM))(jnp.asarray(u.T))
    below = q < data.Q_LME_THRESHOLD
    np.testing.assert_allclose(certs.residual, 0.0, atol=1e-12)  # a critical point on both sides
    np.testing.assert_allclose(certs.rayleigh, (1 - q) ** 2, rtol=1e-12)
    np.testing.assert_allclose(certs.gap, ((1 - q) ** 2 - q) if below else 0.0, atol=1e-12)
    assert bool(jnp.all(certs.is_lme == below)) and bool(jnp.all(certs.is_stable == below))
    # On the tangent space the Hessian is A - lambda* I (A locally constant): max eig q - (1-q)^2.
    np.testing.assert_allclose(certs.hessian_max, q - (1 - q) ** 2, atol=1e-12)


def test_latent_categorical_every_pattern_is_stable():
    u = np.eye(5)[:, :4]
    ds = data.latent_categorical(u, [0.1, 0.2, 0.3, 0.4])
    certs = jax.vmap(lambda w: certify.certify(ds, RELU, w, UNIFORM))(jnp.asarray(u.T))
    assert bool(jnp.all(certs.is_lme)) and bool(jnp.all(certs.is_stable))
    np.testing.assert_allclose(certs.lam1, [0.09, 0.16, 0.21, 0.24], atol=1e-12)


def test_non_critical_point_is_not_certified(key):
    ds = data.latent_summation(data.near_orthogonal_basis(key, 4, 4), 0.2)
    w = jnp.array([1.0, 1.0, 0.3, 0.0]) / jnp.sqrt(2.09)
    cert = certify.certify(ds, RELU, w, UNIFORM)
    assert float(cert.residual) > 1e-3 and not bool(cert.is_lme) and not bool(cert.is_stable)


@pytest.mark.parametrize("name,kind", [pytest.param("quadratic", "uniform", marks=pytest.mark.slow), ("quadratic", "gaussian"),
                                       ("gelu", "uniform")])
def test_riemannian_hessian_matches_geodesic_finite_differences(key, name, kind):
    """v^T Hess v = d^2/dt^2 E(cos t w + sin t v) at t = 0 for unit tangent v (alpha fixed at w)."""
    ds = data.gaussian_mixture(key, np.diag([2.0, 1.0, 0.5]), 0.4, 25)
    act, pw = activations.get_activation(name), pairwise.get_pairwise(kind, 0.7)
    w = jnp.array([0.6, 0.64, 0.48])
    hess = certify.riemannian_hessian(ds, act, w, pw)
    q = sphere.tangent_basis(w)
    chex.assert_shape(hess, (2, 2))
    chex.assert_trees_all_close(q.T @ w, jnp.zeros(2), atol=1e-12)
    alpha = one_layer.node_alpha(ds, act, pw, w)
    e = jax.jit(lambda v: one_layer.energy_given_alpha(ds, act, v, alpha))
    t = 1e-4
    for c in ([1.0, 0.0], [0.0, 1.0], [0.6, -0.8]):
        v = q @ jnp.asarray(c)
        fd = (e(np.cos(t) * w + np.sin(t) * v) - 2 * e(w) + e(np.cos(t) * w - np.sin(t) * v)) / t**2
        chex.assert_trees_all_close(jnp.asarray(c) @ hess @ jnp.asarray(c), fd, rtol=1e-5, atol=1e-8)


def test_certificate_float32_tolerances(key):
    u = data.near_orthogonal_basis(key, 6, 6)
    ds = data.latent_summation(u, 0.2)
    ds32 = data.make_dataset(ds.x, ds.p, dtype=jnp.float32)
    cert = certify.certify(ds32, RELU, jnp.asarray(u[:, 0], jnp.float32), UNIFORM)
    chex.assert_type(cert.lam1, jnp.float32)
    assert bool(cert.is_lme) and bool(cert.is_stable)


@pytest.mark.parametrize("q", [0.3, 0.45])
def test_flow_jacobian_is_degree_times_hessian_for_uniform_alpha(key, q):
    u = data.near_orthogonal_basis(key, 5, 5)
    ds = data.latent_summation(u, q)
    w = jnp.asarray(u[:, 1])
    jac = certify._field_jacobian(ds, RELU, w, UNIFORM)
    hess = jax.jit(certify.riemannian_hessian, static_argnums=(1, 3))(ds, RELU, w, UNIFORM)
    chex.assert_trees_all_close(jac, hess, atol=1e-12)
    assert (certify.flow_stability(ds, RELU, w, UNIFORM) < 0) == (q < data.Q_LME_THRESHOLD)


def test_flow_jacobian_with_gaussian_alpha_matches_finite_differences(key):
    """J v = d/dt P^perp u(w(t)) along a geodesic, alpha(w) moving with w (not frozen)."""
    ds = data.gaussian_mixture(key, np.diag([2.0, 1.0, 0.5]), 0.4, 25)
    act, pw = activations.get_activation("quadratic"), pairwise.get_pairwise("gaussian", 0.7)
    w = jnp.array([0.6, 0.64, 0.48])
    jac = one_layer.field_jacobian(ds, act, w, pw)
    q = sphere.tangent_basis(w)

    def field(v):  # tangent field with alpha evaluated (under stop_gradient) at v itself
        return sphere.tangent(v[None], one_layer.ascent(ds, act, v[None], pw))[0]

    t = 1e-6
    for c in ([1.0, 0.0], [0.0, 1.0]):
        v = q @ jnp.asarray(c)
        fd = (field(np.cos(t) * w + np.sin(t) * v) - field(np.cos(t) * w - np.sin(t) * v)) / (2 * t)
        # Tangent part of the derivative: Q^T (-(w^T u) v - w (v^T u) + P^perp Du v) = J c.
        chex.assert_trees_all_close(jac @ jnp.asarray(c), q.T @ fd, rtol=1e-5, atol=1e-7)


@pytest.mark.slow  # 4 s; fast: the certificates in test_kinks.py and test_basins.py
def test_assess_names_the_certificate_and_keeps_a_smooth_optimum(key):
    """u_m (q = 0.3 < 0.382, Eq. 9) is a smooth LME: the kink refinement leaves it in place (no view on a
    hyperplane) and the certificate says which test made it stable."""
    u = data.near_orthogonal_basis(key, 5, 5)
    ds = data.latent_summation(u, 0.3)
    row = certify.assess(ds, RELU, UNIFORM, np.asarray(u[:, 2]) + 1e-3)
    np.testing.assert_allclose(row["w"], u[:, 2], atol=1e-12)
    assert row["certificate"] == "smooth" and row["kink_rank"] == 0 and row["stable"] and row["is_lme"]
    assert row["certificate_note"] == "" and row["residual"] < 1e-12
