"""Verdicts on the paper's Sec. 5 / App. E.2 claims, computed from finished scripts/two_layer.py grids.

    python scripts/two_layer_claims.py          # reads results/two_layer/*, writes claims.md / claims.json

Also writes summary.md: for every grid found, a compact table of chi_bar_+ (chi_bar_-) per
(activation, BN, zeta, P) row and beta column, the chance level of the untrained filters and the
mean angle the filters turned during training.

Each claim is a numeric check in ccdyn.two_layer.claims (check_*), applied to the paper's stated setting
(the Fig. 4/9, Fig. 10, Fig. 11 and Table 1 grids) and to every grid under --sensitivity (one
directory per lr / BN / tau combination, relu and linear only). A missing grid is skipped.
"""

from __future__ import annotations

from pathlib import Path

from absl import flags

from ccdyn import cli, io, verdicts
from ccdyn.two_layer import claims

FLAGS = flags.FLAGS
GRID_SCRIPTS = ("scripts/two_layer.py", "scripts/two_layer_steps.py")  # the grids whose results.json it reads
flags.DEFINE_string("root", "results/two_layer", "Directory holding the grids.")
flags.DEFINE_float("margin", 0.05, "Differences below this count as none (flat / not better), in [0, 1).")
flags.register_validator("margin", lambda v: 0 <= v < 1, "--margin must lie in [0, 1)")
cli.define_overwrite("claims.md, claims.json and summary.md in --root")


def main(argv):
    del argv
    root = Path(FLAGS.root)
    if not root.is_dir():
        cli.fail(f"--root={FLAGS.root} is not a directory")
    found = sorted(root.glob("*/results.json")) + sorted(root.glob("*/*/results.json"))
    if not found:
        cli.fail(f"--root={FLAGS.root} holds no grid (no */results.json); run scripts/two_layer.py first")
    grids = {p.parent.relative_to(root).as_posix(): cli.read_run_json(p, script=GRID_SCRIPTS, flag="--root",
                                                                      keys=("config", "rows")) for p in found}
    cli.check_new_files([root / n for n in ("claims.md", "claims.json", "summary.md")], overwrite=FLAGS.overwrite,
                        flag="--root")
    checks = claims.check_grids(grids, margin=FLAGS.margin)
    print("\n".join(verdicts.verdict_lines(checks, label=lambda c: c["grid"])))
    io.atomic_write_bytes(root / "claims.md", claims.claims_markdown(checks).encode())
    io.write_json(root / "claims.json", {**cli.run_record("scripts/two_layer_claims.py"), "margin": FLAGS.margin,
                                         "checks": checks})
    io.atomic_write_bytes(root / "summary.md", claims.summary_markdown(grids).encode())
    print(f"\nwrote {root / 'claims.md'}, claims.json ({len(checks)} checks) and summary.md")


if __name__ == "__main__":
    cli.start(main)
