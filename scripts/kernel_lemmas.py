"""Lemma 1 and the variance-sum form of Lemma 2 (Eq. 4) for Gaussian alpha, with an explicit truncated
feature map, on an exact latent-summation population with noise views (ccdyn.one_layer.studies.kernel_lemmas).

    python scripts/kernel_lemmas.py --overwrite                 # -> results/theory/kernel_lemmas

Writes kernel_lemmas.json (the rows, the two claim records, the command) and kernel_lemmas.md.
"""

from __future__ import annotations

import dataclasses

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import cli, report  # noqa: E402
from ccdyn.one_layer import claims  # noqa: E402
from ccdyn.one_layer.studies import kernel_lemmas  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("kernel_lemmas.json", "kernel_lemmas.md")
flags.DEFINE_list("taus", ["2", "1"], "Gaussian-alpha temperatures (> 0).")
flags.DEFINE_list("degrees", ["10", "20", "30", "40", "50", "60"], "Truncation degrees of the feature map.")
flags.DEFINE_list("batch_sizes", ["64", "256", "1024"], "Batch sizes N of the Eq. 3 check (>= 2).")
flags.DEFINE_integer("n_batches", 8, "Draws per batch size.", lower_bound=2)
cli.define_seed("seed", 0, "Seed of W and of the batches.")
cli.define_run_flags("results/theory/kernel_lemmas", resume=False, what="Where the JSON and table go.")
cli.register_numbers("taus", float, 0, None, lo_open=True)
cli.register_numbers("degrees", int, 0, 80)
cli.register_numbers("batch_sizes", int, 2, 4097)


def _memory(**f) -> int:  # bytes: a batch's float64 alpha and squared feature gaps, the errors of a size's draws
    return 8 * (kernel_lemmas.KernelLemmasConfig.k + 2) * f["--batch_sizes"] ** 2 + 32 * f["--n_batches"]


def main(argv):
    del argv
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("batch_sizes", "n_batches")),
                        "float64 (k + 2) N^2 for the largest batch size N, + 32 bytes (a Python float in a list) per "
                        "draw of --n_batches")
    cfg = kernel_lemmas.KernelLemmasConfig(taus=cli.floats(FLAGS.taus), degrees=cli.ints(FLAGS.degrees),
                                           batch_sizes=cli.ints(FLAGS.batch_sizes), n_batches=FLAGS.n_batches,
                                           seed=FLAGS.seed)
    run = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(cfg), script="scripts/kernel_lemmas.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    record = kernel_lemmas.run(cfg)
    saved = cli.with_run_record("scripts/kernel_lemmas.py", record)
    saved["claims"] = claims.kernel_lemmas_claims(saved, result=str(FLAGS.output_dir))
    done = cli.finish_ledger_run(run, "kernel_lemmas", saved, kernel_lemmas.markdown(record) + "\n")
    print("\n".join([report.markdown_table(kernel_lemmas.COLUMNS, record["rows"]), *report.key_lines(
        "tau: the Gaussian alpha's temperature; degree: the truncation degree of Lemma 1's feature map phi; "
        "n_features: its length; max_abs_alpha_err: max |phi phi^T - alpha| over pairs; min_phi: its smallest entry "
        "(Lemma 1: >= 0); eq4_rel_diff: Eq. 4's variance sum against the exact pairwise form of Eq. 3, relative."),
        "", report.markdown_table(kernel_lemmas.BATCH_COLUMNS, record["batch_rows"]), *report.key_lines(
        "tau: as above; batch_size: N; mean_rel_err, std_rel_err: the batch C_alpha of Eq. 3 (two sampled views) "
        "against (N - 1)/N times the kernel sum, relative error, mean and std over the draws (falls like 1/sqrt N)."),
        "", *done]))


if __name__ == "__main__":
    cli.start(main)
