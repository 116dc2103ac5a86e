"""The numbers of the remark after DDN Thm. 5 (App. C.4, Eq. 165) recomputed: the polarity threshold of
Eq. 130, Eq. 128 with the exact Mills ratio and with its Eq. 124 bounds, the same with the exponent
y0^T M_y y0 / 2 = c / 2(1 - gamma^2) of Eq. 114, and the exact probability of the event
(ccdyn.deep.studies.thm5_remark).

    python scripts/ddn_thm5.py --overwrite                     # -> results/ddn/thm5_remark

Writes thm5_remark.json (the numbers, the claim record, the command) and thm5_remark.md, and prints them.
"""

from __future__ import annotations

import dataclasses
import math

from absl import flags

from ccdyn import cli, io, report, verdicts
from ccdyn.deep import claims
from ccdyn.deep.studies import thm5_remark

FLAGS = flags.FLAGS
OUTPUTS = ("thm5_remark.json", "thm5_remark.md")
flags.DEFINE_float("c", 9.0, "c of Thm. 5 (> 0).")
flags.DEFINE_float("gamma", 0.2, "gamma of Eq. 129, in [0, 1).")
flags.DEFINE_float("sigma_l", 0.0, "sigma_l of Eq. 130 (>= 0).")
cli.define_run_flags("results/ddn/thm5_remark", resume=False, what="Where the JSON and table go.")
flags.register_validator("c", lambda v: v > 0, "--c must be > 0")
flags.register_validator("gamma", lambda v: 0 <= v < 1, "--gamma must lie in [0, 1)")
flags.register_validator("sigma_l", lambda v: v >= 0, "--sigma_l must be >= 0")


def main(argv):
    del argv
    cfg = thm5_remark.Thm5RemarkConfig(c=FLAGS.c, gamma=FLAGS.gamma, sigma_l=FLAGS.sigma_l)
    try:  # closed forms in float64, computed before the run directory exists
        record = thm5_remark.run(cfg)
        values = [x for v in record["values"].values() for x in (v if isinstance(v, list) else [v])]
        if not all(math.isfinite(x) for x in values):
            raise OverflowError("a number is not finite")
    except (OverflowError, ZeroDivisionError) as e:
        cli.fail(f"--c={cfg.c:.12g}, --gamma={cfg.gamma:.12g}, --sigma_l={cfg.sigma_l:.12g}: the remark's numbers "
                 f"leave float64 ({e}); use a smaller --c or --sigma_l, or a --gamma further from 1")
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/ddn_thm5.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    saved = cli.with_run_record("scripts/ddn_thm5.py", record, omit=("rows",))
    saved["claims"] = claims.thm5_remark_claims(saved, result=str(FLAGS.output_dir))
    md = thm5_remark.markdown(record) + "\n" + verdicts.ledger_markdown(saved["claims"])
    io.atomic_write_bytes(run.path / "thm5_remark.md", md.encode())
    io.write_json(run.path / "thm5_remark.json", saved)
    out = cli.finish(run)
    c = saved["claims"][0]
    print("\n".join([report.format_table(thm5_remark.COLUMNS, record["rows"]), *thm5_remark.table_key(), "",
                     f"{c['id']}: {c['verdict']} ({claims.record_reason(c)})",
                     f"wrote {out}/thm5_remark.json, thm5_remark.md"]))


if __name__ == "__main__":
    cli.start(main)
