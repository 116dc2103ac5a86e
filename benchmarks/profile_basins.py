"""Where one basins chunk spends its time: a ``jax.profiler`` trace of one end-to-end chunk of power
iteration (the bench_basins.py e2e case: every init runs every step), summarised by kernel.

    python benchmarks/profile_basins.py                       # one chunk of the sizing rule, 200 steps
    python benchmarks/profile_basins.py --tile=4096 --steps=100 --output_json=profile.json

The trace is JAX's own (``jax.profiler.trace(..., create_perfetto_trace=True)``, a Chrome-trace JSON);
its device events (GPU kernels, or XLA's CPU ops on the CPU backend) are summed by name and grouped
into kinds: ``gemm`` (cuBLAS / cutlass / XLA GEMM kernels and dots), ``fusion`` (XLA's fused elementwise
and reduction kernels), ``copy`` (memcpy / memset / transposes), ``other``. Printed: wall time of the
chunk (untraced, after compiling; and traced), the device's busy time (the sum of its events; kernels on one stream do not overlap), the busy
fraction (the rest is the host: dispatch, the freeze check between blocks), time per kind, and the top
kernels with their share. No timing is asserted.
"""

from __future__ import annotations

import collections
import glob
import gzip
import json
import tempfile
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import ccdyn  # noqa: E402
from ccdyn import io, parallel  # noqa: E402
from ccdyn.data.registry import DataSpec, build_dataset  # noqa: E402
from ccdyn.one_layer import basins, engine  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("n_init", None, "Inits of the chunk (default: one chunk of the sizing rule).", lower_bound=1)
flags.DEFINE_integer("steps", 200, "Power steps per init (every init runs all of them).", lower_bound=1)
flags.DEFINE_integer("block", 50, "Steps per compiled block (the freeze check runs between blocks).", lower_bound=1)
flags.DEFINE_integer("tile", None, "Inits per tile (default: the sizing rule).", lower_bound=1)
flags.DEFINE_integer("top", 12, "Kernels listed.", lower_bound=1)
flags.DEFINE_string("output_json", None, "Optional JSON file with the summary.")

KINDS = (("gemm", ("gemm", "xmma", "cutlass", "cublas", "sm90_", "sm80_", "dot", "matmul")),
         ("copy", ("memcpy", "memset", "copy", "transpose")),
         ("fusion", ("fusion", "reduce", "loop_", "input_", "convert", "select", "add", "multiply")))


def kind_of(name: str) -> str:
    low = name.lower()
    return next((kind for kind, keys in KINDS if any(k in low for k in keys)), "other")


def device_events(trace: dict) -> list[tuple[str, float]]:
    """(name, duration in s) of the trace's complete events on device processes (a process whose name
    holds ``/device:`` or ``GPU``/``TPU``); on a host-only trace, of XLA's op events on the host."""
    names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "process_name" and "args" in e}
    dev = {p for p, n in names.items() if "/device:" in n or "GPU" in n or "TPU" in n}
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X" and "dur" in e]
    picked = [e for e in events if e["pid"] in dev] if dev else [
        e for e in events if "fusion" in e["name"] or "dot" in e["name"] or "custom-call" in e["name"]]
    return [(e["name"], e["dur"] * 1e-6) for e in picked]


def main(argv):
    del argv
    ds = build_dataset(DataSpec(), jnp.float32)
    act, pw = ccdyn.get_activation("relu"), ccdyn.get_pairwise("uniform")
    mesh = parallel.device_mesh()
    sized = basins.sized(basins.BasinsConfig(n_init=10**6), (ds.n, 1, ds.dim), tile=FLAGS.tile, chunk_size=None)
    n = FLAGS.n_init or sized.chunk_size
    dyn = engine.Dynamics(method="power", tol=-1.0, max_steps=FLAGS.steps, block=FLAGS.block)
    runner = engine.ChunkRunner(ds, act, pw, dyn, tile=sized.tile, mesh=mesh)
    key = jax.random.PRNGKey(0)
    runner.run(key, 0, n, jnp.float32)  # compiles everything the traced run uses
    t0 = time.perf_counter()
    runner.run(key, 0, n, jnp.float32)
    wall = time.perf_counter() - t0  # untraced: the trace itself slows the host's dispatch
    t_init = time.perf_counter()
    jax.block_until_ready(parallel.init_weights(key, 0, runner.padded(n), ds.dim, jnp.float32))
    t_init = time.perf_counter() - t_init
    with tempfile.TemporaryDirectory() as logdir:
        t0 = time.perf_counter()
        with jax.profiler.trace(logdir, create_perfetto_trace=True):
            runner.run(key, 0, n, jnp.float32)
        traced = time.perf_counter() - t0
        path = glob.glob(f"{logdir}/**/perfetto_trace.json.gz", recursive=True)[0]
        with gzip.open(path, "rt") as f:
            events = device_events(json.load(f))
    by_name, by_kind = collections.Counter(), collections.Counter()
    for name, dur in events:
        by_name[name] += dur
        by_kind[kind_of(name)] += dur
    busy = sum(by_kind.values())
    print(f"one chunk: {n} inits x {FLAGS.steps} power steps, tile {sized.tile}, blocks of {FLAGS.block}, "
          f"{jax.default_backend()} {jax.devices()[0].device_kind} x{mesh.devices.size}")
    print(f"wall {wall:.3f} s untraced ({n * FLAGS.steps / wall:.3g} init-steps/s), {traced:.3f} s traced; inits drawn "
          f"in {t_init:.3f} s; device busy {busy:.3f} s ({busy / wall:.0%} of the untraced wall; the rest: host "
          f"dispatch, the init draw and the freeze check between blocks)")
    print("kind     seconds  share")
    for kind, t in by_kind.most_common():
        print(f"{kind:<8} {t:7.3f}  {t / max(busy, 1e-12):5.1%}")
    print(f"top {FLAGS.top} kernels (seconds, share of busy, calls):")
    calls = collections.Counter(name for name, _ in events)
    for name, t in by_name.most_common(FLAGS.top):
        print(f"  {t:7.3f}  {t / max(busy, 1e-12):5.1%}  {calls[name]:6d}  {name[:90]}")
    print("key: kind = gemm (matrix products), fusion (XLA's fused elementwise/reduction kernels), copy "
          "(memcpy/memset/transposes), other; share = of the device's busy time")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, {
            "n_init": n, "steps": FLAGS.steps, "block": FLAGS.block, "tile": sized.tile, "wall_s": wall, "traced_wall_s": traced,
            "init_draw_s": t_init, "busy_s": busy, "backend": jax.default_backend(),
            "device_kind": jax.devices()[0].device_kind, "by_kind": dict(by_kind),
            "top": [{"name": k, "s": t, "calls": calls[k]} for k, t in by_name.most_common(FLAGS.top)],
            "versions": {"jax": jax.__version__, "ccdyn": ccdyn.__version__}})


if __name__ == "__main__":
    app.run(main)
