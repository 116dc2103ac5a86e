"""Roughness rho (Sec. 3.2, Thm. 1-2, Cor. 2): finite-difference estimates against closed forms of
constructed fields and data models."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, pairwise, sphere
from ccdyn.one_layer import roughness

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def _smooth_field(d, seed=0):
    """A(w) = B + tanh(c^T w) M: rho(w) = sech^2(c^T w) ||P_w^perp c|| ||M w|| exactly."""
    rng = np.random.default_rng(seed)
    b, m = rng.standard_normal((2, d, d))
    b, m, c = b + b.T, m + m.T, rng.standard_normal(d)
    a_fn = lambda w: jnp.asarray(b) + jnp.tanh(jnp.dot(jnp.asarray(c), w)) * jnp.asarray(m)

    def exact(w):
        return (1 - np.tanh(c @ w) ** 2) * np.linalg.norm(c - (c @ w) * w) * np.linalg.norm(m @ w)

    return a_fn, exact, rng


@pytest.mark.parametrize("d", [3, 6])
def test_roughness_of_a_smooth_field_converges_to_the_closed_form(d):
    a_fn, exact, rng = _smooth_field(d)
    w = rng.standard_normal(d)
    w /= np.linalg.norm(w)
    r = roughness.roughness_profile(a_fn, w, [1e-1, 1e-2, 1e-3, 1e-4])
    chex.assert_shape([r.radii, r.rho_at, r.crossings, r.jacobian_max], (4,))
    assert np.all(r.resolved) and np.all(r.crossings == -1)
    errors = np.abs(r.rho_at - exact(w))
    assert errors[-1] < 1e-3 * exact(w)
    assert np.all(np.diff(errors) < 0)  # O(eps) convergence
    np.testing.assert_allclose(r.rho, r.rho_at[-1])


def test_flow_jacobian_from_differences_matches_autodiff():
    """Q^T (A + dA[.] w) Q - lambda I from central differences equals jacfwd of A(w) w on the sphere."""
    a_fn, _, rng = _smooth_field(5, seed=3)
    w = rng.standard_normal(5)
    w /= np.linalg.norm(w)
    r = roughness.roughness_profile(a_fn, w, [1e-4])
    q = np.asarray(sphere.tangent_basis(jnp.asarray(w)))
    jac = np.asarray(jax.jacfwd(lambda v: a_fn(v) @ v)(jnp.asarray(w)))
    lam = w @ np.asarray(a_fn(jnp.asarray(w))) @ w
    ref = np.max(np.linalg.eigvals(q.T @ jac @ q - lam * np.eye(4)).real)
    np.testing.assert_allclose(r.jacobian_max[0], ref, atol=1e-6)


def test_constant_field_and_linear_activation_have_zero_roughness(key):
    ds = data.gaussian_mixture(key, 2 * np.eye(3), 0.3, 500)
    w = np.array([1.0, 0.2, 0.1])
    r = roughness.roughness(ds, activations.get_activation("linear"), w, UNIFORM, [1e-1, 1e-3])
    np.testing.assert_allclose(r.rho_at, 0.0, atol=1e-12)
    assert np.all(r.resolved)


def test_relu_on_an_exact_discrete_population_is_locally_flat(key):
    """Latent summation (Eq. 9): no support point near u_m's hyperplane, so A is constant nearby."""
    u = data.near_orthogonal_basis(key, 5, 5)
    ds = data.latent_summation(u, 0.2)
    r = roughness.roughness(ds, RELU, u[:, 0], UNIFORM, [1e-2, 1e-3])
    np.testing.assert_allclose(r.rho_at, 0.0, atol=1e-12)
    assert np.all(r.crossings == 0) and not r.resolved.any() and np.isnan(r.rho)
    # the finite-difference flow Jacobian is then A - lambda* I on the tangent space: -(lambda1 - q)
    np.testing.assert_allclose(r.jacobian_max, 0.2 - 0.64, atol=1e-9)


def test_relu_roughness_on_sampled_data_is_resolved_and_stable_across_n():
    """On a continuous model rho is a population quantity: estimates at n and 4n agree (20%)."""
    w = np.array([1.0, 0.05, 0.0])
    est = []
    for n in (8000, 32000):
        ds = data.gaussian_mixture(jax.random.PRNGKey(1), 2 * np.eye(3), 0.3, n)
        r = roughness.roughness(ds, RELU, w, UNIFORM, np.geomspace(0.1, 1e-3, 5), min_crossings=100)
        assert r.resolved[0] and not r.resolved[-1]
        assert np.all(np.diff(r.crossings) <= 0)
        est.append(r.rho)
    assert 0.0 < est[0] and abs(est[0] - est[1]) < 0.2 * est[1]


def test_gaussian_z0_matches_its_definition_and_bounds(key):
    ds = data.gaussian_mixture(key, 2 * np.eye(3), 0.3, 400)
    w = np.array([0.6, 0.8, 0.0])
    ref = np.mean(np.exp(-np.maximum(np.asarray(ds.x) @ w, 0) ** 2 / (2 * 0.5)))
    z0 = roughness.gaussian_z0(ds, RELU, w, 0.5)
    np.testing.assert_allclose(z0, ref, rtol=1e-12)
    assert 0 < roughness.gaussian_z0(ds, RELU, w, 0.05) < z0 < roughness.gaussian_z0(ds, RELU, w, 50) <= 1


@pytest.mark.parametrize("d", [2, 4])
def test_plane_density_of_a_standard_gaussian(d):
    """max over a hyperplane through 0 of the N(0, I) density is (2 pi)^(-d/2)."""
    x = np.random.default_rng(1).standard_normal((20000, d))
    w = np.eye(d)[0]
    est = roughness.plane_density_max(data.make_dataset(x), w)
    np.testing.assert_allclose(est, (2 * np.pi) ** (-d / 2), rtol=0.2)


def test_theorem2_bound_scale():
    ds = data.make_dataset(np.array([[2.0, 0.0], [0.0, 1.0]]))
    # C0 = 2, vol of the disc of radius 2 = 4 pi: bound = 8 * 4 pi * r / pi = 32 r
    np.testing.assert_allclose(roughness.theorem2_bound(ds, 0.5), 16.0)
