"""The one runner (ccdyn.one_layer.runner.ChunkRunner) and the method interface (ccdyn.one_layer.methods):
every registered method gives the same bits through the runner with and without a values axis (each value's
rows equal a run on that value's dataset alone, through chunks, re-packs and the method's finish); a method
written against the interface alone plugs in; datasets of other shapes are refused."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, compiling, pairwise, parallel
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import engine, methods, runner
from tests.one_layer import engine_reference

UNIFORM = pairwise.get_pairwise("uniform")
RELU = activations.get_activation("relu")
F64 = jnp.float64

# every registered method, and the flow both with and without sliding
CASES = [(name, True) for name in methods.REGISTRY] + [("flow", False)]
SLOW = {("flow", True), ("auto", True),  # the sliding flow compiles its kink analysis (about 40 s on 2 busy cores)
        ("flow", False), ("euler_halving", True)}  # 3-4 s each: the fast suite keeps power and euler_halving


def _clouds():
    """Two Gaussian point clouds in d = 3 (every ReLU maximum on a kink) of one shape: two values."""
    return [engine_reference.cloud(seed=s) for s in (1, 2)]


def _same(got, ref, what):
    for k in ref:
        np.testing.assert_array_equal(got[k], ref[k], err_msg=f"{what}, {k}")


@pytest.mark.parametrize("name,slides", [pytest.param(n, s, marks=pytest.mark.slow) if (n, s) in SLOW else (n, s)
                                         for n, s in CASES])
def test_every_method_gives_the_same_bits_with_and_without_a_values_axis(name, slides):
    """A values axis of two clouds (the second value's inits stop at other blocks: the re-packs mix the
    values), two chunks with padding rows, max_steps short enough that some inits are still running (power
    iteration's kink watch marks them): each value's rows equal a plain runner on that cloud alone (fast:
    the second value, whose dataset the tiles pick by index; slow: both)."""
    dyn = engine.Dynamics(method=name, sliding=slides, max_steps=60 if name == "power" else 400, block=10)
    clouds, key = _clouds(), jax.random.PRNGKey(0)
    both = engine.collect(engine.ChunkRunner(clouds, RELU, UNIFORM, dyn, tile=16), key, 40, 24, F64)
    assert both["w"].shape == (40, 2, 3) and both["status"].shape == (40, 2)
    for v in (1,) if (name, slides) not in SLOW else (0, 1):
        ds = clouds[v]
        alone = engine.collect(engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=16), key, 40, 24, F64)
        _same({k: a[:, v] for k, a in both.items()}, alone, f"{name} value {v}")
    assert not np.array_equal(both["steps"][:, 0], both["steps"][:, 1])  # the values stop at different steps
    if name == "power":
        assert np.sum(both["status"] == engine.Status.CIRCLING_KINK) > 0  # the watch ran on the values axis


def test_the_values_axis_counts_inits_in_its_progress_and_refuses_other_shapes():
    """Power iteration on two ortho_eps values in float32 (they converge at different speeds): the progress
    callback sees inits done, never negative nor past the total (it counted rows x values); datasets of
    other shapes are refused."""
    dyn = engine.Dynamics(method="power", max_steps=200, block=10)
    sets = [build_dataset(DataSpec(d=5, m=5, ortho_eps=e), F64).astype(jnp.float32) for e in (0.0, 0.6)]
    seen = []
    out = engine.collect(engine.ChunkRunner(sets, RELU, UNIFORM, dyn, tile=32), jax.random.PRNGKey(3), 120, 64,
                         jnp.float32, progress=lambda done, total, running, _: seen.append((done, total, running)))
    assert seen and all(0 <= done <= total == 120 and 0 <= running <= 64 for done, total, running in seen), seen
    assert out["w"].shape == (120, 2, 5)
    a = build_dataset(DataSpec(d=5, m=5, n_samples=40))
    b = build_dataset(DataSpec(d=5, m=5, n_samples=50))
    assert runner.same_shapes([a, a]) and not runner.same_shapes([a, b])
    with pytest.raises(ValueError, match="change the dataset's shapes"):
        engine.ChunkRunner([a, b], RELU, UNIFORM, engine.Dynamics(), tile=8)


def _compiling(fn):
    """(fn(), the name of each program XLA compiled while it ran: jax.monitoring's event of each compilation)."""
    compiled = []

    def listen(event, seconds, fun_name="", **_):
        if event == "/jax/core/compile/backend_compile_duration":
            compiled.append(fun_name)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        return fn(), compiled
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


@pytest.mark.parametrize("values", [None, 2])
def test_the_inits_state_in_one_program_is_the_op_by_op_state(values):
    """The runner builds the inits' state before their first step in one jitted program: for every registered
    method (with and without a values axis) the same bits, dtypes and structure as engine.initial_state op by op."""
    ds = engine_reference.cloud()
    W = parallel.init_weights(jax.random.PRNGKey(3), 0, 16, ds.dim, F64)
    for name in methods.REGISTRY:
        dyn = engine.Dynamics(method=name, max_steps=10)
        r = engine.ChunkRunner(ds if values is None else [ds] * values, RELU, UNIFORM, dyn, tile=16)
        want = engine.initial_state(W if values is None else jnp.tile(W, (values, 1)), dyn, method=r.method)
        got = r._initial(W)
        assert jax.tree.structure(got) == jax.tree.structure(want), name
        for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
            assert g.dtype == w.dtype, name
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w), err_msg=name)


def test_one_compiled_block_serves_every_packing():
    """The running rows are re-packed onto fewer tiles as inits stop, but the block keeps its shape (each
    device runs only its live tiles): one compiled program for the whole run, and one for the kink watch."""
    dyn = engine.Dynamics(method="power", max_steps=400, block=10)  # the flow's passes alike, at 3x the compile
    r = engine.ChunkRunner(engine_reference.cloud(), RELU, UNIFORM, dyn, tile=16)
    packs = []
    out, compiled = _compiling(lambda: r.run(jax.random.PRNGKey(0), 0, 96, F64,
                                             on_block=lambda running, steps: packs.append(running)))
    assert len(set(packs)) > 3  # the running rows fell over the blocks: the layout was re-packed
    blocks = [name for name in compiled if "tiled_block" in name]
    assert 2 <= len(blocks) <= 1 + len(r._passes), compiled  # the block and the kink watch
    assert np.all(out["status"] != int(engine.Status.RUNNING))


def test_a_partial_last_chunk_runs_on_the_full_chunks_programs():
    """collect lays every chunk out at the chunk size: the last, partial chunk (16 of 48 inits) compiles no
    block of its own (before, the block and the kink watch were compiled again for its shape), and the
    inits' numbers are those of a run in one chunk."""
    dyn = engine.Dynamics(method="power", max_steps=400, block=10)
    r = engine.ChunkRunner(engine_reference.cloud(), RELU, UNIFORM, dyn, tile=16)
    parts, compiled = _compiling(lambda: engine.collect(r, jax.random.PRNGKey(5), 64, 48, F64))
    blocks = [name for name in compiled if "tiled_block" in name]
    assert 2 <= len(blocks) <= 1 + len(r._passes), compiled  # the block and the kink watch, once
    whole = engine.collect(r, jax.random.PRNGKey(5), 64, 64, F64)
    for k in whole:
        np.testing.assert_array_equal(parts[k], whole[k])


def test_a_method_value_plugs_in_through_its_interface():
    """A method written against the interface alone (power iteration's step with its own finish: a watch
    that marks every still-running init CIRCLING_KINK) runs through ``engine.converge`` and the runner; its
    knobs and checks are its own. An unknown method name is refused."""
    base = methods.power.POWER
    mark_all = methods.Watch("CIRCLING_KINK", lambda ds, act, pw, dyn, w: jnp.ones(w.shape[0], bool))
    custom = base._replace(name="custom", finish=lambda ds, act, dyn: (mark_all,))
    dyn = engine.Dynamics(method="custom", max_steps=3, block=3)
    ds = engine_reference.cloud()
    saved = dict(methods.REGISTRY)
    methods.REGISTRY["custom"] = lambda act, dyn: custom
    try:
        W = parallel.init_weights(jax.random.PRNGKey(0), 0, 16, 3, F64)
        out = engine.converge(ds, RELU, UNIFORM, dyn, W)
        ref = engine.converge(ds, RELU, UNIFORM, dataclasses.replace(dyn, method="power"), W)
        running = ref["status"] == engine.Status.NOT_CONVERGED
        assert running.any()
        np.testing.assert_array_equal(out["status"], np.where(running, engine.Status.CIRCLING_KINK, ref["status"]))
        np.testing.assert_array_equal(out["w"], ref["w"])
        got = engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=16).run(jax.random.PRNGKey(0), 0, 16, F64)
        np.testing.assert_array_equal(got["status"], out["status"])
    finally:
        methods.REGISTRY.clear()
        methods.REGISTRY.update(saved)
    with pytest.raises(ValueError, match="must be one of power, flow, euler_halving"):
        engine.make_block(RELU, UNIFORM, engine.Dynamics(method="custom"))
    with pytest.raises(ValueError, match="needs a homogeneous activation"):
        engine.make_block(activations.get_activation("tanh"), UNIFORM, engine.Dynamics(method="power"))
    assert methods.power.POWER.knobs == ("tol", "shift")
    # a method's compiler options reach XLA, through engine.converge and the runner (an unknown one is refused there)
    methods.REGISTRY["custom"] = lambda act, dyn: custom._replace(compiler_options={"xla_not_an_option": True})
    try:
        with pytest.raises(Exception, match="xla_not_an_option"):
            engine.converge(ds, RELU, UNIFORM, dyn, W)
        with pytest.raises(Exception, match="xla_not_an_option"):
            engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=16).run(jax.random.PRNGKey(0), 0, 16, F64)
    finally:
        methods.REGISTRY.clear()
        methods.REGISTRY.update(saved)
    assert methods.select(engine.Dynamics(method="flow"), RELU).compiler_options == compiling.SLIDING
    assert set(methods.select(engine.Dynamics(method="flow"), RELU).knobs) <= {f.name for f in
                                                                             dataclasses.fields(engine.Dynamics)}


def _tiled_block_compiles(fn):
    """(fn(), the number of compilations of a runner's blocks while it ran)."""
    out, compiled = _compiling(fn)
    return out, sum("tiled_block" in name for name in compiled)


def test_a_rerun_pass_is_compiled_and_run_only_where_rows_call_for_it(monkeypatch):
    """A method's Rerun passes run the rows that ended in their status, and a pass no row calls for is never
    compiled (power iteration's block with two more passes: one over the CONVERGED rows, which it runs on, one
    over OVERFLOW rows, of which there are none): the block, the kink watch and the CONVERGED pass compile."""
    base = methods.power.POWER
    again, never = methods.Rerun("CONVERGED", base, 16), methods.Rerun("OVERFLOW", base, 16)
    custom = base._replace(name="custom", finish=lambda ds, act, dyn: base.finish(ds, act, dyn) + (again, never))
    monkeypatch.setitem(methods.REGISTRY, "custom", lambda act, dyn: custom)
    dyn, ds = engine.Dynamics(method="custom", max_steps=60, block=10), engine_reference.cloud()
    r = engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=16)
    out, blocks = _tiled_block_compiles(lambda: r.run(jax.random.PRNGKey(0), 0, 40, F64))
    assert np.any(out["status"] == engine.Status.CIRCLING_KINK)  # the watch ran (and the CONVERGED rows' pass)
    assert blocks == 3, blocks
    ran = engine.ChunkRunner(ds, RELU, UNIFORM, dataclasses.replace(dyn, method="power"), tile=16).run(
        jax.random.PRNGKey(0), 0, 40, F64)
    stepped = out["steps"] != ran["steps"]  # the CONVERGED pass stepped its rows on from where they stopped
    assert stepped.any() and np.all(ran["status"][stepped] == engine.Status.CONVERGED), (ran["status"], stepped)


def test_a_rerun_pass_runs_blocks_of_its_own_length_with_the_same_bits(monkeypatch):
    """A Rerun pass with its own ``block`` (power iteration's step that never stops a row, over the CONVERGED
    rows: they run on to max_steps) runs blocks of that length, not the run's: more blocks, the same bits (the
    runner re-packs whole rows between blocks)."""
    base = methods.power.POWER
    endless = base._replace(step=lambda *a: base.step(*a)._replace(done=jnp.zeros(a[4].shape[0], bool), cycling=None))
    dyn, ds = engine.Dynamics(method="custom", max_steps=60, block=20), engine_reference.cloud()
    outs, blocks = [], []
    for block in (None, 3):
        custom = base._replace(name="custom", finish=lambda ds, act, dyn, b=block: (
            methods.Rerun("CONVERGED", endless, 16, b),))
        monkeypatch.setitem(methods.REGISTRY, "custom", lambda act, dyn, c=custom: c)
        calls = []
        outs.append(engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=16).run(
            jax.random.PRNGKey(0), 0, 40, F64, on_block=lambda n, k: calls.append(k)))
        blocks.append(len(calls))
    ran_on = outs[0]["status"] == engine.Status.NOT_CONVERGED
    assert ran_on.sum() >= 10 and np.all(outs[0]["steps"][ran_on] == 60)  # the pass ran them on to max_steps
    _same(outs[1], outs[0], "pass block 3")
    assert blocks[1] >= blocks[0] + 5, blocks


def test_the_kink_watch_runs_only_where_a_row_is_still_running():
    """Power iteration's kink watch marks the rows still running after max_steps (it leaves every other row as
    it is): where every init stopped before (the default data's patterns, d = 5) it is neither compiled nor run;
    with a max_steps short enough that some inits still run, it is, and marks them."""
    ds = build_dataset(DataSpec(d=5, m=5), F64)
    for max_steps, watched in ((400, False), (4, True)):
        r = engine.ChunkRunner(ds, RELU, UNIFORM, engine.Dynamics(method="power", max_steps=max_steps, block=2),
                               tile=16)
        out, blocks = _tiled_block_compiles(lambda r=r: r.run(jax.random.PRNGKey(1), 0, 32, F64))
        assert np.any(out["steps"] >= max_steps) == watched and blocks == 1 + watched, (max_steps, blocks)
        assert not np.any(out["status"] == engine.Status.RUNNING)


def test_a_pass_tile_that_does_not_divide_the_runs_tile_gets_room_for_every_values_rows():
    """Run tile 48, a pass on tiles of 32: two values whose 48 rows all run on need 2 tiles each, 128 rows
    against the chunk's 96; the pass is sized for them (the layout refuses too few rows)."""
    r = engine.ChunkRunner(_clouds(), RELU, UNIFORM, engine.Dynamics(method="auto"), tile=48)
    keep = [np.arange(48), np.arange(48, 96)]
    size = r._pass_rows(96, 48, 32)
    assert size == 128
    sel, live, counts = r._layout(keep, 32, size)
    assert live.sum() == 96 and sorted(sel[live]) == list(range(96)) and counts == [4]
    with pytest.raises(AssertionError):
        r._layout(keep, 32, 96)
