"""Group augmentations (App. B.5): rotation and shift views, the zero-mean pattern basis, and the
registry's --aug=rotation / --aug=shift."""

import chex
import jax
import numpy as np
import pytest

from ccdyn import data
from ccdyn.data.registry import DataSpec, build_dataset


def _signals(key, n=6, d=8):
    """A generic population of n random signals of length d with random probabilities."""
    kx, kp = jax.random.split(key)
    p = np.asarray(jax.random.uniform(kp, (n,), minval=0.5, maxval=1.5))
    return data.make_dataset(np.asarray(jax.random.normal(kx, (n, d))), p / p.sum())


def _angles(x):
    return np.arctan2(np.asarray(x)[..., 1], np.asarray(x)[..., 0])


def test_rotation_views_midpoint_angles_probabilities_norms():
    ds = data.circle()
    aug = data.rotation_views(ds, 0.25, 5)
    chex.assert_shape((aug.x_aug, aug.p_aug), ((9, 5, 2), (9, 5)))
    np.testing.assert_allclose(aug.p_aug, 0.2, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(aug.x_aug, axis=-1), 1.0, atol=1e-14)
    # Views sit at x0 rotated by the midpoints of 5 equal cells of [-pi/4, pi/4].
    t = (_angles(aug.x_aug) - _angles(ds.x)[:, None] + np.pi) % (2 * np.pi) - np.pi
    np.testing.assert_allclose(t, np.broadcast_to(np.pi / 4 * np.array([-0.8, -0.4, 0.0, 0.4, 0.8]), (9, 5)),
                               atol=1e-12)
    np.testing.assert_array_equal(aug.x, ds.x)
    # The whole circle: V angles spaced 2 pi / V, a coset of the cyclic group C_V.
    r = data.rotation_matrices(1.0, 8)
    np.testing.assert_allclose(np.einsum("vij,vkj->vik", r, r), np.broadcast_to(np.eye(2), (8, 2, 2)), atol=1e-15)
    np.testing.assert_allclose(np.diff(np.arctan2(r[:, 1, 0], r[:, 0, 0])), 2 * np.pi / 8, atol=1e-12)


def test_views_compose_with_existing_views(key):
    noisy = data.gaussian_noise_views(data.circle(), key, 3, 0.1)
    both = data.rotation_views(noisy, 0.5, 4)
    chex.assert_shape((both.x_aug, both.p_aug), ((9, 12, 2), (9, 12)))
    np.testing.assert_allclose(both.p_aug.sum(1), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(both.x_aug, axis=-1),
                               np.repeat(np.linalg.norm(noisy.x_aug, axis=-1), 4, axis=1), atol=1e-14)


def test_shift_views_are_exact_cyclic_shifts(key):
    ds = _signals(key, n=3, d=5)
    x = np.asarray(ds.x)
    part = data.shift_views(ds, 1)
    chex.assert_shape((part.x_aug, part.p_aug), ((3, 3, 5), (3, 3)))
    for v, s in enumerate([-1, 0, 1]):
        np.testing.assert_array_equal(part.x_aug[:, v], np.roll(x, s, axis=1))
    np.testing.assert_allclose(part.p_aug, 1 / 3, atol=1e-15)
    full = data.shift_views(ds, 2)  # 2 * 2 + 1 >= 5: the whole group Z_5
    assert full.x_aug.shape == (3, 5, 5)
    np.testing.assert_array_equal(full.x_aug[:, np.argsort(data.shift_amounts(5, 2) % 5)],
                                  np.stack([np.roll(x, s, axis=1) for s in range(5)], axis=1))


@pytest.mark.parametrize("d,max_shift,expected", [
    (8, 4, list(range(-4, 4))), (8, 100, list(range(-4, 4))), (8, 1, [-1, 0, 1]), (3, 5, [-1, 0, 1]),
    (7, 3, list(range(-3, 4))),
])
def test_shift_amounts_each_shift_once(d, max_shift, expected):
    s = data.shift_amounts(d, max_shift)
    assert s.tolist() == expected
    assert len(set((s % d).tolist())) == s.size


@pytest.mark.parametrize("call,match", [
    (lambda: data.rotation_views(data.circle(), 0.0, 4), r"max_angle=0.0 must lie in \(0, 1\]"),
    (lambda: data.rotation_views(data.circle(), 1.5, 4), r"max_angle=1.5 must lie in \(0, 1\]"),
    (lambda: data.rotation_views(data.circle(), 0.5, 0), r"n_views=0 must be an integer >= 1"),
    (lambda: data.rotation_views(data.latent_categorical(np.eye(3)), 0.5, 4), "d must be 2"),
    (lambda: data.shift_views(data.latent_categorical(np.eye(3)), 0), r"max_shift=0 must be an integer >= 1"),
    (lambda: data.shift_views(data.latent_categorical(np.eye(3)), 1.5), r"max_shift=1.5 must be an integer"),
    (lambda: data.zero_mean_basis(jax.random.PRNGKey(0), 4, 4), r"m=4 must be an integer \[1, 3\]"),
])
def test_bad_view_arguments_raise_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_zero_mean_basis(key):
    u = data.zero_mean_basis(key, 8, 3, 0.1)
    np.testing.assert_allclose(u.sum(0), 0.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(u, axis=0), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(u.T @ u - np.eye(3), 2), 0.1, atol=1e-12)


def test_registry_builds_and_validates_group_augmentations():
    rot = build_dataset(DataSpec(data="circle", aug="rotation", aug_range=0.5, aug_views=6))
    chex.assert_shape((rot.x_aug, rot.p_aug), ((9, 6, 2), (9, 6)))
    sh = build_dataset(DataSpec(data="latent_categorical", d=6, m=3, aug="shift", aug_range=3))
    chex.assert_shape(sh.x_aug, (3, 6, 6))
    np.testing.assert_array_equal(sh.x_aug[:, 0], np.roll(np.asarray(sh.x), -3, axis=1))
    for spec, match in [
        (DataSpec(data="circle", aug="rotation", aug_range=0.0), r"--aug_range=0.0 must lie in \(0, 1\]"),
        (DataSpec(data="circle", aug="rotation", aug_range=1.5), r"--aug_range=1.5 must lie in \(0, 1\]"),
        (DataSpec(d=4, m=4, aug="rotation", aug_range=0.5), "--aug=rotation needs 2-D data; this data has d=4"),
        (DataSpec(d=4, m=4, aug="shift", aug_range=2.5), "--aug_range=2.5 must be an integer >= 1"),
        (DataSpec(d=4, m=4, aug="shift", aug_range=0), "--aug_range=0 must be an integer >= 1"),
        (DataSpec(aug="flip"), "--aug='flip' is unknown"),
    ]:
        with pytest.raises(ValueError, match=match):
            build_dataset(spec)
