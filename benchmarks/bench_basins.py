"""Throughput of the basins engine (init-steps per second) against two references, end to end, and
the float64 refinement on the host against the default device, and the cost of the fixed shapes that make
the results independent of the chunk size and device count. Runs on any backend (CPU, GPU, TPU).

    python benchmarks/bench_basins.py               # full default: 10^6 x 1000 steps end to end
    python benchmarks/bench_basins.py --n_inits=1000,10000 --repeats=3 --e2e_inits=100000
    python benchmarks/bench_basins.py --output_json=results/bench_basins.json            # CPU
    python benchmarks/bench_basins.py --output_json=results/bench_basins_gpu.json        # on a GPU

The JSON names the backend, the device kind and count, and the tile rule in force
(``ccdyn.parallel.SIZING_RULE``: ``--tile`` / ``--e2e_chunk`` default to it).

Data: the basins default (latent summation, 2^10 support points, d = 10), relu, uniform alpha, all in
float32 (x64 mode is on, as in scripts/basins.py, so every dtype is explicit).

For method in {euler_halving, power} and each n_init, three jitted loops advance the same random unit inits
by ``--steps`` steps; each is compiled and run once, then timed ``--repeats`` times (median):

- engine: the production kernel, one compiled block of ``ccdyn.one_layer.engine.make_block`` (tol = 0, so
  every init keeps running), tiled and sharded by ``ccdyn.parallel.tiled_sharded`` over a chunk of
  ``padded_chunk(n_init)`` inits.
- naive: vmap over inits of a dense per-init A(w) = ``one_layer.a_matrix`` (d x d) and the same
  step (power: w <- A w / ||A w||; euler_halving: w <- normalize(w + P_w^perp A w)), on the first
  min(n_init, --naive_cap) inits; compared per init-step.
- gemm: the two GEMMs one engine step does per tile, in the engine's init-major layout,
  Z = W_tile X^T (tile x n) and |Z| X (tile x d), fed back through a row normalization (so nothing
  can be elided), lax.map over the tiles of the same padded chunk: the roofline of the engine for
  this tiling (the engine adds the elementwise gate, centering and the convergence bookkeeping).

Rates are init-steps/s; "vs naive" = engine / naive, "of GEMM" = engine / gemm. GFLOP/s counts the
2 GEMMs of 2 n d tile flops each per tile and step. No timing is asserted.

End to end (``e2e``): ``--e2e_inits`` inits x ``--e2e_steps`` power steps (tol < 0, so every init takes
all of them) through ``engine.collect``: chunks, initial weights, the per-block freeze check,
re-packing and the gather of every chunk, compilation included; its rate is compared with the GEMM
rate of the same tile. Refinement (``refine``): ``basins.analyze`` (cluster, float64 refinement,
certificates) of a default run of ``--refine_inits`` inits, timed on the host CPU (where
``basins.run`` puts it) and on the default device.
"""

from __future__ import annotations

import statistics
import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import ccdyn  # noqa: E402
from ccdyn import compiling, io, one_layer, parallel  # noqa: E402
from ccdyn.one_layer import basins, engine  # noqa: E402
from ccdyn.data.registry import DataSpec, build_dataset  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_list("n_inits", ["1000", "10000", "100000"], "Numbers of inits to time.")
flags.DEFINE_integer("steps", 20, "Steps per timed call (one engine block).", lower_bound=1)
flags.DEFINE_integer("repeats", 5, "Timed calls per measurement (the median is reported).", lower_bound=1)
flags.DEFINE_integer("tile", None, "Inits per tile of the engine and of the GEMM reference (default: the sizing "
                     "rule for the largest run).", lower_bound=1)
flags.DEFINE_integer("e2e_inits", 10**6, "Inits of the end-to-end case (0: skip it).", lower_bound=0)
flags.DEFINE_integer("e2e_steps", 1000, "Power steps per init of the end-to-end case.", lower_bound=1)
flags.DEFINE_integer("e2e_chunk", None, "Chunk size of the end-to-end case (default: the sizing rule).", lower_bound=1)
flags.DEFINE_integer("refine_inits", 10000, "Inits of the run whose optima are refined (0: skip).", lower_bound=0)
flags.DEFINE_boolean("fixed_shapes", True, "Time the fixed-shape inits and kink watch against their former whole-chunk "
                     "programs (one chunk of the end-to-end case).")
flags.DEFINE_integer("naive_cap", 10000, "At most this many inits for the naive reference.", lower_bound=1)
flags.DEFINE_string("output_json", None, "Optional path of a JSON file with the numbers.")

DTYPE = jnp.float32


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def measure(fn, *args, repeats: int):
    """(compile seconds, median run seconds) of the jitted ``fn`` on ``args`` (:func:`ccdyn.compiling.timed`),
    whose floating outputs must be DTYPE."""
    compile_s, run_s, out = compiling.timed(fn, *args, repeats=repeats)
    leaves = [a for a in jax.tree.leaves(out) if jnp.issubdtype(a.dtype, jnp.floating)]
    if any(a.dtype != DTYPE for a in leaves):
        raise TypeError(f"expected {DTYPE.__name__} outputs, got {sorted({str(a.dtype) for a in leaves})}")
    return compile_s, run_s


def naive_loop(act, pw, method: str, steps: int):
    """Per-init dense A(w) (d x d) and one step, vmapped over the rows of W."""

    def one(ds, w):
        def body(_, w):
            u = one_layer.a_matrix(ds, act, w, pw) @ w
            if method == "euler_halving":
                u = w + (u - (w @ u) * w)
            return u / jnp.linalg.norm(u)

        return jax.lax.fori_loop(0, steps, body, w)

    return jax.jit(jax.vmap(one, in_axes=(None, 0)))


def gemm_loop(tile: int, steps: int):
    """Only the two GEMMs of an engine step per tile, Z = W X^T then |Z| X (plus a normalization)."""

    def run(x, W):
        def per_tile(w):
            def body(w, _):
                v = jnp.abs(w @ x.T) @ x  # (tile, d)
                return v / jnp.linalg.norm(v, axis=1, keepdims=True), None

            return jax.lax.scan(body, w, None, length=steps)[0]

        tiles = W.reshape(-1, tile, W.shape[1])
        return jax.lax.map(per_tile, tiles).reshape(W.shape)

    return jax.jit(run)


def main(argv):
    del argv
    ds = build_dataset(DataSpec(), DTYPE)
    act, pw = ccdyn.get_activation("relu"), ccdyn.get_pairwise("uniform")
    mesh = parallel.device_mesh()
    largest = max([int(s) for s in FLAGS.n_inits] + [FLAGS.e2e_inits])
    sized = basins.sized(basins.BasinsConfig(n_init=largest), (ds.n, 1, ds.dim), tile=FLAGS.tile,
                         chunk_size=FLAGS.e2e_chunk)
    n_dev, tile, steps, reps = mesh.devices.size, sized.tile, FLAGS.steps, FLAGS.repeats
    flops_per_init_step = 2 * (2 * ds.n * ds.dim)  # two GEMMs per tile and step, per init
    device = jax.devices()[0]
    log(f"backend={jax.default_backend()} device={device.device_kind} x{n_dev} data n={ds.n} d={ds.dim} "
        f"steps={steps} tile={tile} repeats={reps}")
    gemm = gemm_loop(tile, steps)
    rows, naive_cache = [], {}
    for method in ("euler_halving", "power"):  # the fixed-step flow; the adaptive one: bench_flow.py
        dyn = engine.Dynamics(method=method, tol=0.0, max_steps=10**9, block=steps)
        block = jax.jit(parallel.tiled_sharded(engine.make_block(act, pw, dyn), mesh, tile))
        naive = naive_loop(act, pw, method, steps)
        for n in (int(s) for s in FLAGS.n_inits):
            padded = parallel.padded_chunk(n, tile, n_dev)
            W = parallel.init_weights(jax.random.PRNGKey(0), 0, padded, ds.dim, DTYPE)
            st = engine.initial_state(W, dyn)

            compile_s, t_engine = measure(block, ds, st, repeats=reps)
            engine_rate = padded * steps / t_engine
            log(f"[{method} n={n}] engine: padded={padded} compile {compile_s:.2f} s, "
                f"run {t_engine * 1e3:.1f} ms, {engine_rate:.3g} init-steps/s")

            n_naive = min(n, FLAGS.naive_cap)  # init i is the same row whatever the chunk size
            if (method, n_naive) not in naive_cache:
                _, t_naive = measure(naive, ds, W[:n_naive], repeats=reps)
                naive_cache[method, n_naive] = n_naive * steps / t_naive
                log(f"[{method} n={n}] naive on {n_naive} inits: run {t_naive * 1e3:.1f} ms, "
                    f"{naive_cache[method, n_naive]:.3g} init-steps/s")
            naive_rate = naive_cache[method, n_naive]

            _, t_gemm = measure(gemm, ds.x, W, repeats=reps)
            gemm_rate = padded * steps / t_gemm
            log(f"[{method} n={n}] gemm: run {t_gemm * 1e3:.1f} ms, {gemm_rate:.3g} init-steps/s, "
                f"{gemm_rate * flops_per_init_step / 1e9:.1f} GFLOP/s")

            rows.append({
                "method": method, "n_init": n, "padded": padded, "naive_inits": n_naive,
                "engine_compile_s": compile_s, "engine_s": t_engine, "engine_rate": engine_rate,
                "naive_rate": naive_rate, "ratio_to_naive": engine_rate / naive_rate,
                "gemm_s": t_gemm, "gemm_rate": gemm_rate, "fraction_of_gemm": engine_rate / gemm_rate,
                "gemm_gflops": gemm_rate * flops_per_init_step / 1e9,
                "engine_gflops": engine_rate * flops_per_init_step / 1e9,
            })

    e2e = end_to_end(ds, act, pw, mesh, sized, gemm, reps) if FLAGS.e2e_inits else None
    refined = refine_timing(act, pw) if FLAGS.refine_inits else None
    shapes = fixed_shapes_cost(ds, act, pw, mesh, sized, reps) if FLAGS.fixed_shapes else None

    head = (f"{'method':<13} {'n_init':>7} {'engine/s':>10} {'naive/s':>10} {'vs naive':>8} "
            f"{'gemm/s':>10} {'of GEMM':>7} {'GEMM GF/s':>9} {'compile s':>9}")
    print(f"init-steps per second (median of {reps}), {steps} steps per call, tile {tile}, "
          f"{jax.default_backend()} {device.device_kind} x{n_dev}, float32")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['method']:<13} {r['n_init']:>7} {r['engine_rate']:>10.3g} {r['naive_rate']:>10.3g} "
              f"{r['ratio_to_naive']:>7.2f}x {r['gemm_rate']:>10.3g} {r['fraction_of_gemm']:>7.2f} "
              f"{r['gemm_gflops']:>9.1f} "
              f"{r['engine_compile_s']:>9.2f}")
    if e2e:
        print(f"\nend to end: {e2e['n_init']} inits x {e2e['steps']} power steps in {e2e['wall_s']:.1f} s "
              f"({e2e['init_steps_per_s']:.3g} init-steps/s, {e2e['fraction_of_gemm']:.2f} of the GEMM rate; "
              f"tile {e2e['tile']}, chunk {e2e['chunk_size']}); 10^6 x 1000 at this rate: "
              f"{e2e['extrapolated_1e6x1000_s']:.0f} s")
    if refined:
        print(f"analysis of {refined['n_init']} inits ({refined['n_optima']} optima refined in float64): host "
              f"{refined['host_s']:.2f} s, default device ({refined['default_device']}) {refined['device_s']:.2f} s")
    if shapes:
        print(f"fixed shapes, one chunk of {shapes['chunk']} inits: inits {shapes['init_new_s'] * 1e3:.1f} ms in blocks of "
              f"{shapes['init_block']} vs {shapes['init_old_s'] * 1e3:.1f} ms in one draw ({shapes['init_ratio']:.2f}x); "
              f"kink watch {shapes['circle_new_s'] * 1e3:.1f} ms by tiles vs {shapes['circle_old_s'] * 1e3:.1f} ms over "
              f"the chunk ({shapes['circle_ratio']:.2f}x)")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, {
            "config": {"steps": steps, "repeats": reps, "tile": tile, "naive_cap": FLAGS.naive_cap,
                       "backend": jax.default_backend(), "device_kind": device.device_kind,
                       "devices": [str(d) for d in jax.devices()], "n_devices": n_dev,
                       "sizing_rule": parallel.SIZING_RULE, "dtype": "float32",
                       "data_n": ds.n, "data_d": ds.dim, "act": "relu", "alpha": "uniform",
                       "command": " ".join(["python", "benchmarks/bench_basins.py"] + sys.argv[1:]),
                       "versions": {"jax": jax.__version__, "ccdyn": ccdyn.__version__}},
            "rows": rows, "end_to_end": e2e, "refine": refined, "fixed_shapes": shapes})
        log(f"wrote {FLAGS.output_json}")


def end_to_end(ds, act, pw, mesh, sized, gemm, reps) -> dict:
    """--e2e_inits x --e2e_steps power steps through engine.collect (every init runs all steps), timed
    with compilation; and the GEMM reference of one chunk's tiles for the same number of steps."""
    n, steps = FLAGS.e2e_inits, FLAGS.e2e_steps
    dyn = engine.Dynamics(method="power", tol=-1.0, max_steps=steps, block=50)  # tol < 0: none stops early
    t0 = time.perf_counter()
    runner = engine.ChunkRunner(ds, act, pw, dyn, tile=sized.tile, mesh=mesh)
    last = [t0]

    def progress(done, total, running, _):
        if not running and time.perf_counter() - last[0] > 10:
            last[0] = time.perf_counter()
            log(f"[e2e] {done}/{total} inits, {last[0] - t0:.0f} s")

    out = engine.collect(runner, jax.random.PRNGKey(0), n, sized.chunk_size, DTYPE, progress=progress)
    wall = time.perf_counter() - t0
    total_steps = float(out["steps"].sum())
    assert total_steps == n * steps, (total_steps, n * steps)  # every init ran every step
    padded = parallel.padded_chunk(min(n, sized.chunk_size), sized.tile, mesh.devices.size)
    W = parallel.init_weights(jax.random.PRNGKey(0), 0, padded, ds.dim, DTYPE)
    _, t_gemm = measure(gemm, ds.x, W, repeats=reps)
    gemm_rate = padded * FLAGS.steps / t_gemm
    rate = total_steps / wall
    return {"n_init": n, "steps": steps, "tile": sized.tile, "chunk_size": sized.chunk_size, "wall_s": wall,
            "init_steps_per_s": rate, "gemm_rate": gemm_rate, "fraction_of_gemm": rate / gemm_rate,
            "extrapolated_1e6x1000_s": 1e9 / rate}


def whole_chunk_inits(key, start, count, dim, dtype):
    """The inits as drawn before the fixed blocks: one program over the whole chunk (the old path)."""
    idx = jnp.asarray(start) + jnp.arange(count)
    w = jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(key, i), (dim,), jnp.float32))(idx).astype(dtype)
    return w / jnp.sqrt(jax.lax.fori_loop(0, dim, lambda j, s: s + w[:, j] ** 2, jnp.zeros(count, dtype)))[:, None]


def fixed_shapes_cost(ds, act, pw, mesh, sized, reps) -> dict:
    """The cost of the fixed shapes (docs/reproducibility.md) on one end-to-end chunk: the inits drawn in
    blocks of parallel.init_block() against one draw over the chunk, and the power kink watch
    (engine.mark_circling) tile by tile against one program over the chunk, each the median of ``reps``."""
    chunk, key = parallel.padded_chunk(sized.chunk_size, sized.tile, mesh.devices.size), jax.random.PRNGKey(0)

    def median(fn):
        fn()  # compiles
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            jax.block_until_ready(fn())
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    init_old = median(lambda: whole_chunk_inits(key, 0, chunk, ds.dim, DTYPE))
    init_new = median(lambda: parallel.init_weights(key, 0, chunk, ds.dim, DTYPE))
    dyn = engine.Dynamics(method="power")
    st = engine.initial_state(parallel.init_weights(key, 0, chunk, ds.dim, DTYPE), dyn)
    watch = lambda d, s: engine.mark_circling(d, act, pw, dyn, s)
    _, circle_old = measure(jax.jit(watch), ds, st, repeats=reps)
    _, circle_new = measure(jax.jit(parallel.tiled_sharded(watch, mesh, sized.tile)), ds, st, repeats=reps)
    return {"chunk": chunk, "init_block": parallel.init_block(), "init_old_s": init_old, "init_new_s": init_new,
            "init_ratio": init_new / init_old, "circle_old_s": circle_old, "circle_new_s": circle_new,
            "circle_ratio": circle_new / circle_old}


def refine_timing(act, pw) -> dict:
    """basins.analyze of a default run of --refine_inits inits, on the host CPU and on the default device."""
    cfg = basins.BasinsConfig(n_init=FLAGS.refine_inits)
    ds64 = build_dataset(cfg.data, jnp.float64)
    runner = engine.ChunkRunner(ds64.astype(jnp.float32), act, pw, cfg.dynamics, tile=parallel.CPU_TILE)
    result = engine.collect(runner, jax.random.PRNGKey(0), cfg.n_init, cfg.n_init, jnp.float32)
    times = {}
    for name, dev in (("host", parallel.host_device()), ("device", jax.devices()[0])):
        with jax.default_device(dev):
            d = jax.device_put(ds64, dev)
            analyze = lambda: basins.analyze(d, act, pw, cfg.dynamics, result, cluster_tol=cfg.cluster_tol)
            an = analyze()  # compiles
            t0 = time.perf_counter()
            an = analyze()
            times[name] = time.perf_counter() - t0
    return {"n_init": cfg.n_init, "n_optima": len(an["rows"]), "host_s": times["host"], "device_s": times["device"],
            "default_device": str(jax.devices()[0])}


if __name__ == "__main__":
    app.run(main)
