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

import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from ccdyn.data import files
from ccdyn import activations, data, io, pairwise, plotting, report  # noqa: E402
from ccdyn.one_layer import landscape  # noqa: E402
from ccdyn.data.registry import DataSpec, augment  # noqa: E402

FLAGS = flags.FLAGS
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
flags.DEFINE_string("output_dir", "results/landscape", "Where landscape.json and fig8.png go.")
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")


def _floats(values):
    try:
        return [float(v) for v in values]
    except ValueError:
        return None


flags.register_validator("angles", lambda v: _floats(v) is not None and len(v) >= 2,
                         "--angles must be a comma-separated list of at least 2 numbers (units of pi)")
flags.register_validator("acts", lambda v: len(v) > 0 and all(a in activations.ACTIVATIONS for a in v),
                         f"--acts must be a non-empty list from: {', '.join(activations.ACTIVATIONS)}")
flags.register_validator("leaky_slope", lambda v: 0.0 <= v < 1.0, "--leaky_slope must lie in [0, 1)")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("aug_range", lambda v: 0 < v <= 1,
                         "--aug_range must lie in (0, 1] (half-range of the rotation angle in units of pi)")


def main(argv):
    del argv
    t0 = time.time()
    try:
        ds = files.load_dataset(FLAGS.data_path) if FLAGS.data_path else data.circle(_floats(FLAGS.angles))
        if ds.dim != 2:
            raise ValueError(f"--data_path must hold 2-D points, got x of shape {ds.x.shape}")
        ds = augment(ds, DataSpec(aug=FLAGS.aug, aug_range=FLAGS.aug_range, aug_views=FLAGS.aug_views), None)
        out = io.prepare_output_dir(FLAGS.output_dir, overwrite=FLAGS.overwrite)
    except (ValueError, FileExistsError) as e:
        sys.exit(f"error: {e}")
    pw = pairwise.get_pairwise(FLAGS.alpha, FLAGS.tau)
    energies, maxima, per_act, rows = {}, {}, {}, []
    for name in FLAGS.acts:
        act = activations.get_activation(name, FLAGS.leaky_slope)
        theta, e, m = landscape.local_maxima(ds, act, pw, n_grid=FLAGS.n_grid)
        energies[name], maxima[name] = e, (m.theta, m.energy, m.at_kink)
        per_act[name] = {
            "n_local_maxima": int(m.theta.size),
            "maxima_theta": m.theta,
            "maxima_theta_over_pi": m.theta / np.pi,
            "maxima_energy": m.energy,
            "maxima_at_kink": m.at_kink,
            "maxima_residual": m.residual,
            "n_smooth_critical": int(np.sum(~m.at_kink)),
        }
        rows.append([name, int(m.theta.size), int(np.sum(~m.at_kink)), int(np.sum(m.at_kink)),
                     " ".join(f"{t:+.4f}" for t in m.theta / np.pi)])
    data_theta = np.arctan2(np.asarray(ds.x[:, 1]), np.asarray(ds.x[:, 0]))
    fig = plotting.landscape_figure(theta, energies, maxima, data_theta)
    io.save_figure(out / "fig8.png", fig)
    summary = {
        "command": " ".join(["python", "scripts/landscape.py"] + sys.argv[1:]),
        "config": {"angles_over_pi": (data_theta / np.pi), "data_path": FLAGS.data_path,
                   "alpha": FLAGS.alpha, "tau": FLAGS.tau, "leaky_slope": FLAGS.leaky_slope,
                   "n_grid": FLAGS.n_grid, "dtype": "float64", "aug": FLAGS.aug,
                   "aug_range": FLAGS.aug_range if FLAGS.aug != "none" else None,
                   "aug_views": FLAGS.aug_views if FLAGS.aug != "none" else None},
        "activations": per_act,
        "wall_s": time.time() - t0,
    }
    io.write_json(out / "landscape.json", summary)
    print(report.format_table(["activation", "maxima", "smooth", "on kink", "theta/pi of maxima"], rows))
    print(f"\nwrote {out / 'landscape.json'} and {out / 'fig8.png'} ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    app.run(main)
