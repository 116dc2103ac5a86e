"""Covariance operator (Thm. 2-4, Eq. 6-7, Cor. 1) against autodiff of the exact population loss, in
float64: the gradient of E[L] w.r.t. W_l equals the operator expression, exactly where the paper says
theta = 0, and the residue theta is measured where it is not."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.deep import network, operator

SIZES = (3, 4, 2)
TAU = 0.5


@pytest.fixture(scope="module")
def ws():
    return network.init_weights(jax.random.PRNGKey(0), SIZES)


def _pop(sigma):
    return operator.noise_population(jax.random.PRNGKey(1), 5, SIZES[0], 3, sigma)


@functools.partial(jax.jit, static_argnames=("loss", "branch"))
def _rels(ws, pop, loss, branch, beta=0.0):
    """||theta vec W_l|| / ||OP_l vec W_l|| for every layer l, one compiled program."""
    out = []
    for l in range(1, len(ws) + 1):
        theta, op_w = operator.residue(ws, pop, l, loss, TAU, beta, branch=branch)
        out.append(jnp.linalg.norm(theta) / jnp.linalg.norm(op_w))
    return jnp.stack(out)


def _rel(ws, pop, loss, branch, beta=0.0):
    return float(jnp.max(_rels(ws, pop, loss, branch, beta)))


@pytest.mark.parametrize("loss", ["simp", "tri", "nce"])
def test_theorem2_and_xi_of_eq6(loss):
    grad = jax.grad(lambda rp, rn: operator.pair_loss(rp, rn, loss, TAU, r0=0.2), argnums=(0, 1))
    for rp, rn in [(0.3, 0.9), (1.2, 0.1)]:
        gp, gn = grad(rp, rn)
        assert gp > 0 and gn < 0 and abs(gp + gn) < 1e-12
    for r in (0.0, 0.4, 1.5):
        np.testing.assert_allclose(-grad(0.0, r)[1], operator.xi(jnp.asarray(r), loss, TAU, r0=0.2), atol=1e-12)


def test_theorem3_and_corollary1_are_exact_with_augmentation(ws):
    pop = _pop(0.3)
    for beta in (0.0, -0.5, 0.2):
        for branch in ("first", "all"):
            assert _rel(ws, pop, "simp", branch, beta) < 1e-12

    @jax.jit
    def operators(ws, pop):
        kv = operator.view_connections(ws, pop, 1)
        return (jnp.linalg.eigvalsh(operator.op_ve(kv, pop)).min(), jnp.linalg.eigvalsh(operator.op_beta(kv, pop, -0.5)).min(),
                operator.op_weighted(ws, kv, pop, "simp"), operator.op_ve(kv, pop))

    min_ve, min_beta, weighted_one, ve = operators(ws, pop)
    assert min_ve > -1e-12 and min_beta > -1e-12          # PSD (Thm. 3); beta < 0 keeps it PSD (Sec. 4.2)
    np.testing.assert_allclose(weighted_one, ve, atol=1e-12)  # xi = 1: 1/2 V[K̄(x) - K̄(x')] = V[K̄(x)]


def test_theorem4_exact_without_augmentation_and_eq7_exact_with_it(ws):
    assert _rel(ws, _pop(0.0), "nce", "all") < 1e-12
    assert _rel(ws, _pop(0.3), "nce_exact", "all") < 1e-12


@pytest.mark.slow
def test_theorem4_soft_triplet_and_first_branch():
    assert _rel(ws_slow(), _pop(0.0), "tri", "all") < 1e-12
    assert _rel(ws_slow(), _pop(0.0), "nce", "first") < 1e-12
    assert _rel(ws_slow(), _pop(0.3), "nce_exact", "first") < 1e-12


def ws_slow():
    return network.init_weights(jax.random.PRNGKey(0), SIZES)


def test_theorem4_residue_is_there_and_shrinks_with_augmentation(ws):
    rel = [_rel(ws, _pop(s), "nce", "all") for s in (0.4, 0.1, 0.025)]
    assert rel[0] > 1e-3
    assert rel[1] < 0.5 * rel[0] and rel[2] < 0.5 * rel[1]
