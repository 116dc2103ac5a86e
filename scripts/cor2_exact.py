"""Cor. 2 checked by a route independent of its formula: the ReLU local roughness rho(w) under uniform
and Gaussian alpha (frozen at w) in closed form on a Gaussian mixture, beside a sampled finite
difference of Eq. 3's pairwise sum (ccdyn.one_layer.studies.cor2_exact).

    python scripts/cor2_exact.py --overwrite                    # -> results/theory/cor2/exact
    python scripts/cor2_exact.py --taus=0.5 --n_samples=20000 --output_dir=/tmp/c2

Writes cor2_exact.json (every row with the per-radius profile, the claim record and the command),
cor2_exact.csv, cor2_exact.md, and prints the table and the verdict.
"""

from __future__ import annotations

import dataclasses
import time

from absl import flags

from ccdyn import cli, io, verdicts
from ccdyn.one_layer import claims
from ccdyn.one_layer.studies import cor2_exact

FLAGS = flags.FLAGS
OUTPUTS = ("cor2_exact.json", "cor2_exact.csv", "cor2_exact.md")
flags.DEFINE_integer("d", 3, "Input dimension of the mixture (>= m).", lower_bound=2)
flags.DEFINE_integer("m", 3, "Number of clusters (at 2 u_m).", lower_bound=1)
flags.DEFINE_float("ortho_eps", 0.1, "||U^T U - I||_2 of the cluster basis, in [0, 1).")
flags.DEFINE_float("std", 0.3, "Cluster standard deviation (> 0).")
flags.DEFINE_list("taus", ["8", "2", "0.5", "0.2", "0.05"], "Gaussian-alpha temperatures (> 0).")
flags.DEFINE_integer("n_random_w", 2, "Seeded random unit w besides the patterns.", lower_bound=0)
flags.DEFINE_integer("n_samples", 50000, "Sample size of the finite difference.", lower_bound=1000)
flags.DEFINE_list("radii", ["0.02", "0.01"], "Finite-difference radii (radians, decreasing, in (0, 0.5)).")
cli.define_seed("data_seed", 0, "Seed of the cluster basis (the basins --data_seed).")
cli.define_seed("sample_seed", 0, "Seed of the finite-difference sample.")
cli.define_run_flags("results/theory/cor2/exact", resume=False, what="Where the JSON and tables go.")

cli.register_numbers("taus", float, 0, None, lo_open=True)
cli.register_numbers("radii", float, 0, 0.5, lo_open=True)
flags.register_validator("ortho_eps", lambda v: 0 <= v < 1, "--ortho_eps must lie in [0, 1)")
flags.register_validator("std", lambda v: v > 0, "--std must be > 0")
flags.register_multi_flags_validator(["m", "d"], lambda f: f["m"] <= f["d"], "--m must be <= --d")
flags.register_validator("radii", lambda v: len(v) >= 2 and [float(x) for x in v] == sorted(
    (float(x) for x in v), reverse=True), "--radii needs >= 2 values in decreasing order")


def _memory(**f) -> int:  # float64 bytes: the sample and about 7 arrays like it (views, differences), the d x d basis
    return 8 * (8 * f["--n_samples"] * f["--d"] + 4 * f["--d"] ** 2)


def main(argv):
    del argv
    t0 = time.time()
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("n_samples", "d")),
                        "8 float64 arrays of n_samples x d + 4 of d x d")
    per_w = (len(FLAGS.taus) + 1) * len(FLAGS.radii)  # finite differences over the sample at each w
    cli.check_counts(FLAGS, ("n_random_w", "n_samples", "d", "m"),
                     steps=lambda **f: (f["--n_random_w"] + f["--m"]) * per_w,
                     ops=lambda **f: 8 * (f["--n_random_w"] + f["--m"]) * per_w * f["--n_samples"] * f["--d"],
                     memory=lambda **f: 1000 * (f["--n_random_w"] + f["--m"]) * per_w,
                     formula=f"(n_random_w + m) points x {per_w} finite differences over n_samples x d; ~1 kB rows")
    cfg = cor2_exact.Cor2ExactConfig(
        d=FLAGS.d, m=FLAGS.m, ortho_eps=FLAGS.ortho_eps, std=FLAGS.std, data_seed=FLAGS.data_seed,
        taus=cli.floats(FLAGS.taus), n_random_w=FLAGS.n_random_w, n_samples=FLAGS.n_samples,
        sample_seed=FLAGS.sample_seed, radii=cli.floats(FLAGS.radii))
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/cor2_exact.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    record = cor2_exact.run(cfg, log=cli.log)
    saved = cli.with_run_record("scripts/cor2_exact.py", record)
    saved["claims"] = claims.cor2_exact_claims(saved, result=str(FLAGS.output_dir))
    io.write_csv(out / "cor2_exact.csv", cor2_exact.COLUMNS, record["tables"]["rows"])
    io.atomic_write_bytes(out / "cor2_exact.md", (cor2_exact.markdown(record) + "\n"
                                                  + verdicts.ledger_markdown(saved["claims"])).encode())
    io.write_json(out / "cor2_exact.json", saved)
    out = cli.finish(run)
    print("\n".join([cor2_exact.table(record), *cor2_exact.table_key()]))
    c = saved["claims"][0]
    failed = "; ".join(k for k, ok in c["parts"].items() if not ok)
    print(f"\n{c['id']}: {c['verdict']} ({'not: ' + failed if failed else 'all parts hold'})\n"
          f"wrote {out}/cor2_exact.json, .csv, .md ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
