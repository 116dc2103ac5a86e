"""Token-generator data of Sec. 5 (generators, embeddings, views)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.data import tokens


@pytest.mark.parametrize("p", [1, 3, 10])
def test_generators_fix_n_fixed_positions_to_candidates(key, p):
    spec = tokens.TokenSpec(n_candidates=p)
    d = tokens.make_tokens(key, spec)
    chex.assert_shape((d.embeddings, d.candidates, d.generators, d.used), ((20, 20), (10, p), (40, 10), (10, 20)))
    gen, cand = np.asarray(d.generators), np.asarray(d.candidates)
    np.testing.assert_array_equal((gen != tokens.WILDCARD).sum(axis=1), 5)
    used = np.zeros((10, 20), bool)
    for g in range(40):
        for k in range(10):
            if gen[g, k] != tokens.WILDCARD:
                assert gen[g, k] in cand[k]
                used[k, gen[g, k]] = True
    np.testing.assert_array_equal(np.asarray(d.used), used)
    assert all(len(set(c)) == p for c in cand)  # P distinct candidates per position


@pytest.mark.parametrize("zeta", [1.0, 10.0])
def test_embeddings_orthogonal_with_zeta_norms(key, zeta):
    e = np.asarray(tokens.make_tokens(key, tokens.TokenSpec(zeta=zeta)).embeddings)
    norms = np.linalg.norm(e, axis=1)
    np.testing.assert_allclose(norms[:10], zeta, rtol=1e-12)
    np.testing.assert_allclose(norms[10:], 1 / zeta, rtol=1e-12)
    np.testing.assert_allclose((e / norms[:, None]) @ (e / norms[:, None]).T, np.eye(20), atol=1e-12)


def test_views_share_generator_and_wildcards_are_uniform(key):
    d = tokens.make_tokens(key, tokens.TokenSpec(n_candidates=3))
    gen = jnp.zeros(20000, jnp.int32) + 7
    t1 = np.asarray(tokens.sample_tokens(jax.random.PRNGKey(1), d, gen))
    fixed = np.asarray(d.generators[7])
    np.testing.assert_array_equal(t1[:, fixed >= 0], np.broadcast_to(fixed[fixed >= 0], (20000, 5)))
    wild = np.flatnonzero(fixed < 0)[0]
    freq = np.bincount(t1[:, wild], minlength=20) / 20000
    np.testing.assert_allclose(freq, 1 / 20, atol=0.01)  # 4.5 sigma
    x1, x2 = tokens.sample_views(jax.random.PRNGKey(2), d, 64)
    chex.assert_shape((x1, x2), ((64, 10, 20),) * 2)
    # Decode tokens back from the embeddings: a position is equal in both views wherever the generator fixes it.
    a1 = np.argmax(np.asarray(x1) @ np.asarray(d.embeddings).T, axis=-1)
    a2 = np.argmax(np.asarray(x2) @ np.asarray(d.embeddings).T, axis=-1)
    same = a1 == a2
    assert same.mean() > 0.5 and not same.all()
    assert np.all(same.sum(axis=1) >= 5)


@pytest.mark.parametrize("field, value, message", [
    ("n_candidates", 21, r"n_candidates=21 must be in \[1, n_tokens=20\]"),
    ("n_candidates", 0, r"n_candidates=0 must be in \[1, n_tokens=20\]"),
    ("n_fixed", 11, r"n_fixed=11 must be in \[1, n_positions=10\]"),
    ("zeta", 0.0, "zeta=0.0 must be > 0"),
])
def test_bad_spec_names_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        tokens.TokenSpec(**{field: value})


def test_batch_of_one_is_rejected(key):
    d = tokens.make_tokens(key, tokens.TokenSpec())
    with pytest.raises(ValueError, match="batch size n=1 must be >= 2"):
        tokens.sample_views(key, d, 1)
