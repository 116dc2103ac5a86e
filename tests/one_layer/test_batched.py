"""The engine over several datasets at once (ccdyn.one_layer.batched): every value's rows equal, bit for
bit, a ChunkRunner run on that value's dataset alone, through chunks and re-packs; datasets of other
shapes are refused."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, pairwise
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
    seen = []  # the progress calls: inits done never negative nor past the total (they counted rows x values)
    out = engine.collect(batched.ValuesRunner(sets, RELU, UNIFORM, dyn, tile=32), key, 120, 64, jnp.float32,
                         progress=lambda done, total, running, _: seen.append((done, total, running)))
    assert seen and all(0 <= done <= total == 120 and 0 <= running <= 64 for done, total, running in seen), seen
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


def test_the_kink_watch_gives_the_same_bits_whatever_is_batched():
    """Power iteration on point clouds (kinks everywhere) stopped at max_steps: the inits still running are
    watched for kink crossings (CIRCLING_KINK), tile by tile. A value run alone, the same value second of two
    with more inits batched beside it, and a ChunkRunner on that value alone give the same bits."""
    dyn = engine.Dynamics(method="power", max_steps=20, block=20)
    clouds = [data.make_dataset(x=np.random.default_rng(s).standard_normal((20, 3)), dtype=jnp.float64) for s in (1, 2)]
    key, f64 = jax.random.PRNGKey(0), jnp.float64
    alone = engine.collect(batched.ValuesRunner(clouds[:1], RELU, UNIFORM, dyn, tile=16), key, 32, 32, f64)
    within = engine.collect(batched.ValuesRunner(clouds[::-1], RELU, UNIFORM, dyn, tile=16), key, 48, 48, f64)
    ref = engine.collect(engine.ChunkRunner(clouds[0], RELU, UNIFORM, dyn, tile=16), key, 32, 32, f64)
    assert np.sum(ref["status"] == engine.Status.CIRCLING_KINK) > 0  # the watch marked some
    for k in ref:
        np.testing.assert_array_equal(alone[k][:, 0], ref[k], err_msg=f"alone, {k}")
        np.testing.assert_array_equal(within[k][:32, 1], ref[k], err_msg=f"beside another value, {k}")
