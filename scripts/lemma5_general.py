"""Core Lemma 5 (Eq. 120) beyond C = 2, M = 1: the closed form of V[x~] against exact enumeration of the joint
population, for several (C, K, M, d, n) (ccdyn.two_layer.studies.lemma5_general).

    python scripts/lemma5_general.py --overwrite        # -> results/theory/lemma5_general

Writes lemma5_general.json (the rows, the claim record, the command) and lemma5_general.md.
"""

from __future__ import annotations

import dataclasses

from absl import flags

from ccdyn import cli, report
from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import lemma5_general

FLAGS = flags.FLAGS
OUTPUTS = ("lemma5_general.json", "lemma5_general.md")
_C = lemma5_general.Lemma5Config()
flags.DEFINE_list("shapes", ["x".join(map(str, s)) for s in _C.shapes],
                  "Shapes CxKxMxdxn: classes C >= 2, RFs K >= 1, filters M >= 1, dimension d >= 1, support n >= 1 "
                  "(n^K <= 4096).")
flags.DEFINE_integer("draws", _C.draws, "Populations and filters per shape.", lower_bound=1)
cli.define_seed("seed", _C.seed, "Seed of the populations and filters.")
cli.define_run_flags("results/theory/lemma5_general", resume=False, what="Where the JSON and table go.")


def _shape(text):
    parts = text.split("x")
    if len(parts) != 5 or not all(q.isdigit() for q in parts):
        return None
    C, K, M, d, n = map(int, parts)
    return (C, K, M, d, n) if C >= 2 and min(K, M, d, n) >= 1 and n ** K <= 4096 else None


flags.register_validator("shapes", lambda v: bool(v) and all(_shape(s) for s in v),
                         "--shapes must be CxKxMxdxn with C >= 2, K, M, d, n >= 1 and n^K <= 4096")


def _memory(**f) -> int:  # bytes: a draw's error and rank kept in lists (a lower bound; the enumeration is small)
    return 64 * f["--draws"]


def _cost(C, K, M, d, n) -> int:  # a draw's float operations: C n^K joint points, each a (K M)^2 outer product
    return C * n ** K * ((K * M) ** 2 + K * M * d)


def main(argv):
    del argv
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("draws",)), "64 bytes (a Python float and int in lists) "
                        "per draw of --draws")
    shapes = [_shape(s) for s in FLAGS.shapes]
    cli.check_memory(max(8 * (4 * (K * M) ** 2 + C * K * n * d + K * M * d) for C, K, M, d, n in shapes), "--shapes",
                     "float64 4 (K M)^2 covariances + C K n d points + K M d filters of the largest shape")
    cost = (max(_cost(*s) for s in shapes), max(_cost(*_shape(s)) for s in FLAGS["shapes"].default))
    cli.check_counts(FLAGS, ("draws",), extra={"--shapes": cost},
                     ops=lambda **f: len(shapes) * f["--draws"] * f["--shapes"],
                     formula="shapes x draws x C n^K ((K M)^2 + K M d) of the largest shape")
    cfg = lemma5_general.Lemma5Config(shapes=tuple(_shape(s) for s in FLAGS.shapes), draws=FLAGS.draws,
                                      seed=FLAGS.seed)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/lemma5_general.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    record = lemma5_general.run(cfg)
    saved = cli.with_run_record("scripts/lemma5_general.py", record)
    saved["claims"] = claims.lemma5_general_claims(saved, result=str(FLAGS.output_dir))
    table = report.markdown_table(["C", "K", "M", "d", "n", "joint points", "max rel. diff", "rank of the C-term"],
                                  [[r["C"], r["K"], r["M"], r["d"], r["n"], r["points"], f"{r['max_rel_diff']:.2g}",
                                    r["between_rank"]] for r in record["rows"]])
    done = cli.finish_ledger_run(run, "lemma5_general", saved,
                                 "# Lemma 5 (Eq. 120) beyond C = 2, M = 1\n\n" + table + "\n\n")
    print("\n".join([table, *report.key_lines(
        "C: classes; K: receptive fields; M: filters per RF; d: inputs per RF; n: points per class and RF; joint "
        "points: C n^K, the enumerated population; max rel. diff: the largest |Eq. 120's closed form - "
        "enumeration| over the draws, relative to the largest entry; rank of the C-term: the ranks of the "
        "between-class term sum_c p_c (1 - p_c)^2 Delta(c) Delta(c)^T over the draws (the paper: at most C)."),
        "", *done]))


if __name__ == "__main__":
    cli.start(main)
