"""Even activations (quadratic, a user's even h): w and -w are one optimum (E(-w) = E(w)), merged by basins as
for odd ones, so the table, the figure and Chao1 count each +-w pair once."""

import jax.numpy as jnp
import numpy as np

from ccdyn import activations, data, one_layer, pairwise
from ccdyn.one_layer import basins, engine

UNIFORM = pairwise.get_pairwise("uniform")


def test_quadratic_lists_each_pm_w_pair_once():
    """40 random inits on 12 Gaussian points (d = 4) end at fewer optima up to sign than as signed vectors:
    basins lists each +-w pair once, its basin the sum of both signs, no Gram entry near -1, and the pattern
    overlap is |cos|."""
    rng = np.random.default_rng(0)
    patterns = rng.standard_normal((2, 4))
    ds = data.make_dataset(rng.standard_normal((12, 4)), patterns=patterns, dtype=jnp.float64)
    act = activations.get_activation("quadratic")
    assert act.sign_symmetric and act.even and not act.odd
    dyn = engine.Dynamics(method="power")
    W = np.random.default_rng(5).standard_normal((40, 4))
    result = engine.converge(ds, act, UNIFORM, dyn, jnp.asarray(W / np.linalg.norm(W, axis=1, keepdims=True)))
    assert np.all(result["status"] == engine.Status.CONVERGED)
    signed = basins.cluster(result["w"], 1e-2, odd=False)[1]
    labels, pairs = basins.cluster(result["w"], 1e-2, odd=True)
    assert signed.shape[0] > pairs.shape[0] >= 2  # the sign-blind count has +-w twins
    e = np.asarray(one_layer.energy(ds, act, jnp.asarray(np.concatenate([signed, -signed]))))
    np.testing.assert_allclose(e[: len(signed)], e[len(signed):], rtol=1e-13)  # E(-w) = E(w)
    an = basins.analyze(ds, act, UNIFORM, dyn, result, cluster_tol=1e-2)
    assert [r["count"] for r in an["rows"]] == sorted(np.bincount(labels), reverse=True)
    assert an["n_clusters"] == pairs.shape[0] == len(an["rows"])
    assert all(r["stable"] and r["certificate"] == "smooth" for r in an["rows"])
    gram = an["optima"] @ an["optima"].T
    assert np.all(np.abs(gram - np.eye(len(gram))) < 0.99)
    unit = patterns / np.linalg.norm(patterns, axis=1, keepdims=True)
    for r, w in zip(an["rows"], an["optima"]):
        assert r["overlap"] == max(abs(unit @ w))
