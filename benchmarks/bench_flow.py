"""Cost of the error-controlled flow (--method=flow, with Filippov sliding on kinks) against the same flow
before sliding (``flow_pinned``: stops where pinned), the fixed-step scheme, power iteration and
``--method=auto`` (power iteration, the sliding flow where it circles a kink), and against diffrax on the
same batch (docs/flow.md).

    python benchmarks/bench_flow.py --output_json=results/bench_flow.json     # ~2.5 min on 2 CPU cores
    python benchmarks/bench_flow.py --methods=power,flow,auto --diffrax_inits=0 \
        --sets=default,mixture8,digits,unit30,mixture5,cloud3,cloud16,patches,digit_patches,mixture6_leaky,\
mixture5_d12,cloud9,digits017 \
        --output_json=results/bench_flow_auto.json

``--sets``: the default data (``default``) and user data sets (:mod:`ccdyn.data.user_sets`, written as
``.npz`` data files and read back as ``--data=file`` reads them); each set runs every method of
``--methods`` in the same process, ``--repeats`` times interleaved (wall times: medians), and reports the
ratios of the medians to power's and flow's. On the user sets also: the optima that the flow finds with at
least 1% of the inits found by auto, and auto's optima refined, certified (the basins analysis) and every
stable one probed by the independent float64 probe (:mod:`ccdyn.one_layer.kink_probe`; leaky ReLU: the
probe's rises only, its r_geo is ReLU's).

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

import atexit
import dataclasses
import os
import shutil
import sys
import tempfile
import time

import jax
from absl import app, flags

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental.compilation_cache import compilation_cache as jax_cache  # noqa: E402

from ccdyn import activations, io, pairwise, parallel, sphere  # noqa: E402
from ccdyn.cli import compile_cache  # noqa: E402
from ccdyn.data import make_dataset, user_sets  # noqa: E402
from ccdyn.data.registry import DataSpec, build_dataset  # noqa: E402
from ccdyn.one_layer import basins, dynamics, engine, kink_probe, stepper  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("n_init", 10000, "Inits per method for the engine comparison.", lower_bound=1)
flags.DEFINE_list("methods", None, "Methods to run (default: all of power, euler_halving, flow_pinned, "
                  "flow_one_pass, flow, auto).")
flags.DEFINE_list("sets", ["default"], "Data: default and / or user sets (ccdyn.data.user_sets.SETS).")
flags.DEFINE_integer("user_n_init", 1000, "Inits per method on a user set.", lower_bound=1)
flags.DEFINE_integer("repeats", 1, "Runs per method and set, interleaved. The first compiles every program (wall_s, "
                     "as a first run sees it); the others take them from the persistent compilation cache (a temporary "
                     "one per method and set, empty at its first run) as a user's later runs do (wall_s_warm, their "
                     "median).", lower_bound=1)
flags.DEFINE_integer("tile", 512, "Rows per tile of every run (the inits are padded to whole tiles).", lower_bound=1)
flags.DEFINE_enum("alpha", "uniform", pairwise.KINDS, "--sets: the pairwise importance alpha.")
flags.DEFINE_float("tau", 1.0, "--sets: the Gaussian alpha's temperature.")
flags.DEFINE_integer("probe_dirs", 500, "Random tangent directions of the float64 probe per stable optimum.",
                     lower_bound=1)
flags.DEFINE_integer("diffrax_inits", 1000, "Inits for the diffrax comparison (0: skip it).", lower_bound=0)
flags.DEFINE_float("flow_rtol", 1e-4, "The flow's --flow_rtol.")
flags.DEFINE_string("output_json", None, "Optional path of a JSON file with the numbers.")

DTYPE = jnp.float32
EVALS = {"flow": stepper.BS32.evaluations, "flow_pinned": stepper.BS32.evaluations,
         "flow_one_pass": stepper.BS32.evaluations, "euler_halving": 1, "power": 1, "auto": None}
# the flow before Filippov sliding (stops where pinned on a kink): the same method with sliding=False
RUNS = {"power": engine.Dynamics(method="power"), "euler_halving": engine.Dynamics(method="euler_halving"),
        "flow_pinned": engine.Dynamics(method="flow", sliding=False),
        "flow_one_pass": engine.Dynamics(method="flow"), "flow": engine.Dynamics(method="flow"),
        "auto": engine.Dynamics(method="auto")}
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


def run_method(ds, act, pw, method: str, n_init: int, rtol: float):
    """(engine result, wall seconds: compilation included) of ``method`` on ``n_init`` inits, one chunk."""
    dyn = dataclasses.replace(RUNS[method], flow_rtol=rtol)
    runner = engine.ChunkRunner(ds, act, pw, dyn, tile=FLAGS.tile, wide=WIDE.get(method, True))
    t0 = time.perf_counter()
    out = runner.run(jax.random.PRNGKey(0), 0, n_init, DTYPE)
    return out, time.perf_counter() - t0


def use_cache(path: str) -> None:
    """The persistent compilation cache at ``path`` from the next compilation on."""
    jax.config.update("jax_compilation_cache_dir", path)
    jax_cache.reset_cache()


def engine_rows(ds, act, pw, n_init: int, rtol: float, methods, repeats: int = 1) -> tuple:
    """One row per method (wall: the first of ``repeats`` interleaved runs, compiling; warm: the median of the
    others, with the programs from the persistent compilation cache) and the last result of each. Each method
    has a cache of its own, empty at its first run: with one cache its first run took the programs it shares with
    the methods run before it (the kink watch, the bookkeeping) from theirs, as a user's first run does not. The
    inits' program is compiled before the clock starts (every method shares it: the first method timed would
    pay for it alone)."""
    jax.block_until_ready(parallel.init_weights(jax.random.PRNGKey(0), 0, parallel.padded_chunk(n_init, FLAGS.tile, 1),
                                                ds.dim, DTYPE))
    walls, outs = {m: [] for m in methods}, {}
    caches = {m: tempfile.mkdtemp(prefix=f"{m}-", dir=os.environ[compile_cache.ENV]) for m in methods}
    for _ in range(repeats):
        for method in methods:
            use_cache(caches[method])
            outs[method], wall = run_method(ds, act, pw, method, n_init, rtol)
            walls[method].append(wall)
            log(f"{method}: {wall:.1f} s")
    rows = []
    for method in methods:
        out, wall = outs[method], walls[method][0]
        steps = int(np.sum(out["steps"]))
        evals = EVALS[method]
        rows.append({"method": method, "n_init": n_init, "wall_s": wall, "wall_s_runs": walls[method],
                     "mean_steps": steps / n_init, "init_steps_per_s": steps / wall,
                     "evaluations_per_s": None if evals is None else evals * steps / wall,
                     "converged": int(np.sum(out["status"] == engine.Status.CONVERGED)),
                     "status": engine.status_counts(out["status"]), "optima": optima(out, n_init),
                     "wall_s_warm": float(np.median(walls[method][1:])) if repeats > 1 else None})
        log(f"{method}: first run {wall:.1f} s, {steps / n_init:.1f} steps per init")
    return rows, outs


def found_optima(ref: dict, out: dict, n_init: int, tol: float = 1e-2, share: float = 0.01) -> dict:
    """The endpoint clusters (``tol``) holding >= ``share`` of the inits in ``ref`` (the flow), and whether
    ``out`` (auto) has converged endpoints within ``tol`` of each one's center."""
    conv = ref["status"] == engine.Status.CONVERGED
    labels, centers = basins.cluster(np.asarray(ref["w"][conv], np.float64), tol)
    counts = np.bincount(labels, minlength=centers.shape[0])
    ends = np.asarray(out["w"][out["status"] == engine.Status.CONVERGED], np.float64)
    big = np.flatnonzero(counts >= share * n_init)
    gap = [float(np.min(np.linalg.norm(ends - centers[i], axis=1), initial=np.inf)) for i in big]
    return {"flow_optima_1pct": int(big.size), "found": int(sum(g <= tol for g in gap)),
            "flow_shares": (counts[big] / n_init).tolist(), "gaps": gap}


def probe_stable(x, act, cfg, result, probe_dirs: int, seed: int = 0) -> dict:
    """The basins analysis (refinement, certificates) of ``result`` and the independent float64 probe of every
    stable optimum (:mod:`ccdyn.one_layer.kink_probe`; leaky ReLU: the rises only, judged as by the probe)."""
    ds64 = make_dataset(x, dtype=jnp.float64)
    t0 = time.perf_counter()
    _, an = basins.analyze_result(cfg, ds64, result)
    p, rng = np.full(x.shape[0], 1.0 / x.shape[0]), np.random.default_rng(seed)
    slope = cfg.leaky_slope if act.name == "leaky_relu" else 0.0
    tau = cfg.tau if cfg.alpha == "gaussian" else None

    def pot(W):  # 1/2 Var_p h(x w), h = relu or leaky relu; Gaussian alpha: the probe's potential
        if tau is not None:
            return kink_probe.potential(x, p, W, tau)
        z = np.atleast_2d(W) @ x.T
        f = np.where(z > 0, z, slope * z)
        return 0.5 * np.sum(p * (f - (f @ p)[:, None]) ** 2, axis=1)

    radii = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
    judged = []
    for r in an["rows"]:
        if not r["stable"]:
            continue
        w = np.asarray(r["w"], np.float64)
        rises = kink_probe.probe_rises(pot, w, rng.standard_normal((probe_dirs, x.shape[1])), radii)
        r_geo = kink_probe.extent(x, p, w, tau)["r_geo"] if slope == 0 else 0.0
        judged.append(kink_probe.judge(radii, rises, r_geo))
    counts = {j: judged.count(j) for j in kink_probe.JUDGEMENTS}
    return {"optima": len(an["rows"]), "stable": len(judged),
            "stable_share": float(sum(r["count"] for r in an["rows"] if r["stable"]) / result["status"].size),
            "certificates": sorted({r["certificate"] for r in an["rows"]}), "judgements": counts,
            "all_stable_pass": bool(judged) and counts["not a max"] == 0, "analyze_s": time.perf_counter() - t0}


def set_record(name: str, methods, n_init: int, rtol: float, repeats: int, probe_dirs: int,
               alpha: str = "uniform", tau: float = 1.0) -> dict:
    """Every method on one data set (``default`` or a user set), in one process."""
    act = activations.get_activation(user_sets.ACTIVATION.get(name, "relu"))
    pw = pairwise.get_pairwise(alpha, tau)
    if name == "default":
        ds, x = build_dataset(DataSpec(), DTYPE), None
    else:
        ds, x = user_sets.dataset(name, DTYPE), np.asarray(user_sets.build(name)["x"], np.float64)
    rows, outs = engine_rows(ds, act, pw, n_init, rtol, methods, repeats)
    by = {r["method"]: r for r in rows}
    rec = {"set": name, "act": act.name, "alpha": alpha, "tau": tau if alpha == "gaussian" else None,
           "n": int(ds.n), "d": int(ds.dim), "tuned_on": name in user_sets.TUNED,
           "engine": rows, "ratios": {f"{a}_over_{b}_wall{s}": by[a][f"wall_s{s}"] / by[b][f"wall_s{s}"]
                                      for a in ("auto", "flow") for b in ("power", "flow") for s in ("", "_warm")
                                      if a != b and a in by and b in by and by[a][f"wall_s{s}"] is not None}}
    if "auto" in outs and "flow" in outs:
        rec["flow_optima_found_by_auto"] = found_optima(outs["flow"], outs["auto"], n_init)
    if "auto" in outs and x is not None:
        cfg = basins.BasinsConfig(act=act.name, alpha=alpha, tau=tau, dynamics=engine.Dynamics(method="flow"),
                                  n_init=n_init)
        rec["auto_probe"] = probe_stable(x, act, cfg, outs["auto"], probe_dirs)
    return rec


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


SETS_KEY = ("per set and method: wall s, the first run (compilation included, the machine's load "
            "as it was: compare within a set only); warm s: the median of the later repeats, compiled programs "
            "from the persistent cache; conv: share of inits converged; optima: raw endpoint clusters "
            "(0.01); x power / x flow: the method's wall time over power's / flow's; warm x: the same, warm; "
            "flow 1%: the flow's "
            "endpoint clusters holding >= 1% of the inits, and how many auto reaches (within 0.01); probe: auto's "
            "stable optima (after refinement and certificates) passing the float64 probe / all stable")


def sets_main(methods, load: float) -> None:
    """Every method on every set of ``--sets``; ``load``: the 1-minute load average before the runs (recorded)."""
    records = []
    for name in FLAGS.sets:
        n = FLAGS.n_init if name == "default" else FLAGS.user_n_init
        records.append(set_record(name, methods, n, FLAGS.flow_rtol, FLAGS.repeats, FLAGS.probe_dirs,
                                  FLAGS.alpha, FLAGS.tau))
        log(f"{name}: done")
    print(f"{'set':<16}{'method':<8}{'n_init':>7}{'wall s':>9}{'warm s':>8}{'conv':>8}{'optima':>8}{'x power':>9}"
          f"{'warm x':>8}{'x flow':>8}{'flow 1%':>9}{'probe':>8}")
    for rec in records:
        by = {r["method"]: r for r in rec["engine"]}
        for r in rec["engine"]:
            m = r["method"]
            xp = r["wall_s"] / by["power"]["wall_s"] if "power" in by else np.nan
            ws = r["wall_s_warm"] if r["wall_s_warm"] is not None else np.nan
            xw = ws / by["power"]["wall_s_warm"] if "power" in by and by["power"]["wall_s_warm"] else np.nan
            xf = r["wall_s"] / by["flow"]["wall_s"] if "flow" in by else np.nan
            f1 = rec.get("flow_optima_found_by_auto") if m == "auto" else None
            pr = rec.get("auto_probe") if m == "auto" else None
            found = f"{f1['found']}/{f1['flow_optima_1pct']}" if f1 else "-"
            probe = f"{pr['stable'] - pr['judgements']['not a max']}/{pr['stable']}" if pr else "-"
            print(f"{rec['set']:<16}{m:<8}{r['n_init']:>7}{r['wall_s']:>9.1f}{ws:>8.1f}"
                  f"{r['converged'] / r['n_init']:>8.4f}{r['optima']['n']:>8}{xp:>9.2f}{xw:>8.2f}{xf:>8.2f}{found:>9}"
                  f"{probe:>8}")
    ratios = {}
    pairs = (("auto", "power"), ("auto", "flow"), ("flow", "power"))
    for a, b, s in ((a, b, s) for a, b in pairs for s in ("", "_warm")):
        vals = [rec["ratios"][f"{a}_over_{b}_wall{s}"] for rec in records if f"{a}_over_{b}_wall{s}" in rec["ratios"]
                and rec["set"] != "default"]
        if vals:
            ratios[f"median_{a}_over_{b}_wall{s}_user_sets"] = float(np.median(vals))
    print("key: " + SETS_KEY)
    print("medians over the user sets: " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, {"devices": [str(d) for d in jax.devices()], "flow_rtol": FLAGS.flow_rtol,
                                          "methods": list(methods), "repeats": FLAGS.repeats, "sets": records,
                                          "median_ratios": ratios,
                                          "load_average_1min_at_start": load,
                                          "note": "wall times as the machine's load was (load_average_1min_at_start: "
                                                  "the load before this process started computing)"})


def main(argv):
    del argv
    load = os.getloadavg()[0]  # before this process computes anything
    cache = tempfile.mkdtemp(prefix="ccdyn-bench-cache-")  # empty: the first runs compile
    atexit.register(shutil.rmtree, cache, ignore_errors=True)
    os.environ[compile_cache.ENV] = cache
    compile_cache.enable()
    methods = FLAGS.methods or list(RUNS)
    unknown = sorted(set(methods) - set(RUNS))
    if unknown:
        raise app.UsageError(f"--methods: unknown {unknown}; known: {', '.join(RUNS)}")
    if FLAGS.sets != ["default"] or FLAGS.methods:
        return sets_main(methods, load)
    ds = build_dataset(DataSpec(), DTYPE)
    act, pw = activations.get_activation("relu"), pairwise.get_pairwise("uniform")
    rows, _ = engine_rows(ds, act, pw, FLAGS.n_init, FLAGS.flow_rtol, methods, FLAGS.repeats)
    by = {r["method"]: r for r in rows}
    ratio = {"flow_over_euler_halving_wall": by["flow"]["wall_s"] / by["euler_halving"]["wall_s"],
             "flow_over_power_wall": by["flow"]["wall_s"] / by["power"]["wall_s"],
             "flow_over_flow_pinned_wall": by["flow"]["wall_s"] / by["flow_pinned"]["wall_s"],
             "flow_over_flow_one_pass_wall": by["flow"]["wall_s"] / by["flow_one_pass"]["wall_s"],
             "auto_over_power_wall": by["auto"]["wall_s"] / by["power"]["wall_s"],
             "auto_over_flow_wall": by["auto"]["wall_s"] / by["flow"]["wall_s"]}
    record = {"devices": [str(d) for d in jax.devices()], "flow_rtol": FLAGS.flow_rtol, "engine": rows,
              "ratios": ratio}
    if FLAGS.diffrax_inits:
        record["diffrax"] = diffrax_row(ds, act, pw, FLAGS.diffrax_inits, FLAGS.flow_rtol, 1e-6)
    print(f"{'method':<14}{'wall s':>9}{'steps/init':>12}{'init-steps/s':>14}{'A(w)w evals/s':>15}"
          f"{'optima':>8}{'top 10 hold':>12}")
    for r in rows:
        print(f"{r['method']:<14}{r['wall_s']:>9.1f}{r['mean_steps']:>12.1f}{r['init_steps_per_s']:>14.3g}"
              f"{r['evaluations_per_s'] or float('nan'):>15.3g}{r['optima']['n']:>8}"
              f"{r['optima']['top10_share']:>12.4f}")
    print(f"flow / euler_halving wall time: {ratio['flow_over_euler_halving_wall']:.2f}; flow / flow_pinned "
          f"(before sliding): {ratio['flow_over_flow_pinned_wall']:.2f}; flow / flow_one_pass (no second pass "
          f"over kink_limit inits): {ratio['flow_over_flow_one_pass_wall']:.2f}; auto / power: "
          f"{ratio['auto_over_power_wall']:.2f}; auto / flow: "
          f"{ratio['auto_over_flow_wall']:.2f}")
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
