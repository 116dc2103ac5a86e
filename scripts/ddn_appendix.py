"""The Dual Deep Networks statements that had no check, each against an independent route, in float64
(ccdyn.deep.studies.appendix): Lemma 1 for the ReLU, leaky ReLU and power activation; the
l2-normalized gradients (Eq. 28-30, 41, 51, 56); Lemma 2 (Eq. 46); Eq. 80; Sec. 5.1's linear neuron with
a Gaussian nuisance multiplier; Lemmas 7 and 9 on enumerated trees; Lemma 8 and Fig. 11 on a (c, gamma)
grid.

    python scripts/ddn_appendix.py --overwrite                   # -> results/ddn/appendix

Writes appendix.json (the numbers, the claim records, the command) and appendix.md, and prints the
verdicts.
"""

from __future__ import annotations

import time

import jax
from absl import flags

from ccdyn import cli, io, verdicts
from ccdyn.deep import claims
from ccdyn.deep.studies import appendix

FLAGS = flags.FLAGS
OUTPUTS = ("appendix.json", "appendix.md")
flags.DEFINE_list("checks", list(appendix.CHECKS), f"Which checks to run (of {', '.join(appendix.CHECKS)}).")
cli.define_seed("seed", 1, "Seed of the networks and populations.")
cli.define_run_flags("results/ddn/appendix", resume=False, what="Where the JSON and table go.")
flags.register_validator("checks", lambda v: bool(v) and set(v) <= set(appendix.CHECKS) and len(set(v)) == len(v),
                         f"--checks must name some of {', '.join(appendix.CHECKS)}, each once")


def main(argv):
    del argv
    t0 = time.time()
    jax.config.update("jax_enable_x64", True)
    cfg = appendix.AppendixConfig(net_seed=FLAGS.seed)
    config = {"checks": list(FLAGS.checks), "seed": FLAGS.seed}
    run = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/ddn_appendix.py", outputs=OUTPUTS,
                           overwrite=FLAGS.overwrite, can_resume=False)
    record = appendix.run(cfg, only=FLAGS.checks)
    saved = cli.with_run_record("scripts/ddn_appendix.py", record)
    saved["claims"] = claims.appendix_claims(saved, result=str(FLAGS.output_dir))
    saved["wall_s"] = time.time() - t0
    md = verdicts.ledger_markdown(saved["claims"])
    io.atomic_write_bytes(run.path / "appendix.md", md.encode())
    io.write_json(run.path / "appendix.json", saved)
    out = cli.finish(run)
    print("\n".join(f"{c['id']}: {c['verdict']} ({claims.record_reason(c)})" for c in saved["claims"]))
    print(f"wrote {out}/appendix.json, appendix.md in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    cli.start(main)
