"""Certificates on ReLU kinks, checked on random Gaussian point clouds (issue #22, docs: README "basins").

    python scripts/kink_check.py --set_seeds=1000:1008 --n_init=3000 --output_dir=results/basins/kink_check

Set s (seed S) is S's numpy Generator drawing n in [--min_points, --max_points] points x ~ N(0, I_d), d = 3 + s mod 4
(so d = 3..6), written as a data file (``--data=file``) and run through the basins pipeline
(``ccdyn.one_layer.basins.run``: the flow, float64 dynamics, uniform alpha, ReLU unless the basins flags say
otherwise). Every optimum is then probed independently: the energy is recomputed here in plain numpy
(E = 1/2 Var_p relu(x w)) at 1e-6 .. 1e-2 rad from it along --probe_dirs random tangent directions. Writes
sets.csv, kink_check.json (with the run record) and prints the table. Verdict: every optimum labelled
stable has a negative largest rise.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from absl import flags

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from ccdyn import cli, io, report  # noqa: E402
from ccdyn.data import files, make_dataset  # noqa: E402
from ccdyn.data.registry import DataSpec  # noqa: E402
from ccdyn.one_layer import basins, script_flags  # noqa: E402
from ccdyn.one_layer.studies import flow_accuracy  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("sets.csv", "kink_check.json", "sets", "sets/set*.npz")
script_flags.define_basins_flags(n_init=3000)
flags.DEFINE_string("set_seeds", "1000:1008", "Set seeds as START:STOP (STOP excluded).")
flags.DEFINE_integer("min_points", 12, "Fewest points of a set.", lower_bound=2)
flags.DEFINE_integer("max_points", 30, "Most points of a set.", lower_bound=2)
flags.DEFINE_integer("probe_dirs", 2000, "Random tangent directions of the numpy probe.", lower_bound=1)
cli.define_run_flags(None, resume=False, what="Where the sets, the table and the JSON go.")
flags.mark_flag_as_required("output_dir")
flags.register_multi_flags_validator(["min_points", "max_points"], lambda f: f["min_points"] <= f["max_points"],
                                     "--min_points must be <= --max_points")
RADII = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
COLUMNS = ("set_seed", "n", "d", "converged", "endpoint_clusters", "optima", "stable", "smooth", "kink_kkt",
           "stable_mass", "max_kink_rank", "worst_stable_rise", "unstable_that_probe_as_max", "analyze_s", "run_s")


def probe_rise(x, p, w, rng, n_dirs):
    """Largest E(probe) - E(w) (plain numpy, uniform alpha, ReLU) over probes at RADII along random tangents."""
    def energy(W):
        f = np.maximum(W @ x.T, 0.0)
        return 0.5 * np.sum(p * (f - (f @ p)[:, None]) ** 2, axis=1)

    dirs = rng.standard_normal((n_dirs, w.size))
    dirs -= np.outer(dirs @ w, w)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    e0 = energy(w[None])[0]
    return float(max(np.max(energy(np.cos(r) * w + np.sin(r) * dirs)) - e0 for r in RADII))


def main(argv):
    del argv
    t0 = time.time()
    base = script_flags.basins_config(FLAGS)
    if not FLAGS["method"].present:
        base = dataclasses.replace(base, dynamics=dataclasses.replace(base.dynamics, method="flow"))
    if base.act != "relu" or base.alpha != "uniform":
        cli.fail("--act must be relu and --alpha uniform: the numpy probe computes that energy")
    seeds = cli.or_fail(cli.seed_range, "set_seeds", FLAGS.set_seeds)
    run = cli.open_run_dir(FLAGS.output_dir, {"base": dataclasses.asdict(base), "set_seeds": FLAGS.set_seeds,
                                               "min_points": FLAGS.min_points, "max_points": FLAGS.max_points,
                                               "probe_dirs": FLAGS.probe_dirs},
                           script="scripts/kink_check.py", outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    (out / "sets").mkdir(exist_ok=True)
    rows, sets = [], []
    for s in seeds:
        x, rng = flow_accuracy.random_cloud(s, FLAGS.min_points, FLAGS.max_points)
        n, d = x.shape
        path = Path(out) / "sets" / f"set{s}.npz"
        files.save_dataset(path, make_dataset(x))
        cfg = dataclasses.replace(base, data=DataSpec(data="file", data_path=str(path)), x64=True, seed=s)
        cli.log(f"set {s}: n={n} d={d}, {cfg.n_init} inits")
        done = basins.run(cfg, log=cli.log)
        an, p = done["analysis"], np.full(n, 1.0 / n)
        opt = []
        for r in an["rows"]:
            rise = probe_rise(x, p, np.asarray(r["w"]), rng, FLAGS.probe_dirs)
            opt.append({k: r[k] for k in ("optimum", "count", "energy", "residual", "kink_rank", "certificate",
                                          "certificate_note", "stable", "multipliers")} | {"probe_rise": rise})
        stable = [o for o in opt if o["stable"]]
        conv = an["status_counts"]["converged"]
        rows.append([s, n, d, conv, an["n_clusters"], len(opt), len(stable),
                     sum(o["certificate"] == "smooth" for o in opt), sum(o["certificate"] == "kink-kkt" for o in opt),
                     round(sum(o["count"] for o in stable) / cfg.n_init, 4), max(o["kink_rank"] for o in opt),
                     f"{max(o['probe_rise'] for o in stable):.1e}" if stable else "-",
                     sum(not o["stable"] and o["probe_rise"] < 0 for o in opt),
                     round(done["timings_s"]["analyze"], 1), round(done["timings_s"]["run"], 1)])
        sets.append({"set_seed": s, "n": n, "d": d, "status_counts": an["status_counts"], "optima": opt,
                     "timings_s": done["timings_s"], "n_endpoint_clusters": an["n_clusters"]})
    io.write_csv(out / "sets.csv", COLUMNS, rows)
    worst = max((o["probe_rise"] for st in sets for o in st["optima"] if o["stable"]), default=None)
    verdict = "holds" if worst is not None and worst < 0 else "fails"
    io.write_json(out / "kink_check.json", {"command": cli.run_record("scripts/kink_check.py")["command"],
                                            "record": cli.run_record("scripts/kink_check.py"), "radii": RADII,
                                            "worst_stable_probe_rise": worst, "verdict": verdict, "sets": sets})
    path = cli.finish(run)
    print(report.format_table(COLUMNS, rows))
    print(f"\nevery optimum labelled stable survives the numpy probe: {verdict} (largest rise {worst}); "
          f"wrote {path} ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
