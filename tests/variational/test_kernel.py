"""Sec. 4 against independent routes: Eq. 18 with the literal matrix A; the Prop. 4.3 kernel against
the autodiff NTK (jax.jacobian, and jax.vjp + jax.jvp); Prop. 4.1's flow against J(-grad_w) and a small
gradient step; Prop. 4.4's limit against Monte Carlo with its M^{-1/2} rate; Thm. 4.2 (plain GD keeps
an invariant map invariant, the network does not unless grad_w f is invariant); Thm. 4.5 / Cor. 4.6's
per-cluster velocities against the network's velocity."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.variational import kernel as kr


@pytest.fixture
def setup():
    B = jax.random.normal(jax.random.PRNGKey(0), (3, 5, 4))
    X = jax.random.normal(jax.random.PRNGKey(1), (6, 4))
    return B, X


@pytest.mark.parametrize("act", ["relu", "tanh"])
def test_prop43_kernel_is_the_autodiff_ntk(setup, act):
    B, X = setup
    chex.assert_trees_all_close(kr.net(B, X, act), kr.net_dense(B, X, act), rtol=1e-13, atol=1e-14)
    K = kr.kernel_dense(B, X, act)
    chex.assert_trees_all_close(K, kr.ntk_jacobian(B, X, act), rtol=1e-12, atol=1e-14)
    # alternating signs in A leave a_p^2, hence the kernel, unchanged
    chex.assert_trees_all_close(kr.net(B, X, act, True), kr.net_dense(B, X, act, True), rtol=1e-13, atol=1e-14)
    chex.assert_trees_all_close(K, kr.ntk_jacobian(B, X, act, True), rtol=1e-12, atol=1e-14)
    V = jax.random.normal(jax.random.PRNGKey(2), (6, 3))
    chex.assert_trees_all_close(kr.ntk_matvec(B, X, V, act), jnp.einsum("ikjl,jl->ik", K, V), rtol=1e-12, atol=1e-14)


def test_prop41_function_space_flow(setup):
    B, X = setup
    v = kr.flow_velocity(B, X, 0.3, "tanh")
    chex.assert_trees_all_close(v, kr.weight_flow_velocity(B, X, 0.3, "tanh"), rtol=1e-11, atol=1e-15)
    errs = []
    for lr in (1e-3, 1e-4):
        step = (kr.net(kr.gd_net_step(B, X, 0.3, lr, "tanh"), X, "tanh") - kr.net(B, X, "tanh")) / lr
        errs.append(float(jnp.abs(step - v).max()))
    assert errs[1] < errs[0] / 5  # first order in the step size


@pytest.mark.slow
def test_prop44_monte_carlo_converges_at_rate_m_to_the_minus_half():
    X = jax.random.normal(jax.random.PRNGKey(1), (5, 3))
    limit = kr.relu_limit_kernel(X)
    Ms = (64, 256, 1024, 4096)

    def err(M, key):
        B = jax.random.normal(key, (1, M, 3))
        return jnp.sqrt(jnp.mean((kr.kernel(B, X)[0] - limit) ** 2))

    keys = jax.random.split(jax.random.PRNGKey(5), 32)
    rms = [float(jnp.sqrt(jnp.mean(jax.vmap(lambda k: err(M, k))(keys) ** 2))) for M in Ms]
    slope = np.polyfit(np.log(Ms), np.log(rms), 1)[0]
    assert -0.6 < slope < -0.4, slope
    assert rms[-1] < 0.05 * float(jnp.abs(limit).max())


@pytest.mark.slow
def test_thm42_invariance_with_and_without_the_network():
    """Data on the first d = 2 coordinates of R^4, views add noise on the last two; at start the
    network ignores the last two coordinates (B's columns there are 0), so f is invariant."""
    xi = jax.random.normal(jax.random.PRNGKey(3), (8, 2))
    X = jnp.concatenate([xi, jnp.zeros((8, 2))], 1)
    Xv = X + jnp.concatenate([jnp.zeros((8, 2)), jax.random.normal(jax.random.PRNGKey(4), (8, 2))], 1)
    B = jax.random.normal(jax.random.PRNGKey(0), (2, 16, 4)).at[..., 2:].set(0.0)
    assert float(kr.invariance_gap(kr.net(B, X), kr.net(B, Xv))) == 0.0
    # plain GD on the embedded points (views are points of their own): equal points stay equal
    Z = jnp.concatenate([kr.net(B, X), kr.net(B, Xv)])
    for _ in range(5):
        Z = kr.gd_point_step(Z, 0.5, 0.05)
    assert float(kr.invariance_gap(Z[:8], Z[8:])) < 1e-14
    # network GD on the same loss: grad_w f(x + eps) != grad_w f(x), invariance is lost after one step
    XX = jnp.concatenate([X, Xv])
    B1 = kr.gd_net_step(B, XX, 0.5, 0.05)
    assert float(kr.invariance_gap(kr.net(B1, X), kr.net(B1, Xv))) > 1e-4
    # ... unless grad_w f is invariant: a network that reads only the first two coordinates
    P = jnp.diag(jnp.array([1.0, 1.0, 0.0, 0.0]))
    B2 = kr.gd_net_step(B, XX @ P, 0.5, 0.05)
    assert float(kr.invariance_gap(kr.net(B2, X @ P), kr.net(B2, Xv @ P))) == 0.0


def _clusters(delta, sizes, key):
    xi = jnp.array([[2.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.5, 0], [0, 0, 0, 0.8]])  # orthogonal centers
    labels = jnp.repeat(jnp.arange(4), jnp.array(sizes), total_repeat_length=sum(sizes))
    eps = jax.random.normal(key, (sum(sizes), 4))
    eps = delta * eps / jnp.linalg.norm(eps, axis=1, keepdims=True)
    return xi[labels] + eps, labels, xi


@pytest.mark.slow
def test_thm45_and_cor46_per_cluster_velocities():
    B = jax.random.normal(jax.random.PRNGKey(7), (4, 64, 4))
    errs = []
    for delta in (1e-2, 1e-3):
        X, labels, xi = _clusters(delta, (6, 3, 9, 2), jax.random.PRNGKey(8))
        v = kr.flow_velocity(B, X, 0.5, "softplus")
        pred = kr.thm45_velocity(B, X, labels, xi, 0.5, "softplus")
        errs.append(float(jnp.abs(v - pred).max() / jnp.abs(v).max()))
    assert errs[1] < errs[0] / 5 and errs[1] < 1e-2, errs  # O(delta)
    # Cor. 4.6: ReLU, wide network: beta -> 1/2
    Bw = jax.random.normal(jax.random.PRNGKey(9), (4, 8192, 4))
    X, labels, xi = _clusters(1e-3, (6, 3, 9, 2), jax.random.PRNGKey(8))
    v = kr.flow_velocity(Bw, X, 0.5)
    pred = kr.thm45_velocity(Bw, X, labels, xi, 0.5, beta=0.5)
    assert float(jnp.abs(v - pred).max() / jnp.abs(v).max()) < 0.05
