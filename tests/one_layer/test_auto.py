"""--method=auto (ccdyn/one_layer/auto.py): the power method's bits where power iteration converges, the
sliding flow from where it circles a kink, the same bits whatever the chunk size or device count."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, pairwise, parallel
from ccdyn.data import make_dataset, user_sets
from ccdyn.one_layer import auto, engine

RELU = activations.get_activation("relu")
UNIFORM = pairwise.get_pairwise("uniform")


def _cloud():
    """16 points in d = 4, a tight cluster and a spread one: power iteration converges on about half the inits
    and circles a kink on the others."""
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal((8, 4)) * 0.3 + rng.standard_normal(4), rng.standard_normal((8, 4))])
    return make_dataset(x, dtype=jnp.float32)


def _collect(runner, n, chunk):
    return engine.collect(runner, jax.random.PRNGKey(0), n, chunk, jnp.float32)


DYN = engine.Dynamics(method="auto", max_steps=300, block=20)


@pytest.mark.slow  # compiles the sliding flow (about 1 min on 2 busy cores)
def test_auto_is_power_where_power_converges_and_converges_where_power_circles():
    ds, n = _cloud(), 96
    power = _collect(engine.ChunkRunner(ds, RELU, UNIFORM, engine.Dynamics(method="power", max_steps=300, block=20),
                                        tile=32), n, n)
    flow = _collect(engine.ChunkRunner(ds, RELU, UNIFORM, engine.Dynamics(method="flow", max_steps=300, block=20),
                                       tile=32), n, n)
    out = _collect(auto.AutoRunner(ds, RELU, UNIFORM, DYN, tile=32, detect=20), n, n)
    conv = power["status"] == engine.Status.CONVERGED
    circ = power["status"] == engine.Status.CIRCLING_KINK
    assert conv.any() and circ.any()  # the data exercise both phases
    # every init that power iteration converges on: the power method's bits (it never left the power phase)
    for k in ("w", "status", "steps", "residual"):
        np.testing.assert_array_equal(out[k][conv], power[k][conv])
    # every init converges; the circling ones reach optima the flow reaches too
    assert np.all(out["status"] == engine.Status.CONVERGED)
    ends = out["w"][circ]
    gap = np.min(np.linalg.norm(ends[:, None] - flow["w"][None, flow["status"] == 1], axis=2), axis=1)
    assert np.all(gap < 1e-3), gap.max()
    # their steps count both phases: more than the detection's power steps
    assert np.all(out["steps"][circ] > 20)


@pytest.mark.slow  # compiles the sliding flow for 1, 2 and 3 devices
def test_auto_gives_the_same_bits_for_any_chunk_size_and_device_count():
    ds, n = _cloud(), 80
    outs = {}
    for n_dev in (1, 2, 3):
        mesh = parallel.device_mesh(jax.devices()[:n_dev])
        runner = auto.AutoRunner(ds, RELU, UNIFORM, DYN, tile=16, mesh=mesh, detect=20)
        for chunk in (n, 33):
            outs[n_dev, chunk] = _collect(runner, n, chunk)
    ref = outs[1, n]
    assert np.sum(ref["steps"] > 20) > 0  # some inits went through the flow phase
    for key, out in outs.items():
        for f in ref:
            np.testing.assert_array_equal(out[f], ref[f], err_msg=f"{key} {f}")


def test_phases_per_activation():
    dyn = engine.Dynamics(method="auto")
    p, f = auto.phases(RELU, dyn)
    assert (p.method, f.method) == ("power", "flow")
    p, f = auto.phases(activations.get_activation("linear"), dyn)
    assert p.method == "power" and f is None
    p, f = auto.phases(activations.get_activation("tanh"), dyn)
    assert p is None and f.method == "flow"


def test_user_sets_are_fixed_and_in_the_file_format(tmp_path):
    from ccdyn.data import files

    paths = user_sets.write_sets(tmp_path, ["unit30", "cloud3"])
    ds = files.load_dataset(paths["unit30"])
    assert ds.x.shape == (30, 6)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(ds.x), axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(user_sets.build("cloud3")["x"], user_sets.build("cloud3")["x"])  # fixed seed
    with pytest.raises(ValueError, match="unknown user set"):
        user_sets.build("nope")
