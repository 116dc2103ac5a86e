"""ccdyn.one_layer.gaussian_kernel: Lemma 1's feature map against the Gaussian alpha it expands (g with
negative entries, so the shift matters), the multi-index count, and Eq. 4's variance sum against the
pairwise population form."""

import math

import numpy as np
import pytest

from ccdyn import covariance
from ccdyn.one_layer import gaussian_kernel as gk


def test_multi_indices_count():
    for k, deg in [(1, 5), (2, 7), (3, 4)]:
        idx = gk.multi_indices(k, deg)
        assert idx.shape == (math.comb(deg + k, k), k) and idx.sum(1).max() == deg and len({tuple(a) for a in idx}) == len(idx)
    with pytest.raises(ValueError, match="degree"):
        gk.multi_indices(2, -1)


@pytest.mark.parametrize("tau", [1.5, 3.0])
def test_features_are_nonnegative_and_expand_alpha(tau):
    g = np.random.default_rng(0).standard_normal((12, 2)) - 1.0
    alpha = np.exp(-np.sum((g[:, None] - g[None]) ** 2, axis=2) / (2 * tau))
    errs = [np.abs(gk.gaussian_features(g, tau, deg) @ gk.gaussian_features(g, tau, deg).T - alpha).max()
            for deg in (5, 15, 45)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-13
    assert gk.gaussian_features(g, tau, 45).min() >= 0
    one_d = gk.gaussian_features(g[:, 0], tau, 40)
    a1 = np.exp(-(g[:, :1] - g[:, 0][None]) ** 2 / (2 * tau))
    np.testing.assert_allclose(one_d @ one_d.T, a1, atol=1e-14)


def test_variance_sum_is_the_population_pairwise_form():
    rng = np.random.default_rng(2)
    g, f = rng.standard_normal((15, 2)), rng.standard_normal((15, 3))
    p = rng.dirichlet(np.ones(15))
    alpha = np.exp(-np.sum((g[:, None] - g[None]) ** 2, axis=2) / 4.0)
    phi = gk.gaussian_features(g, 2.0, 50)
    np.testing.assert_allclose(gk.variance_sum(f, p, phi), np.asarray(covariance.population_cov(f, f, p, alpha)),
                               atol=1e-13)
    # uniform alpha (the degree-0 map phi = 1 of a constant g): the p-weighted covariance
    mean = p @ f
    np.testing.assert_allclose(gk.variance_sum(f, p, np.ones((15, 1))), (f - mean).T @ (p[:, None] * (f - mean)),
                               atol=1e-14)
