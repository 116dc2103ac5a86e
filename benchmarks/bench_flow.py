"""Cost of the error-controlled flow (--method=flow, with Filippov sliding on kinks) against the same flow
before sliding (``flow_pinned``: stops where pinned), the fixed-step scheme and power iteration, and
against diffrax on the same batch (docs/flow.md).

    python benchmarks/bench_flow.py --output_json=results/bench_flow.json     # ~2.5 min on 2 CPU cores

Data: the basins default (latent summation, 2^10 support points, d = 10), relu, uniform alpha, float32.

1. engine: ``n_init`` inits run to a stop by ``ccdyn.one_layer.engine.ChunkRunner`` (tile 512, one chunk),
   for each method, in one process: wall time (compilation included, as a user sees it), attempted
   steps, init-steps/s and evaluations of A(w) w per second (flow: 3 per attempted step, the others 1).
2. diffrax: the same flow dw/dt = P^perp A(w) w solved per init by ``diffrax.diffeqsolve`` (Bosh3, the
   same Bogacki-Shampine pair, PID controller with rtol = 0 and atol = flow_rtol, a steady-state event
   at the engine's tol), vmapped over ``diffrax_inits`` inits, against the engine's flow on the same inits
   (``engine.converge``, one jit). No timing is asserted.
"""

from __future__ import annotations

import dataclasses
import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, io, pairwise, parallel, sphere  # noqa: E402
from ccdyn.data.registry import DataSpec, build_dataset  # noqa: E402
from ccdyn.one_layer import basins, dynamics, engine, stepper  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("n_init", 10000, "Inits per method for the engine comparison.", lower_bound=1)
flags.DEFINE_integer("diffrax_inits", 1000, "Inits for the diffrax comparison (0: skip it).", lower_bound=0)
flags.DEFINE_float("flow_rtol", 1e-4, "The flow's --flow_rtol.")
flags.DEFINE_string("output_json", None, "Optional path of a JSON file with the numbers.")

DTYPE = jnp.float32
EVALS = {"flow": stepper.BS32.evaluations, "flow_pinned": stepper.BS32.evaluations,
         "flow_one_pass": stepper.BS32.evaluations, "euler_halving": 1, "power": 1}
# the flow before Filippov sliding (stops where pinned on a kink): the same method with sliding=False
RUNS = {"power": engine.Dynamics(method="power"), "euler_halving": engine.Dynamics(method="euler_halving"),
        "flow_pinned": engine.Dynamics(method="flow", sliding=False),
        "flow_one_pass": engine.Dynamics(method="flow"), "flow": engine.Dynamics(method="flow")}
# flow_one_pass: the sliding flow without the second pass over its kink_limit inits (ChunkRunner(wide=False))
WIDE = {"flow_one_pass": False}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def optima(out, n_init: int) -> dict:
    """Greedy clusters (0.01) of the converged endpoints: how many, and the share of the inits in the 10
    largest (the default data's 10 pattern optima)."""
    conv = out["status"] == engine.Status.CONVERGED
    counts = np.bincount(basins.cluster(np.asarray(out["w"][conv], np.float64), 1e-2)[0])
    return {"n": int(counts.size), "seen_once": int(np.sum(counts == 1)),
            "top10_share": float(np.sum(np.sort(counts)[::-1][:10]) / n_init)}


def engine_rows(ds, act, pw, n_init: int, rtol: float) -> list:
    rows = []
    for method, dyn in RUNS.items():
        dyn = dataclasses.replace(dyn, flow_rtol=rtol)
        runner = engine.ChunkRunner(ds, act, pw, dyn, tile=512, wide=WIDE.get(method, True))
        t0 = time.perf_counter()
        out = runner.run(jax.random.PRNGKey(0), 0, n_init, DTYPE)
        wall = time.perf_counter() - t0
        steps = int(np.sum(out["steps"]))
        rows.append({"method": method, "n_init": n_init, "wall_s": wall, "mean_steps": steps / n_init,
                     "init_steps_per_s": steps / wall, "evaluations_per_s": EVALS[method] * steps / wall,
                     "converged": int(np.sum(out["status"] == engine.Status.CONVERGED)),
                     "status": engine.status_counts(out["status"]), "optima": optima(out, n_init)})
        log(f"{method}: {wall:.1f} s, {steps / n_init:.1f} steps per init, {steps / wall:.3g} init-steps/s")
    return rows


def diffrax_row(ds, act, pw, n: int, rtol: float, tol: float) -> dict:
    import diffrax

    W = parallel.init_weights(jax.random.PRNGKey(0), 0, n, ds.dim, DTYPE)

    def field(t, w, args):
        u = dynamics.ascent(ds, act, w[None], pw)[0]
        return sphere.tangent(w, u)

    def done(t, w, args, **kwargs):  # the engine's residual test
        u = dynamics.ascent(ds, act, w[None], pw)[0]
        return jnp.linalg.norm(sphere.tangent(w, u)) <= tol * jnp.linalg.norm(u)

    def solve(w0):
        sol = diffrax.diffeqsolve(diffrax.ODETerm(field), diffrax.Bosh3(), 0.0, 1e6, None, w0,
                                  stepsize_controller=diffrax.PIDController(rtol=0.0, atol=rtol),
                                  event=diffrax.Event(done), max_steps=4096, throw=False)
        return sol.ys[-1], sol.stats["num_steps"]

    f = jax.jit(jax.vmap(solve))
    t0 = time.perf_counter()
    w, steps = jax.block_until_ready(f(W))
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready(f(W))
    diffrax_s = time.perf_counter() - t0
    dyn = engine.Dynamics(method="flow", flow_rtol=rtol, tol=tol, max_steps=4096)
    t0 = time.perf_counter()
    ours = engine.converge(ds, act, pw, dyn, W)
    first_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = engine.converge(ds, act, pw, dyn, W)  # converge compiles per call: this includes it again
    ours_s = time.perf_counter() - t0
    agree = float(np.mean(np.linalg.norm(sphere.normalize(np.asarray(w, np.float64)) - ours["w"], axis=1) < 1e-2))
    row = {"n_init": n, "diffrax_s": diffrax_s, "diffrax_first_call_s": first, "engine_s": ours_s,
           "engine_first_call_s": first_ours, "diffrax_mean_steps": float(np.mean(steps)),
           "engine_mean_steps": float(np.mean(ours["steps"])), "same_endpoint": agree,
           "diffrax_over_engine": diffrax_s / ours_s,
           # the batch runs until its slowest init stops (vmap of a while loop; the engine's blocks likewise)
           "diffrax_s_per_batch_step": diffrax_s / float(np.max(steps)),
           "engine_s_per_batch_step": ours_s / float(np.max(ours["steps"]))}
    log(f"diffrax: {diffrax_s:.1f} s ({np.mean(steps):.1f} steps), engine flow {ours_s:.1f} s "
        f"({np.mean(ours['steps']):.1f} attempted steps), same endpoint {agree:.3f}")
    return row


def main(argv):
    del argv
    ds = build_dataset(DataSpec(), DTYPE)
    act, pw = activations.get_activation("relu"), pairwise.get_pairwise("uniform")
    rows = engine_rows(ds, act, pw, FLAGS.n_init, FLAGS.flow_rtol)
    by = {r["method"]: r for r in rows}
    ratio = {"flow_over_euler_halving_wall": by["flow"]["wall_s"] / by["euler_halving"]["wall_s"],
             "flow_over_power_wall": by["flow"]["wall_s"] / by["power"]["wall_s"],
             "flow_over_flow_pinned_wall": by["flow"]["wall_s"] / by["flow_pinned"]["wall_s"],
             "flow_over_flow_one_pass_wall": by["flow"]["wall_s"] / by["flow_one_pass"]["wall_s"]}
    record = {"devices": [str(d) for d in jax.devices()], "flow_rtol": FLAGS.flow_rtol, "engine": rows,
              "ratios": ratio}
    if FLAGS.diffrax_inits:
        record["diffrax"] = diffrax_row(ds, act, pw, FLAGS.diffrax_inits, FLAGS.flow_rtol, 1e-6)
    print(f"{'method':<14}{'wall s':>9}{'steps/init':>12}{'init-steps/s':>14}{'A(w)w evals/s':>15}"
          f"{'optima':>8}{'top 10 hold':>12}")
    for r in rows:
        print(f"{r['method']:<14}{r['wall_s']:>9.1f}{r['mean_steps']:>12.1f}{r['init_steps_per_s']:>14.3g}"
              f"{r['evaluations_per_s']:>15.3g}{r['optima']['n']:>8}{r['optima']['top10_share']:>12.4f}")
    print(f"flow / euler_halving wall time: {ratio['flow_over_euler_halving_wall']:.2f}; flow / flow_pinned "
          f"(before sliding): {ratio['flow_over_flow_pinned_wall']:.2f}; flow / flow_one_pass (no second pass "
          f"over kink_limit inits): {ratio['flow_over_flow_one_pass_wall']:.2f}")
    if "diffrax" in record:
        d = record["diffrax"]
        print(f"diffrax / engine flow on {d['n_init']} inits: {d['diffrax_over_engine']:.2f} "
              f"({d['diffrax_s']:.1f} s vs {d['engine_s']:.1f} s); per step of the batch "
              f"{d['diffrax_s_per_batch_step'] / d['engine_s_per_batch_step']:.2f}; diffrax steps: mean "
              f"{d['diffrax_mean_steps']:.0f} (max_steps 4096), engine {d['engine_mean_steps']:.0f}")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, record)


if __name__ == "__main__":
    app.run(main)
