"""Global modulation (Thm. 5-6, Fig. 7, Eq. 155) and BatchNorm across RFs (Cor. 3), checked numerically.

    python scripts/modulation.py          # -> results/theory/modulation (about a minute on 2 CPU cores)

Writes into --output_dir:
  eq15.json / eq15.md      max |Eq. 15 - Lemma 4| over random conditionally independent populations
                           (relu, leaky_relu, linear; without and with BatchNorm, Cor. 3 / Lemma 6), x64
  fig7.png, fig7.json      y' = (y + b) y: closed form (Eq. 147) vs RK4, blow-up times t* (Eq. 150)
  eq155.md / eq155.csv     P[E_l] of Eq. 155 vs Monte Carlo (--n_mc draws, 95% Wilson intervals)
  thm6.md / thm6.json      the flow of A(w) = sum_l (u_l^T w + b_l) u_l u_l^T from --n_mc random unit
                           starts: share of starts that reach u_0 when b_0 = b + c (Thm. 6), and how
                           often Thm. 6's predictor (first blow-up time) names the attractor
  cor3.md / cor3.json      RFs of input scales --scales: d_k and d_k^bn, each filter's initial speed and
                           the angle it has turned after 2e3, 2e4, 2e5 Euler steps of the Eq. 15 flow
                           without and with BatchNorm (Cor. 3); the step size is set by the fastest RF
"""

from __future__ import annotations

import dataclasses

import jax
from absl import flags

jax.config.update("jax_enable_x64", True)

from ccdyn import cli, io, report, verdicts  # noqa: E402
from ccdyn.two_layer import figures  # noqa: E402
from ccdyn.two_layer.studies import modulation  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("eq15.json", "fig7.json", "fig7.png", "eq155.csv", "thm6.json",
           "cor3.json", "eq15.md", "eq155.md", "thm6.md", "cor3.md")
_C = modulation.ModulationConfig()
flags.DEFINE_integer("n_mc", _C.n_mc, "Monte Carlo draws / random starts (>= 1000).", lower_bound=1000)
flags.DEFINE_integer("d", _C.d, "Dimension of Eq. 155 and of the Thm. 6 flow (>= 2).", lower_bound=2)
flags.DEFINE_float("b", _C.b, "b_l of the unmodulated components in the Thm. 6 flow (> 0).")
flags.DEFINE_list("c", ["0", "0.1", "0.2", "0.3", "0.5", "0.8"], "Modulations c >= 0 of u_0 (Thm. 6).")
flags.DEFINE_list("eps", ["-1.5", "-0.5", "-0.2", "0", "0.2", "0.5", "1", "1.5"], "Modulation factors of Eq. 155.")
flags.DEFINE_list("eps_dims", ["5", "10", "20"], "Dimensions d of the Eq. 155 table (>= 2).")
flags.DEFINE_list("scales", ["0.1", "1", "10"], "Input scales of the RFs in the BatchNorm study (> 0).")
cli.define_seed("seed", _C.seed, "Seed.")
cli.define_run_flags("results/theory/modulation", resume=False, what="Where the outputs go.")
flags.register_validator("b", lambda v: v > 0, "--b must be > 0")
cli.register_numbers("c", float, 0)
cli.register_numbers("eps", float)
cli.register_numbers("eps_dims", int, 2)
cli.register_numbers("scales", float, 0, lo_open=True, min_len=2)


def _memory(**f) -> int:  # float64 bytes: the Thm. 6 flow of n_mc starts in d dimensions; Eq. 155's batches
    return 8 * (8 * f["--n_mc"] * f["--d"] + 4 * 65536 * f["--eps_dims"])


def main(argv):
    del argv
    cli.check_memory_of(_memory, *cli.sizes_of(FLAGS, ("n_mc", "d", "eps_dims")),
                        "float64 8 n_mc x d (Thm. 6) + 4 x 65536 x max eps_dims (Eq. 155 batches)")
    config = modulation.ModulationConfig(n_mc=FLAGS.n_mc, d=FLAGS.d, b=FLAGS.b, c=cli.floats(FLAGS.c),
                                         eps=cli.floats(FLAGS.eps), eps_dims=cli.ints(FLAGS.eps_dims),
                                         scales=cli.floats(FLAGS.scales), seed=FLAGS.seed)
    run_dir = cli.open_run_dir(FLAGS.output_dir, dataclasses.asdict(config), script="scripts/modulation.py",
                           outputs=OUTPUTS, overwrite=FLAGS.overwrite, can_resume=False)
    out = run_dir.path
    rec = modulation.run(config, log=cli.log)
    run = cli.run_record("scripts/modulation.py")
    eq15, fig7, thm6, cor3 = rec["eq15"], rec["fig7"], rec["thm6"], rec["cor3"]
    io.write_json(out / "eq15.json", {**run, "rows": eq15["rows"]})
    io.write_json(out / "fig7.json", {**run, "b": fig7["b"], "per_y0": fig7["per_y0"]})
    io.save_figure(out / "fig7.png", figures.blowup_figure(fig7["curves"], fig7["y_grid"], fig7["tstar"]))
    io.write_csv(out / "eq155.csv", *modulation.eq155_csv(rec["eq155"]["rows"]))
    io.write_json(out / "thm6.json", {**run, **{k: thm6[k] for k in ("d", "b", "n", "rows")}})
    io.write_json(out / "cor3.json", {**run, **{k: cor3[k] for k in ("scales", "act", "none", "bn")}})
    tables = modulation.markdown(rec)
    for name, md in tables.items():
        io.atomic_write_bytes(out / name, md.encode())
    out = cli.finish(run_dir)
    print(f"Thm. 5: worst relative difference {eq15['verdict']['numbers']['worst_relative']:.1e} "
          f"over {len(eq15['rows'])} cases")
    print(f"Fig. 7: worst relative error {fig7['verdict']['numbers']['worst_rel_err']:.1e}")
    print(f"Eq. 155: {rec['eq155']['verdict']['numbers']['inside']} theory values inside the 95% interval")
    keys = {name: "\n".join(lines) for name, lines in modulation.TABLE_KEYS.items()}
    n = cor3["none"]["n_steps"]  # cor3.md's columns as a plain table, split at 120 characters
    cor3_text = report.format_table(*modulation.cor3_table(cor3, (n // 100, n // 10, n)))
    print(f"\nThm. 6:\n{tables['thm6.md']}{keys['thm6.md']}\n\nCor. 3:\n{cor3_text}\n{keys['cor3.md']}\n")
    print("\n".join(verdicts.verdict_lines([dict(rec[k]["verdict"], check=k) for k in ("eq15", "fig7", "eq155",
                                                                                          "thm6", "cor3")],
                                            label=lambda v: v["check"])))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    cli.start(main)
