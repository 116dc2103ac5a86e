r"""Side-by-side table of several basins runs (reads each run's summary.json).

    python scripts/basins_table.py --runs=results/basins/relu,results/basins/linear \
        --output_prefix=runs/activations

Prints the table (the data column names the data by what it is: d, M of the latent models, the circle's
points, a data file's name) and writes <output_prefix>.md and <output_prefix>.csv.
"""

from __future__ import annotations

from pathlib import Path

from absl import flags

from ccdyn import cli, io, report
from ccdyn.one_layer import basins

FLAGS = flags.FLAGS
flags.DEFINE_list("runs", None, "Run directories (each with a summary.json).", required=True)
flags.DEFINE_string("output_prefix", None, "Write <prefix>.md and <prefix>.csv (optional).")
cli.define_overwrite("<output_prefix>.md and .csv")
KEY = ("run: the run directory's name; act, alpha, tau, method: its activation, pairwise weight (tau: of a Gaussian "
       "alpha), dynamics; data: what the data is (d, M of the latent models, the circle's points, a file's name); "
       "n_init: inits run; optima: distinct optima after the float64 refinement; stable_optima: those certified "
       "stable, stable_smooth off every ReLU kink, stable_on_kink on one (docs/guide.md); mass_on_patterns: the "
       "share of inits in the basin of a stable optimum with cos >= 0.9 to a planted u_m (-: the data has none); "
       "converged ... "
       "kink_limit, stalled: inits per final status (docs/reproducibility.md); endpoint_clusters: clusters of "
       "endpoints before the refinement; certified_smooth, certified_kink: optima by certificate; analyze_s, total_s: "
       "seconds of the analysis and of the run; miss_bound: no optimum with a basin >= this share was missed "
       "(95%); interval_level: the level of each basin fraction's interval, all of them at once >= 95%; "
       "max_halfwidth: the widest such interval's half-width; chao1, chao1_low, chao1_high: the estimated "
       "number of optima and its 95% interval (no claim: fewer than 90% of the run's inits converged, "
       "docs/statistics.md section 7); stop_rule, stop_met: the run's stop rule and whether its targets were met "
       "(docs/statistics.md); -: not recorded by that run.")


def main(argv):
    del argv
    if len(set(FLAGS.runs)) < len(FLAGS.runs) or not FLAGS.runs:
        cli.fail("--runs must list each run directory once")
    named = [(Path(run).name, cli.read_run_json(Path(run) / "summary.json", script="scripts/basins.py", flag="--runs",
                                                keys=("config", "optima"))) for run in FLAGS.runs]
    prefix = FLAGS.output_prefix
    if prefix:
        cli.check_new_files([prefix + ".md", prefix + ".csv"], overwrite=FLAGS.overwrite, flag="--output_prefix")
    rows = basins.comparison_rows(named)
    print("\n".join([report.format_table(basins.COMPARISON_COLUMNS, rows), *report.key_lines(KEY)]))
    if prefix:
        io.atomic_write_bytes(prefix + ".md", (report.markdown_table(basins.COMPARISON_COLUMNS, rows) + "\n").encode())
        io.write_csv(prefix + ".csv", basins.COMPARISON_COLUMNS, rows)
        print(f"\nwrote {prefix}.md and .csv")


if __name__ == "__main__":
    cli.start(main)
