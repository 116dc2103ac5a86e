"""Core Sec. 4 after Lemma 4: at a stationary top layer V (on ||V||_F = 1), S = V^T V is rank 1, and s is the
maximal eigenvector of C_alpha[f_1] at the stable one (ccdyn.two_layer.studies.top_layer).

    python scripts/top_layer.py --overwrite        # -> results/theory/top_layer

Writes top_layer.json (the rows, the claim record, the command) and top_layer.md.
"""

from __future__ import annotations

import dataclasses

from absl import flags

from ccdyn import cli, report
from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import top_layer

FLAGS = flags.FLAGS
OUTPUTS = ("top_layer.json", "top_layer.md")
_C = top_layer.TopLayerConfig()
flags.DEFINE_integer("d_in", _C.d_in, "Input dimension of the ReLU bottom layer.", lower_bound=1)
flags.DEFINE_integer("hidden", _C.hidden, "Length of f_1 (K M).", lower_bound=2)
flags.DEFINE_integer("d_out", _C.d_out, "Rows of V.", lower_bound=1)
flags.DEFINE_integer("n_points", _C.n_points, "Points of the population (> --hidden).", lower_bound=3)
flags.DEFINE_integer("draws", _C.draws, "Populations and bottom layers.", lower_bound=1)
flags.DEFINE_float("t_end", _C.t_end, "Time of the flow from the random starts (> 0).")
cli.define_seed("seed", _C.seed, "Seed.")
cli.define_run_flags("results/theory/top_layer", resume=False, what="Where the JSON and table go.")
flags.register_validator("t_end", lambda v: v > 0, "--t_end must be > 0")
flags.register_multi_flags_validator(["n_points", "hidden"], lambda f: f["n_points"] > f["hidden"],
                                     "--n_points must exceed --hidden")


def _memory(**f) -> int:  # bytes: a draw's float64 arrays (X, its features, C and Q, V); every draw's row (500 bytes)
    n, d, h, o = f["--n_points"], f["--d_in"], f["--hidden"], f["--d_out"]
    return 8 * (n * (d + h) + h * d + 3 * h * h + 3 * o * h) + 500 * f["--draws"]


def main(argv):
    del argv
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("n_points", "d_in", "hidden", "d_out", "draws")),
                        "float64 n (d_in + K M) + K M d_in + 3 (K M)^2 + 3 d_out K M for n points, + 500 bytes per "
                        "draw")
    cli.check_counts(FLAGS, ("n_points", "d_in", "hidden", "d_out", "draws"), steps=lambda **f: f["--draws"],
                     ops=lambda **f: f["--draws"] * f["--hidden"] * (f["--n_points"] * (f["--d_in"] + f["--hidden"])
                                                                      + f["--hidden"] ** 2
                                                                      + f["--d_out"] * f["--hidden"]),
                     formula="draws x K M (n (d_in + K M) + (K M)^2 + d_out K M) float operations")
    cfg = top_layer.TopLayerConfig(d_in=FLAGS.d_in, hidden=FLAGS.hidden, d_out=FLAGS.d_out, n_points=FLAGS.n_points,
                                   draws=FLAGS.draws, t_end=FLAGS.t_end, seed=FLAGS.seed)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/top_layer.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    record = top_layer.run(cfg)
    saved = cli.with_run_record("scripts/top_layer.py", record)
    saved["claims"] = claims.top_layer_claims(saved, result=str(FLAGS.output_dir))
    keys = list(record["rows"][0])
    table = report.markdown_table(keys, [[f"{r[k]:.3g}" for k in keys] for r in record["rows"]])
    done = cli.finish_ledger_run(run, "top_layer", saved, "# Rank-1 S at the stationary top layer\n\n" + table + "\n\n")
    print("\n".join([report.format_table(keys, [[f"{r[k]:.3g}" for k in keys] for r in record["rows"]]),
                     *report.key_lines(
        "one row per random draw of C = V[f_1]; eig_gap_top: lambda_max - lambda_2 of C; min_eig_spacing: the "
        "smallest gap between its eigenvalues; rk4_vs_exact: the closed-form flow of V against RK4; "
        "S_minus_top_outer: max |S - s_max s_max^T| after t_end; S_second_singular_value: S's second singular value "
        "(0: rank 1); start_residual: the stationarity residual of the random start; max_residual_v_si: the largest "
        "residual of V = v s_i^T over the eigenvectors s_i (0: all stationary); rate_rel_err: their unstable rates "
        "against lambda_max - lambda_i, relative; min_rate_non_top: the smallest rate of a non-top s_i (> 0: "
        "unstable)."), "", *done]))


if __name__ == "__main__":
    cli.start(main)
