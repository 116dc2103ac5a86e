"""The fused ascent kernel (ccdyn.one_layer.fused_ascent) against the XLA path, on a GPU.

    python benchmarks/bench_fused.py --output_json=results/bench_fused_gpu.json    # on a GPU, ~3 min
    python benchmarks/bench_fused.py --accuracy_inits=512                          # CPU: accuracy only (interpreted)

Data: the basins default (2^10 points, d = 10) and three user sets (mixture8, digits, cloud16), uniform alpha,
float32 dynamics (x64 mode is on so that the float64 reference exists; every dtype is explicit).

1. ``accuracy``: u = A(w) w on ``--accuracy_inits`` random unit inits, per data set and activation of
   ``fused_ascent.SUPPORTED``, by the fused kernel (float32 dots, tf32x3 dots, float32 FMAs), the XLA path at
   its default precision (TF32 dots on an Ampere or later GPU) and at ``highest``, each against the XLA path in
   float64:
   the median and largest ||u - u64|| / ||u64|| over rows, and the largest ||u - u64|| / max ||u64||.
   On a backend other than a GPU the kernel runs in Pallas's interpreter (float32 dots only: a CPU has no
   TF32) and only this part runs.
2. ``kernel``: ``--steps`` power steps (w <- u / ||u||) on ``--n_init`` inits in one jitted scan, for each
   kernel configuration of ``--configs`` and for the XLA path (default precision and highest): median of
   ``--repeats`` timed calls, init-steps/s, GFLOP/s counting the uniform step's 4 d n FLOP per init-step and
   the fraction of ``--peak_tflops`` (the device's float32 rate; default 67, the H100 / H200 SXM datasheet).
3. ``engine``: one compiled engine block (``engine.make_block``, power, every init running) over a chunk of
   ``--n_init`` inits tiled by each of ``--tiles`` with the fused kernel (``CCDYN_KERNEL=fused`` while it is
   traced), and by ``--xla_tile`` with the XLA path (``CCDYN_KERNEL=xla``); each lowered program is checked
   for the Triton call (``triton_kernel`` in the record).
4. ``end_to_end``: ``--e2e_inits`` x ``--e2e_steps`` power steps through ``engine.collect`` (chunks, init draws,
   freeze checks, gathers; compilation included), fused (the sizing rule's tile) then XLA (``--xla_tile``),
   and how many inits end at the same point in both (angle below 1e-3 rad).
No time is asserted.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

import jax
from absl import app, flags

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import ccdyn  # noqa: E402
from ccdyn import compiling, io, parallel  # noqa: E402
from ccdyn.data import user_sets  # noqa: E402
from ccdyn.data.dataset import make_dataset  # noqa: E402
from ccdyn.data.registry import DataSpec, build_dataset  # noqa: E402
from ccdyn.one_layer import basins, dynamics, engine, fused_ascent  # noqa: E402

flags.DEFINE_integer("n_init", 262144, "Inits of the kernel and engine timings.", lower_bound=1)
flags.DEFINE_integer("steps", 100, "Power steps per timed call.", lower_bound=1)
flags.DEFINE_integer("repeats", 5, "Timed calls per measurement (the median is reported).", lower_bound=1)
flags.DEFINE_list("configs", ["128:128:4:float32", "64:128:4:float32", "256:64:8:float32", "128:64:4:float32",
                              "64:64:4:float32", "128:128:4:tf32x3", "64:128:4:tf32x3"],
                  "Kernel configurations block_inits:block_points:num_warps:precision; the first is the "
                  "engine's (fused_ascent.BLOCKS) unless --engine_config says otherwise.")
flags.DEFINE_string("engine_config", None, "block_inits:block_points:num_warps:precision of the engine and "
                    "end-to-end parts, or 'fastest': the fastest float32 configuration of the kernel part "
                    "(default: fused_ascent.BLOCKS).")
flags.DEFINE_list("tiles", ["32768", "131072", "262144"], "Tiles of the fused engine block.")
flags.DEFINE_integer("xla_tile", 8192, "Tile of the XLA path's engine block and end to end (its tuned value).")
flags.DEFINE_float("peak_tflops", 67.0, "The device's float32 peak, TFLOP/s (H100 / H200 SXM: 67).", lower_bound=0)
flags.DEFINE_integer("accuracy_inits", 4096, "Inits of the accuracy part.", lower_bound=1)
flags.DEFINE_integer("e2e_inits", 10**6, "Inits of the end-to-end case (0: skip it).", lower_bound=0)
flags.DEFINE_integer("e2e_steps", 1000, "Power steps per init of the end-to-end case.", lower_bound=1)
flags.DEFINE_string("output_json", None, "Optional path of a JSON file with the numbers.")
FLAGS = flags.FLAGS
F32 = jnp.float32


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def parse_config(text: str) -> fused_ascent.Blocks:
    bm, bn, warps, precision = text.split(":")
    return fused_ascent.Blocks(int(bm), int(bn), int(warps), precision)


@contextlib.contextmanager
def kernel(name: str):
    """``CCDYN_KERNEL=name`` while programs are traced (the engine's choice of the fused kernel or XLA)."""
    env = compiling.KERNEL_ENV
    old = os.environ.get(env)
    os.environ[env] = name
    try:
        yield
    finally:
        os.environ.pop(env) if old is None else os.environ.update({env: old})


def datasets() -> dict:
    sets = {"default": build_dataset(DataSpec(), F32)}
    for name in ("mixture8", "digits", "cloud16"):
        sets[name] = make_dataset(user_sets.build(name)["x"], dtype=F32)
    return sets


def accuracy(sets, interpret: bool) -> list:
    rows = []
    for name, ds in sets.items():
        ds64 = ds.astype(jnp.float64)
        W = parallel.init_weights(jax.random.PRNGKey(1), 0, FLAGS.accuracy_inits, ds.dim, F32)
        for act_name in fused_ascent.SUPPORTED:
            act = ccdyn.get_activation(act_name)
            ref = np.asarray(dynamics._ascent_xla(ds64, act, W.astype(jnp.float64), dynamics.UNIFORM))
            norm = np.linalg.norm(ref, axis=1)
            ways = _ways(ds, act, W, interpret)
            row = {"data": name, "act": act_name, "n": ds.n, "d": ds.dim}
            for way, u in ways.items():
                err = np.linalg.norm(np.asarray(u, np.float64) - ref, axis=1)
                rel = err / np.where(norm > 0, norm, 1.0)
                row[way] = {"median_rel": float(np.median(rel)), "max_rel": float(np.max(rel)),
                            "max_rel_to_max": float(np.max(err) / np.max(norm))}
            rows.append(row)
            log(f"[accuracy] {name} {act_name}: " + ", ".join(
                f"{w} {row[w]['median_rel']:.1e}/{row[w]['max_rel_to_max']:.1e}" for w in ways))
    return rows


def _ways(ds, act, W, interpret: bool) -> dict:
    """u by every way the accuracy part compares (the fused kernel's TF32 split needs a GPU); a kernel that
    does not build is left out and logged."""
    ways = {}
    for p in fused_ascent.ARITHMETIC:
        if interpret and p == "tf32x3":
            continue
        try:
            ways[f"fused_{p}"] = fused_ascent.ascent(ds.x, ds.p, W, act, fused_ascent.Blocks(precision=p),
                                                     interpret=interpret)
        except Exception as e:  # noqa: BLE001 -- logged; the other ways are still compared
            log(f"[accuracy] fused {p} failed: {type(e).__name__}: {str(e)[:300]}")
    ways["xla_default"] = dynamics._ascent_xla(ds, act, W, dynamics.UNIFORM)
    ways["xla_highest"] = _highest(ds, act, W)
    return ways


def _highest(ds, act, W):
    with jax.default_matmul_precision("highest"):
        return jax.jit(lambda W: dynamics._ascent_xla(ds, act, W, dynamics.UNIFORM))(W)


def power_loop(field, steps: int):
    def run(W):
        def body(w, _):
            u = field(w)
            return u / jnp.linalg.norm(u, axis=1, keepdims=True), None

        return jax.lax.scan(body, W, None, length=steps)[0]

    return jax.jit(run)


def rate_row(label, k, steps, run_s, compile_s, flop) -> dict:
    rate = k * steps / run_s
    tflops = rate * flop / 1e12
    log(f"[{label}] {run_s * 1e3:.1f} ms, {rate:.3g} init-steps/s, {tflops:.1f} TFLOP/s, "
        f"{tflops / FLAGS.peak_tflops:.2f} of peak (compile {compile_s:.1f} s)")
    return {"label": label, "inits": k, "steps": steps, "run_s": run_s, "compile_s": compile_s,
            "init_steps_per_s": rate, "tflops": tflops, "fraction_of_peak": tflops / FLAGS.peak_tflops}


def kernel_rows(ds, act, flop) -> list:
    k, steps, reps = FLAGS.n_init, FLAGS.steps, FLAGS.repeats
    W = parallel.init_weights(jax.random.PRNGKey(0), 0, k, ds.dim, F32)
    rows = []
    for text in FLAGS.configs:
        blocks = parse_config(text)
        loop = power_loop(lambda w, b=blocks: fused_ascent.ascent(ds.x, ds.p, w, act, b), steps)
        try:
            c, t, _ = compiling.timed(loop, W, repeats=reps)
            rows.append(rate_row(f"fused {text}", k, steps, t, c, flop))
        except Exception as e:  # a configuration Triton cannot compile is reported, not fatal
            log(f"[fused {text}] failed: {type(e).__name__}: {str(e)[:300]}")
            rows.append({"label": f"fused {text}", "error": f"{type(e).__name__}: {str(e)[:300]}"})
    for label, ctx in (("xla default", contextlib.nullcontext()),
                       ("xla highest", jax.default_matmul_precision("highest"))):
        with ctx:
            xla = lambda w: dynamics._ascent_xla(ds, act, w, dynamics.UNIFORM)
            c, t, _ = compiling.timed(power_loop(xla, steps), W, repeats=reps)
        rows.append(rate_row(label, k, steps, t, c, flop))
    return rows


def engine_rows(ds, act, pw, mesh, flop) -> list:
    dyn = engine.Dynamics(method="power", tol=0.0, max_steps=10**9, block=FLAGS.steps)
    rows = []
    for tile, xla in [(int(t), False) for t in FLAGS.tiles] + [(FLAGS.xla_tile, True)]:
        padded = parallel.padded_chunk(FLAGS.n_init, tile, mesh.devices.size)
        st = engine.initial_state(parallel.init_weights(jax.random.PRNGKey(0), 0, padded, ds.dim, F32), dyn, act)
        with kernel("xla" if xla else "fused"):
            block = jax.jit(parallel.tiled_sharded(engine.make_block(act, pw, dyn), mesh, tile))
            triton = "xla.gpu.triton" in block.lower(ds, st).as_text()
            c, t, _ = compiling.timed(block, ds, st, repeats=FLAGS.repeats)
        row = rate_row(f"engine {'xla' if xla else 'fused'} tile {tile}", padded, FLAGS.steps, t, c, flop)
        rows.append(dict(row, tile=tile, path="xla" if xla else "fused", triton_kernel=triton))
    return rows


def end_to_end(ds, act, pw, mesh, flop) -> dict:
    n, steps = FLAGS.e2e_inits, FLAGS.e2e_steps
    dyn = engine.Dynamics(method="power", tol=-1.0, max_steps=steps, block=50)  # tol < 0: every init runs all steps
    out, finals = {}, {}
    with kernel("fused"):  # the sizing rule's tile for the fused kernel
        fused_tile = basins.sized(basins.BasinsConfig(n_init=n), (ds.n, 1, ds.dim), tile=None, chunk_size=None)
    for path, tile, chunk in (("fused", fused_tile.tile, fused_tile.chunk_size),
                              ("xla", FLAGS.xla_tile, parallel.default_chunk(FLAGS.xla_tile))):
        with kernel(path):
            t0 = time.perf_counter()
            runner = engine.ChunkRunner(ds, act, pw, dyn, tile=tile, mesh=mesh)
            res = engine.collect(runner, jax.random.PRNGKey(0), n, chunk, F32)
            wall = time.perf_counter() - t0
        assert float(res["steps"].sum()) == n * steps
        finals[path] = np.asarray(res["w"], np.float64)
        rate = n * steps / wall
        out[path] = {"tile": tile, "chunk_size": chunk, "wall_s": wall, "init_steps_per_s": rate,
                     "fraction_of_peak": rate * flop / 1e12 / FLAGS.peak_tflops}
        log(f"[e2e {path}] {n} x {steps} in {wall:.2f} s (tile {tile}, chunk {chunk}), {rate:.3g} init-steps/s")
    cos = np.clip(np.sum(finals["fused"] * finals["xla"], axis=1), -1, 1)
    out["same_final_point"] = float(np.mean(np.arccos(cos) < 1e-3))
    out["speedup"] = out["xla"]["wall_s"] / out["fused"]["wall_s"]
    log(f"[e2e] fused {out['speedup']:.2f}x the XLA path; same final point for {out['same_final_point']:.4f}")
    return out


def guarded(part, fn, *args):
    """``fn(*args)``, or the error it raised as {"error": ...} (a kernel Triton cannot build ends one part)."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 -- reported in the record and the log, the other parts still run
        log(f"[{part}] failed: {type(e).__name__}: {str(e)[:500]}")
        return {"error": f"{type(e).__name__}: {str(e)[:500]}"}


def main(argv):
    del argv
    gpu = jax.default_backend() == "gpu"
    sets = datasets()
    ds, act, pw = sets["default"], ccdyn.get_activation("relu"), ccdyn.get_pairwise("uniform")
    mesh = parallel.device_mesh()
    flop = 4 * ds.dim * ds.n
    device = jax.devices()[0]
    log(f"backend={jax.default_backend()} device={device.device_kind} engine kernel {fused_ascent.BLOCKS}")
    record = {"config": {
        "backend": jax.default_backend(), "device_kind": device.device_kind, "n_devices": mesh.devices.size,
        "flop_per_init_step": flop, "peak_tflops": FLAGS.peak_tflops, "sizing_rule": parallel.SIZING_RULE,
        "versions": {"jax": jax.__version__, "ccdyn": ccdyn.__version__},
        "command": " ".join(["python", "benchmarks/bench_fused.py"] + sys.argv[1:])}}

    def save():  # after every part: a later part that fails or runs out of time keeps the earlier ones
        record["config"]["engine_blocks"] = repr(fused_ascent.BLOCKS)
        if FLAGS.output_json:
            io.write_json(FLAGS.output_json, record)

    record["accuracy"] = guarded("accuracy", accuracy, sets, not gpu)
    save()
    if not gpu:
        log("not a GPU: only the accuracy part ran (the kernel in Pallas's interpreter)")
        return
    record["kernel"] = kernel_rows(ds, act, flop)
    if FLAGS.engine_config == "fastest":
        ok = [r for r in record["kernel"] if r["label"].startswith("fused") and "error" not in r
              and r["label"].endswith("float32")]
        if ok:
            fused_ascent.BLOCKS = parse_config(max(ok, key=lambda r: r["init_steps_per_s"])["label"].split()[1])
    elif FLAGS.engine_config:
        fused_ascent.BLOCKS = parse_config(FLAGS.engine_config)
    log(f"engine kernel {fused_ascent.BLOCKS}")
    save()
    record["engine"] = guarded("engine", engine_rows, ds, act, pw, mesh, flop)
    save()
    if FLAGS.e2e_inits:
        record["end_to_end"] = guarded("end_to_end", end_to_end, ds, act, pw, mesh, flop)
        save()
    if FLAGS.output_json:
        log(f"wrote {FLAGS.output_json}")


if __name__ == "__main__":
    app.run(main)
