"""--method=auto (ccdyn/one_layer/methods/auto.py): the power method's bits where power iteration converges,
the sliding flow from where it circles a kink, the same bits whatever the chunk size or device count; the
user data sets (ccdyn/data/user_sets.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, pairwise, parallel
from ccdyn.data import files, make_dataset, user_sets
from ccdyn.one_layer import engine, methods
from ccdyn.one_layer.methods import auto

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def _cloud():
    """16 points in d = 4, a tight cluster and a spread one: power iteration converges on about half the inits
    and circles a kink on the others."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal((8, 4)) * 0.3 + rng.standard_normal(4), rng.standard_normal((8, 4))])
    return make_dataset(x, dtype=jnp.float32)


def _collect(ds, method, n, chunk, tile=32, mesh=None):
    dyn = engine.Dynamics(method=method, max_steps=300, block=20)
    runner = engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=tile, mesh=mesh)
    return engine.collect(runner, jax.random.PRNGKey(0), n, chunk, jnp.float32)


@pytest.mark.slow  # compiles the sliding flow (about 1 min on 2 busy cores)
def test_auto_is_power_where_power_converges_and_converges_where_power_circles():
    ds, n = _cloud(), 96
    power, flow, out = (_collect(ds, m, n, n) for m in ("power", "flow", "auto"))
    conv = power["status"] == engine.Status.CONVERGED
    circ = power["status"] == engine.Status.CIRCLING_KINK
    assert conv.sum() > 10 and circ.sum() > 10  # the data exercise both phases
    # every init that power iteration converges on: the power method's bits (it never left the power phase)
    for k in ("w", "status", "steps", "residual"):
        np.testing.assert_array_equal(out[k][conv], power[k][conv], err_msg=k)
    # every init converges; the circling ones reach optima the flow reaches too, after more than the
    # detection's power steps
    assert np.all(out["status"] == engine.Status.CONVERGED)
    ends, flow_ends = out["w"][circ], flow["w"][flow["status"] == engine.Status.CONVERGED]
    gap = np.min(np.linalg.norm(ends[:, None] - flow_ends[None], axis=2), axis=1)
    assert np.all(gap < 1e-3), gap.max()
    assert np.all(out["steps"][circ] > auto.AUTO_DETECT)


@pytest.mark.slow  # compiles the sliding flow for 1, 2 and 3 devices
def test_auto_gives_the_same_bits_for_any_chunk_size_and_device_count():
    ds, n = _cloud(), 80
    outs = {}
    for n_dev in (1, 2, 3):
        mesh = parallel.device_mesh(jax.devices()[:n_dev])
        for chunk in (n, 33):
            outs[n_dev, chunk] = _collect(ds, "auto", n, chunk, tile=16, mesh=mesh)
    ref = outs[1, n]
    assert np.sum(ref["steps"] > auto.AUTO_DETECT + 1) > 10  # inits went through the flow phase
    for key, out in outs.items():
        for f in ref:
            np.testing.assert_array_equal(out[f], ref[f], err_msg=f"{key} {f}")


def test_the_pattern_hash_sees_a_return_to_an_earlier_pattern():
    """Exact integer hashes: the same pattern the same hash whatever the rows batched with it; w and -w (every
    sign flipped) and a w across one hyperplane hash differently."""
    x = np.random.default_rng(0).standard_normal((40, 5))
    ds = make_dataset(x, dtype=jnp.float64)
    w = np.random.default_rng(1).standard_normal((6, 5))
    h = np.asarray(auto.pattern_hash(ds, jnp.asarray(w)))
    np.testing.assert_array_equal(np.asarray(auto.pattern_hash(ds, jnp.asarray(w[2:3]))), h[2:3])
    assert h[0] != np.asarray(auto.pattern_hash(ds, jnp.asarray(-w[:1])))[0]
    across = w[0] - 1.01 * (w[0] @ x[0]) / (x[0] @ x[0]) * x[0]  # the other side of view 0's hyperplane only
    if np.all(np.sign(x[1:] @ across) == np.sign(x[1:] @ w[0])):
        assert np.asarray(auto.pattern_hash(ds, jnp.asarray(across[None])))[0] != h[0]


def test_auto_per_activation():
    dyn = engine.Dynamics(method="auto")
    assert methods.select(dyn, RELU) is auto.AUTO
    assert methods.select(dyn, activations.get_activation("leaky_relu")) is auto.AUTO
    assert methods.select(dyn, activations.get_activation("linear")).name == "power"
    assert methods.select(dyn, activations.get_activation("tanh")).name == "flow"
    assert "auto" in engine.METHODS


def test_user_sets_are_fixed_and_in_the_file_format(tmp_path):
    paths = user_sets.write_sets(tmp_path, ["unit30", "cloud3"])
    ds = files.load_dataset(paths["unit30"])
    assert ds.x.shape == (30, 6)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(ds.x), axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(user_sets.build("cloud3")["x"], user_sets.build("cloud3")["x"])  # fixed seed
    assert set(user_sets.TUNED) < set(user_sets.SETS) and len(user_sets.SETS) - len(user_sets.TUNED) >= 5
    with pytest.raises(ValueError, match="unknown user set"):
        user_sets.build("nope")


def test_continuation_knows_what_auto_reads():
    """auto reads the power phase's shift and the flow phase's step_size and flow_rtol: none is inert."""
    import dataclasses

    from ccdyn.one_layer import basins
    from ccdyn.one_layer.studies import continuation

    base = basins.BasinsConfig(dynamics=engine.Dynamics(method="auto"))
    assert all(continuation.inert(base, p) is None for p in ("shift", "step_size", "flow_rtol"))
    power = dataclasses.replace(base, dynamics=engine.Dynamics(method="power"))
    assert "--method=power" in continuation.inert(power, "flow_rtol")


def test_the_flow_phase_tile_follows_the_backend_rule():
    """Narrow tiles on a CPU (a tile runs until its slowest row stops), wide ones on an accelerator; the
    runner's flow phase uses the rule's tile, at most the run's."""
    assert auto.flow_tile("cpu") == 32 and auto.flow_tile("gpu") == auto.flow_tile("tpu") == 256
    dyn = engine.Dynamics(method="auto")
    for tile, want in ((512, auto.flow_tile()), (16, 16)):
        r = engine.ChunkRunner(_cloud(), activations.get_activation("relu"), pairwise.get_pairwise("uniform"), dyn,
                               tile=tile)
        assert [t for p, _, t in r._passes if isinstance(p, methods.Rerun)][0] == min(want, tile)
