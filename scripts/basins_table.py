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
    print(report.format_table(basins.COMPARISON_COLUMNS, rows))
    if prefix:
        io.atomic_write_bytes(prefix + ".md", (report.markdown_table(basins.COMPARISON_COLUMNS, rows) + "\n").encode())
        io.write_csv(prefix + ".csv", basins.COMPARISON_COLUMNS, rows)
        print(f"\nwrote {prefix}.md and .csv")


if __name__ == "__main__":
    cli.start(main)
