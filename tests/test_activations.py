import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations


@pytest.mark.parametrize("name", activations.ACTIVATIONS)
def test_derivative_matches_autodiff(name, key):
    act = activations.get_activation(name)
    z = jax.random.normal(key, (257,)) * 2.0
    z = z[jnp.abs(z) > 1e-3]  # ReLU-like h is not differentiable at 0
    chex.assert_trees_all_close(act.dh(z), jax.vmap(jax.grad(act.h))(z), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", activations.HOMOGENEOUS)
def test_homogeneous_degree(name, key):
    act = activations.get_activation(name)
    z = jnp.concatenate([jax.random.normal(key, (100,)), jnp.zeros((1,))])
    assert act.homogeneous
    chex.assert_trees_all_close(act.dh(z) * z, act.degree * act.h(z), rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("name", ["tanh", "gelu"])
def test_non_homogeneous_marked(name):
    act = activations.get_activation(name)
    z = jnp.linspace(-2.0, 2.0, 9)
    assert not act.homogeneous and act.degree == 1
    assert not np.allclose(act.dh(z) * z, act.h(z))


def test_relu_gate_is_zero_at_zero():
    act = activations.get_activation("relu")
    assert float(act.dh(jnp.array(0.0))) == 0.0
    assert float(activations.get_activation("leaky_relu", 0.1).dh(jnp.array(-1.0))) == pytest.approx(0.1)


def test_activation_is_hashable_and_static():
    a, b = activations.get_activation("leaky_relu", 0.05), activations.get_activation("leaky_relu", 0.05)
    assert a == b and hash(a) == hash(b)


def test_bad_activation_names_argument():
    with pytest.raises(ValueError, match="activation name='softplus' is unknown; allowed: linear"):
        activations.get_activation("softplus")
    with pytest.raises(ValueError, match=r"slope=1.5 must lie in \[0, 1\)"):
        activations.get_activation("leaky_relu", 1.5)
