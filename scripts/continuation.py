r"""Continuation of basins across a parameter: the basins job at each value with the same inits, optima
followed as tracks (born at, dies at, merges into) and the tipping matrix between neighbouring values.

    python scripts/continuation.py --param=ortho_eps --values=0,0.1,0.2,0.3 --n_init=2000
    python scripts/continuation.py --param=tau --values=8,2,0.5,0.2,0.05 --alpha=gaussian --data=gaussian_mixture \
        --d=3 --m=3 --n_samples=600 --method=flow --step_size=10 --max_steps=3000 --n_init=300 --tile=64 \
        --cluster_tol=0.1

--param names a basins flag that is a number (tau, leaky_slope, cluster_tol, ...), a data flag
(ortho_eps, aug_range, q, std, ...) or a dynamics flag (step_size, tol, max_steps, shift); its own
flag is then ignored. Values of a data flag that keep the dataset's shapes run in one compiled program
(the values a batch axis, the inits shared); --nobatch_values runs them value by value (same results).
The matching rule is in ccdyn/one_layer/studies/continuation.py; the run directory is
ccdyn's own (docs/reproducibility.md).

Writes <output_dir>/continuation.json (the record and the run record), tracks.csv, tipping.csv,
continuation.png, and prints one row per track.
"""

from __future__ import annotations

import dataclasses
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)  # certificates are float64; the runs use --x64 or float32

from ccdyn import cli, io  # noqa: E402
from ccdyn.one_layer import figures, script_flags  # noqa: E402
from ccdyn.one_layer.studies import continuation  # noqa: E402

OUTPUTS = ("continuation.json", "tracks.csv", "tipping.csv", "continuation.png")

FLAGS = flags.FLAGS
flags.DEFINE_string("param", None, "The parameter to continue in: a numeric basins, data or dynamics flag's name.")
flags.DEFINE_list("values", None, "Its values, in the order to follow them (at least 1).")
flags.DEFINE_float("match_tol", 0.2, "Optima at neighbouring values farther apart than this (on the sphere, w ~ -w "
                   "for odd activations) are never one branch, in (0, 2].")
flags.DEFINE_float("merge_share", 0.5, "A vanishing optimum merges into the optimum that takes at least this share "
                   "of its basin, in (0, 1].")
flags.DEFINE_float("min_fraction", 0.005, "Tracks listed on stdout and drawn: basin fraction >= this at some value "
                   "(the CSV and JSON files have all).", lower_bound=0)
flags.DEFINE_bool("batch_values", True, "Run every value in one compiled program where the values share the "
                  "dataset's shapes (data parameters: ortho_eps, q, std, ...); false: value by value (same results).")
flags.DEFINE_enum("plot_y", "energy", ["energy", "overlap"], "The figure's y: the optimum's energy or its cosine "
                  "with its best planted pattern.")
script_flags.define_basins_flags(n_init=2000)
cli.define_run_flags(None, resume=False, what="Run directory (default runs/continuation-<param>).")

flags.mark_flags_as_required(["param", "values"])
cli.register_numbers("values", float)
flags.register_validator("match_tol", lambda v: 0 < v <= 2, "--match_tol must lie in (0, 2]")
flags.register_validator("merge_share", lambda v: 0 < v <= 1, "--merge_share must lie in (0, 1]")


def main(argv):
    del argv
    t_start = time.time()
    base = script_flags.basins_config(FLAGS)
    param, values = FLAGS.param, cli.floats(FLAGS.values)
    for cfg in cli.or_fail(continuation.configs, base, param, values):  # every value checked before any run
        script_flags.basins_data(cfg, context=f"{param}={cfg_value(cfg, param):g}: ")
    if (why := continuation.inert(base, param)) is not None:
        cli.log(f"warning: {why}")
    config = {"base": dataclasses.asdict(base), "param": param, "values": values, "match_tol": FLAGS.match_tol,
              "merge_share": FLAGS.merge_share, "min_fraction": FLAGS.min_fraction, "batch_values": FLAGS.batch_values}
    run = cli.open_run_dir(FLAGS.output_dir or f"runs/continuation-{param}", io.as_json(config),
                           script="scripts/continuation.py", outputs=OUTPUTS, overwrite=FLAGS.overwrite,
                           can_resume=False)
    cli.log(f"ccdyn continuation: {param} over {', '.join(f'{v:g}' for v in values)}; act={base.act} "
            f"data={base.data.data} alpha={base.alpha} method={base.dynamics.method} n_init={base.n_init} "
            f"-> {run.path}")
    rec = continuation.run(base, param, values, match_tol=FLAGS.match_tol, merge_share=FLAGS.merge_share,
                           batch=FLAGS.batch_values, progress=cli.progress(time.time()), log=cli.log)
    out = run.path
    io.write_csv(out / "tracks.csv", *continuation.track_rows(rec))
    io.write_csv(out / "tipping.csv", *continuation.tipping_rows(rec))
    title = (f"{base.act}, {base.data.data}, alpha={base.alpha}, {base.dynamics.method}, {base.n_init} inits: "
             f"{len(rec['tracks'])} tracks over {param}")
    io.save_figure(out / "continuation.png", figures.continuation_figure(rec, title, FLAGS.min_fraction,
                                                                               FLAGS.plot_y))
    body = {"config": config, **continuation.compact(rec), "timings_s": {"total": time.time() - t_start}}
    io.write_json(out / "continuation.json", cli.with_run_record("scripts/continuation.py", body))
    out = cli.finish(run)
    print(continuation.table(rec, FLAGS.min_fraction))
    print(f"\nwrote {out}/continuation.json, tracks.csv, tipping.csv, continuation.png ({time.time() - t_start:.1f} s)")


def cfg_value(cfg, param):
    """The value of ``param`` in a basins config (wherever the field lives)."""
    owner = continuation.PARAMS[param][0]
    v = getattr(cfg if owner == "config" else getattr(cfg, owner), param)
    return v[0] if isinstance(v, tuple) else v


if __name__ == "__main__":
    cli.start(main)
