"""C_alpha (Eq. 3) against brute-force loops, closed forms, and its population limit (Lemma 2)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, covariance, data, one_layer, pairwise


def brute_batch_cov(a, b, alpha, a2=None, b2=None):
    a, b, alpha = np.asarray(a), np.asarray(b), np.asarray(alpha)
    a2 = a if a2 is None else np.asarray(a2)
    b2 = b if b2 is None else np.asarray(b2)
    n = a.shape[0]
    c = np.zeros((a.shape[1], b.shape[1]))
    for i in range(n):
        for j in range(n):
            if i != j:
                c += alpha[i, j] * (np.outer(a[i] - a[j], b[i] - b[j]) - np.outer(a[i] - a2[i], b[i] - b2[i]))
    return c / (2 * n * n)


def brute_population_cov(a, b, p, alpha):
    a, b, p, alpha = map(np.asarray, (a, b, p, alpha))
    n = a.shape[0]
    return 0.5 * sum(p[i] * p[j] * alpha[i, j] * np.outer(a[i] - a[j], b[i] - b[j])
                     for i in range(n) for j in range(n))


@pytest.mark.parametrize("views", [False, True])
def test_batch_cov_matches_loop(key, views):
    ks = jax.random.split(key, 5)
    n = 9
    a, b = jax.random.normal(ks[0], (n, 3)), jax.random.normal(ks[1], (n, 2))
    alpha = jax.random.uniform(ks[2], (n, n))  # not symmetric, diagonal non-zero: must be ignored
    a2, b2 = (jax.random.normal(ks[3], (n, 3)), jax.random.normal(ks[4], (n, 2))) if views else (None, None)
    got = covariance.batch_cov(a, b, alpha, a2, b2)
    chex.assert_shape(got, (3, 2))
    chex.assert_trees_all_close(got, brute_batch_cov(a, b, alpha, a2, b2), rtol=1e-12, atol=1e-14)


def test_uniform_alpha_without_augmentation_is_biased_covariance(key):
    a = jax.random.normal(key, (50, 4))
    got = covariance.batch_cov(a, a, pairwise.uniform(50, a.dtype))
    chex.assert_trees_all_close(got, np.cov(np.asarray(a).T, bias=True), rtol=1e-12, atol=1e-14)


def test_population_cov_matches_double_sum_and_weighted_covariance(key):
    ks = jax.random.split(key, 4)
    n = 8
    a, b = jax.random.normal(ks[0], (n, 3)), jax.random.normal(ks[1], (n, 2))
    p = jax.random.dirichlet(ks[2], jnp.ones(n))
    alpha = pairwise.gaussian(jax.random.normal(ks[3], (n,)), 0.8)
    chex.assert_trees_all_close(covariance.population_cov(a, b, p, alpha),
                                brute_population_cov(a, b, p, alpha), rtol=1e-12, atol=1e-14)
    chex.assert_trees_all_close(covariance.population_cov(a, b, p), brute_population_cov(a, b, p, np.ones((n, n))),
                                rtol=1e-12, atol=1e-14)
    chex.assert_trees_all_close(covariance.population_cov(a, a, p), np.cov(np.asarray(a).T, aweights=np.asarray(p), bias=True),
                                rtol=1e-12, atol=1e-14)


def test_energy_is_half_trace(key):
    f = jax.random.normal(key, (12, 3))
    alpha = pairwise.infonce(f, 0.5)
    chex.assert_trees_all_close(covariance.batch_energy(f, alpha, f[::-1]),
                                0.5 * np.trace(brute_batch_cov(f, f, alpha, f[::-1], f[::-1])), rtol=1e-12)


def test_infonce_gradient_is_minus_2n2_energy_gradient(key):
    """grad L_nce = -2 N^2 grad E_{sg(alpha)} for Eq. 1 with epsilon = 0 (docs/conventions.md)."""
    ks = jax.random.split(key, 3)
    n, d, k, tau = 10, 5, 3, 0.4
    x1 = jax.random.normal(ks[0], (n, d))
    x2 = x1 + 0.3 * jax.random.normal(ks[1], (n, d))
    w0 = jax.random.normal(ks[2], (k, d))
    act = activations.get_activation("relu")

    def loss_nce(w):
        f1, f2 = act.h(x1 @ w.T), act.h(x2 @ w.T)
        di2 = 0.5 * jnp.sum((f1 - f2) ** 2, 1)
        dij2 = 0.5 * jnp.sum((f1[:, None] - f1[None]) ** 2, -1)
        logits = jnp.where(jnp.eye(n, dtype=bool), -jnp.inf, -dij2 / tau)
        return -tau * jnp.sum(-di2 / tau - jax.scipy.special.logsumexp(logits, axis=1))

    def energy_sg(w):
        f1, f2 = act.h(x1 @ w.T), act.h(x2 @ w.T)
        return covariance.batch_energy(f1, pairwise.infonce(f1, tau), f2)

    chex.assert_trees_all_close(jax.jit(jax.grad(loss_nce))(w0), -2 * n * n * jax.jit(jax.grad(energy_sg))(w0),
                                rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", [pytest.param("uniform", marks=pytest.mark.slow), "gaussian"])  # uniform: 4 s
def test_batch_approaches_population_lemma2(key, kind):
    """Lemma 2: batch C_alpha[x~^w] with two augmented views -> population A(w) as N grows."""
    k_data, k_views, k_w, k_b1, k_b2 = jax.random.split(key, 5)
    base = data.gaussian_mixture(k_data, np.eye(3) * 2.0, 0.3, 40)
    ds = data.gaussian_noise_views(base, k_views, 4, 0.4)
    act = activations.get_activation("relu")
    pw = pairwise.get_pairwise(kind, 2.0)
    w = jax.random.normal(k_w, (3,))
    w = w / jnp.linalg.norm(w)
    target = one_layer.a_matrix(ds, act, w, pw)

    @jax.jit
    def batch_a_small(k):
        return batch_a(k, 100)

    @jax.jit
    def batch_a_large(k):
        return batch_a(k, 3000)

    def batch_a(k, n):
        x0, x1, x2 = data.sample_batch(ds, k, n)
        g1, g2 = x1 * act.dh(x1 @ w)[:, None], x2 * act.dh(x2 @ w)[:, None]
        alpha = pairwise.uniform(n) if kind == "uniform" else pairwise.gaussian(act.h(x0 @ w), pw.tau)
        return covariance.batch_cov(g1, g1, alpha, g2, g2)

    # Mean relative errors over 4 batches each: the sampling error falls like 1/sqrt(N), so going from
    # N = 100 to 3000 divides it by about 5.5 (the ratio asserted leaves room for the O(1/N) bias of alpha).
    def mean_err(fn, k):
        return np.mean([np.linalg.norm(fn(kk) - target) / np.linalg.norm(target) for kk in jax.random.split(k, 4)])

    err_small, err_large = mean_err(batch_a_small, k_b1), mean_err(batch_a_large, k_b2)
    assert err_large < 0.06, err_large
    assert err_large < 0.35 * err_small, (err_small, err_large)


def test_alpha_shape_checked():
    with pytest.raises(ValueError, match=r"alpha has shape \(3, 3\); expected \(4, 4\)"):
        covariance.batch_cov(jnp.ones((4, 2)), jnp.ones((4, 2)), jnp.ones((3, 3)))
