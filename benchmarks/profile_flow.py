"""Where the sliding flow's time goes, per phase, on a user data set (docs/flow.md, "Cost per phase").

    python benchmarks/profile_flow.py --set=mixture8 --n_init=512 --output_json=results/bench_flow_profile.json

One tile of ``--n_init`` inits (float32, ReLU, uniform alpha) of :mod:`ccdyn.data.user_sets`' set, stepped one
engine step at a time (the engine's own step, ``engine.step``) from two starts: random inits (``--method=flow``)
and the iterates where ``--method=auto``'s power phase stops them circling a kink (its flow phase's starts).
Per start: batch steps until every init stops, attempted init-steps, and their share that ran the
kink analysis, was accepted, ended pinned, slid on ridges. Then the cost of each part on the whole tile
(milliseconds per call, medians of ``--calls``): one evaluation of A(w) w, one Bogacki-Shampine attempt
(3 evaluations), the kink analysis of every row, the basis of the ridges the random inits end on, one whole
engine step with no row at a kink, and the compilation of the power and sliding-flow blocks. The machine's
load changes every number: compare within one run.

Per start also the activation regions each init's path visits (issue 36, item 2: inside one region of a ReLU
energy with uniform alpha the flow is the Oja flow of one matrix, which an exact step could solve to the region's
end): a region is the signs of w^T x over the views farther than ``KINK_DELTA`` tol from their hyperplanes, with
the kinks slid on; per init the regions visited (an event-driven integrator takes at least one step in each),
the attempted steps per region, the share of the attempts spent in the last region (where an exact step would go
to the end of the path at once), and the hyperplanes an accepted step crosses (a view from one side of its margin
to the other). The stepping's wall time includes this bookkeeping (the signs come to the host at every step):
compare it between starts, not with whole runs.
"""

from __future__ import annotations

import sys
import time

import jax
from absl import app, flags

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, compiling, io, pairwise, parallel  # noqa: E402
from ccdyn.data import user_sets  # noqa: E402
from ccdyn.one_layer import dynamics, engine, methods, sliding, stepper  # noqa: E402
from ccdyn.one_layer.methods import sliding_flow  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("set", "mixture8", "A user data set (ccdyn.data.user_sets.SETS).")
flags.DEFINE_integer("n_init", 512, "Inits (one tile).", lower_bound=8)
flags.DEFINE_integer("calls", 10, "Timed calls per part (median).", lower_bound=1)
flags.DEFINE_string("output_json", None, "Optional path of a JSON file with the numbers.")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _sides(ds, dyn, W):
    """(k, N) int8: the side of each view's hyperplane at every row (+1, -1; 0 within KINK_DELTA tol of it)."""
    x = sliding.flat_views(ds)[0]
    margin = sliding_flow.KINK_DELTA * dyn.tol * jnp.linalg.norm(x, axis=1)
    z = W @ x.T
    return jnp.where(z > margin, 1, jnp.where(z < -margin, -1, 0)).astype(jnp.int8)


def step_profile(ds, act, pw, dyn, st) -> dict:
    """Steps the rows of ``st`` one engine step at a time to a stop; counts per attempted init-step, and the
    regions each init visits (module docstring)."""
    method = methods.select(dyn, act)
    step = jax.jit(lambda d, s: engine.step(d, act, pw, dyn, s, method))
    sides = jax.jit(lambda W: _sides(ds, dyn, W))
    jax.block_until_ready(step(ds, st))  # compiled before the clock starts
    counts = dict(batch_steps=0, init_steps=0, analysed=0, accepted=0, pinned=0, sliding=0, crossings=0)
    n = st.w.shape[0]
    regions, last, attempts = np.ones(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.int64)
    region = (np.asarray(sides(st.w)), np.sort(np.asarray(st.carry.kinks), axis=1))
    t0 = time.perf_counter()
    while True:
        active = np.asarray((st.status == int(engine.Status.RUNNING)) & (st.steps < dyn.max_steps))
        if not active.any():
            break
        c = st.carry
        need = active & np.asarray(c.pinned | (c.reach > 0) | jnp.any(c.kinks >= 0, axis=1))
        w0 = st.w
        st = step(ds, st)
        moved = np.asarray(jnp.any(st.w != w0, axis=1))
        counts["batch_steps"] += 1
        counts["init_steps"] += int(active.sum())
        counts["analysed"] += int(need.sum())
        counts["accepted"] += int((active & moved).sum())
        counts["pinned"] += int((active & np.asarray(st.carry.pinned)).sum())
        counts["sliding"] += int((active & np.asarray(jnp.any(st.carry.kinks >= 0, axis=1))).sum())
        new = (np.asarray(sides(st.w)), np.sort(np.asarray(st.carry.kinks), axis=1))
        counts["crossings"] += int(np.sum(active[:, None] & (region[0] * new[0] < 0)))
        changed = active & (np.any(new[0] != region[0], axis=1) | np.any(new[1] != region[1], axis=1))
        attempts += active
        regions += changed
        last = np.where(changed, attempts, last)
        region = new
    wall = time.perf_counter() - t0  # the region bookkeeping included
    final = attempts - last  # attempts after the last region change
    return {**counts, "wall_s": wall, "mean_steps": counts["init_steps"] / n,
            "shares": {k: counts[k] / counts["init_steps"] for k in ("analysed", "accepted", "pinned", "sliding")},
            "regions": {"per_init_median": float(np.median(regions)), "per_init_mean": float(regions.mean()),
                        "attempts_per_region": counts["init_steps"] / float(regions.sum()),
                        "last_region_share": float(final.sum() / attempts.sum()),
                        "crossings_per_accepted_step": counts["crossings"] / max(counts["accepted"], 1)},
            "status": engine.status_counts(np.asarray(st.status)), "kinks": np.asarray(st.carry.kinks)}


def timed(f, *args, calls: int) -> float:
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t0)
    return 1e3 * float(np.median(times))


def main(argv):
    del argv
    ds = user_sets.dataset(FLAGS.set, jnp.float32)
    act, pw = activations.get_activation(user_sets.ACTIVATION[FLAGS.set]), pairwise.get_pairwise("uniform")
    n, flow = FLAGS.n_init, engine.Dynamics(method="flow", block=1)
    W = parallel.init_weights(jax.random.PRNGKey(0), 0, n, ds.dim, jnp.float32)
    # the auto method's handover points: its power phase alone (no finish passes), the rows it stopped
    ph = engine.ChunkRunner(ds, act, pw, engine.Dynamics(method="auto"), tile=n, wide=False).run(
        jax.random.PRNGKey(0), 0, n, jnp.float32)
    circling = ph["status"] == engine.Status.KINK_LIMIT
    starts = {"random inits (--method=flow)": W, "power's circling iterates (--method=auto)": ph["w"][circling]}
    record = {"set": FLAGS.set, "n_init": n, "devices": [str(d) for d in jax.devices()],
              "circling_after_detect": int(circling.sum()), "starts": {}}
    kinks = None
    for name, W0 in starts.items():
        if W0.shape[0] == 0:
            continue
        st = engine.initial_state(jnp.asarray(W0), flow, act)
        prof = step_profile(ds, act, pw, flow, st)
        ends = prof.pop("kinks")
        kinks = jnp.asarray(ends) if kinks is None else kinks  # the ridges the random inits end on (the basis part)
        record["starts"][name] = prof
        log(f"{name}: {prof['mean_steps']:.1f} attempted steps per init, {prof['batch_steps']} batch steps, "
            f"shares {prof['shares']}")
    x = sliding.flat_views(ds)[0]
    m = sliding.max_active(ds.dim)
    u = dynamics.ascent(ds, act, W, pw)
    vectors = lambda idx: jnp.where((idx >= 0)[..., None], x[jnp.maximum(idx, 0)], 0.0)  # noqa: E731
    calls = FLAGS.calls
    fmethod = methods.select(flow, act)
    parts = {
        "ascent (1 evaluation)": timed(jax.jit(lambda W: dynamics.ascent(ds, act, W, pw)), W, calls=calls),
        "BS32 attempt (3 evaluations)": timed(jax.jit(lambda W, u: stepper.attempt(
            ds, act, pw, stepper.BS32, W, u, jnp.full((n,), 1e-3, W.dtype))), W, u, calls=calls),
        "kink analysis, every row": timed(jax.jit(lambda W, u: sliding_flow._ridges(
            ds, act, pw, flow, W, jnp.zeros(n, W.dtype), u, m)), W, u, calls=calls),
        "ridges' basis (sliding.basis)": timed(jax.jit(lambda k: sliding.basis(vectors(k), k >= 0)), kinks,
                                               calls=calls),
        "engine step, no row at a kink": timed(jax.jit(lambda s: engine.step(ds, act, pw, flow, s, fmethod)),
                                               engine.initial_state(W, flow, act)._replace(
                                                   steps=jnp.ones(n, jnp.int32), carry=fmethod.init(W, flow)._replace(
                                                       u=u)), calls=calls),
    }
    mesh = parallel.device_mesh()
    for method in ("power", "flow"):
        dyn = engine.Dynamics(method=method)
        options = compiling.block_options(methods.select(dyn, act).compiler_options)  # as the runner compiles it
        f = jax.jit(parallel.tiled_sharded(engine.make_block(act, pw, dyn), mesh, n), compiler_options=options)
        t0 = time.perf_counter()
        f.lower(ds, engine.initial_state(W, dyn, act)).compile()
        parts[f"compile {method} block (s)"] = time.perf_counter() - t0
    record["ms_per_call"] = parts
    for k, v in parts.items():
        print(f"{k:<40}{v:>10.2f}")
    for name, p in record["starts"].items():
        print(f"{name}: {p['mean_steps']:.1f} attempted steps per init, {p['batch_steps']} batch steps, "
              f"{p['wall_s']:.1f} s; per init-step: analysed {p['shares']['analysed']:.2f}, accepted "
              f"{p['shares']['accepted']:.2f}, pinned {p['shares']['pinned']:.3f}, "
              f"sliding {p['shares']['sliding']:.2f}")
        r = p["regions"]
        print(f"  regions per init {r['per_init_median']:.0f} (median; mean {r['per_init_mean']:.1f}), "
              f"{r['attempts_per_region']:.1f} attempts per region, last region {r['last_region_share']:.2f} of "
              f"the attempts, {r['crossings_per_accepted_step']:.2f} hyperplanes crossed per accepted step")
    print("key: ms per call on the whole tile (compile: seconds); shares of the attempted init-steps; a region: the "
          "views' signs beyond their kink margin and the kinks slid on")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, record)


if __name__ == "__main__":
    app.run(main)
