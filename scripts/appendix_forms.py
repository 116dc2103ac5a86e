"""Printed forms of the core and DDN appendices that had no check, each against an independent route
(ccdyn.two_layer.studies.appendix_forms, ccdyn.deep.studies.appendix_forms): core Eq. 143 and its printed
alternative, Lemma 5's C = 2 form with Eq. 138, App. D's d_k^bn, Eq. 155's bounds; DDN's remark after Eq. 2,
Eq. 59, Eq. 125 and Thm. 5 simulated; SimCLR-var App. A.1 (VICReg, BYOL) and Prop. 3.1's Eq. 6
(ccdyn.variational.studies.appendix_a1, eq6).

    python scripts/appendix_forms.py --overwrite        # -> results/theory/appendix_forms

Writes appendix_forms.json (both records, the claim records, the command) and appendix_forms.md.
"""

from __future__ import annotations

import dataclasses

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import cli, report  # noqa: E402
from ccdyn.deep import claims as deep_claims  # noqa: E402
from ccdyn.deep.studies import appendix_forms as ddn_forms  # noqa: E402
from ccdyn.deep.studies import thm5_sim  # noqa: E402
from ccdyn.two_layer import claims as core_claims  # noqa: E402
from ccdyn.two_layer.studies import appendix_forms as core_forms  # noqa: E402
from ccdyn.variational import claims as var_claims  # noqa: E402
from ccdyn.variational.studies import appendix_a1, eq6  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("appendix_forms.json", "appendix_forms.md")
_C, _D = core_forms.AppendixFormsConfig(), ddn_forms.DDNFormsConfig()
flags.DEFINE_integer("draws", _C.draws, "Random populations (and filters) for the core closed forms.", lower_bound=1,
                     upper_bound=10_000)
flags.DEFINE_integer("n_mc", _C.n_mc, "Monte Carlo draws per (eps, d) of Eq. 155's event.", lower_bound=1000,
                     upper_bound=10_000_000)
flags.DEFINE_integer("n_samples", _D.n_samples, "Random distance configurations per (loss, tau) for DDN Eq. 59.",
                     lower_bound=100, upper_bound=1_000_000)
flags.DEFINE_integer("trials", thm5_sim.Thm5SimConfig().trials, "Fresh initializations per width for DDN Thm. 5's "
                     "simulation.", lower_bound=10, upper_bound=100_000)
cli.define_seed("seed", _C.seed, "Seed of the populations, the Monte Carlo and the configurations.")
cli.define_run_flags("results/theory/appendix_forms", resume=False, what="Where the JSON and tables go.")


def _memory(**f) -> int:  # bytes: Eq. 155's float64 draws (the largest d), Eq. 59's configurations, the populations
    return (8 * max(_C.dims) * f["--n_mc"] + 8 * 3 * (max(_D.H) + 1) * f["--n_samples"] + 16 * f["--trials"]
            + 8 * 2 * _C.n ** _C.K * _C.K * _C.d * f["--draws"])


def main(argv):
    del argv
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("draws", "n_mc", "n_samples", "trials")),
                        "float64 --n_mc x 20 (Eq. 155), 3 x 17 x --n_samples (Eq. 59) and a joint population per draw")
    core_cfg = dataclasses.replace(_C, draws=FLAGS.draws, n_mc=FLAGS.n_mc, seed=FLAGS.seed)
    ddn_cfg = dataclasses.replace(_D, n_samples=FLAGS.n_samples, seed=FLAGS.seed)
    var_cfg = dataclasses.replace(appendix_a1.A1Config(), seed=FLAGS.seed)
    eq6_cfg = dataclasses.replace(eq6.Eq6Config(), seed=FLAGS.seed)
    thm5_cfg = dataclasses.replace(thm5_sim.Thm5SimConfig(), trials=FLAGS.trials, seed=FLAGS.seed)
    run = cli.open_run_dir(FLAGS.output_dir, {"core": dataclasses.asdict(core_cfg), "ddn": dataclasses.asdict(ddn_cfg),
                                              "simclr": dataclasses.asdict(var_cfg),
                                              "eq6": dataclasses.asdict(eq6_cfg),
                                              "ddn_thm5": dataclasses.asdict(thm5_cfg)},
                           script="scripts/appendix_forms.py", outputs=OUTPUTS, overwrite=FLAGS.overwrite,
                           can_resume=False)
    record = {"core": core_forms.run(core_cfg), "ddn": ddn_forms.run(ddn_cfg), "simclr": appendix_a1.run(var_cfg),
              "eq6": eq6.run(eq6_cfg), "ddn_thm5": thm5_sim.run(thm5_cfg)}
    saved = cli.with_run_record("scripts/appendix_forms.py", record)
    result = str(FLAGS.output_dir)
    saved["claims"] = (core_claims.appendix_forms_claims(saved["core"], result=result, command=saved["command"])
                       + deep_claims.appendix_forms_claims(saved["ddn"], result=result, command=saved["command"])
                       + var_claims.appendix_a1_claims(saved["simclr"], result=result, command=saved["command"])
                       + var_claims.eq6_claims(saved["eq6"], result=result, command=saved["command"])
                       + deep_claims.thm5_sim_claims(saved["ddn_thm5"], result=result, command=saved["command"]))
    pops = record["core"]["populations"]
    cols = ["draw", "delta (dynamics)", "delta (Eq. 143)", "delta (printed alternative)", "d_k", "d_k^bn"]
    rows = [[i, ", ".join(f"{x:.4g}" for x in p["delta_true"]), ", ".join(f"{x:.4g}" for x in p["delta_eq143"]),
             ", ".join(f"{x:.4g}" for x in p["delta_printed_alternative"]), ", ".join(f"{x:.3g}" for x in p["d"]),
             ", ".join(f"{x:.3g}" for x in p["d_bn_enumerated"])] for i, p in enumerate(pops)]
    eq155 = report.markdown_table(["eps", "d", "P (quadrature of Eq. 154)", "P (Monte Carlo)", "eps / 2"],
                                  [[r["eps"], r["d"], f"{r['quadrature']:.4g}", f"{r['monte_carlo']:.4g}", r["eps"] / 2]
                                   for r in record["core"]["eq155"] if r["eps"] > 0])
    head = ("# Printed appendix forms against independent routes\n\n" + report.markdown_table(cols, rows) + "\n\n"
            + eq155 + "\n\n")
    done = cli.finish_ledger_run(run, "appendix_forms", saved, head)
    print("\n".join([report.keyed_table(cols, rows,  # in blocks of at most 120 characters
        "draw: a random two-class population (K = 3 RFs of scales 1, 3, 10, ReLU gating); delta (dynamics): "
        "delta_k read off w_k' of the enumerated population with s from eigh; delta (Eq. 143): the printed "
        "definition; delta (printed alternative): 1 - p0 p1 b_k^2 / (lambda - d_k); d_k: E_z V[f_k | z]; "
        "d_k^bn: d_k / V[f_k]."), "", eq155, *report.key_lines(
        "eps: the modulation factor; d: the dimension; P: P[E_l] by quadrature of Eq. 154 and by Monte Carlo of "
        "Eq. 152; eps / 2: the printed lower bound."),
        "", *done]))


if __name__ == "__main__":
    cli.start(main)
