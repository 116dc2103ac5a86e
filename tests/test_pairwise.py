import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import pairwise


def test_gaussian_matches_definition(key):
    g = jax.random.normal(key, (7, 3))
    a = pairwise.gaussian(g, 0.7)
    brute = np.exp(-np.sum((np.asarray(g)[:, None] - np.asarray(g)[None]) ** 2, -1) / (2 * 0.7))
    chex.assert_trees_all_close(a, brute, rtol=1e-12, atol=1e-12)
    g1 = g[:, 0]
    chex.assert_trees_all_close(pairwise.gaussian(g1, 0.7), pairwise.gaussian(g1[:, None], 0.7), atol=1e-12)


def test_infonce_rows_are_softmax_over_others(key):
    f = jax.random.normal(key, (6, 4))
    a = pairwise.infonce(f, 0.5)
    chex.assert_trees_all_close(jnp.diag(a), jnp.zeros(6), atol=0)
    chex.assert_trees_all_close(a.sum(1), jnp.ones(6), atol=1e-12)
    d2 = np.sum((np.asarray(f)[:, None] - np.asarray(f)[None]) ** 2, -1) / 2
    row = np.exp(-d2[0, 1:] / 0.5)
    chex.assert_trees_all_close(a[0, 1:], row / row.sum(), rtol=1e-10)


def test_alpha_is_under_stop_gradient(key):
    f = jax.random.normal(key, (5, 2))
    chex.assert_trees_all_close(jax.grad(lambda f: pairwise.infonce(f, 0.3)[0, 1])(f), jnp.zeros_like(f))
    chex.assert_trees_all_close(jax.grad(lambda f: pairwise.gaussian(f, 0.3)[0, 1])(f), jnp.zeros_like(f))


def test_pairwise_choice_validates():
    assert pairwise.get_pairwise("gaussian", 0.5) == pairwise.Pairwise("gaussian", 0.5)
    with pytest.raises(ValueError, match="kind='nce' is unknown; allowed for populations: uniform, gaussian"):
        pairwise.get_pairwise("nce")
    with pytest.raises(ValueError, match="tau=0.0 must be a finite number > 0"):
        pairwise.get_pairwise("gaussian", 0.0)
    with pytest.raises(ValueError, match="tau=-1"):
        pairwise.infonce(jnp.ones((3, 2)), -1)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_degenerate_tau_is_where_the_gaussian_alpha_turns_0_or_1(dtype):
    """Against the alpha matrix itself, computed in ``dtype`` (data of another scale and shape than any
    the threshold was looked at on): below tau_min / 2 most nodes have no pair of distinct features
    with 0 < alpha < 1, above 2 tau_min most have one."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.normal(size=(40, 3)) * 7.3, rng.normal(size=(25, 3)) * 0.02 + 1.0])
    w = rng.normal(size=(31, 3))
    g = np.tanh((w / np.linalg.norm(w, axis=1, keepdims=True)) @ x.T)
    tau_min, delta = pairwise.degenerate_tau(g, dtype)
    gaps = [np.min(np.diff(np.unique(row.astype(dtype)))) for row in g]  # the closest distinct pair, another route
    assert delta == pytest.approx(np.median(gaps), rel=1e-12) and tau_min > 0

    def informative_nodes(tau):
        count = 0
        for row in g:
            r = jnp.asarray(row, dtype)
            a = np.asarray(pairwise.gaussian(r, tau))
            distinct = np.asarray(r)[:, None] != np.asarray(r)[None, :]
            count += bool(np.any(distinct & (a > 0) & (a < 1)))
        return count

    with jax.enable_x64(dtype == jnp.float64):
        assert informative_nodes(tau_min / 2) <= len(g) // 2
        assert informative_nodes(2 * tau_min) > len(g) // 2
        assert informative_nodes(1.0) == len(g)
    assert pairwise.degenerate_tau(np.zeros((4, 5)), dtype) == (0.0, 0.0)  # no distinct features: nothing to say
