"""The engine over several datasets at once (ccdyn.one_layer.batched): every value's rows equal, bit for
bit, a ChunkRunner run on that value's dataset alone, through chunks and re-packs; datasets of other
shapes are refused."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, pairwise
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import batched, engine

UNIFORM = pairwise.get_pairwise("uniform")
RELU = activations.get_activation("relu")


def test_values_runner_equals_one_chunk_runner_per_value():
    """Two ortho_eps values with very different convergence (the tiles of each value leave the packed
    layout at different blocks), 2 chunks, padding rows in every chunk."""
    dyn = engine.Dynamics(method="power", max_steps=200, block=10)
    sets = [build_dataset(DataSpec(d=5, m=5, ortho_eps=e), jnp.float64).astype(jnp.float32) for e in (0.0, 0.6)]
    key = jax.random.PRNGKey(3)
    out = engine.collect(batched.ValuesRunner(sets, RELU, UNIFORM, dyn, tile=32), key, 120, 64, jnp.float32)
    assert out["w"].shape == (120, 2, 5) and out["status"].shape == (120, 2)
    steps = []
    for v, ds in enumerate(sets):
        ref = engine.collect(engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=32), key, 120, 64, jnp.float32)
        for k in ref:
            np.testing.assert_array_equal(out[k][:, v], ref[k], err_msg=f"value {v}, {k}")
        steps.append(np.median(ref["steps"]))
    assert len(set(steps)) == 2  # the values converge at different speeds: the re-packs mix them


def test_datasets_of_other_shapes_are_refused_and_buckets_are_few():
    a = build_dataset(DataSpec(d=5, m=5, n_samples=40))
    b = build_dataset(DataSpec(d=5, m=5, n_samples=50))
    assert batched.same_shapes([a, a]) and not batched.same_shapes([a, b])
    with pytest.raises(ValueError, match="change the dataset's shapes"):
        batched.ValuesRunner([a, b], RELU, UNIFORM, engine.Dynamics(), tile=8)
    sizes = {batched._bucket(t) for t in range(1, 257)}
    assert len(sizes) <= 16 and all(batched._bucket(t) >= t for t in range(1, 257))
    assert all(batched._bucket(t) < 1.5 * t for t in range(3, 257))  # less than a third of a layout is padding
