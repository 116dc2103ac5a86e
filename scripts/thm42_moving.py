"""SimCLR-var Thm. 4.2 with perturbations that move the points (T x != x): a case where the hypothesis holds
(T x = c x, normalized map), one where it fails (T x = x + s n, B n = 0) against Eq. 15's closed form, and
one that keeps invariance although grad_w f is not invariant (ccdyn.variational.studies.thm42_moving).

    python scripts/thm42_moving.py --overwrite                 # -> results/simclr_var/thm42_moving

Writes thm42_moving.json (the numbers, the claim record, the command) and thm42_moving.md.
"""

from __future__ import annotations

import dataclasses

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import cli, report  # noqa: E402
from ccdyn.variational import claims  # noqa: E402
from ccdyn.variational.studies import thm42_moving  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("thm42_moving.json", "thm42_moving.md")
_C = thm42_moving.Thm42Config()
flags.DEFINE_integer("n", _C.n, "Training inputs.", lower_bound=2)
flags.DEFINE_integer("D", _C.D, "Input dimension (> --n).", lower_bound=3)
flags.DEFINE_integer("d", _C.d, "Output dimension.", lower_bound=2)
flags.DEFINE_integer("M", _C.M, "Hidden units per output.", lower_bound=1)
flags.DEFINE_float("tau", _C.tau, "Temperature of the loss (> 0).")
flags.DEFINE_float("lr", _C.lr, "Step size sigma of the weight steps (> 0).")
flags.DEFINE_integer("steps", _C.steps, "Weight steps.", lower_bound=1)
cli.define_seed("seed", _C.seed, "Seed of X, B, T.")
cli.define_run_flags("results/simclr_var/thm42_moving", resume=False, what="Where the JSON and table go.")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("lr", lambda v: v > 0, "--lr must be > 0")
flags.register_multi_flags_validator(["n", "D"], lambda f: f["D"] > f["n"], "--D must exceed --n")


def _table(record) -> tuple:
    rows = []
    for name in ("scaling", "generic", "orthogonal"):
        r = record[name]
        rows.append([name, f"{r['min_move_of_T']:.3g}", f"{r['jacobian_gap']:.3g}", f"{r['gap_start']:.3g}",
                     f"{r['gaps'][0]:.3g}", f"{max(r['gaps']):.3g}", f"{r['moved']:.3g}",
                     f"{r.get('eq15_abs_diff', float('nan')):.3g}"])
    head = ["case", "min ‖Tx − x‖", "max ‖grad f(Tx) − grad f(x)‖", "gap at start", "gap after 1 step",
            "max gap over steps", "points moved", "‖gap − Eq. 15‖"]
    return head, rows


def _markdown(record) -> str:
    head, rows = _table(record)
    return "\n".join(["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
                     + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


def _memory(**f) -> int:  # bytes: the float64 inputs X (n, D) and weights B (d, M, D) (a lower bound)
    return 8 * f["--D"] * (f["--n"] + f["--d"] * f["--M"])


def main(argv):
    del argv
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("n", "D", "d", "M")),
                        "float64 D (n + d M): the inputs and weights")
    cli.check_counts(FLAGS, ("steps", "n", "D", "d", "M"), loops=("steps",), steps=lambda **f: 3 * f["--steps"],
                     ops=lambda **f: 3 * f["--steps"] * f["--n"] * f["--D"] * f["--d"] * f["--M"],
                     memory=lambda **f: 8 * 3 * f["--steps"] * f["--d"] * f["--M"] * f["--D"],
                     formula="3 cases x steps weight steps of n inputs through d x M x D weights, each step's kept")
    cfg = thm42_moving.Thm42Config(n=FLAGS.n, D=FLAGS.D, d=FLAGS.d, M=FLAGS.M, tau=FLAGS.tau, lr=FLAGS.lr,
                                   steps=FLAGS.steps, seed=FLAGS.seed)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/thm42_moving.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    record = thm42_moving.run(cfg)
    saved = cli.with_run_record("scripts/thm42_moving.py", record)
    saved["claims"] = claims.thm42_moving_claims(saved, result=str(FLAGS.output_dir))
    done = cli.finish_ledger_run(run, "thm42_moving", saved, "# Thm. 4.2 with T x != x\n\n" + _markdown(record) + "\n")
    print("\n".join([report.format_table(*_table(record)), *report.key_lines(
        "case: scaling (T x = c x, a normalized map: Thm. 4.2's hypothesis holds), generic (T x = x + s n, B n = 0: "
        "f invariant, grad_w f not), orthogonal (n orthogonal to the inputs); min ‖Tx − x‖: how far T moves the "
        "points (the least); max ‖grad f(Tx) − grad f(x)‖: how far grad_w f is from invariant; gap at start, gap "
        "after 1 step, max gap over steps: max_i ‖f(T x_i) − f(x_i)‖ along training; points moved: max_i "
        "‖f(x_i)‖'s change over training (the embedding did move); ‖gap − Eq. 15‖: the first step's gap against "
        "Eq. 15's prediction (nan: not compared)."),
        "", *done]))


if __name__ == "__main__":
    cli.start(main)
