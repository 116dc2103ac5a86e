"""Figs. 5-6 machinery: the scores against scikit-learn and hand counts, the keep rule, and a tiny run
(shapes, the shared start of the network and of plain GD, determinism)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.variational import clusters as cl


def _points(key):
    U = jax.random.normal(key, (30, 3))
    U = U / jnp.linalg.norm(U, axis=1, keepdims=True)
    labels = np.repeat(np.arange(3), [12, 10, 8])
    return U, labels, jax.nn.one_hot(labels, 3, dtype=U.dtype)


def test_silhouette_against_sklearn(key):
    metrics = pytest.importorskip("sklearn.metrics")  # scikit-learn is not a dependency of ccdyn
    U, labels, onehot = _points(key)
    s = metrics.silhouette_samples(np.asarray(U), labels)
    got = jax.jit(cl.scores)(U, onehot)
    # distances come from one GEMM (|a|^2 + |b|^2 - 2ab): ~1e-8 relative after the square root
    chex.assert_trees_all_close(got["silhouette"], s.mean(), rtol=1e-6, atol=1e-9)
    chex.assert_trees_all_close(got["per_cluster"], jnp.array([s[labels == q].mean() for q in range(3)]),
                                rtol=1e-6, atol=1e-9)


def test_ratios_and_uniformity_by_hand(key):
    U, labels, onehot = _points(key)
    got = jax.jit(cl.scores)(U, onehot)
    d2 = np.sum((np.asarray(U)[:, None] - np.asarray(U)[None]) ** 2, -1)
    same = labels[:, None] == labels[None]
    off = ~np.eye(30, dtype=bool)
    chex.assert_trees_all_close(got["ratio"], d2[~same].mean() / d2[same & off].mean(), rtol=1e-10)
    q0 = labels == 0
    chex.assert_trees_all_close(got["per_cluster_ratio"][0],
                                d2[np.ix_(q0, ~q0)].mean() / d2[np.ix_(q0, q0)][off[np.ix_(q0, q0)]].mean(), rtol=1e-10)
    chex.assert_trees_all_close(got["uniformity"], np.log(np.exp(-2 * d2)[off].mean()), rtol=1e-10)


def test_keep_times_and_summary():
    iters = np.array([0, 10, 20, 30, 40])
    score = np.array([[1, 5, 5, 1, 1], [5, 5, 5, 5, 5], [1, 1, 1, 1, 1], [1, 1, 5, np.nan, 5]], float)
    kt = cl.keep_times(score, iters, 4.0)
    np.testing.assert_array_equal(kt["t_on"], [10, 0, np.nan, 20])
    np.testing.assert_array_equal(kt["t_off"], [30, np.nan, np.nan, 30])
    res = {"iters": iters, "ratio": score, "silhouette": score, "finite": np.array([True, True, True, False])}
    s = cl.kept_summary(res, 4.0, at=(0, 20))
    assert s["at"][20]["kept"] == 3 and s["at"][0]["kept"] == 1 and s["kept_to_end"] == 1
    assert s["non_finite_seeds"] == 1 and s["median_t_off"] == 30


@pytest.mark.slow
def test_tiny_run_shares_the_start_and_is_deterministic():
    base = dict(sizes=(3, 3, 3, 3), steps=4, record_every=2, n_seeds=2, width=4, dtype="float64")
    net = cl.run(cl.ClusterConfig(model="net1", lr=1.0, **base))
    pts = cl.run(cl.ClusterConfig(model="points", start="net1", lr=0.1, **base))
    assert net["ratio"].shape == (2, 3) and net["per_cluster_ratio"].shape == (2, 3, 4)
    assert net["snapshots"].shape == (3, 12, 2)
    chex.assert_trees_all_close(net["snapshots"][0], pts["snapshots"][0], rtol=1e-12)  # the same start
    assert not np.allclose(net["snapshots"][-1], pts["snapshots"][-1])
    again = cl.run(cl.ClusterConfig(model="net1", lr=1.0, **base))
    np.testing.assert_array_equal(net["ratio"], again["ratio"])
    assert net["finite"].all()


def test_bad_configs_are_refused():
    with pytest.raises(ValueError, match="model"):
        cl.ClusterConfig(model="net2").validate()
    with pytest.raises(ValueError, match="record_every"):
        cl.ClusterConfig(steps=7, record_every=2).validate()
    with pytest.raises(ValueError, match="sizes"):
        cl.ClusterConfig(sizes=(3, 3)).validate()


def test_at_iteration_and_kept_share_take_the_nearest_recorded_iteration():
    summary = {"at": {"0": {"kept": 1, "n": 4}, "15": {"kept": 3, "n": 4}, 200: {"kept": 4, "n": 4}}}
    assert cl.at_iteration(summary, 14) is summary["at"]["15"] and cl.at_iteration(summary, 1000) is summary["at"][200]
    assert cl.kept_share(summary, 2) == 0.25 and cl.kept_share(summary, 9) == 0.75
