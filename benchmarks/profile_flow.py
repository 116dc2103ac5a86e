"""Where the sliding flow's time goes, per phase, on a user data set (docs/flow.md, "Cost per phase").

    python benchmarks/profile_flow.py --set=mixture8 --n_init=512 --output_json=results/bench_flow_profile.json

One tile of ``--n_init`` inits (float32, ReLU, uniform alpha) of :mod:`ccdyn.data.user_sets`' set, stepped one
engine step at a time (the engine's own step, ``engine.step``) from two starts: random inits (``--method=flow``)
and the iterates where ``--method=auto``'s power phase stops them circling a kink (its flow phase's starts).
Per start: batch steps until every init stops, attempted init-steps, and their share that ran the
kink analysis, was accepted, ended pinned, slid on ridges. Then the cost of each part on the whole tile
(milliseconds per call, medians of ``--calls``): one evaluation of A(w) w, one Bogacki-Shampine attempt
(3 evaluations), the kink analysis of every row, the ridges' basis, one whole engine step with no row at a
kink, and the compilation of the power and sliding-flow blocks. The machine's load changes every number:
compare within one run.
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


def step_profile(ds, act, pw, dyn, st) -> dict:
    """Steps the rows of ``st`` one engine step at a time to a stop; counts per attempted init-step."""
    method = methods.select(dyn, act)
    step = jax.jit(lambda d, s: engine.step(d, act, pw, dyn, s, method))
    jax.block_until_ready(step(ds, st))  # compiled before the clock starts
    counts = dict(batch_steps=0, init_steps=0, analysed=0, accepted=0, pinned=0, sliding=0)
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
    n = st.w.shape[0]
    return {**counts, "wall_s": time.perf_counter() - t0, "mean_steps": counts["init_steps"] / n,
            "shares": {k: counts[k] / counts["init_steps"] for k in ("analysed", "accepted", "pinned", "sliding")},
            "status": engine.status_counts(np.asarray(st.status)), "w": np.asarray(st.w)}


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
    for name, W0 in starts.items():
        if W0.shape[0] == 0:
            continue
        st = engine.initial_state(jnp.asarray(W0), flow, act)
        prof = step_profile(ds, act, pw, flow, st)
        prof.pop("w")
        record["starts"][name] = prof
        log(f"{name}: {prof['mean_steps']:.1f} attempted steps per init, {prof['batch_steps']} batch steps, "
            f"shares {prof['shares']}")
    x = sliding.flat_views(ds)[0]
    m = sliding.max_active(ds.dim)
    u = dynamics.ascent(ds, act, W, pw)
    kinks = jnp.full((n, m), -1, jnp.int32)
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
    print("key: ms per call on the whole tile (compile: seconds); shares of the attempted init-steps")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, record)


if __name__ == "__main__":
    app.run(main)
