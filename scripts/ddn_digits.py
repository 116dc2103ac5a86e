"""A small analogue of Tables 2-3 (Dual Deep Networks, Sec. 7) on scikit-learn's 8x8 digits.

    python scripts/ddn_digits.py --output_dir=results/ddn/digits

Trains a ReLU MLP encoder with L_nce, the exact-covariance loss of Eq. 7 (stop-gradient weights)
and the beta-extended InfoNCE (beta = -0.5, +0.2; Sec. 4.2), --n_seeds seeds vmapped, and reports
the accuracy of a linear (ridge) probe on the frozen representation at --checkpoints steps
(mean ± std over seeds). See ccdyn/deep/studies/digits.py for the views, the losses and the probe, and
results/ddn/README.md for what this does and does not reproduce. Writes digits.json, digits.csv, digits.md.
"""

from __future__ import annotations

import dataclasses
import time

from absl import flags

from ccdyn import cli, io, report
from ccdyn.deep import claims
from ccdyn.deep.studies import digits

FLAGS = flags.FLAGS
OUTPUTS = ("digits.json", "digits.csv", "digits.md")
_D = digits.DigitsConfig()
flags.DEFINE_list("variants", list(digits.VARIANTS), f"Loss variants, from {', '.join(digits.VARIANTS)}.")
flags.DEFINE_list("checkpoints", ["0", "500", "1000", "2000"], "Steps at which the probe is fit (integers >= 0).")
flags.DEFINE_integer("n_seeds", 5, "Seeds (vmapped).", lower_bound=1)
cli.define_seed("seed", 0, "Base seed (also the train/test split).")
flags.DEFINE_float("tau", _D.tau, "Temperature (> 0); the paper's Table 2 uses 0.5.")
flags.DEFINE_float("lr", _D.lr, "Adam learning rate (> 0).")
flags.DEFINE_integer("batch_size", _D.batch_size, "Samples per step (>= 2).", lower_bound=2)
cli.define_run_flags("runs/ddn_digits", resume=False, what="Output directory.")
cli.register_subset("variants", tuple(digits.VARIANTS))
cli.register_numbers("checkpoints", int, 0)
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("lr", lambda v: v > 0, "--lr must be > 0")


def main(argv):
    del argv
    t0 = time.time()
    n_train = len(digits.load_digits()[0])  # batches are drawn without replacement; the seeds' encoders are vmapped
    if FLAGS.batch_size > n_train:
        cli.fail(f"--batch_size={FLAGS.batch_size} exceeds the {n_train} training digits")
    cli.check_memory(4.0 * FLAGS.n_seeds * 64 * 1797 * 4, "--n_seeds",
                     "4 float32 copies of the digits per seed (a lower bound)")
    cli.check_counts(FLAGS, ("checkpoints", "n_seeds", "batch_size"), loops=("checkpoints",),
                     steps=lambda **f: len(FLAGS.variants) * f["--checkpoints"],
                     ops=lambda **f: (len(FLAGS.variants) * f["--checkpoints"] * f["--n_seeds"] * f["--batch_size"]
                                      * 64 * 64),
                     formula="variants x the last checkpoint's steps of n_seeds x batch_size x 64 x 64 products")
    base = dataclasses.replace(_D, tau=FLAGS.tau, lr=FLAGS.lr, batch_size=FLAGS.batch_size,
                               steps=max(cli.ints(FLAGS.checkpoints)))
    config = {"variants": list(FLAGS.variants), "checkpoints": list(cli.ints(FLAGS.checkpoints)),
              "n_seeds": FLAGS.n_seeds, "seed": FLAGS.seed, "train": dataclasses.asdict(base)}
    run = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/ddn_digits.py", outputs=OUTPUTS,
                           overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    rows = []
    for v in FLAGS.variants:
        t1 = time.time()
        rows += digits.run_variants([v], FLAGS.n_seeds, FLAGS.seed, config["checkpoints"], base)
        cli.log(f"{v}: {time.time() - t1:.0f} s")
        for k in rows[-1].get("nonfinite_seeds", []):  # left out of the means, never averaged in
            cli.log(f"WARNING {v} seed {k} went non-finite (left out of the means); lower --lr or raise --tau")
    header = ["variant"] + [f"step {c}" for c in rows[0]["checkpoints"]]
    body = [[r["variant"]] + [f"{100 * m:.1f} ± {100 * s:.1f}" for m, s in zip(r["mean"], r["std"])] for r in rows]
    io.write_json(out / "digits.json", {**cli.run_record("scripts/ddn_digits.py"), "config": config, "rows": rows,
                                        "wall_s": time.time() - t0})
    io.write_csv(out / "digits.csv", ["variant", "step", "mean", "std"],
                 [[r["variant"], c, m, s] for r in rows for c, m, s in zip(r["checkpoints"], r["mean"], r["std"])])
    io.atomic_write_bytes(out / "digits.md", report.markdown_table(header, body).encode())
    out = cli.finish(run)
    print("\n".join([report.format_table(header, body), *claims.digits_table_key()]))
    print(f"\nlinear-probe test accuracy (%), {FLAGS.n_seeds} seeds; wrote {out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    cli.start(main)
