"""The Gaussian alpha's field through Lemma 1's features against the dense kernel, per evaluation.

    python benchmarks/bench_gaussian.py --output_json=results/bench_gaussian.json     # ~2 min on 2 CPU cores

For each user set of ``--sets`` (ccdyn.data.user_sets; ReLU) and each temperature of ``--taus``: the field
u(W) = C_alpha[x~^w, h(w^T x)] (:func:`ccdyn.one_layer.dynamics.ascent`) on ``--n_init`` random unit inits in
float32, once with the dense (n, n) kernel (the reference, measured in the same run) and once through the
runner's K centred Taylor features (``Pairwise.feature_range`` set as :class:`ccdyn.one_layer.engine.ChunkRunner`
sets it; K from :func:`dynamics.taylor_order`, ``null`` where 4 K > n and the dense kernel serves): median of
``--repeats`` timed calls (compiled before), the ratio dense / features, compile seconds of each, and each
path's largest deviation from the dense field in float64, max_k ||u_k - u64_k|| / max_k ||u64_k||. No time
is asserted.
"""

from __future__ import annotations

import os

import jax
from absl import app, flags

jax.config.update("jax_enable_x64", True)  # the float64 reference; the timed fields are float32

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import compiling, io, pairwise, report  # noqa: E402
from ccdyn.activations import get_activation  # noqa: E402
from ccdyn.data import user_sets  # noqa: E402
from ccdyn.data.dataset import make_dataset  # noqa: E402
from ccdyn.one_layer import dynamics, gaussian_kernel  # noqa: E402

flags.DEFINE_list("sets", ["mixture8", "mixture5", "patches", "digit_patches", "cloud3", "digits"],
                  "User sets (ccdyn.data.user_sets) to time.")
flags.DEFINE_list("taus", ["0.25", "1", "4"], "Temperatures of the Gaussian alpha.")
flags.DEFINE_integer("n_init", 256, "Inits per evaluation.", lower_bound=1)
flags.DEFINE_integer("repeats", 7, "Timed evaluations per path (the median is reported).", lower_bound=1)
flags.DEFINE_string("output_json", None, "Write the records here.")
FLAGS = flags.FLAGS


def record(name: str, tau: float, n_init: int, repeats: int) -> dict:
    x = np.asarray(user_sets.build(name)["x"], np.float64)
    act = get_activation("relu")
    w = np.random.default_rng(0).standard_normal((n_init, x.shape[1]))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    dense = pairwise.get_pairwise("gaussian", tau)
    fast = gaussian_kernel.bounded(dense, [x], act)
    ds32, ds64 = make_dataset(x, dtype=jnp.float32), make_dataset(x, dtype=jnp.float64)
    ref = np.asarray(dynamics.ascent(ds64, act, jnp.asarray(w), dense))
    scale = np.max(np.linalg.norm(ref, axis=1))
    rec = {"set": name, "n": int(x.shape[0]), "d": int(x.shape[1]), "tau": tau, "n_init": n_init,
           "feature_range": fast.feature_range, "order": dynamics.taylor_order(fast, jnp.float32, x.shape[0])}
    W = jnp.asarray(w, jnp.float32)
    for label, pw in (("dense", dense), ("features", fast)):
        compile_s, wall, u = compiling.timed(jax.jit(lambda W, pw=pw: dynamics.ascent(ds32, act, W, pw)), W,
                                             repeats=repeats)
        rec[label] = {"compile_s": compile_s, "wall_s": wall, "init_evals_per_s": n_init / wall,
                      "max_deviation": float(np.max(np.linalg.norm(u - ref, axis=1)) / scale)}
    rec["speedup"] = rec["dense"]["wall_s"] / rec["features"]["wall_s"]
    return rec


def main(argv):
    del argv
    load = os.getloadavg()[0]
    rows = []
    for name in FLAGS.sets:
        for tau in (float(t) for t in FLAGS.taus):
            rows.append(record(name, tau, FLAGS.n_init, FLAGS.repeats))
            r = rows[-1]
            print(f"  {name} tau={tau:g}: K={r['order']}, dense {1e3 * r['dense']['wall_s']:.1f} ms, features "
                  f"{1e3 * r['features']['wall_s']:.1f} ms ({r['speedup']:.1f}x)", flush=True)
    table = [[r["set"], r["n"], r["tau"], r["order"] if r["order"] is not None else "-",
              f"{1e3 * r['dense']['wall_s']:.2f}", f"{1e3 * r['features']['wall_s']:.2f}", f"{r['speedup']:.1f}",
              f"{r['dense']['max_deviation']:.1e}", f"{r['features']['max_deviation']:.1e}"] for r in rows]
    print(report.keyed_table(
        ["set", "n", "tau", "K", "dense ms", "features ms", "speedup", "dense dev", "features dev"], table,
        f"per evaluation of the float32 field on {FLAGS.n_init} inits, medians of {FLAGS.repeats}; K: Taylor "
        "terms (-: 4K > n, the dense kernel serves and the two columns time the same path); speedup: dense / "
        "features; dev: max_k ||u_k - u64_k|| / max_k ||u64_k|| against the dense field in float64."))
    speedups = [r["speedup"] for r in rows if r["order"] is not None]
    summary = {"median_speedup_where_features_serve": float(np.median(speedups)) if speedups else None,
               "load_average_1min_at_start": load}
    print(f"median speedup where the features serve: {summary['median_speedup_where_features_serve']}")
    if FLAGS.output_json:
        io.write_json(FLAGS.output_json, {"records": rows, **summary, "devices": [str(d) for d in jax.devices()]})


if __name__ == "__main__":
    app.run(main)
