"""Does the paper's stated lr 2e-3 reach the outcome of the authors' lr 2e-2 with more steps? (issue #15)

    python scripts/two_layer_steps.py --acts=relu,linear --betas=5 --Ps=3,10 --checkpoints=5000,20000,50000 \\
        --reference=results/two_layer/sensitivity/lr0.02_bn-none_tau0.1/results.json \\
        --output_dir=results/two_layer/steps_lr0.002

Each (act, P, beta) setting of the token experiment (scripts/two_layer.py's model, data and seeds) is
trained once up to the largest --checkpoints and scored at every checkpoint: the optimizer has no
schedule, so the score at c steps is that of a c-step run (ccdyn.two_layer.studies.token_grid.
run_setting_checkpoints). Writes into --output_dir:
  results.json, results.csv   a row per (setting, checkpoint), as scripts/two_layer.py's, with ``steps``
  steps.md                    chi_bar_+ (chi_bar_-) against steps, the --reference grid's cell, the verdict
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from absl import flags

from ccdyn import activations, cli, io, report, two_layer, verdicts
from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import token_grid

FLAGS = flags.FLAGS
_T = two_layer.TrainConfig()
flags.DEFINE_list("acts", ["relu", "linear"], f"Activations, from {', '.join(activations.ACTIVATIONS)}.")
flags.DEFINE_list("betas", ["5"], "Over-parameterization beta (integers >= 1); M = beta P.")
flags.DEFINE_list("Ps", ["3", "10"], "Candidate tokens per position P, integers in [1, 20].")
flags.DEFINE_list("checkpoints", ["5000", "20000", "50000"], "Step counts at which the runs are scored (>= 1).")
flags.DEFINE_enum("loss", "infonce", two_layer.LOSSES, "Loss.")
flags.DEFINE_enum("bn", "none", two_layer.BN_VARIANTS, "BatchNorm variant.")
flags.DEFINE_float("lr", _T.lr, "SGD learning rate (> 0).")
flags.DEFINE_integer("n_seeds", 3, "Seeds per setting (vmapped together).", lower_bound=1)
cli.define_seed("seed", 0, "Base seed (seed s: fold_in(seed, s)).")
flags.DEFINE_integer("block", 500, "Steps per compiled scan block.", lower_bound=1)
flags.DEFINE_string("reference", None, "results.json of a scripts/two_layer.py grid to compare with (the larger lr).")
flags.DEFINE_float("margin", 0.05, "A chi_+ gap below this counts as reached, in [0, 1).")
cli.define_run_flags("runs/two_layer_steps", resume=False)
cli.register_subset("acts", activations.ACTIVATIONS)
cli.register_numbers("betas", int, 1)
cli.register_numbers("Ps", int, 1, 20, hi_open=False)
cli.register_numbers("checkpoints", int, 1)
flags.register_validator("lr", lambda v: 0 < v < float("inf"), "--lr must be a finite number > 0")
flags.register_validator("margin", lambda v: 0 <= v < 1, "--margin must lie in [0, 1)")

OUTPUTS = ("results.json", "results.csv", "steps.md")


def _reference(reference, loss, bn):
    if reference is None:
        return [], "–"
    res = cli.read_run_json(Path(reference), script="scripts/two_layer.py", flag="--reference", keys=("rows", "config"))
    rows = [r for r in res["rows"] if isinstance(r, dict) and r.get("loss") == loss and r.get("bn") == bn]
    if not rows:
        cli.fail(f"--reference={reference} has no rows with loss {loss} and bn {bn}")
    return rows, f"lr {res['config']['train']['lr']:g}, {res['config']['train']['steps']} steps"


def main(argv):
    del argv
    t0 = time.time()
    ref_rows, ref_label = _reference(FLAGS.reference, FLAGS.loss, FLAGS.bn)
    checkpoints = sorted(set(cli.ints(FLAGS.checkpoints)))
    grid = token_grid.GridConfig(acts=tuple(FLAGS.acts), betas=cli.ints(FLAGS.betas), ps=cli.ints(FLAGS.Ps),
                                 losses=(FLAGS.loss,), bns=(FLAGS.bn,), n_seeds=FLAGS.n_seeds, seed=FLAGS.seed,
                                 block=FLAGS.block, train=two_layer.TrainConfig(lr=FLAGS.lr, steps=checkpoints[-1]))
    def memory(**f):  # token_grid.memory_estimate's bytes at these flag values (the largest beta P)
        width = max(grid.spec.n_tokens, f["--betas"] * f["--Ps"], grid.d_out)
        return 16 * 4 * f["--n_seeds"] * 2 * grid.train.batch_size * grid.spec.n_positions * width

    cli.check_memory_of(memory, *[{"--n_seeds": n, "--betas": max(cli.ints(b)), "--Ps": max(cli.ints(p))} for n, b, p in
                                  ((FLAGS.n_seeds, FLAGS.betas, FLAGS.Ps), (3, ["5"], ["10"]))],
                        token_grid.memory_estimate(grid)[2])
    cli.check_counts(FLAGS, ("checkpoints",), steps=lambda **f: len(grid.settings()) * f["--checkpoints"],
                     formula="settings x the last checkpoint's sequential steps")
    config = {**grid.run_config(), "acts": grid.acts, "betas": grid.betas, "ps": grid.ps, "loss": FLAGS.loss,
              "bn": FLAGS.bn, "checkpoints": checkpoints, "reference": FLAGS.reference}
    run = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/two_layer_steps.py", outputs=OUTPUTS,
                           overwrite=FLAGS.overwrite, can_resume=False)
    rows, settings = [], grid.settings()
    for i, s in enumerate(settings):
        t1 = time.time()

        def progress(done, losses, s=s, i=i, t1=t1):
            if done % (10 * grid.block) == 0 or done in checkpoints:
                cli.log(f"[{i + 1}/{len(settings)}] {s.tag}: {done}/{checkpoints[-1]} steps {time.time() - t1:.1f} s")

        out = token_grid.run_setting_checkpoints(s, grid.train, checkpoints, n_seeds=grid.n_seeds, seed=grid.seed,
                                                 spec=grid.spec, d_out=grid.d_out, block=grid.block, on_block=progress)
        for c, r in out.items():
            g = dataclasses.replace(grid, train=dataclasses.replace(grid.train, steps=c))
            record = {**token_grid.setting_result(s, r), "wall_s": time.time() - t1}
            rows.append({**token_grid.result_row(s, record, g), "steps": c})
    headers, body = token_grid.results_csv(rows)
    io.write_csv(run.path / "results.csv", headers + ["steps"], [b + [r["steps"]] for b, r in zip(body, rows)])
    check = claims.check_more_steps(rows, ref_rows, FLAGS.margin) if ref_rows else None
    md = claims.steps_markdown(rows, ref_rows, ref_label)
    if check is not None and check["holds"] is not None:
        md += "\n\n" + claims.claims_markdown([{"grid": run.path.name, **check}])
    io.atomic_write_bytes(run.path / "steps.md", (md + "\n").encode())
    io.write_json(run.path / "results.json", {"state": "complete", **cli.run_record("scripts/two_layer_steps.py"),
                                              "config": {**grid.results_config(" ".join(sys.argv)), **config},
                                              "rows": rows, "check": check, "wall_s": time.time() - t0})
    out_dir = cli.finish(run)
    print("\n".join(["", claims.steps_markdown(rows, ref_rows, ref_label), *report.key_lines(
        f"act, P, β: the setting (activation, candidate tokens per position, filters per candidate); N steps: χ̄₊ "
        f"(χ̄₋) after N steps, means over the seeds; {ref_label}: the same in the --reference grid; turned by N: the "
        f"mean angle the filters turned from their start by the last step count; –: not in that grid.")]))
    if check is not None:
        print(f"\n{check['claim']}: {verdicts.verdict_word(check)} ({verdicts.reason(check)})")
    print(f"\nwrote {out_dir}/results.json, results.csv and steps.md in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    cli.start(main)
