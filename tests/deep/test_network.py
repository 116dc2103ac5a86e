"""Deep ReLU network and its connection (Def. 1, Thm. 1) against autodiff, in float64."""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.deep import network

SIZES = (4, 5, 3, 2)


def _setup():
    # seed 1: x1 reaches the output through every layer (seed 0 gave f_L(x1) = 0 and all-zero gradients)
    ws = network.init_weights(jax.random.PRNGKey(1), SIZES)
    x1, x2 = jax.random.normal(jax.random.PRNGKey(1), (2, SIZES[0]))
    return ws, x1, x2


def test_vec_is_column_stacking():
    w = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(network.vec(w), [0, 3, 1, 4, 2, 5])
    np.testing.assert_array_equal(network.unvec(network.vec(w), w.shape), w)


def test_jacobians_match_autodiff_and_connection_reproduces_output():
    ws, x, _ = _setup()

    @jax.jit
    def routes(ws, x):
        f, pre = network.forward(ws, x)
        out = []
        for l in range(1, len(ws) + 1):
            def top(z, l=l):  # f_L as a function of the pre-activation of layer l
                a = z
                for k in range(l, len(ws)):
                    a = ws[k] @ jax.nn.relu(a)
                return a
            k = network.connection(ws, x, l)
            out.append((network.jacobians(ws, x)[l - 1], jax.jacobian(top)(pre[l - 1]), k,
                        k.T @ network.vec(ws[l - 1]), f[-1]))
        return out

    for l, (j, j_auto, k, kw, f_out) in enumerate(routes(ws, x), start=1):
        assert np.abs(j_auto).max() > 1e-2 and np.abs(f_out).max() > 1e-2
        np.testing.assert_allclose(j, j_auto, atol=1e-12)
        chex.assert_shape(k, (SIZES[l] * SIZES[l - 1], SIZES[-1]))
        np.testing.assert_allclose(kw, f_out, atol=1e-12)


def test_theorem1_gradient_of_squared_distance():
    """dr/dvec(W_{1,l}) = K_{1,l}[K_{1,l}^T vec W_{1,l} - K_{2,l}^T vec W_{2,l}] for two different networks."""
    ws1, x1, x2 = _setup()
    ws2 = network.init_weights(jax.random.PRNGKey(10), SIZES)  # f_L(x2) != 0 (seed 7 gave 0)

    @jax.jit
    def routes(ws1, ws2):
        g = jax.grad(lambda w: 0.5 * jnp.sum((network.output(w, x1) - network.output(ws2, x2)) ** 2))(ws1)
        out = []
        for l in range(1, len(SIZES)):
            k1, k2 = network.connection(ws1, x1, l), network.connection(ws2, x2, l)
            out.append((network.vec(g[l - 1]), k1 @ (k1.T @ network.vec(ws1[l - 1]) - k2.T @ network.vec(ws2[l - 1]))))
        return out

    for got, expected in routes(ws1, ws2):
        assert np.abs(expected).max() > 1e-2  # a zero gradient would make the comparison empty
        np.testing.assert_allclose(got, expected, atol=1e-12)
