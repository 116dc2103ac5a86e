"""Fig. 1 (right): convergence of power iteration (Eq. PI) started at each planted pattern u_m of a
latent summation model whose basis is only nearly orthogonal (Thm. 3).

    python scripts/power_iteration.py                      # eps in {0, 0.05, 0.1, 0.2} -> results/theory/fig1
    python scripts/power_iteration.py --ortho_eps=0.1,0.3 --act=leaky_relu --output_dir=/tmp/pi

For every ||U^T U - I||_2 = eps and every m, w(0) = u_m / ||u_m||; the script records
||w(t+1) - w(t)|| for t < --n_steps, and certifies the end point (float64). Writes fig1_right.png and
power_iteration.json (per eps: moves, overlap of the end point with u_m, certificate flags).
"""

from __future__ import annotations

import sys
import time

from absl import app, flags

import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, data, io, one_layer, pairwise, plotting, report  # noqa: E402
from ccdyn.one_layer import certify  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_integer("d", 10, "Input dimension (>= m).", lower_bound=1)
flags.DEFINE_integer("m", 10, "Number of patterns M.", lower_bound=1)
flags.DEFINE_float("q", 0.2, "q_m of every latent, in (0, 1).")
flags.DEFINE_list("ortho_eps", ["0", "0.05", "0.1", "0.2"], "Values of ||U^T U - I||_2, each in [0, 1).")
flags.DEFINE_enum("act", "relu", list(activations.HOMOGENEOUS), "Homogeneous activation.")
flags.DEFINE_integer("n_steps", 30, "Power-iteration steps.", lower_bound=1)
flags.DEFINE_integer("data_seed", 0, "Seed of the random bases.")
flags.DEFINE_string("output_dir", "results/theory/fig1", "Where the JSON and the PNG go.")
flags.DEFINE_bool("overwrite", False, "Replace an existing non-empty output_dir.")


def _eps_values(values):
    try:
        eps = [float(v) for v in values]
    except ValueError:
        return None
    return eps if eps and all(0 <= e < 1 for e in eps) else None


flags.register_validator("ortho_eps", lambda v: _eps_values(v) is not None,
                         "--ortho_eps must be a comma-separated list of numbers in [0, 1)")
flags.register_validator("q", lambda v: 0 < v < 1, "--q must lie in (0, 1)")
flags.register_multi_flags_validator(["m", "d"], lambda f: f["m"] <= f["d"] and f["m"] <= data.MAX_EXACT_M,
                                     f"--m must be <= --d and <= {data.MAX_EXACT_M} (exact population)")


def main(argv):
    del argv
    t0 = time.time()
    try:
        out = io.prepare_output_dir(FLAGS.output_dir, overwrite=FLAGS.overwrite)
    except FileExistsError as e:
        sys.exit(f"error: {e}")
    act, pw = activations.get_activation(FLAGS.act), pairwise.get_pairwise("uniform")
    moves, per_eps, rows = {}, {}, []
    for eps in _eps_values(FLAGS.ortho_eps):
        u = data.near_orthogonal_basis(jax.random.PRNGKey(FLAGS.data_seed), FLAGS.d, FLAGS.m, eps)
        ds = data.latent_summation(u, FLAGS.q)
        w0 = jnp.asarray((u / np.linalg.norm(u, axis=0)).T)
        w, mv, _ = one_layer.power_iteration(ds, act, w0, n_steps=FLAGS.n_steps, pairwise=pw)
        certs = jax.vmap(lambda v: certify.certify(ds, act, v, pw))(w)
        overlap = np.sum(np.asarray(w) * np.asarray(w0), axis=1)
        moves[eps] = np.asarray(mv).T
        per_eps[str(eps)] = {"moves": moves[eps], "overlap_with_start": overlap,
                             "residual": certs.residual, "is_lme": certs.is_lme, "stable": certs.is_stable,
                             "steps_to_1e-12": [int(np.argmax(r < 1e-12)) + 1 if np.any(r < 1e-12) else None
                                                for r in moves[eps]]}
        rows.append([eps, f"{overlap.min():.4f}", int(np.sum(np.asarray(certs.is_stable))), FLAGS.m,
                     f"{float(np.max(moves[eps][:, -1])):.1e}"])
    fig = plotting.power_iteration_figure(moves, f"power iteration from u_m, {FLAGS.act}, latent summation "
                                                 f"d={FLAGS.d} M={FLAGS.m} q={FLAGS.q}")
    io.save_figure(out / "fig1_right.png", fig)
    io.write_json(out / "power_iteration.json", {
        "command": " ".join(["python", "scripts/power_iteration.py"] + sys.argv[1:]),
        "config": {"d": FLAGS.d, "m": FLAGS.m, "q": FLAGS.q, "act": FLAGS.act, "n_steps": FLAGS.n_steps,
                   "data_seed": FLAGS.data_seed, "dtype": "float64"},
        "ortho_eps": per_eps})
    print(report.format_table(["ortho_eps", "min cos(w*, u_m)", "stable optima", "starts", "last move"], rows))
    print(f"\nwrote {out / 'power_iteration.json'} and {out / 'fig1_right.png'} ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    app.run(main)
