"""Basins of attraction of the 1-layer contrastive energy over many random initializations.

    python scripts/basins.py --act=relu --n_init=10000
    python scripts/basins.py --act=linear --n_init=10000          # only +-phi_1 (PCA)
    python scripts/basins.py --data=circle --method=flow --act=relu
    python scripts/basins.py --alpha=gaussian --tau=0.5 --act=relu
    python scripts/basins.py --data=circle --method=flow --aug=rotation --aug_range=0.25 --aug_views=128
    python scripts/basins.py --n_init=1000000 --chunk_size=65536   # bounded memory; --resume after a kill

Default data: latent summation (Eq. 9), d = M = 10, q = 0.2, ||U^T U - I||_2 = 0.1 (seed 0), exact
population (2^10 points), uniform alpha. Several hosts: run one process per host with
--coordinator_address=HOST:PORT --num_processes=P --process_id=I and a shared --output_dir.

Writes <output_dir>/summary.json, optima.npz, basins.png (and chunks/ for --resume) and prints a
table of the optima.
"""

from __future__ import annotations

import dataclasses
import platform
import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)  # certificates are float64; the run uses --x64 or float32

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import ccdyn  # noqa: E402
from ccdyn import activations, io, pairwise, parallel, plotting, report  # noqa: E402
from ccdyn.one_layer import basins, engine  # noqa: E402
from ccdyn.data import models  # noqa: E402
from ccdyn.data.registry import AUGMENTATIONS, DATA_MODELS, DataSpec, build_dataset  # noqa: E402

FLAGS = flags.FLAGS
D = DataSpec()
flags.DEFINE_enum("data", D.data, DATA_MODELS, "Data model.")
flags.DEFINE_integer("d", D.d, "Input dimension (latent models, gaussian_mixture).", lower_bound=1)
flags.DEFINE_integer("m", D.m, "Number of patterns M (<= d).", lower_bound=1)
flags.DEFINE_list("q", [str(v) for v in D.q], "Latent summation q_m in (0, 1): one value or M values.")
flags.DEFINE_float("ortho_eps", D.ortho_eps, "||U^T U - I||_2 of the pattern basis, in [0, 1).")
flags.DEFINE_list("probs", None, "Probabilities of the categories / circle points / mixture components.")
flags.DEFINE_list("angles", [repr(a) for a in models.PAPER_ANGLES], "Circle angles in units of pi.")
flags.DEFINE_float("std", D.std, "Gaussian mixture standard deviation (>= 0).")
flags.DEFINE_integer("n_samples", None, "Sample this many points (gaussian_mixture; latent_summation, "
                     "required beyond M = 16) instead of the exact population.")
flags.DEFINE_string("data_path", None, "--data=file: a .npz with x (n, d); optional p, x_aug, p_aug, patterns.")
flags.DEFINE_integer("data_seed", D.data_seed, "Seed of the data model (basis, samples, views).")
flags.DEFINE_enum("aug", D.aug, AUGMENTATIONS, "Augmentation: none, noise (Gaussian views), rotation (2-D data: "
                  "x = R(t) x0, t ~ U[-aug_range pi, aug_range pi], App. B.5) or shift (cyclic shifts by "
                  "|s| <= aug_range; all d shifts when 2 aug_range + 1 >= d, App. B.5).")
flags.DEFINE_integer("aug_views", D.aug_views, "Views per point for --aug=noise; quadrature angles of t for "
                     "--aug=rotation.", lower_bound=1)
flags.DEFINE_float("aug_std", D.aug_std, "Noise std for --aug=noise (>= 0).")
flags.DEFINE_float("aug_range", D.aug_range, "--aug=rotation: half-range of t in units of pi, in (0, 1] (1: the "
                   "whole circle); --aug=shift: the largest shift, an integer >= 1.")
flags.DEFINE_enum("act", "relu", activations.ACTIVATIONS, "Activation h.")
flags.DEFINE_float("leaky_slope", activations.DEFAULT_LEAKY_SLOPE, "leaky_relu negative slope, in [0, 1).")
flags.DEFINE_enum("alpha", "uniform", pairwise.KINDS, "Pairwise importance alpha (Gaussian: Cor. 2).")
flags.DEFINE_float("tau", 1.0, "Temperature of the Gaussian alpha (> 0).")
flags.DEFINE_enum("method", "power", ["power", "flow"], "Power iteration (Eq. PI) or the flow (Eq. 7).")
flags.DEFINE_float("step_size", 1.0, "Initial Euler step of the flow (> 0).")
flags.DEFINE_float("shift", 0.0, "Power-iteration shift s: A(w) w + s w (App. B.4), >= 0.")
flags.DEFINE_integer("max_steps", 2000, "Steps before a run is declared not converged.", lower_bound=1)
flags.DEFINE_float("tol", 1e-6, "Relative convergence tolerance, in (0, 0.1).")
flags.DEFINE_float("cluster_tol", 1e-2, "Endpoints closer than this are one optimum, in (0, 1).")
flags.DEFINE_integer("n_init", 10000, "Number of random initializations.", lower_bound=1)
flags.DEFINE_integer("seed", 0, "Seed of the initializations (init i uses fold_in(seed, i)).")
flags.DEFINE_integer("chunk_size", 16384, "Inits per chunk (bounds memory; unit of resume).", lower_bound=1)
flags.DEFINE_integer("tile", 512, "Inits per tile: the fixed GEMM width (results do not depend on "
                     "chunk_size or device count at a fixed tile).", lower_bound=1)
flags.DEFINE_bool("x64", False, "Run the dynamics in float64 (certificates are always float64).")
flags.DEFINE_string("output_dir", None, "Run directory (default runs/basins-<act>-<data>-...).")
flags.DEFINE_bool("resume", False, "Continue the run in an existing output_dir.")
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")
flags.DEFINE_string("coordinator_address", None, "Multi-host: HOST:PORT of process 0.")
flags.DEFINE_integer("num_processes", 1, "Multi-host: number of processes.", lower_bound=1)
flags.DEFINE_integer("process_id", 0, "Multi-host: this process's index.", lower_bound=0)


def _floats(values):
    try:
        return tuple(float(v) for v in values)
    except (TypeError, ValueError):
        return None


flags.register_validator("q", lambda v: _floats(v) is not None and all(0 < x < 1 for x in _floats(v)),
                         "--q must be numbers in (0, 1)")
flags.register_validator("angles", lambda v: _floats(v) is not None and len(v) >= 2,
                         "--angles must be a comma-separated list of at least 2 numbers (units of pi)")
flags.register_validator("probs", lambda v: v is None or _floats(v) is not None,
                         "--probs must be a comma-separated list of numbers")
flags.register_validator("ortho_eps", lambda v: 0 <= v < 1, "--ortho_eps must lie in [0, 1)")
flags.register_validator("std", lambda v: v >= 0, "--std must be >= 0")
flags.register_validator("aug_std", lambda v: v >= 0, "--aug_std must be >= 0")
flags.register_multi_flags_validator(
    ["aug", "aug_range"], lambda f: f["aug"] != "rotation" or 0 < f["aug_range"] <= 1,
    "--aug_range must lie in (0, 1] for --aug=rotation (half-range of the angle in units of pi)")
flags.register_multi_flags_validator(
    ["aug", "aug_range"], lambda f: f["aug"] != "shift" or (f["aug_range"] >= 1 and f["aug_range"] == int(f["aug_range"])),
    "--aug_range must be an integer >= 1 for --aug=shift (the largest cyclic shift)")
flags.register_validator("leaky_slope", lambda v: 0 <= v < 1, "--leaky_slope must lie in [0, 1)")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("step_size", lambda v: v > 0, "--step_size must be > 0")
flags.register_validator("shift", lambda v: v >= 0, "--shift must be >= 0")
flags.register_validator("tol", lambda v: 0 < v < 0.1, "--tol must lie in (0, 0.1)")
flags.register_validator("cluster_tol", lambda v: 0 < v < 1, "--cluster_tol must lie in (0, 1)")
flags.register_validator("n_samples", lambda v: v is None or v >= 2, "--n_samples must be >= 2")
flags.register_multi_flags_validator(["m", "d"], lambda f: f["m"] <= f["d"], "--m must be <= --d")
flags.register_multi_flags_validator(
    ["process_id", "num_processes"], lambda f: f["process_id"] < f["num_processes"],
    "--process_id must lie in [0, --num_processes - 1]")
flags.register_multi_flags_validator(
    ["method", "act"], lambda f: f["method"] != "power" or f["act"] in activations.HOMOGENEOUS,
    f"--method=power needs a homogeneous --act ({', '.join(activations.HOMOGENEOUS)}); use --method=flow")
flags.register_multi_flags_validator(["resume", "overwrite"], lambda f: not (f["resume"] and f["overwrite"]),
                                     "--resume and --overwrite exclude each other")


def _spec() -> DataSpec:
    probs = _floats(FLAGS.probs) if FLAGS.probs else None
    return DataSpec(data=FLAGS.data, d=FLAGS.d, m=FLAGS.m, q=_floats(FLAGS.q), ortho_eps=FLAGS.ortho_eps,
                    probs=probs, angles=_floats(FLAGS.angles), std=FLAGS.std, n_samples=FLAGS.n_samples,
                    data_path=FLAGS.data_path, data_seed=FLAGS.data_seed, aug=FLAGS.aug,
                    aug_views=FLAGS.aug_views, aug_std=FLAGS.aug_std, aug_range=FLAGS.aug_range)


def _config(spec, dyn) -> dict:
    """Everything that determines the numbers (compared on --resume)."""
    return {"data": dataclasses.asdict(spec), "act": FLAGS.act, "leaky_slope": FLAGS.leaky_slope,
            "alpha": FLAGS.alpha, "tau": FLAGS.tau, "dynamics": dataclasses.asdict(dyn),
            "n_init": FLAGS.n_init, "seed": FLAGS.seed, "chunk_size": FLAGS.chunk_size, "tile": FLAGS.tile,
            "x64": FLAGS.x64, "cluster_tol": FLAGS.cluster_tol}


def _progress(t0, every_s: float = 2.0):
    """Progress on stderr: after every chunk, and at most every ``every_s`` seconds within one."""
    last = [0.0]

    def report_progress(done, total, running, steps):
        now = time.time()
        if running and now - last[0] < every_s:
            return
        last[0] = now
        rate = done / max(now - t0, 1e-9)
        inside = f", chunk: {running} inits still running after {steps} steps" if running else ""
        print(f"  [{done}/{total} inits done] {rate:,.0f} inits/s, {now - t0:.1f} s{inside}",
              file=sys.stderr, flush=True)

    return report_progress


def _table(rows, an, n_init) -> str:
    body = [[r["optimum"], f"{r['fraction']:.4f}", f"[{r['ci95'][0]:.4f}, {r['ci95'][1]:.4f}]", r["count"],
             r["energy"], r["eigengap"], f"{r['residual']:.1e}", r["smooth"], r["stable"], r["is_lme"],
             "-" if r["pattern"] is None else f"u{r['pattern']}",
             "-" if r["overlap"] is None else f"{r['overlap']:.4f}"] for r in rows]
    text = report.format_table(["optimum", "fraction", "95% CI", "count", "energy", "gap", "residual",
                                "smooth", "stable", "LME", "pattern", "cos"], body)
    c = an["status_counts"]
    lines = [text, "",
             f"inits {n_init}: converged {c['converged']}, not converged {c['not_converged']}, "
             f"cycling {c['cycling']}, dead (A(w)w = 0) {c['dead']}, non-finite {c['nonfinite']}",
             f"optima {len(rows)}, stable {sum(r['stable'] for r in rows)}, basin mass on planted "
             f"patterns (stable, cos >= 0.9): {basins.basin_mass_on_patterns(rows):.4f}"]
    return "\n".join(lines)


def main(argv):
    del argv
    t_start = time.time()
    parallel.initialize_distributed(FLAGS.coordinator_address, FLAGS.num_processes, FLAGS.process_id)
    spec = _spec()
    act = activations.get_activation(FLAGS.act, FLAGS.leaky_slope)
    pw = pairwise.get_pairwise(FLAGS.alpha, FLAGS.tau)
    dyn = engine.Dynamics(method=FLAGS.method, step_size=FLAGS.step_size, tol=FLAGS.tol,
                          max_steps=FLAGS.max_steps, shift=FLAGS.shift)
    dtype = jnp.float64 if FLAGS.x64 else jnp.float32
    out_name = FLAGS.output_dir or (f"runs/basins-{FLAGS.act}-{FLAGS.data}-{FLAGS.alpha}-{FLAGS.method}"
                                    f"-n{FLAGS.n_init}-seed{FLAGS.seed}")
    config = _config(spec, dyn)
    try:
        ds64 = build_dataset(spec, jnp.float64)
        ds_run = build_dataset(spec, dtype)
        if FLAGS.process_id == 0:
            out = io.prepare_output_dir(out_name, overwrite=FLAGS.overwrite, resume=FLAGS.resume)
            old = out / "config.json"
            if old.exists() and io.read_json(old) != io.as_json(config):
                raise ValueError(f"--resume: {old} was written with a different configuration; "
                                 "use the same flags or a new --output_dir")
            io.write_json(old, config)
        else:
            out = io.wait_for_file(out_name, "config.json", timeout=600)
    except (ValueError, FileExistsError, TimeoutError) as e:
        sys.exit(f"error: {e}")

    n_dev = len(jax.local_devices())
    print(f"ccdyn basins: act={FLAGS.act} data={FLAGS.data} (n={ds64.n}, d={ds64.dim}) alpha={FLAGS.alpha} "
          f"method={FLAGS.method} n_init={FLAGS.n_init} on {n_dev} {jax.default_backend()} device(s), "
          f"process {FLAGS.process_id}/{FLAGS.num_processes} -> {out}", file=sys.stderr, flush=True)
    runner = engine.ChunkRunner(ds_run, act, pw, dyn, tile=FLAGS.tile)
    t_run = time.time()
    result = engine.collect(runner, jax.random.PRNGKey(FLAGS.seed), FLAGS.n_init, FLAGS.chunk_size, dtype,
                            store=io.ChunkStore(out), process_id=FLAGS.process_id,
                            num_processes=FLAGS.num_processes, progress=_progress(time.time()))
    run_s = time.time() - t_run
    if result is None:  # other processes only compute their chunks
        print(f"process {FLAGS.process_id}: chunks done in {run_s:.1f} s", file=sys.stderr)
        return
    t_an = time.time()
    an = basins.analyze(ds64, act, pw, dyn, result, cluster_tol=FLAGS.cluster_tol)
    rows = an["rows"]
    summary = {
        "command": " ".join(["python", "scripts/basins.py"] + sys.argv[1:]),
        "config": config,
        "n_init": FLAGS.n_init,
        "n_converged": an["status_counts"]["converged"],
        "n_nonfinite": an["status_counts"]["nonfinite"],
        "n_not_converged": an["status_counts"]["not_converged"],
        "n_cycling": an["status_counts"]["cycling"],
        "n_dead": an["status_counts"]["dead"],
        "n_optima": len(rows),
        "n_stable_optima": sum(r["stable"] for r in rows),
        "basin_mass_on_patterns": basins.basin_mass_on_patterns(rows),
        "optima": rows,
        "steps_median": float(np.median(result["steps"])),
        "versions": {"ccdyn": ccdyn.__version__, "jax": jax.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
        "devices": [str(d) for d in jax.devices()],
        "num_processes": FLAGS.num_processes,
        "timings_s": {"run": run_s, "analyze": time.time() - t_an, "total": time.time() - t_start},
        "init_steps_per_s": float(np.sum(result["steps"])) / run_s,
    }
    io.write_json(out / "summary.json", summary)
    io.write_npz(out / "optima.npz", optima=an["optima"], labels=an["labels"], status=result["status"],
                 steps=result["steps"])
    title = (f"{FLAGS.act}, {FLAGS.data}, alpha={FLAGS.alpha}, {FLAGS.method}: "
             f"{len(rows)} optima from {FLAGS.n_init} inits")
    io.save_figure(out / "basins.png", plotting.basins_figure(rows, title))
    print(_table(rows, an, FLAGS.n_init))
    print(f"\nwrote {out}/summary.json, optima.npz, basins.png ({time.time() - t_start:.1f} s)")


if __name__ == "__main__":
    app.run(main)
