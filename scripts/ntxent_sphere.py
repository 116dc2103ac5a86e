"""Sec. 2-3 of the SimCLR variational analysis: Prop. 2.1, Fig. 3, Thm. 3.2, Prop. A.1 and Lemma A.2.

    python scripts/ntxent_sphere.py --overwrite     # -> results/simclr_var/sphere (about 2 min on 2 CPU cores)

Writes into --output_dir (float64 throughout):
  fig3.json / fig3.png / fig3.csv   Eq. 4 at K evenly spaced points on S^1 for every (tau, K), the uniform
                                    plateau, the threshold of the minimum squared distance per tau and its
                                    linear fit in tau (slope, intercept, R^2); the indicator readings
  thm32.md                          Riemannian gradient and smallest Riemannian Hessian eigenvalue
                                    (rotations removed) of symmetric configurations and of two controls
  lemma_a2.md / lemma_a2.csv        Lemma A.2 on a grid of K and tau: its region, admitted directions (and
                                    how many have a resolved sign), the smallest second variation among them
                                    and the smallest Riemannian Hessian eigenvalue, each with its rounding
                                    bound
  sphere.json                       everything above with Prop. 2.1, Prop. A.1 and the verdicts
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import cli, io, report  # noqa: E402
from ccdyn.variational import figures  # noqa: E402
from ccdyn.variational.studies import sphere  # noqa: E402
from ccdyn.verdicts import verdict_lines  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("fig3.json", "fig3.png", "fig3.csv", "thm32.md", "lemma_a2.csv", "lemma_a2.md", "sphere.json")
_C = sphere.SphereConfig()
flags.DEFINE_list("taus", [str(t) for t in _C.taus], "Temperatures of Fig. 3 (> 0, at least 2).")
flags.DEFINE_list("Ks", [str(k) for k in _C.Ks], "Numbers of evenly spaced points (>= 1, at least 3).")
flags.DEFINE_float("rel_tol", _C.rel_tol, "Plateau: relative excess over the uniform loss below this, in (0, 1).")
flags.DEFINE_list("lemma_Ks", [str(k) for k in _C.lemma_Ks], "K of the Lemma A.2 table (>= 2).")
flags.DEFINE_list("lemma_taus", [str(t) for t in _C.lemma_taus], "tau of the Lemma A.2 table (> 0).")
flags.DEFINE_integer("n_dirs", _C.n_dirs, "Sampled directions per Lemma A.2 cell.", lower_bound=16)
cli.define_seed("seed", _C.seed, "Seed of the sampled directions.")
cli.define_run_flags("results/simclr_var/sphere", resume=False, what="Where the outputs go.")
cli.register_numbers("taus", float, 0, lo_open=True, min_len=2)
cli.register_numbers("Ks", int, 1, min_len=3)
cli.register_numbers("lemma_Ks", int, 2)
cli.register_numbers("lemma_taus", float, 0, lo_open=True)
flags.register_validator("rel_tol", lambda v: 0 < v < 1, "--rel_tol must lie in (0, 1)")


def _memory(**f) -> int:  # bytes: Lemma A.2's float64 pair differences h_i - h_j of every direction, the Hessian
    return 8 * (2 * f["--n_dirs"] + 4) * f["--lemma_Ks"] ** 2


def main(argv):
    del argv
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("n_dirs", "lemma_Ks")),
                        "float64 (2 n_dirs + 4) K^2 for the largest K of --lemma_Ks")
    config = sphere.SphereConfig(taus=cli.floats(FLAGS.taus), Ks=tuple(sorted(set(cli.ints(FLAGS.Ks)))),
                                rel_tol=FLAGS.rel_tol, lemma_Ks=cli.ints(FLAGS.lemma_Ks),
                                lemma_taus=cli.floats(FLAGS.lemma_taus), n_dirs=FLAGS.n_dirs, seed=FLAGS.seed)
    run_dir = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(config), script="scripts/ntxent_sphere.py",
                               outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run_dir.path
    cli.log("Fig. 3, Thm. 3.2, Prop. A.1, Lemma A.2 ...")
    rec = sphere.sphere_study(config)
    run = cli.run_record("scripts/ntxent_sphere.py")
    f3 = rec["fig3"]
    for t, thr in zip(f3["taus"], f3["threshold"]):
        if thr is None or not np.isfinite(thr):  # left out of the fit, named here
            cli.log(f"WARNING --taus: no plateau threshold at tau = {t:g} among --Ks (left out of the fit)")
    io.write_json(out / "fig3.json", {**run, **f3})
    io.save_figure(out / "fig3.png", figures.fig3_figure(f3))
    io.write_csv(out / "fig3.csv", ["tau", "K", "min_sq_distance", "loss", "plateau", "threshold"],
                 [[t, K, f3["min_sq_distance"][j], f3["loss"][i][j], f3["plateau"][i], f3["threshold"][i]]
                  for i, t in enumerate(f3["taus"]) for j, K in enumerate(f3["Ks"])])
    taus = [str(t) for t in config.hessian_taus]
    thm = report.markdown_table(["configuration", "max |Riemannian grad|"] + [f"λ_min τ={t}" for t in taus],
                                [[r["config"], f"{r['max_riemannian_grad']:.1e}"]
                                 + ["-" if r["min_hessian_eig"][t] is None else f"{r['min_hessian_eig'][t]:.3g}"
                                    for t in taus] for r in rec["thm32"]["rows"]])
    io.atomic_write_bytes(out / "thm32.md", (thm + "\n").encode())
    cols = ["K", "tau", "lemma_region", "n_admitted", "n_admitted_resolved", "n_dirs", "max_sigma",
            "min_second_variation_admitted", "min_second_variation_admitted_err", "min_second_variation_all",
            "min_riemannian_eig", "min_riemannian_eig_err", "riemannian_eig_resolved"]
    lem = [[r[c] for c in cols] for r in rec["lemmaA2"]["rows"]]
    io.write_csv(out / "lemma_a2.csv", cols, lem)
    io.atomic_write_bytes(out / "lemma_a2.md", (report.markdown_table(cols, [
        [f"{v:.3g}" if isinstance(v, float) else v for v in r] for r in lem]) + "\n").encode())
    io.write_json(out / "sphere.json", {**run, **rec})
    fit = f3["fit"]
    print("\n".join([report.format_table(["tau", "threshold"],
                                         [[t, f"{v:.4f}"] for t, v in zip(f3["taus"], f3["threshold"])]),
                     *report.key_lines(f"tau: the temperature; threshold: Fig. 3's s*, the smallest squared distance "
                                       f"4 sin^2(pi/K) between K equally spaced clusters at which NT-Xent is within "
                                       f"{config.rel_tol:g} of its uniform plateau (nan: the Ks do not bracket it).")]))
    if fit:
        print(f"threshold = {fit['slope']:.4f} tau + {fit['intercept']:.4f}, R^2 = {fit['r2']:.4f}\n")
    verdicts = [rec[k]["verdict"] for k in ("prop21", "fig3", "thm32", "propA1", "lemmaA2")]
    print("\n".join(verdict_lines(verdicts)))
    print(f"\nwrote {cli.finish(run_dir)}")


if __name__ == "__main__":
    cli.start(main)
