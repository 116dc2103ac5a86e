"""Thm. 3 made measurable: irregularity omega (Def. 4) on the ball B_gamma around a start w(0), and
power iteration (Eq. PI) from that start, on latent summation models whose basis is only nearly
orthogonal (the setting of Fig. 1 right).

    python scripts/irregularity.py                    # eps in {0, 0.05, 0.1, 0.2} -> results/theory/thm3
    python scripts/irregularity.py --ortho_eps=0.1 --angles_deg=0,5 --n_patterns=3 --output_dir=/tmp/t3

For every ||U^T U - I||_2 = eps, pattern u_m (m < --n_patterns) and start angle a, w(0) is u_m turned
by a toward a random tangent direction. For each gamma of --gammas (ascending) the script samples
B_gamma = {w : w^T w(0) >= (c0 - c_gamma)/(1 - c_gamma)}, estimates the Lipschitz constant L of
A(w) and the eigenvector constant kappa (Lemma 9) on the samples, and evaluates
omega = mu + nu (Eq. 10) there; the smallest gamma with sup omega <= gamma certifies the start
(Eq. 11). Power iteration is then run from w(0) and Lemma 11's claims are checked: w(t) stays in
B_gamma, c_t increases, 1 - c_t <= gamma^t (1 - c0), and w(t) converges.

Writes thm3.json (every start, with the command), starts.csv, summary.md/.csv, and prints the summary.
"""

from __future__ import annotations

import dataclasses
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from ccdyn import activations, cli, data, io  # noqa: E402
from ccdyn.one_layer.studies import theorem3  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("starts.csv", "summary.csv", "summary.md", "thm3.json")
flags.DEFINE_integer("d", 10, "Input dimension (>= m).", lower_bound=1)
flags.DEFINE_integer("m", 10, "Number of patterns M (<= 16: exact population).", lower_bound=1)
flags.DEFINE_float("q", 0.2, "q_m of every latent, in (0, 1).")
flags.DEFINE_list("ortho_eps", ["0", "0.05", "0.1", "0.2"], "Values of ||U^T U - I||_2, each in [0, 1).")
flags.DEFINE_list("angles_deg", ["0", "2", "5", "10"], "Angles (degrees, in [0, 90)) between w(0) and u_m.")
flags.DEFINE_integer("n_patterns", 5, "Start near u_0 .. u_{n-1} (<= m).", lower_bound=1)
flags.DEFINE_list("gammas", [f"{g:.1f}" for g in np.arange(0.1, 1.0, 0.1)], "Candidate gammas, in (0, 1).")
flags.DEFINE_integer("n_samples", 64, "Sample points of each B_gamma.", lower_bound=4)
flags.DEFINE_integer("n_steps", 200, "Power-iteration steps.", lower_bound=1)
flags.DEFINE_enum("act", "relu", list(activations.HOMOGENEOUS), "Homogeneous activation.")
cli.define_seed("data_seed", 0, "Seed of the bases and of the start directions.")
cli.define_run_flags("results/theory/thm3", resume=False, what="Where the JSON and tables go.")

cli.register_numbers("ortho_eps", float, 0, 1)
cli.register_numbers("angles_deg", float, 0, 90)
cli.register_numbers("gammas", float, 0, 1, lo_open=True)
flags.register_validator("q", lambda v: 0 < v < 1, "--q must lie in (0, 1)")
flags.register_multi_flags_validator(["m", "d"], lambda f: f["m"] <= f["d"] and f["m"] <= data.MAX_EXACT_M,
                                     f"--m must be <= --d and <= {data.MAX_EXACT_M} (exact population)")
flags.register_multi_flags_validator(["n_patterns", "m"], lambda f: f["n_patterns"] <= f["m"],
                                     "--n_patterns must be <= --m")


def _memory(**f) -> int:  # float64 bytes, a lower bound: the sample of n_samples points in d and the d x d basis
    return 8 * (2 * f["--n_samples"] * f["--d"] + 4 * f["--d"] ** 2)


def main(argv):
    del argv
    t0 = time.time()
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("n_samples", "d")),
                        "2 float64 arrays of n_samples x d + 4 of d x d")
    starts = len(FLAGS.ortho_eps) * len(FLAGS.angles_deg) * FLAGS.n_patterns  # each start's trajectory is kept
    cli.check_counts(FLAGS, ("n_steps", "d", "m"), loops=("n_steps",), steps=lambda **f: f["--n_steps"],
                     ops=lambda **f: starts * f["--n_steps"] * 2 ** min(f["--m"], 64) * f["--d"],
                     memory=lambda **f: 8 * starts * (f["--n_steps"] + 1) * f["--d"],
                     formula=f"{starts} starts x n_steps steps of the 2^m-point population in d; float64 trajectories")
    cfg = theorem3.Theorem3Config(
        d=FLAGS.d, m=FLAGS.m, q=FLAGS.q, ortho_eps=cli.floats(FLAGS.ortho_eps),
        angles_deg=cli.floats(FLAGS.angles_deg), n_patterns=FLAGS.n_patterns, gammas=cli.floats(FLAGS.gammas),
        n_samples=FLAGS.n_samples, n_steps=FLAGS.n_steps, act=FLAGS.act, data_seed=FLAGS.data_seed)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/irregularity.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    record = theorem3.run(cfg, log=cli.log)
    io.write_csv(out / "starts.csv", theorem3.START_COLUMNS, record["tables"]["starts"])
    io.write_csv(out / "summary.csv", theorem3.SUMMARY_COLUMNS, record["tables"]["summary"])
    io.atomic_write_bytes(out / "summary.md", theorem3.markdown(record).encode())
    io.write_json(out / "thm3.json", cli.with_run_record("scripts/irregularity.py", record))
    out = cli.finish(run)
    print(theorem3.table(record))
    print(f"\n{record['verdict']}\nwrote {out}/thm3.json, starts.csv, summary.md/.csv ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
