"""Sec. 4 of the SimCLR variational analysis: the network kernel (Props. 4.1, 4.3, 4.4, Thm. 4.2, 4.5,
Cor. 4.6) and Figs. 5-6 with cluster-preservation scores over vmapped seeds.

    python scripts/kernel_dynamics.py --overwrite   # -> results/simclr_var/kernel (about 15 min on 2 CPU cores)

Writes into --output_dir:
  kernel.json                  Prop. 4.3 vs autodiff NTK, Prop. 4.1, Thm. 4.2 gaps, Thm. 4.5 / Cor. 4.6 errors,
                               Prop. 4.4 Monte Carlo errors and the fitted exponent (float64), verdicts
  mc_rate.png / mc_rate.csv    Prop. 4.4: RMS error against width M, log-log, with the fit
  clusters.json                per model and dimension: kept share (Wilson 95%), mean scores with 95%
                               intervals at --at iterations, keep times; the grids; verdicts
  curves_<dim>d.png / .csv     between / within ratio, silhouette, uniformity over iterations (mean, 95%)
  snapshots_<dim>d.png         seed 0's embedding at --at iterations (the rows of Figs. 5-6)
  grid.png / grid.csv          ratio at the end against width M, tau, size of the cluster at x = 1
"""

from __future__ import annotations

import dataclasses

import jax
from absl import flags

from ccdyn import cli, io, report, verdicts  # noqa: E402
from ccdyn.variational import figures  # noqa: E402
from ccdyn.variational.studies import clusters, kernel  # noqa: E402

FLAGS = flags.FLAGS
OUTPUTS = ("kernel.json", "mc_rate.csv", "mc_rate.png", "clusters.json", "curves_*d.csv", "curves_*d.png",
           "snapshots_*d.png", "grid.csv", "grid.png")
_K, _C = kernel.KernelConfig(), clusters.ClusterStudyConfig()
flags.DEFINE_list("mc_Ms", [str(m) for m in _K.mc_Ms], "Widths of the Prop. 4.4 Monte Carlo (>= 1, at least 3).")
flags.DEFINE_integer("mc_seeds", _K.mc_seeds, "Seeds per width (vmapped).", lower_bound=2)
flags.DEFINE_list("dims", [str(d) for d in _C.dims], "Data / embedding dimensions of Figs. 5-6 (2 or 3).")
flags.DEFINE_integer("steps", _C.steps, "Iterations of Figs. 5-6 (a multiple of --record_every).", lower_bound=1)
flags.DEFINE_integer("record_every", _C.record_every, "Record the scores every this many iterations.", lower_bound=1)
flags.DEFINE_integer("n_seeds", _C.n_seeds, "Seeds per setting (vmapped).", lower_bound=2)
flags.DEFINE_float("tau", _C.tau, "Temperature of the loss (> 0).")
flags.DEFINE_integer("grid_steps", _C.grid_steps, "Iterations of the grid runs.", lower_bound=1)
flags.DEFINE_list("widths", [str(w) for w in _C.widths], "Widths M of the grid (>= 1).")
flags.DEFINE_list("taus", [str(t) for t in _C.taus], "Temperatures of the grid (> 0).")
flags.DEFINE_list("small_sizes", [str(s) for s in _C.small_sizes], "Sizes of the cluster at x = 1 (>= 2), first "
                  "the balanced one.")
flags.DEFINE_list("at", [str(a) for a in _C.at], "Iterations reported in the tables (>= 0).")
cli.define_seed("seed", _C.seed, "Seed.")
cli.define_run_flags("results/simclr_var/kernel", resume=False, what="Where the outputs go.")
cli.register_numbers("mc_Ms", int, 1, min_len=3)
cli.register_numbers("dims", int, 2, 3, hi_open=False)
cli.register_numbers("widths", int, 1)
cli.register_numbers("taus", float, 0, lo_open=True)
cli.register_numbers("small_sizes", int, 2)
cli.register_numbers("at", int, 0)
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_multi_flags_validator(["steps", "record_every", "grid_steps"],
                                     lambda f: f["steps"] % f["record_every"] == 0
                                     == f["grid_steps"] % f["record_every"],
                                     "--steps and --grid_steps must be multiples of --record_every")


def _curves_csv(curves):
    head = ["model", "iteration"] + [f"{k}_{s}" for k in ("ratio", "silhouette", "uniformity")
                                     for s in ("mean", "lo", "hi")]
    rows = [[name, int(it)] + [float(f"{float(c[k][s][i]):.5g}") for k in ("ratio", "silhouette", "uniformity")
                               for s in ("mean", "lo", "hi")]
            for name, c in curves.items() for i, it in enumerate(c["iters"])]
    return head, rows


def _memory(**f) -> int:  # bytes: every seed's records, net (weights, gradients) and n x n scores; the MC
    n = 3 * _C.per_cluster + max(_C.per_cluster, f["--small_sizes"])  # the grid's run with the largest cluster at x = 1
    w = max(max(m[3] for m in _C.models), f["--widths"])
    records = max(f["--steps"], f["--grid_steps"]) // f["--record_every"] + 1
    return (4 * f["--n_seeds"] * (4 * n * records + 12 * w * w + 8 * n * w + 4 * n * n)
            + 8 * 24 * f["--mc_seeds"] * f["--mc_Ms"])


def main(argv):
    del argv
    sizes = cli.sizes_of(FLAGS, ("n_seeds", "steps", "grid_steps", "record_every", "widths", "mc_seeds", "mc_Ms",
                                 "small_sizes"))
    cli.check_memory_of(_memory, *sizes, f"float32 n_seeds x (4 n (steps / record_every + 1) + 12 M^2 + 8 n M + 4 n^2) "
                        f"for n = {3 * _C.per_cluster} + max(small_sizes, {_C.per_cluster}) points and width M, "
                        "+ float64 24 mc_seeds x max mc_Ms")
    runs = (len(FLAGS.dims) * 4, len(FLAGS.widths) + len(FLAGS.taus) + len(FLAGS.small_sizes))  # (Figs. 5-6, grid)
    cli.check_counts(FLAGS, ("steps", "grid_steps", "record_every"), loops=("record_every",),
                     steps=lambda **f: runs[0] * f["--steps"] + runs[1] * f["--grid_steps"],
                     formula=f"{runs[0]} runs x steps + {runs[1]} grid runs x grid_steps sequential steps")
    kc = kernel.KernelConfig(mc_Ms=cli.ints(FLAGS.mc_Ms), mc_seeds=FLAGS.mc_seeds, seed=FLAGS.seed)
    cc = clusters.ClusterStudyConfig(dims=cli.ints(FLAGS.dims), steps=FLAGS.steps, record_every=FLAGS.record_every,
                                  tau=FLAGS.tau, n_seeds=FLAGS.n_seeds, grid_steps=FLAGS.grid_steps,
                                  widths=cli.ints(FLAGS.widths), taus=cli.floats(FLAGS.taus),
                                  small_sizes=cli.ints(FLAGS.small_sizes), at=cli.ints(FLAGS.at), seed=FLAGS.seed)
    config = {"kernel": dataclasses.asdict(kc), "clusters": dataclasses.asdict(cc)}
    run_dir = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/kernel_dynamics.py", outputs=OUTPUTS,
                               overwrite=FLAGS.overwrite, can_resume=False)
    out = run_dir.path
    run = cli.run_record("scripts/kernel_dynamics.py")
    cli.log("kernel checks (float64) ...")
    with jax.enable_x64(True):
        krec = kernel.kernel_study(kc)
    io.write_json(out / "kernel.json", {**run, **krec})
    mc = krec["mc"]
    io.write_csv(out / "mc_rate.csv", ["M", "rms"], list(zip(mc["Ms"], mc["rms"])))
    io.save_figure(out / "mc_rate.png", figures.mc_rate_figure(mc["Ms"], mc["rms"], mc["fit"]))
    cli.log("Figs. 5-6 (float32) ...")
    crec = clusters.cluster_study(cc, log=cli.log)
    for name, k, n in [(nm, r["non_finite_seeds"], r["n"]) for nm, r in crec["summaries"].items()] + [
            (f"grid {g['vary']} = {g['value']:g}, {g['model']}", g["non_finite_seeds"], g["n"]) for g in crec["grid"]]:
        if k:  # left out of the means and intervals (NaN-aware), named here
            cli.log(f"WARNING {name}: {k} of {n} seeds went non-finite (left out of the means); raise --tau / --taus "
                    "or lower the step sizes")
    io.write_json(out / "clusters.json", {**run, **{k: v for k, v in crec.items() if k not in ("curves", "snapshots")}})
    for dim in cc.dims:
        cur = {k[4:]: v for k, v in crec["curves"].items() if k.startswith(f"{dim}-D ")}
        io.write_csv(out / f"curves_{dim}d.csv", *_curves_csv(cur))
        io.save_figure(out / f"curves_{dim}d.png", figures.cluster_curves_figure(
            cur, crec["keep_ratio"][dim], f"{dim}-D data, {cc.n_seeds} seeds, tau = {cc.tau:g} (mean, 95% interval)"),
            dpi=90)
        snaps = {k[4:]: v for k, v in crec["snapshots"].items() if k.startswith(f"{dim}-D ")}
        io.save_figure(out / f"snapshots_{dim}d.png", figures.cluster_snapshots_figure(
            snaps, f"{dim}-D data, seed 0, first two coordinates of the normalized embedding"), dpi=70)
    cols = ["vary", "value", "model", "kept_at_200", "kept_at_end", "median_t_off", "kept_to_end", "n",
            "non_finite_seeds"]
    io.write_csv(out / "grid.csv", cols + ["ratio_end", "cluster_x1_silhouette_end", "others_silhouette_end"],
                 [[g[c] for c in cols] + [g["ratio_end"]["mean"], g["cluster_x1_silhouette_end"]["mean"],
                                          g["other_clusters_silhouette_end"]["mean"]] for g in crec["grid"]])
    io.save_figure(out / "grid.png", figures.cluster_grid_figure(crec["grid"]))
    print(f"Prop. 4.4 exponent {mc['fit']['slope']:.4f} (R^2 {mc['fit']['r2']:.4f})")
    rows = [[name, *(f"{s['at'][t]['kept']}/{s['n']}" for t in s["at"]), s["median_t_off"]]
            for name, s in crec["summaries"].items()]
    first = next(iter(crec["summaries"].values()))
    print("\n".join([report.format_table(["run"] + [f"kept@{t}" for t in first["at"]] + ["median t_off"], rows),
                     *report.key_lines(
                         "run: the setting (data dimension, model, start, lr, width, activation); kept@t: seeds that "
                         "keep the clusters at iteration t (between/within ratio >= the data's own, "
                         "docs/variational.md) / seeds; median t_off: the median iteration at which a seed stops "
                         "keeping them (None: none stops)."), ""]))
    print("\n".join(verdicts.verdict_lines(krec["verdicts"] + crec["verdicts"])))
    print(f"\nwrote {cli.finish(run_dir)}")


if __name__ == "__main__":
    cli.start(main)
