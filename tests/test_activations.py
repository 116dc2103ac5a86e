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


SIGN = {"linear": "odd", "tanh": "odd", "quadratic": "even", "relu": "", "leaky_relu": "", "gelu": ""}


@pytest.mark.parametrize("name", activations.ACTIVATIONS)
def test_parity_and_sign_symmetry_match_the_definition(name, key):
    """odd: h(-z) = -h(z); even: h(-z) = h(z); sign_symmetric (w and -w one optimum) exactly when either holds."""
    act = activations.get_activation(name)
    z = jax.random.normal(key, (200,)) * 2.0
    assert act.odd == bool(jnp.allclose(act.h(-z), -act.h(z), rtol=1e-14, atol=0))
    assert act.even == bool(jnp.allclose(act.h(-z), act.h(z), rtol=1e-14, atol=0))
    assert act.sign_symmetric == (act.odd or act.even) == bool(SIGN[name])
    assert (act.odd, act.even) == (SIGN[name] == "odd", SIGN[name] == "even")


def test_custom_activation_derivative_degree_and_parity(key):
    """h' by autodiff; homogeneity and parity detected; a custom copy of a built-in behaves like it."""
    z = jax.random.normal(key, (300,)) * 3.0
    sp = activations.custom_activation("softplus_a", jax.nn.softplus)
    chex.assert_trees_all_close(sp.dh(z), jax.nn.sigmoid(z), rtol=1e-13, atol=1e-15)
    assert not sp.homogeneous and sp.degree == 1 and not sp.sign_symmetric and sp.smooth
    cube = activations.custom_activation("cube_a", lambda v: v**3)
    assert cube.homogeneous and cube.degree == 3 and cube.odd and not cube.even
    chex.assert_trees_all_close(cube.dh(z) * z, cube.degree * cube.h(z), rtol=1e-13)
    sq = activations.custom_activation("square_a", lambda v: v * v, degree=2, parity="even")
    builtin = activations.get_activation("quadratic")
    assert (sq.homogeneous, sq.degree, sq.even, sq.sign_symmetric) == (True, 2, True, True)
    chex.assert_trees_all_close(sq.dh(z), builtin.dh(z), rtol=1e-14)
    th = activations.custom_activation("tanh_a", jnp.tanh)
    assert th.odd and not th.homogeneous
    a, b = activations.custom_activation("x", jnp.tanh), activations.custom_activation("x", jnp.tanh)
    assert a == b and hash(a) == hash(b)  # static under jit: the same h is the same activation
    f = jax.jit(lambda v, act: act.h(v), static_argnums=1)
    chex.assert_trees_all_close(f(z, sp), jax.nn.softplus(z), rtol=1e-14)


def test_custom_activation_register_and_refusals():
    act = activations.custom_activation("softplus_reg", jax.nn.softplus, register=True)
    assert activations.get_activation("softplus_reg") is act
    with pytest.raises(ValueError, match="must be a new non-empty name"):
        activations.custom_activation("relu", jnp.tanh)
    with pytest.raises(ValueError, match="has a kink at 0"):
        activations.custom_activation("abs_a", jnp.abs)
    with pytest.raises(ValueError, match="declared degree=1 but .* for no p > 0"):
        activations.custom_activation("tanh_b", jnp.tanh, degree=1)
    with pytest.raises(ValueError, match="declared degree=2 but .* for p = 3"):
        activations.custom_activation("cube_b", lambda v: v**3, degree=2)
    with pytest.raises(ValueError, match="declared parity='even' .* but h is odd"):
        activations.custom_activation("tanh_c", jnp.tanh, parity="even")
    with pytest.raises(ValueError, match="dh is not the derivative of h"):
        activations.custom_activation("tanh_d", jnp.tanh, dh=jnp.cos)
    with pytest.raises(ValueError, match="h must act elementwise"):
        activations.custom_activation("sum_a", jnp.sum)
    with pytest.raises(ValueError, match="not finite"):
        activations.custom_activation("exp_a", lambda v: jnp.exp(v * v))
