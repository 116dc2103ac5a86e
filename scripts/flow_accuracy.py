r"""How exact are the flow's basins (--method=flow, Eq. 7 to --flow_rtol)? Two checks (docs/flow.md).

    # 2-D: exact basins (arcs between the minima of E on the circle) against the pipeline, 20 random sets
    python scripts/flow_accuracy.py --check=exact_2d --set_seeds=100:120 --n_init=20000 --x64 \
        --output_dir=results/basins/flow_exact_2d
    # any d (default data, d = 10): the fractions at --rtols r, r/10, ... agree within their intervals
    python scripts/flow_accuracy.py --check=rtol --rtols=1e-3,1e-4,1e-5 --n_init=10000 \
        --output_dir=results/basins/flow_rtol

The basins flags (scripts/basins.py) set everything else (--method defaults to flow); --check=exact_2d replaces
the data by circle sets of --min_points .. --max_points random angles (seeded by each set seed), with
--method=euler_halving it measures the old scheme. Writes sets.csv or pairs.csv, claims.md and
flow_accuracy.json (with the run record) and prints the table.
"""

from __future__ import annotations

import dataclasses
import time

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import cli, io, report, verdicts  # noqa: E402
from ccdyn.one_layer import script_flags  # noqa: E402
from ccdyn.one_layer.studies import flow_accuracy  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("sets.csv", "pairs.csv", "claims.md", "flow_accuracy.json")
script_flags.define_basins_flags(n_init=20000)
flags.DEFINE_enum("check", None, ["exact_2d", "rtol"], "Which check.", required=True)
flags.DEFINE_string("set_seeds", "100:120", "exact_2d: set seeds as START:STOP (STOP excluded).")
flags.DEFINE_integer("min_points", 6, "exact_2d: fewest points of a set.", lower_bound=2)
flags.DEFINE_integer("max_points", 12, "exact_2d: most points of a set.", lower_bound=2)
flags.DEFINE_list("rtols", ["1e-3", "1e-4", "1e-5"], "rtol: --flow_rtol values, each compared with the next.")
flags.DEFINE_float("min_fraction", None, "Smallest basin checked (default: 0.005 for exact_2d, 0.01 for rtol), "
                   "in (0, 1).")
cli.define_run_flags(None, resume=False, what="Where the tables and JSON go.")
flags.mark_flag_as_required("output_dir")
cli.register_numbers("rtols", float, 0, 0.1, lo_open=True, min_len=2, what="in (0, 0.1), at least 2")
flags.register_validator("min_fraction", lambda v: v is None or 0 < v < 1, "--min_fraction must lie in (0, 1)")
flags.register_multi_flags_validator(["min_points", "max_points"], lambda f: f["min_points"] <= f["max_points"],
                                     "--min_points must be <= --max_points")


def main(argv):
    del argv
    t0 = time.time()
    base = script_flags.basins_config(FLAGS)
    if not FLAGS["method"].present:  # the basins scripts' default is auto; this script checks the flow
        base = dataclasses.replace(base, dynamics=dataclasses.replace(base.dynamics, method="flow"))
    if FLAGS.check == "exact_2d":
        seeds = cli.or_fail(cli.seed_range, "set_seeds", FLAGS.set_seeds)
        if base.dynamics.method == "power":
            cli.fail("--method=power: exact_2d checks the flow's basins; use --method=flow or euler_halving")
        sq = base.alpha == "gaussian"  # the grid's batches of 2^16 angles (pairwise with Gaussian alpha); the tiles
        cli.check_memory(8 * FLAGS.max_points * ((1 << 18) * (1 + sq * FLAGS.max_points) + 32 * base.tile),
                         "--max_points", f"float64 4 x 2^16 grid angles x max_points{' x max_points' if sq else ''}, "
                         "32 tile x max_points in the basins run")
        cli.check_counts(FLAGS, ("max_points", "n_init"), extra={"--set_seeds": (len(seeds), 20)},
                         ops=lambda **f: 4 * f["--set_seeds"] * ((1 << 20) + f["--n_init"]) * f["--max_points"],
                         seconds=lambda **f: 0.05 * f["--set_seeds"], formula="sets x (a basins run and its analysis, "
                         ">= 0.05 s, + an exact grid of 2^20 angles + n_init inits x max_points)")
        sets = flow_accuracy.circle_sets(seeds, FLAGS.min_points, FLAGS.max_points)
        if sq and (problem := flow_accuracy.degenerate_tau_set(sets, base.tau, base.activation.h)):
            cli.fail(problem)  # as scripts/basins.py refuses it, on every set
    else:
        if base.dynamics.method != "flow":
            cli.fail(f"--method={base.dynamics.method}: --check=rtol varies --flow_rtol, use --method=flow")
        ds64 = script_flags.basins_data(base)
    config = {"check": FLAGS.check, "basins": dataclasses.asdict(base), "set_seeds": FLAGS.set_seeds,
              "min_points": FLAGS.min_points, "max_points": FLAGS.max_points, "rtols": FLAGS.rtols,
              "min_fraction": FLAGS.min_fraction}
    run = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/flow_accuracy.py", outputs=OUTPUTS,
                           overwrite=FLAGS.overwrite, can_resume=False)
    out = run.path
    if FLAGS.check == "exact_2d":
        record = flow_accuracy.exact_2d(base, seeds, min_points=FLAGS.min_points, max_points=FLAGS.max_points,
                                        min_fraction=FLAGS.min_fraction or 0.005, log=cli.log)
        header, name = flow_accuracy.SET_COLUMNS, "sets.csv"
    else:
        record = flow_accuracy.rtol_pairs(base, [float(r) for r in FLAGS.rtols], ds64=ds64,
                                          min_fraction=FLAGS.min_fraction or 0.01, log=cli.log)
        header, name = flow_accuracy.PAIR_COLUMNS, "pairs.csv"
    io.write_csv(out / name, header, record["table"])
    io.atomic_write_bytes(out / "claims.md", verdicts.claims_markdown([record["check"]]).encode())
    io.write_json(out / "flow_accuracy.json", cli.with_run_record("scripts/flow_accuracy.py", record, omit=()))
    out = cli.finish(run)
    print("\n".join([report.format_table(list(header), record["table"]), *flow_accuracy.table_key(FLAGS.check)]))
    failed = "; ".join(k for k, ok in record["check"]["parts"].items() if not ok)
    print(f"\n{record['check']['claim']}: {verdicts.verdict_word(record['check'])} "
          f"({'not: ' + failed if failed else 'all parts hold'})")
    print(f"\nwrote {out}/{name}, claims.md, flow_accuracy.json ({time.time() - t0:.1f} s)")


if __name__ == "__main__":
    cli.start(main)
