"""The 1-D translation model of Sec. 5.1 (Eq. 11-13), enumerated exactly."""

import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.deep import translation


@pytest.mark.parametrize("d", [5, pytest.param(8, marks=pytest.mark.slow)])
def test_linear_neurons_do_not_learn(d):
    assert np.abs(translation.op_linear(d)).max() < 1e-15
    u = translation.eq12_u()
    np.testing.assert_allclose(translation.op_receptive_field(d), jnp.outer(u, u) / (4 * d ** 2), atol=1e-15)
    np.testing.assert_array_equal(u, [0.0, 0.0])  # the signed sum cancels: OP = 0 (Eq. 12)


@pytest.mark.parametrize("d", [5, pytest.param(8, marks=pytest.mark.slow)])
@pytest.mark.parametrize("p, w", [("01", (-0.7, 0.4)), ("10", (0.3, -0.5))])
def test_selective_relu_neuron_gets_rank_one_operator(d, p, w):
    xp = jnp.asarray(translation.PATTERNS[p])
    w = jnp.asarray(w)
    assert all((jnp.asarray(v) @ w > 0) == (k == p) for k, v in translation.PATTERNS.items())
    c = translation.selective_constant(p, d)
    op = translation.op_relu(w, d)
    assert c > 0
    np.testing.assert_allclose(op, c * jnp.outer(xp, xp), atol=1e-15)
    alpha = 0.3  # Eq. 13: one step multiplies x_p^T w by 1 + alpha c_p ||x_p||^2
    np.testing.assert_allclose(xp @ (w + alpha * op @ w), (1 + alpha * c * xp @ xp) * (xp @ w), atol=1e-15)


def test_pattern_counts_of_the_two_objects():
    probs = translation.pattern_probs(6)
    assert probs["11"] == (1 / 6, 0.0) and probs["01"] == (1 / 6, 2 / 6) and probs["00"] == (3 / 6, 2 / 6)
