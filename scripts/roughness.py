r"""Roughness rho, eigengap and stability of the optima found by basins runs (Thm. 1-2, Cor. 2).

    python scripts/roughness.py --runs=results/theory/cor2/uniform,results/theory/cor2/gaussian_tau0.5 \
        --output_dir=results/theory/cor2/roughness

For every optimum w* of every run (its summary.json): lambda_gap and lambda_1 of A(w*), the local
roughness rho(w*) from tangent perturbations at shrinking radii (``ccdyn.one_layer.roughness``,
alpha evaluated at each probe), the Thm. 1 test lambda_gap > rho, stability of the flow at the
resolved radius (finite-difference Jacobian, alpha moving with w) beside the basins engine's
verdict and the Hessian certificate (alpha fixed; on sampled data it sees A as locally constant,
i.e. it tests the finite sample rather than the population), and the Thm. 2 / Cor. 2
ingredients: r(w*, alpha_u) = max of p_D on the plane w*^T x = 0 (k-NN estimate), the Thm. 2 bound
C0^3 vol(C0) r / pi, z0(alpha_g) at --tau (or the run's tau) and r(w*, alpha_g) = z0 r(w*, alpha_u).
With --compare_taus, rho at the optima of the first run is re-measured under Gaussian alpha at each
tau: Cor. 2 predicts that the roughness relative to the gap falls with z0.

Writes roughness.md (per run, per optimum, same points under each alpha), optima.csv (one row per
optimum), runs.csv (one row per run), compare.csv (with --compare_taus), roughness.json (everything,
with the run record) and rho_vs_gap.png.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import cli, io  # noqa: E402
from ccdyn.one_layer import figures  # noqa: E402
from ccdyn.one_layer.studies import roughness_runs  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("optima.csv", "runs.csv", "compare.csv", "roughness.md", "roughness.json", "rho_vs_gap.png")
flags.DEFINE_list("runs", None, "Basins run directories (each with a summary.json).", required=True)
flags.DEFINE_float("r_max", 0.2, "Largest perturbation radius (radians), in (0, 1).")
flags.DEFINE_float("r_min", 1e-4, "Smallest perturbation radius (radians), in (0, --r_max).")
flags.DEFINE_integer("n_radii", 12, "Radii on a geometric grid from --r_max down to --r_min.", lower_bound=2)
flags.DEFINE_integer("min_crossings", 50, "Median data points crossing the ReLU plane for a radius to count "
                     "as resolved (relative noise ~ 1/sqrt of it).", lower_bound=1)
flags.DEFINE_integer("measure_samples", 0, "Measure on a sample of this size of the run's continuous model "
                     "(same model, basis and seed) instead of the run's own sample; 0: the run's data.",
                     lower_bound=0)
flags.DEFINE_integer("n_random", 16, "Random tangent probe directions per radius.", lower_bound=0)
flags.DEFINE_float("min_fraction", 0.0, "Only optima with at least this basin fraction, in [0, 1).")
flags.DEFINE_float("tau", 0.5, "tau of z0(alpha_g) for runs with uniform alpha (> 0).")
flags.DEFINE_list("compare_taus", [], "Gaussian-alpha taus at which rho is re-measured at the first run's optima.")
cli.define_run_flags(None, resume=False, what="Where the tables, JSON and PNG go.")
flags.mark_flag_as_required("output_dir")

flags.register_validator("r_max", lambda v: 0 < v < 1, "--r_max must lie in (0, 1)")
flags.register_validator("r_min", lambda v: v > 0, "--r_min must be > 0")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("min_fraction", lambda v: 0 <= v < 1, "--min_fraction must lie in [0, 1)")
cli.register_numbers("compare_taus", float, 0, None, lo_open=True, min_len=0)
cli.register_unique("runs", os.path.realpath)
flags.register_multi_flags_validator(["r_min", "r_max"], lambda f: f["r_min"] < f["r_max"],
                                     "--r_min must be < --r_max")


def _memory(**f) -> int:  # bytes (a lower bound, d >= 2): an optimum's float64 rises at every radius and direction,
    # the directions, the --measure_samples sample
    return 8 * (f["--n_radii"] * (f["--n_random"] + 1) + 2 * f["--n_random"] + 2 * f["--measure_samples"])


def main(argv):
    del argv
    t0 = time.time()
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("n_radii", "n_random", "measure_samples")), "float64 "
                        "n_radii (n_random + 1) + 2 n_random + 2 measure_samples (d >= 2; a lower bound)")
    cfg = roughness_runs.RoughnessConfig(
        r_max=FLAGS.r_max, r_min=FLAGS.r_min, n_radii=FLAGS.n_radii, min_crossings=FLAGS.min_crossings,
        measure_samples=FLAGS.measure_samples, n_random=FLAGS.n_random, min_fraction=FLAGS.min_fraction,
        tau=FLAGS.tau, compare_taus=cli.floats(FLAGS.compare_taus))
    names = [Path(r).name for r in FLAGS.runs]  # the tables name a run by its folder
    if len(set(names)) < len(names):
        cli.fail(f"--runs: two run directories are named {max(names, key=names.count)}; the tables name runs by "
                 "their folder: give each run a folder of its own name")
    runs = [(Path(r).name, cli.read_run_json(Path(r) / "summary.json", script="scripts/basins.py", flag="--runs",
                                             keys={"config": dict, "optima": list})) for r in FLAGS.runs]
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/roughness.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    record = cli.or_fail(roughness_runs.run, cfg, runs, log=cli.log)
    t = record["tables"]
    io.write_csv(out / "optima.csv", roughness_runs.OPTIMA_COLUMNS, t["optima"])
    io.write_csv(out / "runs.csv", roughness_runs.RUN_COLUMNS, t["runs"])
    if t["compare"]:
        io.write_csv(out / "compare.csv", roughness_runs.COMPARE_COLUMNS, t["compare"])
    io.atomic_write_bytes(out / "roughness.md", roughness_runs.markdown(record).encode())
    io.write_json(out / "roughness.json", cli.with_run_record("scripts/roughness.py", record))
    io.save_figure(out / "rho_vs_gap.png", figures.roughness_figure(
        {n: [(r["gap"], r["rho"], r["fd_stable"]) for r in v["optima"] if r["rho_radius"] is not None]
         for n, v in record["runs"].items()}))
    out = cli.finish(run)
    print(roughness_runs.table(record))
    print(f"\nwrote {out}/roughness.md, .json, optima.csv, runs.csv, rho_vs_gap.png ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
