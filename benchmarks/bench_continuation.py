"""Continuation with the values as a batch axis of one compiled program against value by value, in one run.

    python benchmarks/bench_continuation.py --output_json=results/bench_continuation.json   # ~6 min on 2 CPU cores

The continuation of ``scripts/continuation.py`` over ``--values`` of ``ortho_eps`` (the pattern overlap
||U^T U - I||_2 of Fig. 1) on the basins default data (latent summation, 2^10 support points, d = 10),
relu, uniform alpha, float32, ``--n_init`` inits per value, ``--method``: first batched
(:class:`ccdyn.one_layer.runner.ChunkRunner` with a values axis, every value in one program, the inits shared), then
value by value (one :class:`ccdyn.one_layer.engine.ChunkRunner` per value, as before), then (``--repeat``)
both again in the same process, their programs compiled. Wall times are as a user sees them (compilation
included in the first pass); the analysis (float64 refinement and certificates, the same code on the same
endpoints in both) is timed apart. The tracks, optima, basin counts and tipping matrices of the two must
be identical: the script says so, and fails if not. No timing is asserted.
"""

from __future__ import annotations

import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from ccdyn import io  # noqa: E402
from ccdyn.one_layer import basins, engine  # noqa: E402
from ccdyn.one_layer.studies import continuation  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("n_init", 10000, "Inits per value.", lower_bound=1)
flags.DEFINE_list("values", ["0", "0.05", "0.1", "0.15", "0.2", "0.25", "0.3", "0.35"], "ortho_eps values.")
flags.DEFINE_enum("method", "power", list(engine.METHODS), "The dynamics.")
flags.DEFINE_integer("tile", None, "Inits per tile (default: the sizing rule's).", lower_bound=1)
flags.DEFINE_bool("repeat", True, "Time both paths a second time, compiled (the engine's pure run time).")
flags.DEFINE_string("output_json", None, "Optional path of a JSON file with the numbers.")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def same(a: dict, b: dict) -> bool:
    """Identical tracks, optima (bitwise), counts, status counts and overlap matrices."""
    if a["tracks"] != b["tracks"] or len(a["runs"]) != len(b["runs"]):
        return False
    for ra, rb in zip(a["runs"], b["runs"]):
        if ra["status_counts"] != rb["status_counts"] or [r["count"] for r in ra["optima"]] != [
                r["count"] for r in rb["optima"]] or [r["w"] for r in ra["optima"]] != [r["w"] for r in rb["optima"]]:
            return False
    return all(np.array_equal(sa["overlap"], sb["overlap"]) for sa, sb in zip(a["steps"], b["steps"]))


def timed(base, values, batch: bool) -> tuple:
    t0 = time.time()
    rec = continuation.run(base, "ortho_eps", values, batch=batch)
    return rec, {"total_s": time.time() - t0, "engine_s": rec["timings_s"]["engine"],
                 "analyze_s": rec["timings_s"]["analyze"]}


def main(argv):
    del argv
    values = [float(v) for v in FLAGS.values]
    cfg = basins.BasinsConfig(n_init=FLAGS.n_init, dynamics=engine.Dynamics(method=FLAGS.method))
    cfg = basins.sized(cfg, (1024, 1, 10), tile=FLAGS.tile, chunk_size=None)
    dev = jax.devices()[0]
    out = {"backend": jax.default_backend(), "device_kind": dev.device_kind, "n_devices": jax.device_count(),
           "param": "ortho_eps", "values": values, "n_init": cfg.n_init, "method": FLAGS.method, "tile": cfg.tile,
           "chunk_size": cfg.chunk_size, "passes": []}
    for p in range(2 if FLAGS.repeat else 1):
        batched, tb = timed(cfg, values, True)
        log(f"pass {p + 1}: batched {tb['total_s']:.1f} s (engine {tb['engine_s']:.1f} s)")
        seq, ts = timed(cfg, values, False)
        log(f"pass {p + 1}: value by value {ts['total_s']:.1f} s (engine {ts['engine_s']:.1f} s)")
        identical = same(batched, seq)
        out["passes"].append({"compiled_before": p > 0, "batched": tb, "value_by_value": ts,
                              "engine_ratio": ts["engine_s"] / tb["engine_s"], "total_ratio": ts["total_s"] / tb["total_s"],
                              "identical_tracks": identical})
        if not identical:
            log("error: the batched and the value-by-value runs differ")
            sys.exit(1)
    out["optima_per_value"] = [r["n_optima"] for r in batched["runs"]]
    out["converged_per_value"] = [r["status_counts"]["converged"] for r in batched["runs"]]
    out["tracks"] = len(batched["tracks"])
    for p in out["passes"]:
        print(f"{'compiled' if p['compiled_before'] else 'first pass'}: {len(values)} values x {cfg.n_init} inits, "
              f"engine batched {p['batched']['engine_s']:.1f} s, value by value {p['value_by_value']['engine_s']:.1f} s "
              f"(ratio {p['engine_ratio']:.2f}); with the analysis {p['batched']['total_s']:.1f} s vs "
              f"{p['value_by_value']['total_s']:.1f} s (ratio {p['total_ratio']:.2f}); identical tracks: "
              f"{p['identical_tracks']}")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, out)
        print(f"wrote {FLAGS.output_json}")


if __name__ == "__main__":
    app.run(main)
