"""Table 1 (App. E.2): chi_bar_+ of the four BatchNorm backprop variants at zeta = 10, ours next to the paper's.

    python scripts/two_layer.py --acts=relu --bn=none_backprop,var_only,mean_only,vanilla --zeta=10 \\
        --output_dir=results/two_layer/table1
    python scripts/two_layer_table.py --run=results/two_layer/table1

Reads <run>/results.json of a grid that holds the four variants, prints a markdown table with ours
(mean +- std over seeds) and the paper's numbers in adjacent columns, and writes <run>/table1.md and
<run>/table1.csv.
"""

from __future__ import annotations

import sys
from pathlib import Path

from absl import app, flags

from ccdyn import io, report

FLAGS = flags.FLAGS
flags.DEFINE_string("run", "results/two_layer/table1", "Output directory of scripts/two_layer.py.")
flags.DEFINE_string("act", "relu", "Activation whose rows are tabulated.")

# Column order of the paper's Table 1: (mu backprop?, sigma backprop?).
VARIANTS = (("none_backprop", "μ no bp, σ² no bp"), ("var_only", "μ no bp, σ² bp"),
            ("mean_only", "μ bp, σ² no bp"), ("vanilla", "μ bp, σ² bp"))

# Table 1 of the paper (ReLU, zeta = 10, InfoNCE), (beta, P) -> chi_bar_+ mean, std in VARIANTS order.
PAPER_TABLE1 = {
    (1, 1): [(0.31, 0.24), (0.23, 0.06), (0.30, 0.24), (0.23, 0.06)],
    (1, 3): [(0.65, 0.09), (-0.03, 0.01), (0.64, 0.07), (0.24, 0.11)],
    (1, 5): [(0.61, 0.06), (-0.00, 0.00), (0.62, 0.02), (0.38, 0.04)],
    (1, 10): [(0.66, 0.06), (0.53, 0.05), (0.70, 0.03), (0.56, 0.04)],
    (2, 1): [(0.36, 0.13), (0.27, 0.06), (0.63, 0.11), (0.33, 0.12)],
    (2, 3): [(0.78, 0.01), (0.00, 0.01), (0.80, 0.02), (0.41, 0.07)],
    (2, 5): [(0.78, 0.02), (0.22, 0.21), (0.77, 0.07), (0.56, 0.02)],
    (2, 10): [(0.83, 0.08), (0.72, 0.06), (0.80, 0.04), (0.71, 0.05)],
    (5, 1): [(0.63, 0.06), (0.43, 0.12), (0.67, 0.06), (0.46, 0.06)],
    (5, 3): [(0.90, 0.06), (0.45, 0.07), (0.90, 0.03), (0.60, 0.08)],
    (5, 5): [(0.90, 0.01), (0.72, 0.01), (0.88, 0.06), (0.74, 0.02)],
    (5, 10): [(0.88, 0.01), (0.88, 0.04), (0.92, 0.03), (0.90, 0.03)],
    (10, 1): [(0.63, 0.12), (0.37, 0.15), (0.70, 0.17), (0.46, 0.15)],
    (10, 3): [(0.95, 0.05), (0.72, 0.06), (0.94, 0.05), (0.80, 0.03)],
    (10, 5): [(0.98, 0.02), (0.84, 0.05), (0.96, 0.06), (0.92, 0.01)],
    (10, 10): [(0.90, 0.01), (0.97, 0.02), (0.89, 0.03), (0.97, 0.02)],
}


def table_rows(rows, act: str):
    """[(beta, P, [(ours, paper) per variant])] for the (beta, P) cells present in ``rows``."""
    ours = {(r["beta"], r["n_candidates"], r["bn"]): r["chi_plus"] for r in rows if r["act"] == act}
    cells = sorted({(b, p) for b, p, _ in ours})
    out = []
    for b, p in cells:
        pairs = []
        for j, (bn, _) in enumerate(VARIANTS):
            o = ours.get((b, p, bn))
            pairs.append((None if o is None else (o["mean"], o["std"]), PAPER_TABLE1.get((b, p), [None] * 4)[j]))
        out.append((b, p, pairs))
    return out


def _fmt(v):
    return "-" if v is None or v[0] is None else f"{v[0]:.2f} ± {v[1]:.2f}"


def main(argv):
    del argv
    run = Path(FLAGS.run)
    if not (run / "results.json").exists():
        sys.exit(f"error: --run={FLAGS.run}: no results.json there (run scripts/two_layer.py first)")
    res = io.read_json(run / "results.json")
    rows = table_rows(res["rows"], FLAGS.act)
    if not rows:
        sys.exit(f"error: --act={FLAGS.act}: no rows of that activation in {run / 'results.json'}")
    headers = ["β", "P"] + [f"{name}: {who}" for _, name in VARIANTS for who in ("ours", "paper")]
    body = [[b, p] + [_fmt(x) for pair in pairs for x in pair] for b, p, pairs in rows]
    md = report.markdown_table(headers, body)
    print(md)
    io.atomic_write_bytes(run / "table1.md", (md + "\n").encode())
    io.write_csv(run / "table1.csv",
                 ["beta", "P"] + [f"{bn}_{who}_{stat}" for bn, _ in VARIANTS for who in ("ours", "paper")
                                  for stat in ("mean", "std")],
                 [[b, p] + [("" if x is None or x[0] is None else round(x[i], 4)) for pair in pairs for x in pair
                            for i in (0, 1)] for b, p, pairs in rows])


if __name__ == "__main__":
    app.run(main)
