"""Engine: per-init status flags (cycling, overflow, underflow, dead), results independent of chunk size
and tile padding, the one Status enum, the start-up range check of the dtype."""

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, pairwise
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import basins, dynamics, engine

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


def test_gaussian_alpha_same_results_for_any_chunk_size_and_tile():
    """The runner applies a Gaussian alpha through Lemma 1's features (Pairwise.feature_range): an init's
    numbers do not depend on the chunk or tile it ran in."""
    from ccdyn.one_layer import gaussian_kernel

    x = np.random.default_rng(3).standard_normal((120, 4))
    ds = data.make_dataset(x / np.linalg.norm(x, axis=1).max(), dtype=jnp.float32)
    act, pw = activations.get_activation("relu"), pairwise.get_pairwise("gaussian", 0.5)
    assert dynamics.taylor_order(gaussian_kernel.bounded(pw, [ds.x], act), jnp.float32, 120) is not None
    dyn = engine.Dynamics(method="power", max_steps=300)
    a, b = (engine.collect(engine.ChunkRunner(ds, act, pw, dyn, tile=tile), jax.random.PRNGKey(1), 96, chunk,
                           jnp.float32) for tile, chunk in ((32, 96), (16, 40)))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])


@pytest.mark.slow  # 6 s; fast: the statuses and hints in test_sliding.py, the cycling rule in the engine-reference bit-identity test
def test_power_iteration_cycling_is_detected():
    """On the latent categorical model, plain power iteration falls into period-2 cycles."""
    ds = build_dataset(DataSpec(data="latent_categorical", d=8, m=6, ortho_eps=0.0))
    act = activations.get_activation("relu")
    out = _run(ds, act, engine.Dynamics(method="power"), n_init=300, chunk=300)
    counts = engine.status_counts(out["status"])
    assert counts["cycling"] > 200, counts
    an = basins.analyze(ds, act, UNIFORM, engine.Dynamics(method="power"), out, cluster_tol=1e-2)
    assert np.all(an["labels"][out["status"] == engine.Status.CYCLING] == -3)


def test_overflowing_runs_are_named_counted_not_averaged():
    """float32 overflow (quadratic h on inputs of size 1e13) is OVERFLOW, not dead: flagged, excluded."""
    x = np.concatenate([np.eye(3) * 1e13, np.eye(3)[:1] * 1e-3])
    ds = data.make_dataset(x, dtype=jnp.float32)
    act = activations.get_activation("quadratic")
    dyn = engine.Dynamics(method="flow")
    out = _run(ds, act, dyn, n_init=256, chunk=256, tile=256, dtype=jnp.float32)
    counts = engine.status_counts(out["status"])
    assert counts["overflow"] > 0 and counts["dead"] == 0, counts
    an = basins.analyze(data.make_dataset(x), act, UNIFORM, dyn, out, cluster_tol=1e-2)
    assert np.all(an["labels"][out["status"] == engine.Status.OVERFLOW] == -6)
    assert sum(r["count"] for r in an["rows"]) == counts["converged"]
    assert engine.range_problems(data.make_dataset(x), act, UNIFORM, dyn, jnp.float32)  # refused at start


def test_a_step_whose_retraction_overflows_is_overflow_not_dead():
    """Euler flow with step 1e20: ||w + eta t||^2 overflows float32, the retraction returns 0 (it used to be
    reported as dead); the start-up check names --step_size."""
    ds64 = build_dataset(DataSpec(d=4, m=4))
    act, dyn = activations.get_activation("relu"), engine.Dynamics(method="euler_halving", step_size=1e20, max_steps=5)
    out = _run(ds64.astype(jnp.float32), act, dyn, n_init=64, chunk=64, tile=64, dtype=jnp.float32)
    counts = engine.status_counts(out["status"])
    assert counts["overflow"] >= 32 and counts["dead"] == counts["nonfinite"] == 0, counts
    (problem,) = engine.range_problems(ds64, act, UNIFORM, dyn, jnp.float32)
    assert "--step_size=1e+20" in problem
    assert engine.range_problems(ds64, act, UNIFORM, engine.Dynamics(method="euler_halving"), jnp.float32) == []
    flow = engine.Dynamics(method="flow", step_size=1e20)  # its first step moves w by 0.01 rad: no overflow
    assert engine.range_problems(ds64, act, UNIFORM, flow, jnp.float32) == []
    assert engine.range_problems(ds64, act, UNIFORM, dyn, jnp.float64) == []


def test_underflow_is_told_apart_from_dead_in_float64():
    """Data of size 1e-30: A(w) w ~ 1e-90 is 0 in float32 (DEAD in the engine) but not in float64, so
    recheck_dead relabels it UNDERFLOW; a truly dead init (ReLU, no active point) stays DEAD."""
    x64 = np.eye(3)
    ds64 = data.make_dataset(x64 * 1e-30)
    act, dyn = activations.get_activation("relu"), engine.Dynamics(method="power", max_steps=5)
    out = _run(ds64.astype(jnp.float32), act, dyn, n_init=64, chunk=64, tile=64, dtype=jnp.float32)
    assert engine.status_counts(out["status"])["dead"] == 64
    rechecked = engine.recheck_dead(ds64, act, UNIFORM, out)
    truly_dead = np.all(out["w"] <= 0, axis=1)  # no point on the active side of the ReLU
    np.testing.assert_array_equal(rechecked["status"], np.where(truly_dead, engine.Status.DEAD, engine.Status.UNDERFLOW))
    assert 0 < truly_dead.sum() < 20
    assert "0 in float32" in engine.range_problems(ds64, act, UNIFORM, dyn, jnp.float32)[0]
    dead = {"w": -np.ones((1, 3), np.float32) / np.sqrt(3), "status": np.array([engine.Status.DEAD], np.int8)}
    assert engine.recheck_dead(data.make_dataset(x64), act, UNIFORM, dead)["status"][0] == engine.Status.DEAD


def test_float64_runs_are_checked_against_float64s_range():
    """Data of size 1e200 / 1e-200 in float64: A(w) w (~ s^2 for ReLU, uniform alpha: 1e400 / 1e-400) is inf /
    0 there, as A(w) w on the unit-scale data times s^2 predicts; the start-up check names both, without the
    --x64 hint, and passes the unit-scale data. A Gaussian alpha with tau far below the closest features'
    spacing is named by --tau, one at the spacing's scale is not."""
    x = np.random.default_rng(5).normal(size=(12, 3))
    act, dyn = activations.get_activation("relu"), engine.Dynamics()
    w = jnp.asarray([[0.6, 0.8, 0.0]])
    unit = float(jnp.linalg.norm(dynamics.ascent(data.make_dataset(x), act, w)))
    for s, what in ((1e200, "beyond float64's range"), (1e-200, "which is 0 in float64")):
        assert np.log10(unit) + 2 * np.log10(s) > 308 if s > 1 else np.log10(unit) + 2 * np.log10(s) < -308
        ds = data.make_dataset(x * s)
        u = float(jnp.linalg.norm(dynamics.ascent(ds, act, w)))
        assert u == 0.0 if s < 1 else not np.isfinite(u)
        (problem,) = engine.range_problems(ds, act, UNIFORM, dyn, jnp.float64)
        assert what in problem and "rescale the data" in problem and "--x64" not in problem, problem
    assert engine.range_problems(data.make_dataset(x), act, UNIFORM, dyn, jnp.float64) == []
    ds = data.make_dataset(x)
    spacing = pairwise.degenerate_tau(act.h(np.asarray(x) @ np.eye(3)), jnp.float64)[1]
    (problem,) = engine.range_problems(ds, act, pairwise.get_pairwise("gaussian", 1e-6 * spacing ** 2), dyn, jnp.float64)
    assert problem.startswith("--tau=") and "use --tau >= " in problem, problem
    assert engine.range_problems(ds, act, pairwise.get_pairwise("gaussian", spacing ** 2), dyn, jnp.float64) == []


def test_status_enum_is_the_one_vocabulary():
    assert [s.key for s in engine.FINAL_STATUSES] == ["converged", "nonfinite", "cycling", "not_converged", "dead",
                                                     "overflow", "underflow", "circling_kink", "kink_limit", "stalled"]
    assert engine.Status.NOT_CONVERGED.text == "not converged" and engine.Status.RUNNING not in engine.FINAL_STATUSES
    assert basins.STATUS_HINTS[engine.Status.OVERFLOW] and engine.Status.DEAD not in basins.STATUS_HINTS
    counts = engine.status_counts(np.array([1, 1, 2, 3, 4, 5, 5, 6, 7, 8, 8, 8, 9, 10, 10], np.int8))
    assert counts == {"converged": 2, "nonfinite": 1, "cycling": 1, "not_converged": 1, "dead": 2, "overflow": 1,
                      "underflow": 1, "circling_kink": 3, "kink_limit": 1, "stalled": 2}


def test_progress_counts_the_inits_stopped_inside_a_chunk():
    """The progress callback sees the inits of the running chunk that have stopped, block by block."""
    ds = build_dataset(DataSpec(d=6, m=6), jnp.float32)
    dyn = engine.Dynamics(method="power", block=2)
    runner = engine.ChunkRunner(ds, activations.get_activation("relu"), UNIFORM, dyn, tile=64)
    calls = []
    engine.collect(runner, jax.random.PRNGKey(0), 256, 128, jnp.float32,
                   progress=lambda done, total, running, steps: calls.append((done, total, running)))
    inside = [(d, r) for d, t, r in calls if r]
    assert all(t == 256 for _, t, _ in calls) and calls[-1] == (256, 256, 0)
    assert any(0 < d < 128 for d, _ in inside)  # the first chunk reports before it ends
    assert all(d + r <= 128 or d >= 128 for d, r in inside)
    assert [d for d, _ in inside] == sorted(d for d, _ in inside)  # never goes back


def test_stop_ends_the_run_at_a_chunk_and_keeps_the_first_inits_of_the_full_run():
    ds = build_dataset(DataSpec(d=6, m=6), jnp.float32)
    dyn = engine.Dynamics(method="power")
    runner = engine.ChunkRunner(ds, activations.get_activation("relu"), UNIFORM, dyn, tile=64)
    full = engine.collect(runner, jax.random.PRNGKey(0), 640, 128, jnp.float32)
    seen = []
    part = engine.collect(runner, jax.random.PRNGKey(0), 640, 128, jnp.float32,
                          stop=lambda r: seen.append(r["status"].size) or r["status"].size >= 300)
    assert seen == [128, 256, 384] and part["status"].size == 384
    for k in full:
        np.testing.assert_array_equal(part[k], full[k][:384])


def test_precise_enough_needs_the_unseen_bound_and_every_half_width_below_target():
    w = np.repeat(np.eye(3), [600, 300, 100], axis=0)
    result = {"w": w, "status": np.full(1000, engine.Status.CONVERGED, np.int8)}
    assert basins.precise_enough(result, 0.2, 1e-2, odd=False)  # bound 0.15, half-widths <= 0.03
    assert not basins.precise_enough(result, 0.1, 1e-2, odd=False)  # the unseen bound is 0.15
    one = {"w": w[:1], "status": result["status"][:1]}
    assert not basins.precise_enough(one, 0.9, 1e-2, odd=False)  # one init: the interval is wide


_DEVICES_CODE = """
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_enable_x64", True)
from ccdyn import activations, data, pairwise, parallel
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import engine
assert jax.device_count() == 3
cloud = data.make_dataset(x=np.random.default_rng(1).standard_normal((20, 3)), dtype=jnp.float64)  # kinks everywhere
relu, uniform = activations.get_activation("relu"), pairwise.get_pairwise("uniform")
d5 = build_dataset(DataSpec(d=5, m=5), jnp.float32)
x = np.random.default_rng(3).standard_normal((120, 4))
unit = data.make_dataset(x / np.linalg.norm(x, axis=1).max(), dtype=jnp.float32)
gauss = pairwise.get_pairwise("gaussian", 0.5)  # 9 Taylor features on these 120 points (the runner's kernel)
cases = {  # power and the sliding flow on d = 5 in float32; power circling kinks (the tiled kink watch)
    "power": (d5, jnp.float32, engine.Dynamics(method="power", max_steps=300, block=20), uniform),
    "short": (d5, jnp.float32, engine.Dynamics(method="power", max_steps=6, block=3), uniform),  # the inits' bits
    "flow": (d5, jnp.float32, engine.Dynamics(method="flow", max_steps=300, block=20), uniform),
    "circling": (cloud, jnp.float64, engine.Dynamics(method="power", max_steps=60, block=20), uniform),
    "gaussian": (unit, jnp.float32, engine.Dynamics(method="auto", max_steps=300, block=20), gauss),
}
n = 200
for name, (ds, dtype, dyn, pw) in cases.items():
    outs = {}
    for n_dev in (1, 2, 3):
        runner = engine.ChunkRunner(ds, relu, pw, dyn, tile=16, mesh=parallel.device_mesh(jax.devices()[:n_dev]))
        for chunk in (n, 64, 37):
            outs[n_dev, chunk] = engine.collect(runner, jax.random.PRNGKey(0), n, chunk, dtype)
    ref = outs[1, n]
    for key, out in outs.items():
        for f in ref:
            assert np.array_equal(out[f], ref[f]), (name, key, f, int(np.sum(out[f] != ref[f])))
    counts = engine.status_counts(ref["status"])
    print(name, counts["converged"], counts["circling_kink"], len(set(ref["steps"].tolist())))
"""


@pytest.mark.slow  # about 3 min on 2 busy cores; fast: init_weights' invariance in test_parallel.py
def test_one_two_three_devices_and_any_chunk_size_give_the_same_bits():
    """1, 2 and 3 forced CPU devices x chunks of 200, 64 and 37 inits (tile 16: 13, 4 and 3 tiles on one
    device; 5, 2 and 1 per device on three), each init's w, residual, status and step count equal bit for
    bit, at XLA's default optimization level; power, the flow, power circling kinks, and auto with a Gaussian
    alpha applied through its Taylor features. Before the inits were drawn in fixed blocks, d = 5 in float32
    differed in the last bit of w and the residual (the norm's multiply-adds fused into FMAs or not
    depending on the number of rows)."""
    # XLA's default optimization level, as the scripts run (at the suite's level 0 the old draw happened
    # to round alike for every shape)
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split()  # the scripts' setting, not the suite's (conftest.py)
             if not any(k in f for k in ("xla_backend_optimization_level", "xla_cpu_use_fusion_emitters",
                                           "xla_llvm_disable_expensive_passes"))]
    env = dict(os.environ, XLA_FLAGS=" ".join([*flags, "--xla_force_host_platform_device_count=3"]), JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "-c", _DEVICES_CODE], capture_output=True, text=True, timeout=1800, env=env,
                       cwd=Path(__file__).resolve().parents[2])
    assert r.returncode == 0, r.stderr[-3000:]
    lines = {ln.split()[0]: [int(v) for v in ln.split()[1:]] for ln in r.stdout.splitlines()}
    assert lines["flow"][0] == 200 and lines["power"][0] > 100, lines  # converged inits
    assert lines["circling"][1] > 0  # the kink watch marked some
    assert all(lines[k][2] > 3 for k in ("power", "flow", "circling"))  # many different stops: re-packing happened
    assert lines["gaussian"][0] > 150  # auto with the Gaussian alpha's features: the handed-over inits converge
