"""Basins: clustering against the dense-grid landscape, one optimum per pattern, PCA for linear,
dead runs excluded, cluster / merge, and the pipeline entry ``basins.run``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, pairwise
from ccdyn.one_layer import basins, engine, landscape
from ccdyn.data.registry import DataSpec, build_dataset

UNIFORM = pairwise.get_pairwise("uniform")


def _run(ds, act, dyn, n_init=1500, chunk=1000, tile=256, dtype=jnp.float64, seed=0):
    runner = engine.ChunkRunner(ds, act, UNIFORM, dyn, tile=tile)
    return engine.collect(runner, jax.random.PRNGKey(seed), n_init, chunk, dtype)


@pytest.mark.parametrize("name,method", [("relu", "flow"), ("quadratic", "flow"), ("linear", "power")])
def test_circle_optima_are_the_dense_grid_maxima(name, method):
    """The optima found from random inits are exactly the local maxima of the Fig. 8 landscape."""
    ds = data.circle()
    act = activations.get_activation(name)
    dyn, n_init = engine.Dynamics(method=method), 500
    an = basins.analyze(ds, act, UNIFORM, dyn, _run(ds, act, dyn, n_init=n_init, tile=128), cluster_tol=1e-2)
    grid = landscape.local_maxima(ds, act, UNIFORM, n_grid=1 << 14)[2].theta
    found = np.sort([np.arctan2(r["w"][1], r["w"][0]) for r in an["rows"]])
    if act.odd:  # w and -w are one optimum: compare the grid maxima modulo pi
        grid = np.unique(np.round(np.mod(grid, np.pi), 6))
        found = np.sort(np.mod(found, np.pi))
    assert found.size == grid.size, (found / np.pi, grid / np.pi)
    np.testing.assert_allclose(found, np.sort(grid), atol=1e-6)
    assert all(r["stable"] for r in an["rows"])
    assert an["status_counts"]["converged"] + an["status_counts"]["not_converged"] == n_init
    assert an["status_counts"]["not_converged"] <= 3


@pytest.mark.slow  # about 15 s, most of it compiling the sliding flow for this data; the flat-kink certificate is also in test_kinks
def test_latent_categorical_one_optimum_per_pattern():
    ds = build_dataset(DataSpec(data="latent_categorical", d=8, m=6, ortho_eps=0.0))
    act = activations.get_activation("relu")
    dyn = engine.Dynamics(method="flow")
    an = basins.analyze(ds, act, UNIFORM, dyn, _run(ds, act, dyn, n_init=600, chunk=600), cluster_tol=1e-2)
    assert sorted(r["pattern"] for r in an["rows"]) == list(range(6))
    assert all(r["stable"] and r["is_lme"] and r["overlap"] > 1 - 1e-9 for r in an["rows"])
    # Inits with every pattern on the inactive side of the ReLU have A(w) w = 0: reported as dead.
    assert an["status_counts"]["dead"] > 0
    assert np.all(an["labels"][an["labels"] >= 0] < 6)
    assert sum(r["count"] for r in an["rows"]) == an["status_counts"]["converged"]


def test_headline_relu_finds_every_pattern_linear_only_pca():
    ds = build_dataset(DataSpec(d=6, m=6))
    out = {}
    for name in ("relu", "linear"):
        act = activations.get_activation(name)
        dyn = engine.Dynamics(method="power")
        out[name] = basins.analyze(ds, act, UNIFORM, dyn, _run(ds, act, dyn, n_init=600, chunk=600),
                                   cluster_tol=1e-2)
    relu = out["relu"]["rows"]
    assert sorted(r["pattern"] for r in relu) == list(range(6))
    assert all(r["stable"] and r["overlap"] > 0.99 for r in relu)
    lin = out["linear"]["rows"]
    assert len(lin) == 1 and lin[0]["fraction"] == 1.0
    phi1 = np.linalg.eigh(np.cov(np.asarray(ds.x).T, aweights=np.asarray(ds.p), bias=True))[1][:, -1]
    assert abs(np.dot(lin[0]["w"], phi1)) > 1 - 1e-9


def test_cluster_and_merge():
    rng = np.random.default_rng(0)
    c = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    pts = np.repeat(c, [5, 3], axis=0) + 1e-4 * rng.normal(size=(8, 3))
    pts = pts / np.linalg.norm(pts, axis=1, keepdims=True)
    labels, centers = basins.cluster(pts[::-1], 1e-2)
    assert labels.tolist() == [1, 1, 1, 0, 0, 0, 0, 0]  # largest cluster first
    np.testing.assert_allclose(centers, c, atol=1e-3)
    labels, centers = basins.cluster(np.concatenate([c, -c]), 1e-2, odd=True)
    assert labels.tolist() == [0, 1, 0, 1] and centers.shape == (2, 3)
    optima, counts, mapping = basins.merge_duplicates(np.array([c[0], c[1], c[0] + 1e-5]), np.array([2, 4, 3]),
                                                       1e-2, odd=False)
    assert counts.tolist() == [5, 4] and mapping.tolist() == [0, 1, 0]


def test_sized_fills_only_what_is_not_given():
    """``sized`` keeps a given tile / chunk size and applies the rule (parallel.SIZING_RULE) to the rest;
    the summary's sizing record says which."""
    from ccdyn import parallel
    cfg = basins.BasinsConfig(n_init=100)
    auto = basins.sized(cfg, (1024, 1, 10), tile=None, chunk_size=None)
    assert auto.tile == parallel.default_tile(8.0 * 1024 * 4, 0, 100)  # CPU: 512 whatever the sizes
    assert auto.chunk_size == parallel.default_chunk(auto.tile)
    given = basins.sized(cfg, (1024, 1, 10), tile=64, chunk_size=None)
    assert (given.tile, given.chunk_size) == (64, parallel.default_chunk(64))
    rec = basins.sizing(given, ["chunk_size"])
    assert rec["auto"] == ["chunk_size"] and rec["rule"] == parallel.SIZING_RULE and rec["n_devices"] >= 1
