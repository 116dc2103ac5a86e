"""Fig. 1 (right): convergence of power iteration (Eq. PI) started at each planted pattern u_m of a
latent summation model whose basis is only nearly orthogonal (Thm. 3).

    python scripts/power_iteration.py                      # eps in {0, 0.05, 0.1, 0.2} -> results/theory/fig1
    python scripts/power_iteration.py --ortho_eps=0.1,0.3 --act=leaky_relu --output_dir=/tmp/pi

For every ||U^T U - I||_2 = eps and every m, w(0) = u_m / ||u_m||; the script records
||w(t+1) - w(t)|| for t < --n_steps, and certifies the end point (float64). Writes fig1_right.png and
power_iteration.json (per eps: moves, overlap of the end point with u_m, certificate flags).
"""

from __future__ import annotations

import dataclasses
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import activations, cli, data, io  # noqa: E402
from ccdyn.one_layer import figures  # noqa: E402
from ccdyn.one_layer.studies import fig1  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("fig1_right.png", "power_iteration.json")
flags.DEFINE_integer("d", 10, "Input dimension (>= m).", lower_bound=1)
flags.DEFINE_integer("m", 10, "Number of patterns M.", lower_bound=1)
flags.DEFINE_float("q", 0.2, "q_m of every latent, in (0, 1).")
flags.DEFINE_list("ortho_eps", ["0", "0.05", "0.1", "0.2"], "Values of ||U^T U - I||_2, each in [0, 1).")
flags.DEFINE_enum("act", "relu", list(activations.HOMOGENEOUS), "Homogeneous activation.")
flags.DEFINE_integer("n_steps", 30, "Power-iteration steps.", lower_bound=1)
cli.define_seed("data_seed", 0, "Seed of the random bases.")
cli.define_run_flags("results/theory/fig1", resume=False, what="Where the JSON and the PNG go.")

cli.register_numbers("ortho_eps", float, 0, 1)
flags.register_validator("q", lambda v: 0 < v < 1, "--q must lie in (0, 1)")
flags.register_multi_flags_validator(["m", "d"], lambda f: f["m"] <= f["d"] and f["m"] <= data.MAX_EXACT_M,
                                     f"--m must be <= --d and <= {data.MAX_EXACT_M} (exact population)")


def _memory(**f) -> int:  # float64 bytes: the 2^M points, M iterates, their d x d certificate matrices
    d, m = f["--d"], f["--m"]
    return 8 * (2 ** m * d + m * f["--n_steps"] + 4 * m * d * d)


def main(argv):
    del argv
    t0 = time.time()
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("d", "m", "n_steps")),
                        "float64 2^M d data + M n_steps moves + 4 M d^2 for the certificates")
    cli.check_counts(FLAGS, ("n_steps", "d", "m"), loops=("n_steps",), steps=lambda **f: f["--n_steps"],
                     ops=lambda **f: f["--n_steps"] * f["--m"] * 2 ** min(f["--m"], 64) * f["--d"],
                     formula="n_steps steps of M starts over the 2^M-point population in d")
    cfg = fig1.Fig1Config(d=FLAGS.d, m=FLAGS.m, q=FLAGS.q, ortho_eps=cli.floats(FLAGS.ortho_eps), act=FLAGS.act,
                          n_steps=FLAGS.n_steps, data_seed=FLAGS.data_seed)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/power_iteration.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    record = fig1.run(cfg)
    moves = {eps: record["ortho_eps"][str(eps)]["moves"] for eps in cfg.ortho_eps}
    title = f"power iteration from u_m, {cfg.act}, latent summation d={cfg.d} M={cfg.m} q={cfg.q}"
    io.save_figure(out / "fig1_right.png", figures.power_iteration_figure(moves, title))
    io.write_json(out / "power_iteration.json", cli.with_run_record("scripts/power_iteration.py", record))
    out = cli.finish(run)
    print("\n".join([fig1.table(record), *fig1.table_key(cfg.n_steps)]))
    print(f"\nwrote {out / 'power_iteration.json'} and {out / 'fig1_right.png'} ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
