"""Every activation certified by its own field: for a non-homogeneous h (tanh, gelu, a user's softplus) the
flow, the residual and the second-order test use grad E = C_alpha[x h'(w^T x), h(w^T x)], not A(w) w.

Checked against autodiff of the energy and against an independent float64 numpy probe (closed-form h, h',
h'' written below, no ccdyn); the maxima it certifies are found here by a numpy Riemannian Newton ascent,
independently of the library's flow."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import erf

from ccdyn import activations, data, one_layer, pairwise
from ccdyn.one_layer import certify

UNIFORM = pairwise.get_pairwise("uniform")
SOFTPLUS = activations.custom_activation("softplus_test", jax.nn.softplus)


def _phi(z):
    return np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi)


def _sig(z):
    return 1 / (1 + np.exp(-z))


# name -> (h, h', h'') in numpy: the probe's own formulas
NUMPY = {
    "tanh": (np.tanh, lambda z: 1 - np.tanh(z) ** 2, lambda z: -2 * np.tanh(z) * (1 - np.tanh(z) ** 2)),
    "gelu": (lambda z: z * 0.5 * (1 + erf(z / np.sqrt(2))), lambda z: 0.5 * (1 + erf(z / np.sqrt(2))) + z * _phi(z),
             lambda z: _phi(z) * (2 - z * z)),
    "softplus_test": (lambda z: np.logaddexp(0, z), _sig, lambda z: _sig(z) * (1 - _sig(z))),
}
ACTS = {"tanh": activations.get_activation("tanh"), "gelu": activations.get_activation("gelu"),
        "softplus_test": SOFTPLUS}


def _tangent_basis(w):
    return np.linalg.svd(np.eye(w.size) - np.outer(w, w))[0][:, : w.size - 1]


def numpy_probe(x, p, name, w):
    """(E, grad E, Riemannian gradient, Riemannian Hessian in a tangent basis) of E = 1/2 sum_i p_i (h_i - hbar)^2."""
    h, dh, d2h = NUMPY[name]
    w = np.asarray(w, np.float64) / np.linalg.norm(w)
    z = x @ w
    c = h(z) - p @ h(z)
    g = x.T @ (p * c * dh(z))
    xg = x * dh(z)[:, None]
    xg = xg - p @ xg
    hess = xg.T @ (p[:, None] * xg) + x.T @ ((p * c * d2h(z))[:, None] * x)
    q = _tangent_basis(w)
    return 0.5 * p @ c**2, g, g - (w @ g) * w, q.T @ hess @ q - (w @ g) * np.eye(w.size - 1)


def numpy_newton(x, p, name, w, sign=1.0, iters=60):
    """A critical point of E on the sphere near w by damped Riemannian Newton on sign * E (numpy only):
    ascends to a maximum (sign 1) or descends to a minimum (sign -1)."""
    w = np.asarray(w, np.float64) / np.linalg.norm(w)
    for _ in range(iters):
        _, _, rg, rh = numpy_probe(x, p, name, w)
        q = _tangent_basis(w)
        ev = np.linalg.eigvalsh(sign * rh)
        shift = max(0.0, ev[-1] + 1e-3)  # make -sign * Hess positive definite: an ascent step on sign * E
        step = np.linalg.solve(shift * np.eye(w.size - 1) - sign * rh, sign * (q.T @ rg))
        step = q @ step
        if np.linalg.norm(step) > 0.3:
            step *= 0.3 / np.linalg.norm(step)
        w = w + step
        w /= np.linalg.norm(w)
    return w


@pytest.fixture(scope="module")
def units():
    """The issue's kind of user data: 30 random unit vectors in d = 6 (uniform p)."""
    x = np.random.default_rng(0).standard_normal((30, 6))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return data.make_dataset(x, dtype=jnp.float64)


@pytest.mark.parametrize("kind,name", [  # fast: each activation once, the alphas alternating; all: -m slow
    (k, n) if (i + j) % 2 == 0 else pytest.param(k, n, marks=pytest.mark.slow)
    for i, n in enumerate(sorted(NUMPY)) for j, k in enumerate(("uniform", "gaussian"))])
def test_ascent_is_the_autodiff_gradient_for_every_non_homogeneous_h(units, name, kind):
    """u(w) = grad_w E_{sg(alpha)}(w) (jax.grad of the energy with alpha fixed at w), batched, with views too."""
    act, pw = ACTS[name], pairwise.get_pairwise(kind, 0.7)
    ds = data.gaussian_noise_views(units, jax.random.PRNGKey(2), 3, 0.2)
    W = jax.random.normal(jax.random.PRNGKey(3), (4, 6))
    W = W / jnp.linalg.norm(W, axis=1, keepdims=True)
    u = one_layer.ascent(ds, act, W, pw)
    for w, uw in zip(W, u):
        alpha = one_layer.node_alpha(ds, act, pw, w)
        grad = jax.grad(lambda v: one_layer.energy_given_alpha(ds, act, v, alpha))(w)
        np.testing.assert_allclose(uw, grad, rtol=1e-10, atol=1e-13)
        aw = one_layer.a_matrix(ds, act, w, pw) @ w  # A(w) w is not the gradient here
        assert np.linalg.norm(aw - grad) > 1e-3 * np.linalg.norm(grad)


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_residual_and_hessian_match_the_numpy_probe(units, name):
    """At a random point the certificate's residual, stationarity and Hessian equal the probe's (float64)."""
    x, p, act = np.asarray(units.x), np.asarray(units.p), ACTS[name]
    w = np.random.default_rng(5).standard_normal(6)
    w /= np.linalg.norm(w)
    cert = certify.certify(units, act, jnp.asarray(w), UNIFORM)
    e, g, rg, rh = numpy_probe(x, p, name, w)
    np.testing.assert_allclose(float(cert.energy), e, rtol=1e-12)
    np.testing.assert_allclose(float(cert.residual), np.linalg.norm(rg), rtol=1e-10)
    np.testing.assert_allclose(float(cert.field_norm), np.linalg.norm(g), rtol=1e-10)
    np.testing.assert_allclose(float(cert.stationarity), np.linalg.norm(rg) / np.linalg.norm(g), rtol=1e-10)
    np.testing.assert_allclose(float(cert.hessian_max), np.linalg.eigvalsh(rh)[-1], rtol=1e-9, atol=1e-13)
    assert not bool(cert.is_stable)  # a random point is not critical


@pytest.mark.parametrize("name", sorted(NUMPY))
def test_a_maximum_is_certified_and_a_minimum_named(units, name):
    """The maximum the numpy Newton ascent finds is certified ``smooth`` (the A(w) w residual would call it
    not critical); the minimum it descends to is named 'flow Jacobian not negative'; a random point
    'not a critical point'. Each verdict agrees with the probe's own gradient and Hessian."""
    x, p, act = np.asarray(units.x), np.asarray(units.p), ACTS[name]
    w0 = np.random.default_rng(7).standard_normal(6)
    w_max, w_min = numpy_newton(x, p, name, w0), numpy_newton(x, p, name, w0, sign=-1.0)
    w_rand = w0 / np.linalg.norm(w0)
    rows = certify.assess_many(units, act, UNIFORM, jnp.asarray(np.stack([w_max, w_min, w_rand])))
    probes = [numpy_probe(x, p, name, w) for w in (w_max, w_min, w_rand)]
    rel = [np.linalg.norm(rg) / np.linalg.norm(g) for _, g, rg, _ in probes]
    hmax = [np.linalg.eigvalsh(rh)[-1] for *_, rh in probes]
    assert rel[0] < 1e-12 and hmax[0] < 0 and rel[1] < 1e-12 and hmax[1] > 0 and rel[2] > 1e-3
    assert [r["certificate"] for r in rows] == ["smooth", "none", "none"]
    assert rows[0]["stable"] and rows[0]["certificate_note"] == "" and rows[0]["stationarity"] < 1e-12
    assert rows[1]["certificate_note"] == "flow Jacobian not negative"
    assert rows[2]["certificate_note"] == "not a critical point"
    for row, r, h in zip(rows, rel, hmax):
        assert row["stationarity_measure"] == "gradient"
        np.testing.assert_allclose(row["stationarity"], r, rtol=1e-6, atol=1e-14)
        np.testing.assert_allclose(row["hessian_max"], h, rtol=1e-8, atol=1e-13)
    # the old residual ||P^perp A(w) w|| is far from 0 at the certified maximum
    a = np.asarray(one_layer.a_matrix(units, act, jnp.asarray(w_max), UNIFORM))
    aw = a @ w_max
    assert np.linalg.norm(aw - (w_max @ aw) * w_max) > 1e-4 * np.linalg.norm(aw)


def test_homogeneous_certificate_keeps_its_residual_and_scale(units):
    """For a homogeneous h the residual is still ||P^perp A(w) w|| and the stationarity is that over ||A(w) w||."""
    act = activations.get_activation("quadratic")
    w = jnp.asarray(np.random.default_rng(3).standard_normal(6))
    w = w / jnp.linalg.norm(w)
    cert = certify.certify(units, act, w, UNIFORM)
    aw = one_layer.a_matrix(units, act, w, UNIFORM) @ w
    np.testing.assert_allclose(float(cert.residual), float(jnp.linalg.norm(aw - jnp.dot(w, aw) * w)), rtol=1e-13)
    np.testing.assert_allclose(float(cert.stationarity), float(cert.residual / jnp.linalg.norm(aw)), rtol=1e-14)


@pytest.mark.parametrize("name", [pytest.param("gelu", marks=pytest.mark.slow), "softplus_test"])
def test_flow_jacobian_of_the_gradient_field_with_gaussian_alpha(units, name):
    """J c = Q^T d/dt P^perp u(w(t)) along a geodesic (central differences), alpha moving with w: the smooth
    certificate's second-order test differentiates the gradient field itself, not A(w) w."""
    act, pw = ACTS[name], pairwise.get_pairwise("gaussian", 0.7)
    w = jnp.asarray(np.random.default_rng(2).standard_normal(6))
    w = w / jnp.linalg.norm(w)
    jac = one_layer.field_jacobian(units, act, w, pw)
    q = np.asarray(certify.sphere.tangent_basis(w))

    def tangent_field(v):
        u = one_layer.ascent(units, act, v[None], pw)[0]
        return u - jnp.dot(v, u) * v

    t = 1e-6
    for c in ([1.0, 0, 0, 0, 0], [0, 0, 1.0, 0, 0], [0, 0.6, 0, 0, -0.8]):
        v = jnp.asarray(q @ np.asarray(c))
        fd = (tangent_field(np.cos(t) * w + np.sin(t) * v) - tangent_field(np.cos(t) * w - np.sin(t) * v)) / (2 * t)
        # d/dt P^perp u = P^perp Du v - (v^T u) w - (w^T u) v: Q^T drops the normal terms, J c is the rest
        np.testing.assert_allclose(np.asarray(jac) @ np.asarray(c), q.T @ np.asarray(fd), rtol=1e-5, atol=1e-8)
