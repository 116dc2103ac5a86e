"""Side-by-side table of several basins runs (reads each run's summary.json).

    python scripts/basins_table.py --runs=results/basins/relu,results/basins/linear \
        --output_prefix=results/basins/activations

Prints the table and writes <output_prefix>.md and <output_prefix>.csv.
"""

from __future__ import annotations

import sys
from pathlib import Path

from absl import app, flags

from ccdyn import io, report

FLAGS = flags.FLAGS
flags.DEFINE_list("runs", None, "Run directories (each with a summary.json).", required=True)
flags.DEFINE_string("output_prefix", None, "Write <prefix>.md and <prefix>.csv (optional).")


def main(argv):
    del argv
    named = []
    for run in FLAGS.runs:
        path = Path(run) / "summary.json"
        if not path.is_file():
            sys.exit(f"error: --runs: {path} does not exist")
        named.append((Path(run).name, io.read_json(path)))
    rows = report.basins_comparison_rows(named)
    print(report.format_table(report.COMPARISON_COLUMNS, rows))
    if FLAGS.output_prefix:
        io.atomic_write_bytes(FLAGS.output_prefix + ".md",
                              (report.markdown_table(report.COMPARISON_COLUMNS, rows) + "\n").encode())
        io.write_csv(FLAGS.output_prefix + ".csv", report.COMPARISON_COLUMNS, rows)
        print(f"\nwrote {FLAGS.output_prefix}.md and .csv")


if __name__ == "__main__":
    app.run(main)
