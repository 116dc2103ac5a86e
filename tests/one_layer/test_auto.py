"""--method=auto (ccdyn/one_layer/methods/auto.py): power steps shifted by a bound on A(w) while they cross kinks,
the flow's endpoint from the same init, the sliding flow from where power iteration circles a kink, the same
bits whatever the chunk size or device count; the user data sets (ccdyn/data/user_sets.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, pairwise, parallel
from ccdyn.data import files, make_dataset, user_sets
from ccdyn.one_layer import dynamics, engine, methods
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
def test_auto_takes_each_init_where_the_flow_takes_it_and_converges_where_power_circles():
    """From the same init, auto and the flow end at the same optimum: auto's power steps that cross kinks are
    Euler steps of the flow no longer than 1 / lambda_max(A(w)) (field_bound), and once the activation pattern
    holds, power iteration's long steps go where the flow goes in that region. Before those shifted steps 91
    of the 96 inits here agreed (power iteration's long steps jumped basins); power iteration alone converges
    on about half and circles a kink on the others, which auto hands to the sliding flow."""
    ds, n = _cloud(), 96
    power, flow, out = (_collect(ds, m, n, n) for m in ("power", "flow", "auto"))
    circ = power["status"] == engine.Status.CIRCLING_KINK
    assert (power["status"] == engine.Status.CONVERGED).sum() > 10 and circ.sum() > 10  # both phases exercised
    assert np.all(out["status"] == engine.Status.CONVERGED) and np.all(flow["status"] == engine.Status.CONVERGED)
    same = np.linalg.norm(out["w"] - flow["w"], axis=1) < 1e-3
    assert same.sum() >= 94, same.sum()
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


def _views_data(seed=2):
    """12 weighted points in d = 5, each with 3 weighted views (unequal p and p_aug), float64."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((12, 5)) + 0.5
    x_aug = x[:, None, :] + 0.4 * rng.standard_normal((12, 3, 5))
    p, p_aug = rng.uniform(0.5, 1.5, 12), rng.uniform(0.2, 1.0, (12, 3))
    return make_dataset(x, p / p.sum(), x_aug, p_aug / p_aug.sum(axis=1, keepdims=True), dtype=jnp.float64)


@pytest.mark.parametrize("act", ["relu", "leaky_relu"])
def test_the_field_bound_bounds_the_largest_eigenvalue_of_every_a(act):
    """lambda_M (field_bound) against dense A(w) (dynamics.a_matrices, an independent route) at random w and at
    w on a data point's kink hyperplane: never above it; and lambda_M is numpy's top eigenvalue of
    sum_i p_i E_aug[x x^T]. (On this data the largest lambda_max(A(w)) found is within a factor 3 of it.)"""
    with jax.enable_x64():
        ds = _views_data()
        h = activations.get_activation(act)
        rng = np.random.default_rng(3)
        w = rng.standard_normal((400, 5))
        x0 = np.asarray(ds.x_aug)[:, 0]
        on_kink = w[:12] - (np.sum(w[:12] * x0, axis=1) / np.sum(x0 * x0, axis=1))[:, None] * x0
        w = np.concatenate([w, on_kink])
        w /= np.linalg.norm(w, axis=1, keepdims=True)
        top = np.linalg.eigvalsh(np.asarray(dynamics.a_matrices(ds, h, jnp.asarray(w))))[:, -1]
        bound = float(auto.field_bound(ds))
        m = np.einsum("n,nv,nvd,nve->de", np.asarray(ds.p), np.asarray(ds.p_aug), np.asarray(ds.x_aug),
                      np.asarray(ds.x_aug))
        np.testing.assert_allclose(bound, np.linalg.eigvalsh(m)[-1], rtol=1e-12)
        assert np.all(top <= bound * (1 + 1e-12)), (top.max(), bound)
        assert top.max() > bound / 3


def test_crossing_steps_are_shifted_and_held_patterns_take_long_steps():
    """auto's power step: normalize(A(w) w + (s + lambda_M) w) for a row whose activation pattern changed within
    the last HISTORY steps (or before HISTORY steps), normalize(A(w) w + s w) once it has held; s = --shift.
    Checked against numpy from A(w) w (dynamics.ascent); a Gaussian alpha keeps power iteration's own step."""
    with jax.enable_x64():
        ds = _views_data()
        rng = np.random.default_rng(4)
        w = rng.standard_normal((4, 5))
        w = jnp.asarray(w / np.linalg.norm(w, axis=1, keepdims=True))
        h = auto.pattern_hash(ds, w)
        carry = auto.init(w, engine.Dynamics())
        held = jnp.tile(h[:, None], (1, auto.HISTORY))
        history = held.at[1, 3].set(h[1] + 1).at[2].set(h[2] + 1)  # row 1 changed 4 steps ago, row 2 last step
        carry = carry._replace(history=history)
        steps = jnp.array([auto.HISTORY, auto.HISTORY + 5, 50, auto.HISTORY - 1])  # row 3: too early to hold
        u = np.asarray(dynamics.ascent(ds, RELU, w, UNIFORM))
        bound = float(auto.field_bound(ds))
        for s in (0.0, 0.7):
            dyn = engine.Dynamics(shift=s)
            got = np.asarray(auto.AUTO.step(ds, RELU, UNIFORM, dyn, w, carry, steps, jnp.ones(4, bool)).w)
            shifts = np.array([s, s + bound, s + bound, s + bound])
            want = u + shifts[:, None] * np.asarray(w)
            np.testing.assert_allclose(got, want / np.linalg.norm(want, axis=1, keepdims=True), rtol=1e-13)
        gauss = pairwise.get_pairwise("gaussian", 1.0)
        got = np.asarray(auto.AUTO.step(ds, RELU, gauss, engine.Dynamics(), w, carry, steps, jnp.ones(4, bool)).w)
        ug = np.asarray(dynamics.ascent(ds, RELU, w, gauss))
        np.testing.assert_allclose(got, ug / np.linalg.norm(ug, axis=1, keepdims=True), rtol=1e-13)


def test_a_row_still_in_the_power_phase_after_handover_steps_goes_to_the_flow():
    """The power phase flags KINK_LIMIT (``over``) for a running row that has taken HANDOVER steps, whatever its
    pattern history (here: a new pattern at every step), and not one step earlier; a converged row is not flagged."""
    with jax.enable_x64():
        ds = _views_data()
        w = np.random.default_rng(5).standard_normal((3, 5))
        w = jnp.asarray(w / np.linalg.norm(w, axis=1, keepdims=True))
        h = auto.pattern_hash(ds, w)
        fresh = h[:, None] + jnp.arange(1, auto.HISTORY + 1, dtype=jnp.uint32)[None]  # no return to a pattern
        carry = auto.init(w, engine.Dynamics())._replace(history=fresh)
        steps = jnp.array([auto.HANDOVER - 1, auto.HANDOVER, auto.HANDOVER + 7])
        p = auto.AUTO.step(ds, RELU, UNIFORM, engine.Dynamics(), w, carry, steps, jnp.ones(3, bool))
        np.testing.assert_array_equal(np.asarray(p.over), [False, True, True])
        p = auto.AUTO.step(ds, RELU, UNIFORM, engine.Dynamics(tol=1e9), w, carry, steps, jnp.ones(3, bool))
        assert not np.any(np.asarray(p.over))  # converged (a tolerance every row meets): not handed over


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
    np.testing.assert_array_equal(user_sets.dataset("cloud3", jnp.float64).x, files.load_dataset(paths["cloud3"]).x)
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
