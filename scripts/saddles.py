"""Saddles, barriers and the disconnectivity graph between the optima of a basins run (docs/saddles.md).

    python scripts/basins.py --act=relu --n_init=10000 --output_dir=runs/default
    python scripts/saddles.py --run=runs/default --output_dir=results/saddles/default
    python scripts/continuation.py --param=ortho_eps --values=0,0.1,0.2,0.3 --n_init=2000 --output_dir=runs/c
    python scripts/saddles.py --continuation=runs/c --output_dir=results/saddles/ortho_eps

For every pair of optima (basin fraction >= --min_fraction) whose basins touch (probes; --pairs=all: every
pair): strings with a climbing image from the great circle and from each boundary region the probes found,
the exact saddles (float64), their certificates, the optima their sides reach. Writes saddles.json,
barriers.csv (minimax saddle energies), disconnectivity.png, paths.png and prints the pair table; with
--continuation, the same at every value (along.json, along.csv, along.png). Several hosts: one process per
host (--coordinator_address, --num_processes, --process_id); process 0 alone writes. docs/saddles.md.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)  # the saddle search runs in float64

from ccdyn import cli, io, parallel, report  # noqa: E402
from ccdyn.one_layer import figures  # noqa: E402
from ccdyn.one_layer.studies import saddles  # noqa: E402

OUTPUTS = ("saddles.json", "barriers.csv", "disconnectivity.png", "paths.png")
ALONG_OUTPUTS = ("along.json", "along.csv", "along.png")
D = saddles.SaddlesConfig()
FLAGS = flags.FLAGS
flags.DEFINE_string("run", None, "A finished basins run directory (scripts/basins.py --output_dir).")
flags.DEFINE_string("continuation", None, "Or a finished continuation run directory (scripts/continuation.py).")
flags.DEFINE_integer("n_images", D.n_images, "Images per path.", lower_bound=3, upper_bound=saddles.MAX_IMAGES)
flags.DEFINE_integer("n_steps", D.n_steps, "String steps (the last half with a climbing image).", lower_bound=2,
                     upper_bound=saddles.MAX_STEPS)
flags.DEFINE_float("step", D.step, "String step relative to the path's largest ||A(w) w||, in (0, 1].")
flags.DEFINE_float("min_fraction", D.min_fraction, "Only optima with at least this basin fraction, in [0, 1).")
flags.DEFINE_float("probe_angle", D.probe_angle, "Each side of a saddle is followed from this angle (rad).")
flags.DEFINE_float("match_tol", D.match_tol, "An end within this distance of an optimum reaches it, in (0, 1).")
flags.DEFINE_enum("pairs", D.pairs, ["touching", "all"], "The pairs whose basins touch (probes) or every pair.")
flags.DEFINE_integer("touch_inits", D.touch_inits, "Probes of the touching test.", lower_bound=1,
                     upper_bound=saddles.MAX_TOUCH_INITS)
flags.DEFINE_float("touch_angle", D.touch_angle, "Perturbation of the touching test (rad), in (0, 0.5).")
flags.DEFINE_bool("check_all", False, "With --pairs=touching, also search every pair and compare the barriers.")
flags.DEFINE_integer("max_pairs", D.max_pairs, "Refuse more pairs.", lower_bound=1, upper_bound=saddles.MAX_PAIRS)
flags.DEFINE_integer("n_bisect", D.n_bisect, "Bisections of a flipping probe.", lower_bound=0, upper_bound=40)
flags.DEFINE_float("region_angle", D.region_angle, "Boundary points of a pair this close (rad) are one region.",
                   lower_bound=1e-6, upper_bound=3.14)
flags.DEFINE_integer("max_seeds", D.max_seeds, "Regions seeded per pair.", lower_bound=0, upper_bound=saddles.MAX_SEEDS)
cli.define_run_flags(None, resume=False, what="Where the outputs go (default: the input run's path + '-saddles').")
cli.define_multihost_flags()
flags.register_multi_flags_validator(["run", "continuation"], lambda f: sum(v is None for v in f.values()) == 1,
                                     "give exactly one of --run and --continuation")
flags.register_validator("step", lambda v: 0 < v <= 1, "--step must lie in (0, 1]")
flags.register_validator("min_fraction", lambda v: 0 <= v < 1, "--min_fraction must lie in [0, 1)")
flags.register_validator("probe_angle", lambda v: 0 < v < 0.1, "--probe_angle must lie in (0, 0.1)")
flags.register_validator("match_tol", lambda v: 0 < v < 1, "--match_tol must lie in (0, 1)")
flags.register_validator("touch_angle", lambda v: 0 < v < 0.5, "--touch_angle must lie in (0, 0.5)")


def _mesh():
    """The pairs split over every device of every process when there are several (one device: unsharded)."""
    return parallel.device_mesh() if jax.device_count() > 1 else None


def _open(pid, n_proc, path, config, outputs, overwrite):
    """The run directory, opened by process 0 alone (None on the others); every process checks the config."""
    return cli.open_run_of_process_0(pid, n_proc, path, config, script="scripts/saddles.py", outputs=outputs,
                                     overwrite=overwrite, can_resume=False)[0]


def _out_dir(given, source: str, flag: str) -> str:
    """--output_dir, by default beside the input run (its path + '-saddles'); refused inside the input run
    (a folder of another run, which that run could then neither resume nor overwrite)."""
    out = Path(given) if given else Path(str(Path(source)) + "-saddles")
    src = Path(source).resolve()
    if out.resolve() == src or src in out.resolve().parents:
        cli.fail(f"--output_dir: {out} lies inside the run that {flag}={source} names; give a directory of its own")
    return str(out)


def _along(cfg, t0, continuation: str, output_dir, pid, n_proc, overwrite):
    output_dir = _out_dir(output_dir, continuation, "--continuation")
    rec = cli.read_run_json(Path(continuation) / "continuation.json", script="scripts/continuation.py",
                            flag="--continuation", keys=("config", "runs"))
    run = _open(pid, n_proc, output_dir, {**dataclasses.asdict(cfg), "continuation": str(continuation)}, ALONG_OUTPUTS,
                overwrite)
    out = cli.or_fail(saddles.along, cfg, rec, log=cli.log if pid == 0 else None, mesh=_mesh())
    if run is None:  # another process: its share of every pair computed, nothing written
        return
    io.write_csv(run.path / "along.csv", saddles.ALONG_COLUMNS, saddles.along_rows(out))
    io.save_figure(run.path / "along.png", figures.barriers_along_figure(out))
    keep = ("optima", "barrier_matrix", "merges", "n_certified", "timings_s")
    for r in out["per_value"]:  # the pairs' saddles and certificates, without their paths
        if "record" in r:
            rr = r.pop("record")
            r.update({k: rr[k] for k in keep}, searches=[{k: p[k] for k in ("pair", "seed", "energy", "certified",
                  "note", "kind", "reaches", "saddle")} for p in rr["searches"]], saddles=rr["saddles"])
    io.write_json(run.path / "along.json", {**cli.with_run_record("scripts/saddles.py", out, num_processes=n_proc),
                                            "wall_s": time.time() - t0})
    path = cli.finish(run)
    print(report.keyed_table(saddles.ALONG_COLUMNS, saddles.along_rows(out), saddles.ALONG_KEY))
    print(f"\nwrote {path}/along.json, along.csv, along.png ({time.time() - t0:.1f} s)")


def main(argv):
    del argv
    t0 = time.time()
    pid, n_proc = cli.start_processes(FLAGS)  # before any JAX work
    cfg = saddles.SaddlesConfig(**{f.name: FLAGS[f.name].value for f in dataclasses.fields(saddles.SaddlesConfig)
                                   if f.name in FLAGS})  # every field that is a flag (the others keep their default)
    if FLAGS.continuation:
        return _along(cfg, t0, FLAGS.continuation, FLAGS.output_dir, pid, n_proc, FLAGS.overwrite)
    out_name = _out_dir(FLAGS.output_dir, FLAGS.run, "--run")
    summary = cli.read_run_json(Path(FLAGS.run) / "summary.json", script="scripts/basins.py", flag="--run",
                                keys={"config": dict, "optima": list})
    if (problem := saddles.check_summary(summary)) is not None:
        cli.fail(f"--run: {FLAGS.run}/summary.json: {problem} (re-run scripts/basins.py)")
    k = len(saddles.optima_of(summary, cfg.min_fraction))
    if k < 2:
        cli.fail(f"--run: {FLAGS.run} has {k} optima with basin fraction >= {cfg.min_fraction} (--min_fraction); "
                 "a saddle needs two")
    if FLAGS.pairs == "all" and k * (k - 1) // 2 > FLAGS.max_pairs:
        cli.fail(f"--max_pairs: {k} optima make {k * (k - 1) // 2} pairs, more than {FLAGS.max_pairs}; raise "
                 "--min_fraction or --max_pairs")
    run = _open(pid, n_proc, out_name, {**dataclasses.asdict(cfg), "run": str(FLAGS.run)}, OUTPUTS, FLAGS.overwrite)
    record = cli.or_fail(saddles.run, cfg, summary, log=cli.log if pid == 0 else None, mesh=_mesh())
    if run is None:
        return
    out = run.path
    n = len(record["optima"])
    io.write_csv(out / "barriers.csv", ["optimum"] + [str(j) for j in range(n)],
                 [[i] + [f"{v:.12g}" for v in row] for i, row in enumerate(record["barrier_matrix"])])
    title = f"{summary['config']['act']}, {summary['config']['data']['data']}: {n} optima"
    for name, fig in (("disconnectivity", figures.disconnectivity_figure), ("paths", figures.saddle_paths_figure)):
        io.save_figure(out / f"{name}.png", fig(record, title))
    io.write_json(out / "saddles.json", {**cli.with_run_record("scripts/saddles.py", record, num_processes=n_proc),
                                         "wall_s": time.time() - t0})
    out = cli.finish(run)
    print(saddles.table(record))
    print(f"\nwrote {out}/saddles.json, barriers.csv, disconnectivity.png, paths.png ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
