"""Fig. 8: the energy E_alpha(theta) of one node on 2-D data and its local maxima.

    python scripts/landscape.py                       # the paper's nine points, results/landscape
    python scripts/landscape.py --angles=0,0.5,0.9 --acts=relu,linear --output_dir=/tmp/l
    python scripts/landscape.py --data_path=my2d.npz  # x of shape (n, 2); optional p, x_aug
    python scripts/landscape.py --aug=rotation --aug_range=0.25 --aug_views=128 --output_dir=/tmp/l
                                                      # views R(t) x0, t ~ U[-pi/4, pi/4] (App. B.5)

Always float64: the maxima are counted on a dense grid and refined by golden-section search.
Writes landscape.json (per activation: n_local_maxima, maxima_theta, ...) and fig8.png.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import activations, cli, data, io, pairwise  # noqa: E402
from ccdyn.data import files  # noqa: E402
from ccdyn.one_layer import engine, figures  # noqa: E402
from ccdyn.one_layer.studies import landscape_fig8  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("fig8.png", "landscape.json")
flags.DEFINE_list("angles", [repr(a) for a in data.PAPER_ANGLES],
                  "Data angles in units of pi (ignored with --data_path).")
flags.DEFINE_string("data_path", None, "A user's .npz file with x of shape (n, 2); optional p, x_aug.")
flags.DEFINE_list("acts", ["linear", "relu", "leaky_relu", "quadratic"],
                  f"Activations, from: {', '.join(activations.ACTIVATIONS)}.")
flags.DEFINE_float("leaky_slope", activations.DEFAULT_LEAKY_SLOPE, "Negative slope of leaky_relu, in [0, 1).")
flags.DEFINE_enum("alpha", "uniform", pairwise.KINDS, "Pairwise importance alpha.")
flags.DEFINE_float("tau", 1.0, "Temperature of the Gaussian alpha (> 0).")
flags.DEFINE_enum("aug", "none", ["none", "rotation"], "Augmentation: none, or rotation (views R(t) x0 with "
                  "t ~ U[-aug_range pi, aug_range pi] at --aug_views quadrature angles, App. B.5).")
flags.DEFINE_float("aug_range", 1.0, "Half-range of the rotation angle in units of pi, in (0, 1].")
flags.DEFINE_integer("aug_views", 64, "Quadrature angles of the rotation.", lower_bound=1)
flags.DEFINE_integer("n_grid", 1 << 16, "Grid points over [-pi, pi) (>= 16).", lower_bound=16)
cli.define_run_flags("results/landscape", resume=False, what="Where landscape.json and fig8.png go.")

cli.register_numbers("angles", float, min_len=2, what="numbers (units of pi)", unique=False)
cli.register_subset("acts", activations.ACTIVATIONS)
flags.register_validator("leaky_slope", lambda v: 0.0 <= v < 1.0, "--leaky_slope must lie in [0, 1)")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("aug_range", lambda v: 0 < v <= 1,
                         "--aug_range must lie in (0, 1] (half-range of the rotation angle in units of pi)")


def main(argv):
    del argv
    t0 = time.time()
    cfg = landscape_fig8.Fig8Config(
        angles=cli.floats(FLAGS.angles), data_path=FLAGS.data_path, acts=tuple(FLAGS.acts),
        leaky_slope=FLAGS.leaky_slope, alpha=FLAGS.alpha, tau=FLAGS.tau, aug=FLAGS.aug, aug_range=FLAGS.aug_range,
        aug_views=FLAGS.aug_views, n_grid=FLAGS.n_grid)
    cli.check_memory(*landscape_fig8.memory_estimate(cfg))
    user = cli.or_fail(files.load_dataset, cfg.data_path) if cfg.data_path else None
    cli.check_memory(*landscape_fig8.memory_estimate(cfg, None if user is None else user.n))
    ds = cli.or_fail(landscape_fig8.points, cfg, user)
    pw = cli.or_fail(pairwise.get_pairwise, cfg.alpha, cfg.tau)
    for name in cfg.acts:  # the data's scale against float64, and a Gaussian alpha that is not 0 / 1
        act = activations.get_activation(name, cfg.leaky_slope)
        for problem in engine.range_problems(ds, act, pw, engine.Dynamics(), jnp.float64):
            cli.fail(f"{problem} (--acts={name})" if problem.startswith("--")
                     else f"--data_path={cfg.data_path}: {problem}")
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/landscape.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    record = landscape_fig8.run(cfg, ds)
    curves = record["curves"]
    maxima = {name: (a["maxima_theta"], a["maxima_energy"], a["maxima_at_kink"])
              for name, a in record["activations"].items()}
    io.save_figure(out / "fig8.png", figures.landscape_figure(curves["theta"], curves["energy"], maxima,
                                                               curves["data_theta"]))
    io.write_json(out / "landscape.json", {**cli.with_run_record("scripts/landscape.py", record, omit=("curves",)),
                                           "wall_s": time.time() - t0})
    out = cli.finish(run)
    print("\n".join([landscape_fig8.table(record), *landscape_fig8.table_key(cfg.n_grid)]))
    print(f"\nwrote {out / 'landscape.json'} and {out / 'fig8.png'} ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
