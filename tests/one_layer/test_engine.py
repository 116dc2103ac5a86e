"""Engine: per-init status flags (cycling, non-finite), results independent of chunk size and tile
padding, the one Status enum."""

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, data, pairwise
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import basins, engine

UNIFORM = pairwise.get_pairwise("uniform")


def _run(ds, act, dyn, n_init=1500, chunk=1000, tile=256, dtype=jnp.float64, seed=0):
    runner = engine.ChunkRunner(ds, act, UNIFORM, dyn, tile=tile)
    return engine.collect(runner, jax.random.PRNGKey(seed), n_init, chunk, dtype)


def test_same_results_for_any_chunk_size_and_tile_padding():
    ds = build_dataset(DataSpec(d=6, m=6), jnp.float32)
    act = activations.get_activation("relu")
    dyn = engine.Dynamics(method="power")
    a = _run(ds, act, dyn, n_init=700, chunk=700, dtype=jnp.float32)
    b = _run(ds, act, dyn, n_init=700, chunk=128, dtype=jnp.float32)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


def test_power_iteration_cycling_is_detected():
    """On the latent categorical model, plain power iteration falls into period-2 cycles."""
    ds = build_dataset(DataSpec(data="latent_categorical", d=8, m=6, ortho_eps=0.0))
    act = activations.get_activation("relu")
    out = _run(ds, act, engine.Dynamics(method="power"), n_init=300, chunk=300)
    counts = engine.status_counts(out["status"])
    assert counts["cycling"] > 200, counts
    an = basins.analyze(ds, act, UNIFORM, engine.Dynamics(method="power"), out, cluster_tol=1e-2)
    assert np.all(an["labels"][out["status"] == engine.Status.CYCLING] == -3)


def test_diverging_runs_are_counted_not_averaged():
    """float32 overflow (quadratic h on inputs of size 1e13) gives non-finite runs: flagged, excluded."""
    x = np.concatenate([np.eye(3) * 1e13, np.eye(3)[:1] * 1e-3])
    ds = data.make_dataset(x, dtype=jnp.float32)
    act = activations.get_activation("quadratic")
    dyn = engine.Dynamics(method="flow")
    out = _run(ds, act, dyn, n_init=256, chunk=256, tile=256, dtype=jnp.float32)
    counts = engine.status_counts(out["status"])
    assert counts["nonfinite"] > 0, counts
    an = basins.analyze(data.make_dataset(x), act, UNIFORM, dyn, out, cluster_tol=1e-2)
    assert np.all(an["labels"][out["status"] == engine.Status.NONFINITE] == -2)
    assert sum(r["count"] for r in an["rows"]) == counts["converged"]


def test_status_enum_is_the_one_vocabulary():
    assert [s.key for s in engine.FINAL_STATUSES] == ["converged", "nonfinite", "cycling", "not_converged", "dead"]
    assert engine.Status.NOT_CONVERGED.text == "not converged" and engine.Status.RUNNING not in engine.FINAL_STATUSES
    counts = engine.status_counts(np.array([1, 1, 2, 3, 4, 5, 5], np.int8))
    assert counts == {"converged": 2, "nonfinite": 1, "cycling": 1, "not_converged": 1, "dead": 2}
