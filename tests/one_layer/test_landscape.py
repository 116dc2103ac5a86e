"""Fig. 8 (App. E.1): local maxima of E_alpha on the circle."""

import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, pairwise
from ccdyn.one_layer import landscape

UNIFORM = pairwise.get_pairwise("uniform")


def test_grid_maxima_plateaus_and_wraparound():
    e = np.array([0.0, 1.0, 1.0, 1.0, 0.0, 2.0, 0.5, 3.0])  # plateau 1..3, peak 5, peak 7 wraps to 0
    np.testing.assert_array_equal(landscape._grid_maxima(e, 1e-12), [2, 5, 7])
    assert landscape._grid_maxima(np.ones(10), 1e-12).size == 0
    assert landscape._grid_maxima(np.array([1.0, 1.0, 2.0, 2.0, 1.0]), 1e-12).tolist() == [2]


def test_fig8_relu_many_maxima_linear_two():
    ds = data.circle()
    relu = landscape.local_maxima(ds, activations.get_activation("relu"), UNIFORM, n_grid=1 << 14)[2]
    assert relu.theta.size >= 8  # App. E.1: "many local maxima (>= 8)"
    lin = landscape.local_maxima(ds, activations.get_activation("linear"), UNIFORM, n_grid=1 << 14)[2]
    assert lin.theta.size == 2
    # The two linear maxima are +-phi_1, the top eigenvector of the data covariance (PCA).
    x = np.asarray(ds.x)
    phi1 = np.linalg.eigh(np.cov(x.T, bias=True))[1][:, -1]
    w = np.stack([np.cos(lin.theta), np.sin(lin.theta)], 1)
    np.testing.assert_allclose(np.abs(w @ phi1), 1.0, atol=1e-10)
    np.testing.assert_allclose(w[0], -w[1], atol=1e-10)
    np.testing.assert_allclose(lin.residual, 0.0, atol=1e-10)


@pytest.mark.parametrize("name", ["relu", "quadratic"])
def test_maxima_are_local_maxima(name):
    ds = data.circle()
    act = activations.get_activation(name)
    m = landscape.local_maxima(ds, act, UNIFORM, n_grid=1 << 12)[2]
    for dt in (1e-3, 1e-6):
        around = landscape.energy_on_circle(ds, act, UNIFORM, jnp.concatenate([m.theta - dt, m.theta + dt]))
        assert np.all(np.asarray(around).reshape(2, -1) < m.energy[None] + 1e-15)
    if name == "quadratic":  # smooth activation: every maximum is a critical point of the flow
        assert not m.at_kink.any()
        np.testing.assert_allclose(m.residual, 0.0, atol=1e-9)


def test_energy_beyond_float64_is_refused_not_zero_maxima():
    """Data of size 1e200: E ~ 1e400 is inf on the grid; local_maxima says so instead of finding 0 maxima."""
    x = np.array([[1.0, 0.2], [-0.3, 1.0], [0.5, -0.8]]) * 1e200
    with pytest.raises(ValueError, match="energy is not finite on .* rescale the data"):
        landscape.local_maxima(data.make_dataset(x), activations.get_activation("relu"), pairwise.get_pairwise(),
                               n_grid=64)
