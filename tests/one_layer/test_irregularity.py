"""Irregularity omega with power iteration (Def. 4, Thm. 3): closed forms of mu, nu, omega, L and
kappa of a linear field, the cap B_gamma, and the Thm. 3 / Lemma 11 check near the patterns."""

import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, one_layer, pairwise
from ccdyn.one_layer import irregularity

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def test_irregularity_closed_forms():
    mu, nu, omega = irregularity.irregularity(1.0, 0.44, 0.64, 0.0, 5.0)
    np.testing.assert_allclose(mu, (0.2 / 0.64) ** 2)  # c = 1: mu = (lambda2/lambda1)^2
    np.testing.assert_allclose(nu, 0.0)
    c, gap, lam1, lip, kap = 0.9, 0.3, 1.0, 0.2, 2.0
    mu, nu, omega = irregularity.irregularity(c, gap, lam1, lip, kap)
    mu_ref = 0.5 * (1 + c) / c ** 2 * 0.7 ** 2
    nu_ref = 2 * kap * lip ** 2 * (1 + mu_ref * c) + 2 * lip / gap * np.sqrt(mu_ref * (1 + mu_ref * c))
    np.testing.assert_allclose([mu, nu, omega], [mu_ref, nu_ref, mu_ref + nu_ref])


def test_lipschitz_and_kappa_of_a_linear_field():
    """A(w) = B + (c^T w) M: L = ||M|| |c| at most (attained along c), kappa finite."""
    rng = np.random.default_rng(0)
    d = 4
    b = np.diag([4.0, 1.0, 0.5, 0.2])
    m = rng.standard_normal((d, d))
    m = 0.05 * (m + m.T)
    c = rng.standard_normal(d)
    a_fn = lambda w: jnp.asarray(b) + jnp.dot(jnp.asarray(c), w) * jnp.asarray(m)
    pts = irregularity.sample_cap(np.eye(d)[0], 0.9, 64, rng)
    np.testing.assert_allclose(np.linalg.norm(pts, axis=1), 1.0)
    assert np.all(pts @ np.eye(d)[0] >= 0.9 - 1e-12)
    a, lam, phi, _ = irregularity.spectra(a_fn, pts)
    lip, kappa = irregularity.lipschitz_and_kappa(a, lam, phi, pts)
    bound = np.abs(np.linalg.eigvalsh(m)).max() * np.linalg.norm(c)
    assert 0.5 * bound < lip <= bound + 1e-12
    assert 0 < kappa < 10


def test_cap_threshold_matches_eq_103():
    """w^T w0 >= threshold  <=>  ||w - w0|| <= sqrt(2 (1 + gamma)(1 - c0)) / (1 - sqrt gamma)."""
    for c0, g in [(0.99, 0.1), (0.9, 0.3), (0.999, 0.5)]:
        radius = np.sqrt(2 * (1 + g) * (1 - c0)) / (1 - np.sqrt(g))
        np.testing.assert_allclose(irregularity.cap_threshold(c0, g), 1 - radius ** 2 / 2, rtol=1e-12)


def test_theorem3_certifies_starts_near_patterns_and_power_iteration_obeys_it(key):
    """Latent summation, ||U^T U - I|| = 0.05: from u_m the condition holds with gamma ~ mu and
    power iteration stays in B_gamma, c_t increases at the predicted rate, and w converges."""
    u = data.near_orthogonal_basis(key, 6, 6, 0.05)
    ds = data.latent_summation(u, 0.2)
    a_fn = lambda w: one_layer.a_matrix(ds, RELU, w, UNIFORM)
    out = irregularity.theorem3_check(a_fn, u[:, 0], [0.05, 0.1, 0.2, 0.4], n_samples=32, n_steps=60)
    assert out["gamma_certified"] is not None and out["gamma_certified"] <= 0.2
    assert out["stays_in_ball"] and out["c_monotone"] and out["rate_holds"] and out["converged"]
    assert out["c0"] > 0.99 and out["c_final"] == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ValueError, match="gammas"):
        irregularity.theorem3_check(a_fn, u[:, 0], [1.5])


def test_power_trajectory_matches_one_layer_power_iteration(key):
    u = data.near_orthogonal_basis(key, 5, 5, 0.1)
    ds = data.latent_summation(u, 0.2)
    w0 = jnp.asarray(u[:, 1] + 0.3 * u[:, 2])
    traj = irregularity.power_trajectory(lambda w: one_layer.a_matrix(ds, RELU, w, UNIFORM), w0, 10)
    w, _, _ = one_layer.power_iteration(ds, RELU, (w0 / jnp.linalg.norm(w0))[None], n_steps=10)
    np.testing.assert_allclose(traj[-1], np.asarray(w[0]), atol=1e-12)
