"""Table 1 (App. E.2): chi_bar_+ of the four BatchNorm backprop variants at zeta = 10, ours next to the paper's.

    python scripts/two_layer.py --acts=relu --bn=none_backprop,var_only,mean_only,vanilla --zeta=10 \\
        --output_dir=results/two_layer/table1
    python scripts/two_layer_table.py --run=results/two_layer/table1

Reads <run>/results.json of a grid that holds the four variants, prints a markdown table with ours
(mean +- std over seeds) and the paper's numbers in adjacent columns, and writes <run>/table1.md and
<run>/table1.csv.
"""

from __future__ import annotations

from pathlib import Path

from absl import flags

from ccdyn import cli, io, report
from ccdyn.two_layer import claims

FLAGS = flags.FLAGS
flags.DEFINE_string("run", "results/two_layer/table1", "Output directory of scripts/two_layer.py.")
flags.DEFINE_string("act", "relu", "Activation whose rows are tabulated.")


def main(argv):
    del argv
    run = Path(FLAGS.run)  # a finished two_layer grid, checked before anything is written
    rows = cli.read_run_json(run / "results.json", script="scripts/two_layer.py", flag="--run", keys=("rows",))["rows"]
    if not all(isinstance(r, dict) and {"act", "bn", "beta", "chi_plus", "n_candidates"} <= set(r) for r in rows):
        cli.fail(f"--run: {run / 'results.json'} has rows without act, bn, beta, chi_plus or n_candidates; "
                 "re-run scripts/two_layer.py")
    cells = claims.table1_cells(rows, FLAGS.act)
    if not cells:
        cli.fail(f"--act={FLAGS.act}: no rows of that activation in {run / 'results.json'}")
    md = claims.table1_markdown(cells)
    print("\n".join([report.format_table(*claims.table1_table(cells), keep=2), *report.key_lines(
        "β: filters per candidate token; P: candidate tokens per position; μ / σ² bp or no bp: the BatchNorm "
        "variant, with or without backprop through the batch mean μ and the variance σ² (Def. 5); ours: χ̄₊ of "
        f"--act={FLAGS.act}, mean ± std over the seeds; paper: Table 1's.")]))
    io.atomic_write_bytes(run / "table1.md", (md + "\n").encode())
    io.write_csv(run / "table1.csv", *claims.table1_csv(cells))


if __name__ == "__main__":
    cli.start(main)
