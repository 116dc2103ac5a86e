"""Data models (Eq. 8-9, Fig. 1, Fig. 8), dataset validation and the .npz reader."""

import chex
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.data import files
from ccdyn import covariance, data, io
from ccdyn.data.registry import DataSpec


@pytest.mark.parametrize("eps", [0.0, 0.05, 0.2])
def test_near_orthogonal_basis(key, eps):
    u = data.near_orthogonal_basis(key, 12, 8, eps)
    np.testing.assert_allclose(np.linalg.norm(u, axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(u.T @ u - np.eye(8), 2), eps, atol=1e-12)


def test_latent_summation_exact_population(key):
    u = data.near_orthogonal_basis(key, 6, 5, 0.1)
    q = np.array([0.1, 0.2, 0.3, 0.2, 0.4])
    ds = data.latent_summation(u, q)
    chex.assert_shape((ds.x, ds.p, ds.patterns), ((32, 6), (32,), (5, 6)))
    np.testing.assert_allclose(float(ds.p.sum()), 1.0, atol=1e-14)
    y = np.asarray(ds.x) @ np.linalg.pinv(u).T  # recover the latents
    np.testing.assert_allclose(np.asarray(ds.p) @ y, 0.0, atol=1e-12)  # E[y_m] = 0
    np.testing.assert_allclose(np.asarray(ds.p) @ y**2, 1.0, atol=1e-12)  # E[y_m^2] = 1
    np.testing.assert_allclose(np.asarray(ds.p) @ (y > 0), q, atol=1e-12)
    # Independent standardized latents: V[x] = U U^T.
    np.testing.assert_allclose(covariance.population_cov(ds.x, ds.x, ds.p), u @ u.T, atol=1e-12)


def test_latent_summation_large_m_is_sampled(key):
    u = data.near_orthogonal_basis(key, 20, 20)
    with pytest.raises(ValueError, match="M=20 > 16 cannot be enumerated exactly"):
        data.latent_summation(u, 0.2)
    ds = data.latent_summation(u, 0.2, key=key, n_samples=5000)
    chex.assert_shape(ds.x, (5000, 20))
    np.testing.assert_allclose(np.asarray(covariance.population_cov(ds.x, ds.x, ds.p)), u @ u.T, atol=0.1)


def test_latent_categorical_and_circle():
    ds = data.latent_categorical(np.eye(3), [0.2, 0.3, 0.5])
    np.testing.assert_allclose(ds.x, np.eye(3))
    c = data.circle()
    chex.assert_shape(c.x, (9, 2))
    np.testing.assert_allclose(np.linalg.norm(c.x, axis=1), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.arctan2(c.x[:, 1], c.x[:, 0]) / np.pi, data.PAPER_ANGLES, atol=1e-12)


def test_gaussian_mixture_and_noise_views(key):
    means = np.array([[3.0, 0.0], [0.0, 3.0]])
    ds = data.gaussian_mixture(key, means, 0.1, 400)
    chex.assert_shape((ds.x, ds.p), ((400, 2), (400,)))
    dist = np.min(np.linalg.norm(np.asarray(ds.x)[:, None] - means[None], axis=-1), axis=1)
    assert dist.max() < 0.6
    aug = data.gaussian_noise_views(ds, key, 3, 0.5)
    chex.assert_shape((aug.x_aug, aug.p_aug), ((400, 3, 2), (400, 3)))
    np.testing.assert_allclose(aug.p_aug.sum(1), 1.0)


def test_sample_batch_views(key):
    base = data.latent_categorical(np.eye(3))
    x0, x1, x2 = data.sample_batch(base, key, 16)
    assert np.array_equal(x0, x1) and np.array_equal(x1, x2)
    aug = data.gaussian_noise_views(base, key, 5, 1.0)
    x0, x1, x2 = data.sample_batch(aug, key, 64)
    chex.assert_shape((x0, x1, x2), ((64, 3),) * 3)
    assert not np.allclose(x1, x2)
    with pytest.raises(ValueError, match="batch size n=1 must be >= 2"):
        data.sample_batch(aug, key, 1)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(x=np.ones(3)), "x must have 2 dimensions"),
        (dict(x=np.array([[1.0, np.nan]])), "x has 1 non-finite entries"),
        (dict(x=np.array([[1.0, np.inf], [0.0, 1.0]])), "x has 1 non-finite"),
        (dict(x=np.eye(2), p=[0.5, 0.6]), "p must sum to 1"),
        (dict(x=np.eye(2), p=[1.5, -0.5]), "p has negative entries"),
        (dict(x=np.eye(2), p=[1.0]), r"p has shape \(1,\); expected \(2,\)"),
        (dict(x=np.eye(2), x_aug=np.ones((2, 3, 4))), r"x_aug has shape \(2, 3, 4\); expected \(2, V, 2\)"),
        (dict(x=np.eye(2), x_aug=np.ones((2, 2, 2)), p_aug=[[1.0, 0.0], [0.3, 0.3]]), "p_aug must sum to 1"),
        (dict(x=np.eye(2), p_aug=[[1.0]]), "p_aug was given without x_aug"),
        (dict(x=np.eye(2), patterns=np.ones((2, 3))), r"patterns has shape \(2, 3\); expected \(m, 2\)"),
        (dict(x=np.array([["a", "b"]])), "x must be a real numeric array"),
    ],
)
def test_make_dataset_rejects_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        data.make_dataset(**kwargs)


def test_model_parameters_validated(key):
    with pytest.raises(ValueError, match=r"q=\[0.0, 0.2\] must lie in \(0, 1\)"):
        data.latent_summation(np.eye(2), [0.0, 0.2])
    with pytest.raises(ValueError, match=r"ortho_eps=1.0 must lie in \[0, 1\)"):
        data.near_orthogonal_basis(key, 3, 3, 1.0)
    with pytest.raises(ValueError, match=r"m=4 must be an integer \[1, 3\]"):
        data.near_orthogonal_basis(key, 3, 4)
    with pytest.raises(ValueError, match="angles must be a list of at least 2"):
        data.circle([0.5])


def test_npz_round_trip_and_errors(tmp_path, key):
    ds = data.gaussian_noise_views(data.circle(), key, 2, 0.1)
    files.save_dataset(tmp_path / "d.npz", ds)
    back = files.load_dataset(tmp_path / "d.npz")
    chex.assert_trees_all_close(back, ds)
    np.savez(tmp_path / "nox.npz", y=np.ones((3, 2)))
    with pytest.raises(ValueError, match="has no array 'x'"):
        files.load_dataset(tmp_path / "nox.npz")
    np.savez(tmp_path / "extra.npz", x=np.ones((3, 2)), labels=np.ones(3))
    with pytest.raises(ValueError, match=r"unknown arrays \['labels'\]"):
        files.load_dataset(tmp_path / "extra.npz")
    np.savez(tmp_path / "nan.npz", x=np.array([[0.0, np.nan], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="x has 1 non-finite entries"):
        files.load_dataset(tmp_path / "nan.npz")
    with pytest.raises(ValueError, match="is not a file"):
        files.load_dataset(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_text("not a zip")
    with pytest.raises(ValueError, match="is not a readable .npz file"):
        files.load_dataset(tmp_path / "junk.npz")


def test_atomic_json(tmp_path):
    io.write_json(tmp_path / "a" / "s.json", {"x": jnp.arange(3), "nan": float("nan")})
    assert io.read_json(tmp_path / "a" / "s.json") == {"x": [0, 1, 2], "nan": None}
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["s.json"]  # no temporary left behind


def test_spec_says_whether_its_support_is_a_sample():
    assert not DataSpec().sampled and not DataSpec(data="circle").sampled  # exact populations
    assert DataSpec(n_samples=500).sampled and DataSpec(m=20, d=20).sampled
    assert DataSpec(aug="noise").sampled and not DataSpec(data="circle", aug="rotation").sampled
    assert DataSpec(data="gaussian_mixture").sampled and DataSpec(data="gaussian_mixture").has_density
    assert not DataSpec(aug="noise").has_density
