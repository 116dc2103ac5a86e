"""The flow on ReLU kinks and its certificates, on random Gaussian point clouds (issue #22, docs/flow.md).

    python scripts/kink_check.py --set_seeds=1000:1008 --n_init=3000 --output_dir=results/basins/kink_check

Set S: S's numpy Generator draws n in [--min_points, --max_points] points x ~ N(0, I_d), d = 3 + S mod 4, saved as a
data file (``--data=file``) and run through the basins pipeline (the flow, float64, ReLU, uniform or Gaussian alpha).
Every optimum is probed in numpy (``ccdyn.one_layer.kink_probe``: E = 1/2 Var_p relu(x w), or the potential of the
Gaussian-alpha flow) at 1e-6 .. 1e-2 rad and r_geo / 2 along --probe_dirs random tangents; r_geo: a radius within
which the kinks' geometry proves it a strict maximum. --compare_methods also runs the inits under the flow that stops
where pinned and power iteration (methods.md). Writes sets.csv, methods.md and kink_check.json (per optimum: point,
certificate, r_geo, largest rise per radius). Verdict: no optimum labelled stable is "not a max" (kink_probe.judge: a
rise at a radius <= r_geo, or any rise where r_geo = 0; a rise only beyond r_geo is a maximum narrower than that
radius).
"""

from __future__ import annotations

import dataclasses
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import cli, io, parallel, report  # noqa: E402
from ccdyn.data import files, make_dataset  # noqa: E402
from ccdyn.data.registry import DataSpec  # noqa: E402
from ccdyn.one_layer import basins, engine, kink_probe, script_flags  # noqa: E402
from ccdyn.one_layer.studies import flow_accuracy  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("sets.csv", "methods.md", "kink_check.json", "sets", "sets/set*.npz")
script_flags.define_basins_flags(n_init=3000)
flags.DEFINE_string("set_seeds", "1000:1008", "Set seeds as START:STOP (STOP excluded).")
flags.DEFINE_integer("min_points", 12, "Fewest points of a set.", lower_bound=2)
flags.DEFINE_integer("max_points", 30, "Most points of a set.", lower_bound=2)
flags.DEFINE_integer("probe_dirs", 2000, "Random tangent directions of the numpy probe.", lower_bound=1)
flags.DEFINE_bool("compare_methods", True, "Also run the inits under the pinned flow and power iteration.")
cli.define_run_flags(None, resume=False, what="Where the sets, the tables and the JSON go.")
flags.mark_flag_as_required("output_dir")
flags.register_multi_flags_validator(["min_points", "max_points"], lambda f: f["min_points"] <= f["max_points"],
                                     "--min_points must be <= --max_points")
RADII, STATUSES = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2), ("converged", "circling_kink", "kink_limit", "not_converged")
COLUMNS, METHOD_COLUMNS = kink_probe.SET_COLUMNS, kink_probe.METHOD_COLUMNS


def method_row(res, pot, e0, cluster_tol, wall):
    conv = res["status"] == engine.Status.CONVERGED  # statuses, raw endpoint clusters, E(end) - E(start)
    counts = np.bincount(basins.cluster(np.asarray(res["w"][conv], np.float64), cluster_tol)[0], minlength=0)
    gain = pot(np.asarray(res["w"], np.float64)) - e0
    return {"status": engine.status_counts(res["status"]), "optima": int(counts.size),
            "seen_once": int(np.sum(counts == 1)), "top5_share": float(np.sum(np.sort(counts)[::-1][:5]) / e0.size),
            "counts": counts.tolist(), "max_residual": float(np.max(res["residual"][conv], initial=0.0)),
            "mean_steps": float(np.mean(res["steps"])), "run_s": wall,
            "min_rel_energy_gain": float(np.min(gain) / np.max(np.abs(e0)))}


def main(_argv):
    t0 = time.time()
    base = script_flags.basins_config(FLAGS)
    if not FLAGS["method"].present:
        base = dataclasses.replace(base, dynamics=dataclasses.replace(base.dynamics, method="flow"))
    if base.act != "relu":
        cli.fail("--act must be relu: the numpy probe computes that energy")
    if given := [f"--{n}" for n in script_flags.DATA_FLAG_NAMES if FLAGS[n].present]:
        cli.fail(f"{', '.join(given)}: kink_check draws its own clouds (--set_seeds, --min_points, --max_points)")
    seeds = cli.or_fail(cli.seed_range, "set_seeds", FLAGS.set_seeds)
    cli.check_counts(FLAGS, (), extra={"--set_seeds": (len(seeds), 8)}, seconds=lambda **f: 0.05 * f["--set_seeds"],
                     formula="a basins run, its kink analysis and a probe per set, >= 0.05 s each")
    sq = base.alpha == "gaussian"  # the probe's (pairwise) features; the basins run's tiles
    cli.check_memory_of(lambda **f: 8 * f["--max_points"] * (f["--probe_dirs"] * (3 + sq * f["--max_points"])
                        + 32 * base.tile), *cli.sizes_of(FLAGS, ("max_points", "probe_dirs")), "float64 probe_dirs"
                        f" x max_points{' x max_points' if sq else ''} in the probe, 32 tile x max_points in the basins"
                        " run")
    clouds = ((s, flow_accuracy.random_cloud(s, FLAGS.min_points, FLAGS.max_points)[0]) for s in seeds)
    if sq and (problem := flow_accuracy.degenerate_tau_set(clouds, base.tau)):
        cli.fail(problem)  # as scripts/basins.py refuses it, on every set
    run = cli.open_run_dir(FLAGS.output_dir, {"base": dataclasses.asdict(base), **{k: getattr(FLAGS, k) for k in (
                               "set_seeds", "min_points", "max_points", "probe_dirs", "compare_methods")}},
                           script="scripts/kink_check.py", outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    (out := run.path).joinpath("sets").mkdir(exist_ok=True)
    others = {"flow (stops where pinned)": dataclasses.replace(base.dynamics, sliding=False),
              "power": dataclasses.replace(base.dynamics, method="power")} if FLAGS.compare_methods else {}
    rows, mrows, sets = [], [], []
    for s in seeds:
        (x, rng), path = flow_accuracy.random_cloud(s, FLAGS.min_points, FLAGS.max_points), out / "sets" / f"set{s}.npz"
        n, d = x.shape
        files.save_dataset(path, make_dataset(x))
        cfg = dataclasses.replace(base, data=DataSpec(data="file", data_path=str(path)), x64=True, seed=s)
        cli.log(f"set {s}: n={n} d={d}, {cfg.n_init} inits")
        done = basins.run(cfg, log=cli.log)
        an, p, tau = done["analysis"], np.full(n, 1.0 / n), cfg.tau if cfg.alpha == "gaussian" else None
        pot = lambda W, x=x, p=p, tau=tau: kink_probe.potential(x, p, W, tau)  # noqa: E731
        e0 = pot(np.asarray(parallel.init_weights(jax.random.PRNGKey(s), 0, cfg.n_init, d, jnp.float64)))
        methods = {f"{cfg.dynamics.method} (sliding)" if cfg.dynamics.sliding else cfg.dynamics.method:
                   method_row(done["result"], pot, e0, cfg.cluster_tol, done["timings_s"]["run"])}
        ds64 = make_dataset(x, dtype=jnp.float64)
        for name, dyn in others.items():
            t1 = time.time()
            res = engine.collect(engine.ChunkRunner(ds64, cfg.activation, cfg.pairwise, dyn, tile=cfg.tile),
                                 jax.random.PRNGKey(s), cfg.n_init, cfg.chunk_size, jnp.float64)
            methods[name] = method_row(res, pot, e0, cfg.cluster_tol, time.time() - t1)
        for name, r in methods.items():
            mrows.append([s, n, d, name, *(r["status"][k] for k in STATUSES), f"{r['optima']} ({r['seen_once']})",
                          f"{r['top5_share']:.3f}", f"{r['max_residual']:.1e}", f"{r['min_rel_energy_gain']:.1e}",
                          round(r["mean_steps"]), round(r["run_s"], 1)])
            cli.log("  " + ", ".join(f"{k}: {v}" for k, v in zip(METHOD_COLUMNS[3:], mrows[-1][3:])))
        opt = []
        for r in an["rows"]:
            w, dirs = np.asarray(r["w"], np.float64), rng.standard_normal((FLAGS.probe_dirs, d))
            geo = kink_probe.extent(x, p, w, tau)  # the probe's radii and r_geo / 2 (when > 0)
            radii = RADII + ((geo["r_geo"] / 2,) if geo["r_geo"] > 0 else ())
            rises = kink_probe.probe_rises(pot, w, dirs, radii)
            opt.append({k: r.get(k) for k in ("optimum", "count", "energy", "residual", "kink_rank", "certificate",
                                          "certificate_note", "stable", "multipliers")} |
                       {"w": w.tolist(), "probe_rise": max(rises), "probe_radii": radii, "probe_rise_by_radius": rises,
                        "geometry": geo, "judgement": kink_probe.judge(radii, rises, geo["r_geo"])})
        stable = [o for o in opt if o["stable"]]
        rows.append([s, n, d, an["status_counts"]["converged"], an["n_clusters"], len(opt), len(stable),
                     *[sum(o["certificate"] == c for o in opt) for c in ("smooth", "kink-kkt")], round(sum(
                         o["count"] for o in stable) / cfg.n_init, 4), max((o["kink_rank"] for o in opt), default=0),
                     f"{max(o['probe_rise'] for o in stable):.1e}" if stable else "-",
                     f"{min(o['geometry']['r_geo'] for o in stable):.1e}" if stable else "-",
                     " / ".join(str(v) for v in kink_probe.count_judgements(stable).values()),
                     sum(not o["stable"] and o["probe_rise"] < 0 for o in opt),
                     round(done["timings_s"]["analyze"], 1), round(done["timings_s"]["run"], 1)])
        sets.append({"set_seed": s, "n": n, "d": d, "status_counts": an["status_counts"], "optima": opt,
                     "timings_s": done["timings_s"], "n_endpoint_clusters": an["n_clusters"], "methods": methods})
    io.write_csv(out / "sets.csv", COLUMNS, rows)
    io.atomic_write_bytes(out / "methods.md", (report.markdown_table(METHOD_COLUMNS, mrows) + "\n").encode())
    stable = [o for st in sets for o in st["optima"] if o["stable"]]
    worst, counts = max((o["probe_rise"] for o in stable), default=None), kink_probe.count_judgements(stable)
    verdict = "holds" if stable and not counts["not a max"] else "fails"
    record = cli.run_record("scripts/kink_check.py")
    io.write_json(out / "kink_check.json", {"command": record["command"], "record": record, "radii": RADII,
                                            "worst_stable_probe_rise": worst, "judgements": counts,
                                            "verdict": verdict, "sets": sets})
    path = cli.finish(run)
    print("\n".join([report.format_table(METHOD_COLUMNS, mrows), *report.key_lines(kink_probe.METHODS_KEY), "",
                     report.format_table(COLUMNS, rows), *report.key_lines(kink_probe.SETS_KEY)]))
    print(f"\nno optimum labelled stable is 'not a max' by the numpy probe and r_geo: {verdict} ({counts}); "
          f"wrote {path} ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
