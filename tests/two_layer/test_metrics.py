"""Matching scores chi_+/- (Eq. 16, 180, 181) against a brute-force loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.data import tokens
from ccdyn.two_layer import metrics


def brute_scores(w, u, used, odd):
    k_rf, m, _ = w.shape
    plus, minus = [], []
    for k in range(k_rf):
        best = []
        for a in range(u.shape[0]):
            cos = [w[k, j] @ u[a] / np.linalg.norm(w[k, j]) / np.linalg.norm(u[a]) for j in range(m)]
            best.append(max(abs(c) for c in cos) if odd else max(cos))
        best = np.array(best)
        plus.append(best[used[k]].mean())
        minus.append(best[~used[k]].mean())
    return np.array(plus), np.array(minus)


@pytest.mark.parametrize("odd", [pytest.param(False, marks=pytest.mark.slow), True])
def test_matching_scores_match_a_loop(key, odd):
    d = tokens.make_tokens(key, tokens.TokenSpec(n_candidates=4, zeta=3.0))
    w = jax.random.normal(jax.random.PRNGKey(5), (10, 6, 20))
    got = metrics.matching_scores(w, d.embeddings, d.used, odd)
    plus, minus = brute_scores(np.asarray(w), np.asarray(d.embeddings), np.asarray(d.used), odd)
    np.testing.assert_allclose(got["chi_plus_rf"], plus, rtol=1e-12)
    np.testing.assert_allclose(got["chi_minus_rf"], minus, rtol=1e-12)
    np.testing.assert_allclose(got["chi_plus"], plus.mean(), rtol=1e-12)
    np.testing.assert_allclose(got["chi_minus"], minus.mean(), rtol=1e-12)


def test_filters_on_the_relevant_tokens_score_one(key):
    d = tokens.make_tokens(key, tokens.TokenSpec(n_candidates=3, zeta=5.0))
    e, cand = np.asarray(d.embeddings), np.asarray(d.candidates)
    w = 2.5 * e[cand]  # (K, P, d): filter m of RF k is the m-th candidate of k
    s = metrics.matching_scores(jnp.asarray(w), d.embeddings, d.used)
    np.testing.assert_allclose(s["chi_plus"], 1.0, rtol=1e-12)
    np.testing.assert_allclose(s["chi_minus"], 0.0, atol=1e-12)  # orthogonal to every other token
    s_neg = metrics.matching_scores(-jnp.asarray(w), d.embeddings, d.used, odd=True)
    np.testing.assert_allclose(s_neg["chi_plus"], 1.0, rtol=1e-12)
