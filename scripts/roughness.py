"""Roughness rho, eigengap and stability of the optima found by basins runs (Thm. 1-2, Cor. 2).

    python scripts/roughness.py --runs=results/theory/cor2/uniform,results/theory/cor2/gaussian_tau0.5 \
        --output_dir=results/theory/cor2/roughness

For every optimum w* of every run (its summary.json): lambda_gap and lambda_1 of A(w*), the local
roughness rho(w*) from tangent perturbations at shrinking radii (``ccdyn.roughness.roughness``,
alpha evaluated at each probe), the Thm. 1 test lambda_gap > rho, stability of the flow at the
resolved radius (finite-difference Jacobian, alpha moving with w) beside the basins engine's
verdict and the Hessian certificate (alpha fixed; on sampled data it sees A as locally constant,
i.e. it tests the finite sample rather than the population), and the Thm. 2 / Cor. 2
ingredients: r(w*, alpha_u) = max of p_D on the plane w*^T x = 0 (k-NN estimate), the Thm. 2 bound
C0^3 vol(C0) r / pi, z0(alpha_g) at --tau (or the run's tau) and r(w*, alpha_g) = z0 r(w*, alpha_u).
With --compare_taus, rho at the optima of the first run is re-measured under Gaussian alpha at each
tau: Cor. 2 predicts that the roughness relative to the gap falls with z0.

Writes optima.csv (one row per optimum), runs.md/.csv (one row per run), compare.md/.csv,
roughness.json (everything, with the command) and rho_vs_gap.png.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, io, pairwise, plotting, report  # noqa: E402
from ccdyn.one_layer import certify, roughness  # noqa: E402
from ccdyn.data.registry import build_dataset, spec_from_dict  # noqa: E402

FLAGS = flags.FLAGS
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
flags.DEFINE_string("output_dir", None, "Where the tables, JSON and PNG go.", required=True)
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")

flags.register_validator("r_max", lambda v: 0 < v < 1, "--r_max must lie in (0, 1)")
flags.register_validator("r_min", lambda v: v > 0, "--r_min must be > 0")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("min_fraction", lambda v: 0 <= v < 1, "--min_fraction must lie in [0, 1)")
flags.register_validator("compare_taus", lambda v: all(_positive(t) for t in v),
                         "--compare_taus must be numbers > 0")
flags.register_multi_flags_validator(["r_min", "r_max"], lambda f: f["r_min"] < f["r_max"],
                                     "--r_min must be < --r_max")

OPTIMA_COLUMNS = ("run", "optimum", "fraction", "pattern", "cos", "lam1", "gap", "rho", "rho_radius",
                  "crossings", "thm1_gap_gt_rho", "fd_stable", "engine_stable", "hessian_cert", "z0", "r_uniform",
                  "r_gaussian", "thm2_bound")
RUN_COLUMNS = ("run", "alpha", "tau", "optima", "resolved", "thm1_holds", "fd_stable", "thm1_and_not_stable",
               "median_rho", "median_gap", "median_rho_over_gap", "mass_fd_stable_on_patterns", "median_z0")
COMPARE_COLUMNS = ("alpha", "tau", "median_z0", "median_rho", "median_gap", "median_rho_over_gap",
                   "median_rho_ratio_to_uniform")


def _positive(v) -> bool:
    try:
        return float(v) > 0
    except ValueError:
        return False


def _load(run: str):
    path = Path(run) / "summary.json"
    if not path.is_file():
        raise ValueError(f"--runs: {path} does not exist")
    s = io.read_json(path)
    c = s["config"]
    spec = spec_from_dict(c["data"])
    if FLAGS.measure_samples and spec.n_samples is not None:  # the run drew a sample: draw a larger one
        spec = dataclasses.replace(spec, n_samples=FLAGS.measure_samples)
    ds = build_dataset(spec, jnp.float64)
    act = activations.get_activation(c["act"], c["leaky_slope"])
    return s, ds, act, pairwise.get_pairwise(c["alpha"], c["tau"]), not spec.sampled, spec.has_density


def _measure(ds, act, pw, w, radii, tau_z0, exact, density):
    rough = roughness.roughness(ds, act, w, pw, radii, min_crossings=0 if exact else FLAGS.min_crossings,
                                   n_random=FLAGS.n_random)
    cert = jax.device_get(certify.certify(ds, act, jnp.asarray(w), pw))
    at = np.flatnonzero(rough.resolved)
    k = int(at[-1]) if at.size else -1
    r_u = roughness.plane_density_max(ds, w) if density else None
    z0 = roughness.gaussian_z0(ds, act, w, tau_z0)
    return {"lam1": float(cert.lam1), "gap": float(cert.gap), "rho": rough.rho,
            "rho_radius": float(rough.radii[k]) if k >= 0 else None,
            "crossings": int(rough.crossings[k]) if k >= 0 else None,
            "fd_stable": bool(rough.jacobian_max[k] < 0) if k >= 0 else None,
            "thm1": bool(cert.gap > rough.rho) if k >= 0 else None,
            "z0": z0, "r_uniform": r_u, "r_gaussian": None if r_u is None else z0 * r_u,
            "thm2_bound": None if r_u is None else roughness.theorem2_bound(ds, r_u),
            "profile": {"radii": rough.radii, "rho_at": rough.rho_at, "crossings": rough.crossings,
                        "jacobian_max": rough.jacobian_max}}


def _dash(v):
    return "-" if v is None else v


def _median(values):
    v = [x for x in values if x is not None and np.isfinite(x)]
    return float(np.median(v)) if v else float("nan")


def _run_row(name, alpha, tau, rows):
    thm1 = [r["thm1"] for r in rows]
    stable = [r["fd_stable"] for r in rows]
    return [name, alpha, tau, len(rows), sum(r["rho_radius"] is not None for r in rows), sum(bool(t) for t in thm1), sum(bool(s) for s in stable),
            sum(bool(t) and s is False for t, s in zip(thm1, stable)),
            _median([r["rho"] for r in rows]), _median([r["gap"] for r in rows]),
            _median([r["rho"] / r["gap"] if r["gap"] > 0 else None for r in rows]),
            round(sum(r["fraction"] for r in rows if r["fd_stable"] and (r["cos"] or 0) >= 0.9), 4),
            _median([r["z0"] for r in rows])]


def main(argv):
    del argv
    t0 = time.time()
    try:
        loaded = [(Path(r).name, *_load(r)) for r in FLAGS.runs]
        out = io.prepare_output_dir(FLAGS.output_dir, overwrite=FLAGS.overwrite)
    except (ValueError, FileExistsError) as e:
        sys.exit(f"error: {e}")
    radii = np.geomspace(FLAGS.r_max, FLAGS.r_min, FLAGS.n_radii)
    per_run, table, run_rows = {}, [], []
    for name, s, ds, act, pw, exact, density in loaded:
        tau = pw.tau if pw.kind == "gaussian" else FLAGS.tau
        rows = []
        for o in s["optima"]:
            if o["fraction"] < FLAGS.min_fraction:
                continue
            m = _measure(ds, act, pw, np.asarray(o["w"]), radii, tau, exact, density)
            m.update({"optimum": o["optimum"], "fraction": o["fraction"], "pattern": o["pattern"],
                      "cos": o["overlap"], "engine_stable": o["stable"]})
            rows.append(m)
            table.append([name, o["optimum"], round(o["fraction"], 4), o["pattern"], o["overlap"], m["lam1"],
                          m["gap"], m["rho"], _dash(m["rho_radius"]), _dash(m["crossings"]), _dash(m["thm1"]),
                          _dash(m["fd_stable"]),
                          o["stable"], o["strict_max_fixed_alpha"], m["z0"], _dash(m["r_uniform"]),
                          _dash(m["r_gaussian"]), _dash(m["thm2_bound"])])
        print(f"  {name}: {len(rows)} optima measured ({time.time() - t0:.1f} s)", file=sys.stderr, flush=True)
        per_run[name] = {"alpha": pw.kind, "tau": pw.tau if pw.kind == "gaussian" else None, "optima": rows}
        run_rows.append(_run_row(name, pw.kind, per_run[name]["tau"] or "-", rows))

    compare = []
    if FLAGS.compare_taus:  # Cor. 2 at fixed points w: the first run's optima under each alpha
        name, s, ds, act, _, exact, density = loaded[0]
        ws = [np.asarray(o["w"]) for o in s["optima"] if o["fraction"] >= FLAGS.min_fraction]
        base = None
        for kind, tau in [("uniform", None)] + [("gaussian", float(t)) for t in FLAGS.compare_taus]:
            pw = pairwise.get_pairwise(kind, tau or 1.0)
            ms = [_measure(ds, act, pw, w, radii, tau or FLAGS.tau, exact, density) for w in ws]
            rho = np.array([m["rho"] for m in ms])
            base = rho if base is None else base
            compare.append([kind, tau or "-", _median([m["z0"] for m in ms]) if tau else 1.0,
                            _median(rho), _median([m["gap"] for m in ms]),
                            _median([m["rho"] / m["gap"] if m["gap"] > 0 else None for m in ms]),
                            _median(rho / base)])
            print(f"  compare {kind} tau={tau}: done ({time.time() - t0:.1f} s)", file=sys.stderr, flush=True)

    io.write_csv(out / "optima.csv", OPTIMA_COLUMNS, table)
    io.write_csv(out / "runs.csv", RUN_COLUMNS, run_rows)
    md = ["## Per run", "", report.markdown_table(RUN_COLUMNS, run_rows), "", "## Per optimum", "",
          report.markdown_table(OPTIMA_COLUMNS, table)]
    if compare:
        io.write_csv(out / "compare.csv", COMPARE_COLUMNS, compare)
        md += ["", f"## Same points, different alpha (optima of {loaded[0][0]})", "",
               report.markdown_table(COMPARE_COLUMNS, compare)]
    io.atomic_write_bytes(out / "roughness.md", ("\n".join(md) + "\n").encode())
    io.write_json(out / "roughness.json", {
        "command": " ".join(["python", "scripts/roughness.py"] + sys.argv[1:]),
        "radii": radii, "min_crossings": FLAGS.min_crossings, "runs": per_run,
        "compare": [dict(zip(COMPARE_COLUMNS, r)) for r in compare]})
    io.save_figure(out / "rho_vs_gap.png", plotting.roughness_figure(
        {n: [(r["gap"], r["rho"], r["fd_stable"]) for r in v["optima"] if r["rho_radius"] is not None]
         for n, v in per_run.items()}))
    print(report.format_table(RUN_COLUMNS, run_rows))
    if compare:
        print()
        print(report.format_table(COMPARE_COLUMNS, compare))
    print(f"\nwrote {out}/roughness.md, .json, optima.csv, runs.csv, rho_vs_gap.png ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    app.run(main)
