"""One table of verdicts for the SimCLR variational analysis, from the JSON of the two runs.

    python scripts/simclr_var_claims.py             # after ntxent_sphere.py and kernel_dynamics.py

Reads --sphere (sphere.json), --kernel (kernel.json) and --clusters (clusters.json) and writes
--output (claims.md: claim, verdict, parts, numbers) and the same rows as CSV next to it. The verdicts
are the ones the studies computed (ccdyn.variational.claims); nothing is judged here.
"""

from __future__ import annotations

from pathlib import Path

from absl import flags

from ccdyn import cli, io, report
from ccdyn.verdicts import claims_table, verdict_lines

FLAGS = flags.FLAGS
flags.DEFINE_string("sphere", "results/simclr_var/sphere/sphere.json", "sphere.json of scripts/ntxent_sphere.py.")
flags.DEFINE_string("kernel", "results/simclr_var/kernel/kernel.json", "kernel.json of scripts/kernel_dynamics.py.")
flags.DEFINE_string("clusters", "results/simclr_var/kernel/clusters.json",
                    "clusters.json of scripts/kernel_dynamics.py.")
flags.DEFINE_string("output", "results/simclr_var/claims.md", "Where the table goes (and the .csv beside it).")
flags.register_validator("output", lambda v: Path(v).suffix != ".csv", "--output must not end in .csv (the CSV goes "
                         "beside it, e.g. --output=claims.md writes claims.md and claims.csv)")
cli.define_overwrite("--output and the .csv beside it")


def main(argv):
    del argv
    sphere = cli.read_run_json(FLAGS.sphere, script="scripts/ntxent_sphere.py", flag="--sphere",
                               keys=("prop21", "fig3", "thm32", "propA1", "lemmaA2"))
    kernel, clusters = (cli.read_run_json(p, script="scripts/kernel_dynamics.py", flag=f, keys=("verdicts",))
                        for p, f in ((FLAGS.kernel, "--kernel"), (FLAGS.clusters, "--clusters")))
    out = Path(FLAGS.output)
    cli.check_new_files([out, out.with_suffix(".csv")], overwrite=FLAGS.overwrite, flag="--output")
    rows = ([dict(sphere[k]["verdict"], grid="Sec. 2-3") for k in ("prop21", "fig3", "thm32", "propA1", "lemmaA2")]
            + [dict(v, grid="Sec. 4") for v in kernel["verdicts"]]
            + [dict(v, grid="Figs. 5-6") for v in clusters["verdicts"]])
    head, body = claims_table(rows)
    md = ("Verdicts computed by the studies (`ccdyn.variational.claims`); written by scripts/simclr_var_claims.py "
          "from\n"
          f"`{FLAGS.sphere}`, `{FLAGS.kernel}`, `{FLAGS.clusters}`.\n\n" + report.markdown_table(head, body) + "\n")
    io.atomic_write_bytes(out, md.encode())
    io.write_csv(out.with_suffix(".csv"), head, body)
    print("\n".join(verdict_lines(rows, label=lambda r: r["grid"])))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    cli.start(main)
