"""Thm. 3 decided exactly on the ReLU activation regions, beside the sampled certificate at the same
starts (ccdyn.one_layer.studies.theorem3_exact; the starts of scripts/irregularity.py).

    python scripts/thm3_exact.py --overwrite                  # -> results/theory/thm3_exact
    python scripts/thm3_exact.py --ortho_eps=0.1 --angles_deg=0,2 --n_patterns=3 --output_dir=/tmp/t3x

On an exact population A(w) is constant on each activation region and jumps across every hyperplane
x_i^T w = 0, so Eq. 11 holds for a gamma exactly when no such plane meets B_gamma (then L = kappa = 0
and sup omega = mu at the cap's smallest c, in closed form) and mu there is <= gamma; a plane inside
B_gamma leaves no finite L. Writes thm3_exact.json (every start, the claim record, the command),
starts.csv, summary.csv, thm3_exact.md, and prints the summary and the verdict.
"""

from __future__ import annotations

import dataclasses
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

from ccdyn import cli, data, io, verdicts  # noqa: E402
from ccdyn.one_layer import claims  # noqa: E402
from ccdyn.one_layer.studies import theorem3_exact  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("starts.csv", "summary.csv", "thm3_exact.md", "thm3_exact.json")
flags.DEFINE_integer("d", 10, "Input dimension (>= m).", lower_bound=1)
flags.DEFINE_integer("m", 10, "Number of patterns M (<= 16: exact population).", lower_bound=1)
flags.DEFINE_float("q", 0.2, "q_m of every latent, in (0, 1).")
flags.DEFINE_list("ortho_eps", ["0", "0.05", "0.1", "0.2"], "Values of ||U^T U - I||_2, each in [0, 1).")
flags.DEFINE_list("angles_deg", ["0", "2", "5", "10"], "Angles (degrees, in [0, 90)) between w(0) and u_m.")
flags.DEFINE_integer("n_patterns", 5, "Start near u_0 .. u_{n-1} (<= m).", lower_bound=1)
flags.DEFINE_list("gammas", [f"{g:.1f}" for g in np.arange(0.1, 1.0, 0.1)], "Candidate gammas, in (0, 1).")
flags.DEFINE_integer("n_samples", 64, "Sample points of each B_gamma (the sampled certificate).", lower_bound=4)
flags.DEFINE_integer("n_steps", 200, "Power-iteration steps.", lower_bound=1)
flags.DEFINE_enum("act", "relu", ["relu", "leaky_relu"], "Piecewise-linear activation.")
cli.define_seed("data_seed", 0, "Seed of the bases and of the start directions.")
cli.define_run_flags("results/theory/thm3_exact", resume=False, what="Where the JSON and tables go.")

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
    cfg = theorem3_exact.Theorem3ExactConfig(
        d=FLAGS.d, m=FLAGS.m, q=FLAGS.q, ortho_eps=cli.floats(FLAGS.ortho_eps),
        angles_deg=cli.floats(FLAGS.angles_deg), n_patterns=FLAGS.n_patterns, gammas=cli.floats(FLAGS.gammas),
        n_samples=FLAGS.n_samples, n_steps=FLAGS.n_steps, act=FLAGS.act, data_seed=FLAGS.data_seed)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/thm3_exact.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    record = theorem3_exact.run(cfg, log=cli.log)
    saved = cli.with_run_record("scripts/thm3_exact.py", record)
    saved["claims"] = claims.theorem3_exact_claims(saved, result=str(FLAGS.output_dir))
    io.write_csv(out / "starts.csv", theorem3_exact.START_COLUMNS, record["tables"]["starts"])
    io.write_csv(out / "summary.csv", theorem3_exact.SUMMARY_COLUMNS, record["tables"]["summary"])
    io.atomic_write_bytes(out / "thm3_exact.md", (theorem3_exact.markdown(record) + "\n"
                                                  + verdicts.ledger_markdown(saved["claims"])).encode())
    io.write_json(out / "thm3_exact.json", saved)
    out = cli.finish(run)
    print(theorem3_exact.table(record))
    c = saved["claims"][0]
    failed = "; ".join(k for k, ok in c["parts"].items() if not ok)
    print(f"\n{c['id']}: {c['verdict']} ({'not: ' + failed if failed else 'all parts hold'}) {c['numbers']}\n"
          f"wrote {out}/thm3_exact.json, starts.csv, summary.csv, "
          f"thm3_exact.md ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
