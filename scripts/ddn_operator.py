"""Covariance operator against autodiff (Dual Deep Networks, Thm. 3-4, Eq. 7, Cor. 1), in float64.

    python scripts/ddn_operator.py --output_dir=results/ddn/operator

On one random deep ReLU network and exact noise populations (n points, V equally likely views
x0 + sigma * noise), compares the descent direction -dE[L]/dvec(W_l) by autodiff with the operator
expression OP_l vec(W_l) of the paper, per loss, layer and branch (``all``: tied weights, compared
with 2 OP vec W; ``first``: the paper's one-branch gradient). The relative difference is rounding
where the paper says theta = 0 and the residue theta of Thm. 4 elsewhere. Writes operator.json and
operator.csv (every row) and prints the largest relative difference per (loss, beta, sigma), with a key.
"""

from __future__ import annotations

import math
import time

import jax
from absl import flags

from ccdyn import cli, io, report
from ccdyn.deep import claims, operator

FLAGS = flags.FLAGS
OUTPUTS = ("operator.csv", "operator.json")
flags.DEFINE_list("sizes", ["6", "8", "5", "3"], "Layer widths n_0, ..., n_L (integers >= 1, at least two).")
flags.DEFINE_list("sigmas", ["0", "0.025", "0.05", "0.1", "0.2", "0.4"], "Augmentation noise levels (>= 0).")
flags.DEFINE_list("betas", ["0", "-0.5", "0.2"], "beta of L_simp^beta (Cor. 1).")
flags.DEFINE_integer("n", 6, "Points of the population.", lower_bound=2)
flags.DEFINE_integer("n_views", 3, "Views per point.", lower_bound=1)
flags.DEFINE_float("tau", 0.5, "Temperature of L_tri / L_nce (> 0).")
cli.define_seed("seed", 0, "Seed of the network and the population.")
cli.define_run_flags("runs/ddn_operator", resume=False, what="Output directory.")
cli.register_numbers("sizes", int, 1, min_len=2, unique=False)  # layers may have equal widths
cli.register_numbers("sigmas", float, 0)
cli.register_numbers("betas", float)
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")


def main(argv):
    del argv
    t0 = time.time()
    jax.config.update("jax_enable_x64", True)
    cli.check_memory_of(lambda **f: 8 * 8 * f["--n"] * f["--n_views"] * f["--sizes"],
                        *cli.sizes_of(FLAGS, ("n", "n_views", "sizes")),
                        "8 float64 arrays of n x n_views x max(sizes) (a lower bound)")
    config = {"sizes": cli.ints(FLAGS.sizes), "sigmas": cli.floats(FLAGS.sigmas), "betas": cli.floats(FLAGS.betas),
              "n": FLAGS.n, "n_views": FLAGS.n_views, "tau": FLAGS.tau, "seed": FLAGS.seed}
    run = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/ddn_operator.py", outputs=OUTPUTS,
                           overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    rows = operator.residue_study(jax.random.PRNGKey(FLAGS.seed), tuple(config["sizes"]), FLAGS.n, FLAGS.n_views,
                                  FLAGS.tau, config["sigmas"], config["betas"])
    bad = sorted({r["loss"] for r in rows if not math.isfinite(r["rel"])})  # never a table of inf / nan
    if bad:
        names = ", ".join(bad)
        cli.fail(f"--tau={FLAGS.tau:g}: the descent of {names} is not finite (exp(-d^2 / tau) beyond float64's range); "
                 "use a larger --tau" if set(bad) - {"simp"} else
                 f"the descent of {names} is not finite for this network; use another --seed or smaller --sizes")
    keys = ["loss", "beta", "sigma", "layer", "branch", "rel", "sigma_aug2"]
    io.write_csv(out / "operator.csv", keys, [[r[k] for k in keys] for r in rows])
    io.write_json(out / "operator.json", {**cli.run_record("scripts/ddn_operator.py"), "config": config,
                                          "rows": rows, "wall_s": time.time() - t0})
    out = cli.finish(run)
    print("\n".join([report.format_table(*claims.operator_table(rows)), *claims.operator_table_key()]))
    print(f"\nwrote {out} in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    cli.start(main)
