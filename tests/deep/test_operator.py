"""Covariance operator (Thm. 2-4, Eq. 6-7, Cor. 1) against autodiff of the exact population loss, in
float64: the gradient of E[L] w.r.t. W_l equals the operator expression, exactly where the paper says
theta = 0, and the residue theta is measured where it is not."""

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


_residue = jax.jit(operator.residue, static_argnames=("l", "loss", "branch"))


def _rel(ws, pop, l, loss, branch, beta=0.0):
    theta, op_w = _residue(ws, pop, l=l, loss=loss, tau=TAU, beta=beta, branch=branch)
    return float(jnp.linalg.norm(theta) / jnp.linalg.norm(op_w))


@pytest.mark.parametrize("loss", ["simp", "tri", "nce"])
def test_theorem2_and_xi_of_eq6(loss):
    grad = jax.grad(lambda rp, rn: operator.pair_loss(rp, rn, loss, TAU, r0=0.2), argnums=(0, 1))
    for rp, rn in [(0.3, 0.9), (1.2, 0.1)]:
        gp, gn = grad(rp, rn)
        assert gp > 0 and gn < 0 and abs(gp + gn) < 1e-12
    for r in (0.0, 0.4, 1.5):
        np.testing.assert_allclose(-grad(0.0, r)[1], operator.xi(jnp.asarray(r), loss, TAU, r0=0.2), atol=1e-12)


@pytest.mark.parametrize("l", [1, 2])
def test_theorem3_and_corollary1_are_exact_with_augmentation(ws, l):
    pop = _pop(0.3)
    for beta in (0.0, -0.5, 0.2):
        for branch in ("first", "all"):
            assert _rel(ws, pop, l, "simp", branch, beta) < 1e-12
    kv = operator.view_connections(ws, pop, l)
    assert jnp.linalg.eigvalsh(operator.op_ve(kv, pop)).min() > -1e-12           # PSD (Thm. 3)
    assert jnp.linalg.eigvalsh(operator.op_beta(kv, pop, -0.5)).min() > -1e-12   # beta < 0 keeps it PSD
    # xi = 1: 1/2 V[K̄(x) - K̄(x')] = V[K̄(x)] (remark after Thm. 4)
    np.testing.assert_allclose(operator.op_weighted(ws, kv, pop, "simp"), operator.op_ve(kv, pop), atol=1e-12)


def test_theorem4_exact_without_augmentation_and_eq7_exact_with_it(ws):
    for loss in ("tri", "nce"):
        assert _rel(ws, _pop(0.0), 2, loss, "all") < 1e-12
    for branch in ("first", "all"):
        assert _rel(ws, _pop(0.3), 1, "nce_exact", branch) < 1e-12


def test_theorem4_residue_is_there_and_shrinks_with_augmentation(ws):
    rel = [_rel(ws, _pop(s), 2, "nce", "all") for s in (0.4, 0.1, 0.025)]
    assert rel[0] > 1e-3
    assert rel[1] < 0.5 * rel[0] and rel[2] < 0.5 * rel[1]
