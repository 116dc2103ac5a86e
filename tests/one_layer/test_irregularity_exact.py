"""ccdyn.one_layer.irregularity_exact: cap crossings against dense sampling of the cap, the exact sup omega
against sampled caps and the closed-form c_min, and the jump of A across a plane inside the cap."""

import math

import jax
import numpy as np
import pytest

from ccdyn import activations, data, one_layer, pairwise, sphere
from ccdyn.one_layer import irregularity, irregularity_exact as ie

RELU = activations.get_activation("relu")


def _population(eps=0.1):
    u = data.near_orthogonal_basis(jax.random.PRNGKey(0), 5, 5, eps)
    ds = data.latent_summation(u, 0.2)
    return u, ds, np.asarray(ds.x, np.float64)


def _cap_points(w0, theta, n, rng):
    dirs = sphere.random_tangents(w0, n, rng)
    angles = theta * np.sqrt(rng.uniform(size=n))
    return np.concatenate([w0[None], sphere.at_angle(w0, dirs, angles)])


@pytest.mark.parametrize("theta_deg", [1.0, 4.0, 12.0])
def test_cap_crossings_against_sign_patterns_of_dense_cap_samples(theta_deg):
    u, _, x = _population()
    w0 = irregularity.start_near(u[:, 0], 1.0, np.random.default_rng(3))
    theta = math.radians(theta_deg)
    cross = set(ie.cap_crossings(x, w0, theta).tolist())
    pts = _cap_points(w0, theta, 20000, np.random.default_rng(0))
    flips = np.flatnonzero(np.any((x @ pts.T >= 0) != (x @ w0 >= 0)[:, None], axis=1))
    assert set(flips.tolist()) <= cross  # every flip seen is predicted
    # and every predicted plane is met: the point of the plane nearest w0 lies in the cap
    for i in cross:
        n = x[i] / np.linalg.norm(x[i])
        foot = w0 - (n @ w0) * n
        assert math.acos(min(1.0, (foot / np.linalg.norm(foot)) @ w0)) <= theta + 1e-12


def test_sup_omega_exact_bounds_and_attains_the_sampled_sup():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 6))
    a = a @ a.T + np.diag([5.0, 0, 0, 0, 0, 0])
    lam, phi = np.linalg.eigh(a)
    w0 = sphere.at_angle(phi[:, -1], sphere.random_tangents(phi[:, -1], 1, rng), 0.2)[0]
    theta = 0.3
    ex = ie.sup_omega_exact(a, w0, theta)
    pts = _cap_points(w0, theta, 20000, rng)
    c = np.abs(pts @ phi[:, -1])
    _, _, omega = irregularity.irregularity(c, lam[-1] - lam[-2], lam[-1], 0.0, 0.0)
    assert omega.max() <= ex["sup_omega"] * (1 + 1e-12)
    assert ex["c_min"] == pytest.approx(math.cos(math.acos(abs(w0 @ phi[:, -1])) + theta), rel=1e-12)
    # the cap point on the great circle through phi_1 and w0, farthest from phi_1, attains it
    t = sphere.tangent(w0, w0 - phi[:, -1] * np.sign(w0 @ phi[:, -1]))
    far = sphere.at_angle(w0, np.asarray(t)[None] / np.linalg.norm(t), theta)[0]
    _, _, om_far = irregularity.irregularity(abs(far @ phi[:, -1]), lam[-1] - lam[-2], lam[-1], 0.0, 0.0)
    assert float(om_far) == pytest.approx(ex["sup_omega"], rel=1e-9)
    assert ie.sup_omega_exact(a, w0, math.pi / 2)["sup_omega"] == math.inf


def test_certify_exact_on_a_population():
    u, ds, x = _population(0.0)
    pw = pairwise.get_pairwise("uniform")
    a_fn = lambda w: one_layer.a_matrix(ds, RELU, w, pw)
    at_u = ie.certify_exact(a_fn, x, u[:, 1], [0.1, 0.2])
    assert at_u["gamma_certified"] == 0.1 and at_u["gammas"][0]["L"] == 0.0 and at_u["c0"] == pytest.approx(1.0)
    # a start far enough that every gamma's cap meets a plane: nothing certified, A jumps there
    far = ie.certify_exact(a_fn, x, irregularity.start_near(u[:, 1], 20.0, np.random.default_rng(0)), [0.1, 0.5])
    assert far["gamma_certified"] is None
    assert all(r["crossings"] > 0 and r["jump"] > 1e-6 and r["sup_omega"] == math.inf for r in far["gammas"])
    with pytest.raises(ValueError, match="gamma"):
        ie.certify_exact(a_fn, x, u[:, 1], [1.5])
