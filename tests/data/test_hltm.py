"""SB-HLTM (ccdyn.data.hltm): names, polarity products along paths (Lemma 6 / Eq. 177) and the
sampler's statistics against exact enumeration."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.data import hltm

DEPTH = 3


@pytest.fixture(scope="module")
def tree():
    return hltm.make_tree(jax.random.PRNGKey(3), DEPTH, 0.6, random_sign=True)


def test_names_round_trip_and_paper_examples():
    for i in range(hltm.n_nodes(5)):
        assert hltm.node_index(hltm.node_name(i)) == i
    assert hltm.node_name(0) == "s" and hltm.node_depth(hltm.node_index("s1100")) == 4
    assert hltm.ancestors(hltm.node_index("s010")) == [hltm.node_index("s01"), 1, 0]
    with pytest.raises(ValueError, match="node name"):
        hltm.node_index("s2")


def test_polarities_in_range_and_signs():
    t = hltm.make_tree(jax.random.PRNGKey(0), 5, 0.7)
    r = np.asarray(t.rho[1:])
    assert r.min() >= 0.7 and r.max() <= 1.0
    s = np.asarray(hltm.make_tree(jax.random.PRNGKey(0), 5, 0.7, random_sign=True).rho[1:])
    assert np.all(np.abs(s) >= 0.7) and (s < 0).any() and (s > 0).any()
    with pytest.raises(ValueError, match="delta_lower"):
        hltm.make_tree(jax.random.PRNGKey(0), 3, 0.9, 0.8)


def test_polarity_is_the_product_along_the_path(tree):
    """2 P(z_j = 1 | z_i = 1) - 1 from the enumerated joint equals prod of edge polarities (Eq. 177)."""
    z, p = hltm.enumerate_joint(tree, DEPTH)
    np.testing.assert_allclose(float(p.sum()), 1.0, atol=1e-12)
    for j in range(1, hltm.n_nodes(DEPTH)):
        for i in hltm.ancestors(j):
            both = jnp.sum(p * (z[:, i] == 1) * (z[:, j] == 1)) / jnp.sum(p * (z[:, i] == 1))
            np.testing.assert_allclose(2 * both - 1, hltm.path_polarity(tree, i, j), atol=1e-12)


def test_thresholds_round_rho_to_16_bits(tree):
    t = np.asarray(hltm.flip_thresholds(tree))[1:] / 65536
    assert np.max(np.abs(t - (1 - np.asarray(tree.rho[1:])) / 2)) <= 2.0 ** -17 + 1e-15


def test_sampler_matches_enumeration(tree):
    """Second moments of s = 2z - 1 within a sample, between a sample and its positive view (root
    kept, the rest resampled) and with a negative, against exact values from the enumeration."""
    n = 20000
    views = jax.jit(hltm.sample_views, static_argnums=(2, 3))(jax.random.PRNGKey(1), tree, n, DEPTH)
    zs, zp, zn = (np.asarray(v, float) * 2 - 1 for v in views)
    chex.assert_shape(zs, (n, hltm.n_nodes(DEPTH)))
    z, p = hltm.enumerate_joint(tree, DEPTH)
    s, p = np.asarray(z, float) * 2 - 1, np.asarray(p)
    exact = np.einsum("m,mi,mj->ij", p, s, s)
    cond = np.stack([(p * (s[:, 0] == v)) @ s / p[s[:, 0] == v].sum() for v in (-1, 1)])  # E[s | z_0]
    exact_pos = 0.5 * cond.T @ cond
    tol = 5 / np.sqrt(n)
    np.testing.assert_allclose(zs.T @ zs / n, exact, atol=tol)
    np.testing.assert_allclose(zs.T @ zp / n, exact_pos, atol=tol)
    np.testing.assert_allclose(zs.T @ zn / n, np.zeros_like(exact), atol=tol)
    assert np.all(zs[:, 0] == zp[:, 0])
    leaves = hltm.leaves(jnp.asarray(zs), DEPTH)
    assert leaves.shape == (n, 2 ** DEPTH)
