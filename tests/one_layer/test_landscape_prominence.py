"""App. B.5 for a continuous group: rotations of the Fig. 8 circle data flatten E(theta); the landscape's
prominence and summits tell the prominent maxima from quadrature ripple."""

import jax.numpy as jnp
import numpy as np

from ccdyn import activations, data, pairwise
from ccdyn.one_layer import landscape

UNIFORM = pairwise.get_pairwise("uniform")


def test_full_circle_rotations_flatten_the_energy_as_views_grow():
    act = activations.get_activation("relu")
    theta = jnp.linspace(-np.pi, np.pi, 721)[:-1]
    scale = float(np.max(np.asarray(landscape.energy_on_circle(data.circle(), act, UNIFORM, theta))))
    ranges = []
    for v in (16, 64, 256):
        ds = data.rotation_views(data.circle(), 1.0, v)
        e = np.asarray(landscape.energy_on_circle(ds, act, UNIFORM, theta))
        ranges.append((e.max() - e.min()) / scale)
        # Exactly invariant under the cyclic group C_V (Eq. 107-108 for a discrete group).
        shifted = np.asarray(landscape.energy_on_circle(ds, act, UNIFORM, theta + 2 * np.pi / v))
        np.testing.assert_allclose(shifted, e, rtol=0, atol=1e-14 * scale)  # ripple: >= 1e-9 scale
    assert ranges[0] > 10 * ranges[1] > 100 * ranges[2]
    assert ranges[2] < 1e-8


def test_linear_rotation_energy_is_scaled_by_mean_cosine():
    """Independent route: for h linear, b(w|x0) = w^T E_t[R(t)] x0 = c w^T x0 with c = mean_k cos t_k."""
    act = activations.get_activation("linear")
    theta = jnp.linspace(-np.pi, np.pi, 97)[:-1]
    a, v = 0.3, 7
    t = a * np.pi * ((2 * np.arange(v) + 1) / v - 1)
    e0 = np.asarray(landscape.energy_on_circle(data.circle(), act, UNIFORM, theta))
    e = np.asarray(landscape.energy_on_circle(data.rotation_views(data.circle(), a, v), act, UNIFORM, theta))
    np.testing.assert_allclose(e, np.mean(np.cos(t)) ** 2 * e0, rtol=1e-12)


def test_prominence_and_summits_on_a_small_periodic_grid():
    theta = np.linspace(-np.pi, np.pi, 9)[:-1]
    e = np.array([0.0, 3.0, 1.0, 2.0, 0.0, 5.0, 4.0, 4.5])
    idx = np.array([1, 3, 5, 7])
    np.testing.assert_allclose(landscape.prominence(theta, e, theta[idx], e[idx]), [3.0, 1.0, 5.0, 0.5])
    np.testing.assert_array_equal(landscape.grid_index(theta, theta[idx] + 0.1), idx)
    labels = landscape.summit_labels(theta, e, theta[[5, 1]], e[[5, 1]], 1.5)
    assert labels.tolist() == [-1, 1, -1, -1, -1, 0, 0, 0]


def test_circle_maxima_disappear_with_the_whole_circle():
    act = activations.get_activation("relu")
    theta, e, m = landscape.local_maxima(data.circle(), act, UNIFORM, n_grid=720, refine_iters=0, newton_iters=0)
    scale = np.max(np.abs(e))
    assert np.sum(landscape.prominence(theta, e, m.theta, m.energy) / scale >= 5e-5) == 9
    ds = data.rotation_views(data.circle(), 1.0, 64)
    theta, e, m = landscape.local_maxima(ds, act, UNIFORM, n_grid=720, refine_iters=0, newton_iters=0)
    assert m.theta.size > 0 and np.max(landscape.prominence(theta, e, m.theta, m.energy)) / scale < 1e-7
