"""Sphere helpers: normalization with a fallback, the tangent projection of Eq. 7, the tangent basis,
points at a given angle, random tangent directions; numpy in gives numpy out."""

import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import sphere


def _unit(rng, *shape):
    v = rng.standard_normal(shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_normalize_and_fallback_for_zero_rows():
    v = np.array([[3.0, 4.0], [0.0, 0.0]])
    fb = np.array([[1.0, 0.0], [0.0, 1.0]])
    got = sphere.normalize(v, fb)
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.0, 1.0]])
    with np.errstate(invalid="ignore"):
        assert np.isnan(sphere.normalize(v)[1]).all()  # without a fallback, 0 / 0 stays visible
    np.testing.assert_allclose(sphere.normalize(jnp.asarray(v[:1])), [[0.6, 0.8]])


def test_tangent_projection_is_orthogonal_and_idempotent():
    rng = np.random.default_rng(0)
    w, u = _unit(rng, 5, 7), rng.standard_normal((5, 7))
    t = sphere.tangent(w, u)
    np.testing.assert_allclose(np.sum(t * w, axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(sphere.tangent(w, t), t, atol=1e-12)


@pytest.mark.parametrize("d", [2, 6])
def test_tangent_basis_is_orthonormal_and_orthogonal_to_w(d):
    w = _unit(np.random.default_rng(d), d)
    q = np.asarray(sphere.tangent_basis(w))
    assert q.shape == (d, d - 1)
    np.testing.assert_allclose(q.T @ q, np.eye(d - 1), atol=1e-12)
    np.testing.assert_allclose(q.T @ w, 0.0, atol=1e-12)


def test_points_at_angle_lie_on_the_sphere_at_that_angle():
    rng = np.random.default_rng(1)
    w = _unit(rng, 6)
    dirs = sphere.random_tangents(w, 9, rng)
    np.testing.assert_allclose(dirs @ w, 0.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(dirs, axis=1), 1.0)
    radii = np.linspace(0.1, 1.5, 9)
    pts = sphere.at_angle(w, dirs, radii)
    np.testing.assert_allclose(np.linalg.norm(pts, axis=1), 1.0)
    np.testing.assert_allclose(np.arccos(np.clip(pts @ w, -1, 1)), radii, atol=1e-9)
    one = sphere.at_angle(w, dirs, 0.3)  # a scalar radius for every row
    np.testing.assert_allclose(one @ w, np.cos(0.3))
