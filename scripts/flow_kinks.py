"""The flow on data whose ReLU maxima sit on kinks: random Gaussian point clouds, the flow with Filippov
sliding against the flow that stops where pinned, and power iteration (docs/flow.md, "Checks").

    python scripts/flow_kinks.py --set_seeds=1000:1008 --n_init=3000 --output_dir=results/basins/flow_kinks

Set s: n ~ U{12..30} standard Gaussian points in d = 3, 4, 5, 6 (cycling with s), written as a data file
(``set<s>.npz``, the ``--data=file`` format) and read back; ReLU, uniform alpha, float64. The same inits
run under each method. Per method: statuses; optima = greedy clusters of the converged endpoints at
--cluster_tol (``one_layer.basins.cluster``), with the number seen once and the inits held by the 5
largest; the largest final residual (sliding: ||P_V P^perp A(w) w||); and the smallest E(end) - E(start)
over the inits (relative to max E): the flow must never end lower than it started.
Writes flow_kinks.json and table.md to --output_dir.
"""

from __future__ import annotations

import time
from pathlib import Path

from absl import flags

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, cli, io, pairwise, parallel  # noqa: E402
from ccdyn.data import files, make_dataset  # noqa: E402
from ccdyn.one_layer import basins, dynamics, engine  # noqa: E402
from ccdyn.one_layer.studies import flow_accuracy  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_string("set_seeds", "1000:1008", "Seeds of the point clouds, start:stop.")
flags.DEFINE_integer("n_init", 3000, "Inits per set and method.", lower_bound=1)
flags.DEFINE_float("cluster_tol", 1e-2, "Endpoints closer than this are one optimum.")
cli.define_run_flags(None, resume=False, what="Where to write flow_kinks.json, table.md and the data files.")
flags.mark_flag_as_required("output_dir")
OUTPUTS = ("flow_kinks.json", "table.md", "set*.npz")

METHODS = {"flow (sliding)": engine.Dynamics(method="flow"),
           "flow (stops where pinned)": engine.Dynamics(method="flow", sliding=False),
           "power": engine.Dynamics(method="power")}
RELU, UNIFORM = activations.get_activation("relu"), pairwise.get_pairwise("uniform")


def point_cloud(seed: int, out: Path):
    path = out / f"set{seed}.npz"
    files.save_dataset(path, make_dataset(x=flow_accuracy.random_cloud(seed)[0], dtype=jnp.float64))
    return files.load_dataset(path, jnp.float64)


def one_method(ds, dyn, W, e0, cluster_tol: float) -> dict:
    t0 = time.perf_counter()
    runner = engine.ChunkRunner(ds, RELU, UNIFORM, dyn, tile=512)
    out = runner.run(jax.random.PRNGKey(0), 0, W.shape[0], jnp.float64)
    wall = time.perf_counter() - t0
    conv = out["status"] == engine.Status.CONVERGED
    counts = np.bincount(basins.cluster(out["w"][conv], cluster_tol)[0]) if conv.any() else np.zeros(0, int)
    e1 = np.asarray(dynamics.energy(ds, RELU, jnp.asarray(out["w"]), UNIFORM))
    scale = float(np.max(np.abs(e0)))
    return {"wall_s": wall, "status": engine.status_counts(out["status"]), "optima": int(counts.size),
            "seen_once": int(np.sum(counts == 1)), "top5_share": float(np.sum(np.sort(counts)[::-1][:5]) / W.shape[0]),
            "counts": counts.tolist(), "max_residual": float(np.max(out["residual"][conv], initial=0.0)),
            "mean_steps": float(np.mean(out["steps"])),
            "min_rel_energy_gain": float(np.min(e1 - e0) / scale), "energy_scale": scale}


def main(argv):
    del argv
    out = Path(FLAGS.output_dir)
    set_seeds = cli.or_fail(cli.seed_range, "set_seeds", FLAGS.set_seeds)
    cli.check_memory(8.0 * 8 * FLAGS.n_init * 30, "--n_init", "8 float64 arrays of n_init x up to 30 points")
    run = cli.open_run_dir(out, {k: FLAGS[k].value for k in ("set_seeds", "n_init", "cluster_tol")},
                           script="scripts/flow_kinks.py", outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    record = {"command": "python scripts/flow_kinks.py " + " ".join(
        f"--{k}={FLAGS[k].value}" for k in ("set_seeds", "n_init", "cluster_tol", "output_dir")), "sets": []}
    for seed in set_seeds:
        ds = point_cloud(seed, out)
        W = parallel.init_weights(jax.random.PRNGKey(0), 0, FLAGS.n_init, ds.dim, jnp.float64)  # the runner's inits
        e0 = np.asarray(dynamics.energy(ds, RELU, W, UNIFORM))
        row = {"seed": seed, "n": ds.n, "d": ds.dim, "methods": {}}
        for name, dyn in METHODS.items():
            r = row["methods"][name] = one_method(ds, dyn, W, e0, FLAGS.cluster_tol)
            cli.log(f"set {seed} (n={ds.n}, d={ds.dim}) {name}: {r['optima']} optima ({r['seen_once']} seen once), "
                    f"top 5 hold {r['top5_share']:.3f}, converged {r['status']['converged']}, "
                    f"circling {r['status']['circling_kink']}, not converged {r['status']['not_converged']}, "
                    f"min dE/E {r['min_rel_energy_gain']:.1e}, max residual {r['max_residual']:.1e}, "
                    f"{r['mean_steps']:.0f} steps, {r['wall_s']:.1f} s")
        record["sets"].append(row)
    lines = ["| set | n | d | method | converged | circling a kink | not converged | optima (seen once) | "
             "top 5 hold | max residual | min (E(end) - E(start)) / max E | steps per init |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in record["sets"]:
        for name, r in row["methods"].items():
            s = r["status"]
            lines.append(f"| {row['seed']} | {row['n']} | {row['d']} | {name} | {s['converged']} | "
                         f"{s['circling_kink']} | {s['not_converged']} | {r['optima']} ({r['seen_once']}) | "
                         f"{r['top5_share']:.3f} | {r['max_residual']:.1e} | {r['min_rel_energy_gain']:.1e} | "
                         f"{r['mean_steps']:.0f} |")
    io.atomic_write_bytes(out / "table.md", ("\n".join(lines) + "\n").encode())
    io.write_json(out / "flow_kinks.json", record)
    print("\n".join(lines))
    cli.finish(run)


if __name__ == "__main__":
    cli.start(main)
