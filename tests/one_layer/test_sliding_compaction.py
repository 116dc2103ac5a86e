"""The sliding flow analyses only the rows that need it (issue #22's cost): the rows are gathered into
buffers smaller than the tile (:func:`ccdyn.one_layer.methods.sliding_flow.compacted`), which must give every init
the same steps as analysing the whole tile at once, whether more rows need the analysis than a buffer
holds (several passes) or fewer."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, pairwise, parallel
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import engine
from ccdyn.one_layer.methods import sliding_flow
from tests.one_layer import engine_reference

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def test_compacted_rows_equal_the_row_function_on_every_row():
    """Any number of rows needing it (none, fewer than a buffer, exactly one, several passes, all):
    the rows with need get fn of their row, the others ``empty``; brute force: fn on the whole tile."""
    k, buffer = 20, 6
    rng = np.random.default_rng(3)
    a = jnp.asarray(rng.integers(-50, 50, (k, 3)), jnp.int32)
    b = jnp.asarray(rng.integers(-50, 50, (k,)), jnp.int32)
    fn = lambda x, y: (x * 7 + y[:, None], (jnp.sum(x, axis=1) - y).astype(jnp.int32))  # row by row, exact
    empty = (jnp.full((k, 3), -1, jnp.int32), jnp.zeros((k,), jnp.int32))
    run = jax.jit(lambda need: sliding_flow.compacted(fn, need, (a, b), empty, buffer))
    whole = fn(a, b)
    for n_need in (0, 1, 5, 6, 7, 13, 19, 20):
        need = np.zeros(k, bool)
        need[rng.permutation(k)[:n_need]] = True
        got = run(jnp.asarray(need))
        for g, w, e in zip(got, whole, empty):
            want = np.where(need.reshape((k,) + (1,) * (w.ndim - 1)), w, e)
            np.testing.assert_array_equal(np.asarray(g), want, err_msg=f"{n_need} rows need it")
    assert sliding_flow.analysis_buffer(512) == 64 and sliding_flow.analysis_buffer(16) == 8 and sliding_flow.analysis_buffer(4) == 4


def _lockstep(ds, W, buffers, steps):
    """Runs the sliding flow from W with each kink-analysis buffer side by side, one jitted step at a
    time; asserts every state equal to the first buffer's (bit for bit) after every step. Returns the
    most rows that needed the analysis in one step."""
    dyn = engine.Dynamics(method="flow")
    step = {b: jax.jit(lambda s, b=b: engine.step(ds, RELU, UNIFORM, dyn, s, sliding_flow.method(buffer=b)))
            for b in buffers}
    st = {b: engine.initial_state(W, dyn, RELU) for b in buffers}
    most = 0
    for t in range(steps):
        s = st[buffers[0]]
        active = (s.status == engine.Status.RUNNING) & (s.steps < dyn.max_steps)
        need = active & (s.carry.pinned | (s.carry.reach > 0) | jnp.any(s.carry.kinks >= 0, axis=1))
        most = max(most, int(jnp.sum(need)))
        if not bool(jnp.any(active)):
            break
        st = {b: step[b](st[b]) for b in buffers}
        for b in buffers[1:]:
            for (name, x), (_, y) in zip(jax.tree_util.tree_leaves_with_path(st[buffers[0]]),
                                         jax.tree_util.tree_leaves_with_path(st[b])):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y),
                                              err_msg=f"step {t}, {jax.tree_util.keystr(name)}, buffer {b}")
    return most


@pytest.mark.slow  # about 60 s on 2 busy cores (three step functions compiled per data set)
@pytest.mark.parametrize("case", ["cloud_d3_x64", "default_float32"])
def test_compacted_analysis_takes_the_same_steps_as_the_whole_tile(case):
    """A 20-point cloud in d = 3 (float64; kink maxima on ridges) and the default data (float32, d = 10,
    dependent views on the kinks): every state of every step equal with the whole tile in one buffer, in
    buffers of 8 (more rows need it than one holds) and in buffers larger than the rows that ever need
    it at once."""
    if case == "cloud_d3_x64":
        ds, dtype, k, big = engine_reference.cloud(), jnp.float64, 64, 56
    else:
        ds, dtype, k, big = build_dataset(DataSpec(), jnp.float32), jnp.float32, 64, 56
    W = parallel.init_weights(jax.random.PRNGKey(2), 0, k, ds.dim, dtype)
    most = _lockstep(ds, W, (k, 8, big), steps=2000)
    assert 8 < most <= big, most
