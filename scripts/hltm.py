"""SimCLR on SB-HLTM data (Dual Deep Networks, Sec. 7, Tables 4/6, Figs. 13-14): one setting or a grid.

    python scripts/hltm.py --output_dir=results/ddn/table6          # Table 6: 3 delta_lower x 2 widths x 10 seeds
    python scripts/hltm.py --readings=authors --tau=0.01 --epochs=20 --output_dir=runs/hltm_authors

Every combination of --readings x --depths x --widths x --deltas_lower is a setting; its --n_seeds
seeds are vmapped and trained together (App. D.1 defaults: L_nce tau 0.1, H = 1, SGD lr 0.1, batch
128, 64 000 samples per epoch, 50 epochs). Several processes (--num_processes) share the settings;
process 0 alone writes. Writes into --output_dir:
  runs/<setting>.json   per-seed NC and ||OP_mu||_F of every non-leaf latent at every evaluated epoch,
                        losses, polarities, wall time; the unit of --resume
  results.json, results.csv   NC mean/std at init / after epoch 1 / converged for the Table 6 latents,
                        the comparison with the paper's Table 6 and the App. D.1 trend verdicts
  table6_<reading>.md, table4_<reading>.md   ours beside the paper's (when the grid has L = 5 cells)
  op_<reading>.png, op_authors_<reading>.png   median ||OP_mu||_F over seeds (Fig. 13 / 14 analogues)
"""

from __future__ import annotations

import os
import time

from absl import flags

from ccdyn import cli, grid, io, report
from ccdyn.deep import claims, figures, hltm
from ccdyn.deep.studies import hltm_grid

FLAGS = flags.FLAGS
_G = hltm_grid.GridConfig()
flags.DEFINE_list("readings", list(_G.readings), f"Loss readings, from {', '.join(hltm.READINGS)}.")
flags.DEFINE_list("depths", [str(v) for v in _G.depths], "Tree depths L (integers >= 2).")
flags.DEFINE_list("widths", [str(v) for v in _G.widths], "Nodes per latent |N_mu| (integers >= 1).")
flags.DEFINE_list("deltas_lower", [f"{v:g}" for v in _G.deltas_lower], "Polarity ranges U[delta_lower, 1], in [-1, 1].")
flags.DEFINE_integer("n_seeds", _G.n_seeds, "Seeds per setting (vmapped together).", lower_bound=1)
cli.define_seed("seed", _G.seed, "Base seed (seed s: fold_in(PRNGKey(seed), s)).")
flags.DEFINE_float("tau", _G.tau, "Temperature (> 0).")
flags.DEFINE_float("lr", _G.lr, "SGD learning rate (> 0).")
flags.DEFINE_integer("batch_size", _G.batch_size, "Samples per SGD step (>= 2).", lower_bound=2)
flags.DEFINE_integer("samples_per_epoch", _G.samples_per_epoch, "N, samples per epoch.", lower_bound=2)
flags.DEFINE_integer("epochs", _G.epochs, "Epochs.", lower_bound=1)
flags.DEFINE_integer("n_eval", _G.n_eval, "Fixed evaluation samples per seed (NC, ||OP||_F).", lower_bound=16)
flags.DEFINE_integer("eval_every", _G.eval_every, "Score every this many epochs (and after epoch 1).", lower_bound=1)
cli.define_run_flags("runs/hltm")
cli.define_multihost_flags()
cli.register_subset("readings", hltm.READINGS)
cli.register_numbers("depths", int, 2)
cli.register_numbers("widths", int, 1)
cli.register_numbers("deltas_lower", float, -1, 1, hi_open=False)
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_validator("lr", lambda v: 0 < v < float("inf"), "--lr must be a finite number > 0")
flags.register_multi_flags_validator(["batch_size", "samples_per_epoch"],
                                     lambda f: f["samples_per_epoch"] >= f["batch_size"],
                                     "--samples_per_epoch must be >= --batch_size")

OUTPUTS = ("runs", "results.json", "results.csv", "table6_*.md", "table4_*.md", "op_*.png")


def _train(cfg, s, i, n):
    """Trains one setting (on this process's devices); returns its record (no weights)."""
    t1, shown = time.time(), set(cfg.eval_epochs())  # a line at every epoch that is scored

    def progress(epoch, loss):
        if epoch in shown:
            cli.log(f"[{i + 1}/{n}] {s.tag}: epoch {epoch}/{cfg.epochs}  loss {loss:.4f}  {time.time() - t1:.0f} s")

    r = hltm_grid.run_setting(s, cfg, on_epoch=progress)
    for k in [k for k, ok in enumerate(r["finite"]) if not ok]:  # left out of the means, never averaged in
        cli.log(f"WARNING {s.tag} seed {k} went non-finite (left out of the means); lower --lr or raise --tau")
    return r, None


def _memory(**f) -> int:  # bytes of one setting's vmapped seeds at the largest L and |N| (a lower bound)
    depth, width = min(f["--depths"], 64), f["--widths"]  # 2^64 nodes exceed any memory: a deeper tree is refused too
    params = sum(2 ** (depth - lv) * width * ((2 if lv == 1 else 2 * width) + 1) for lv in range(1, depth + 1))
    acts = (3 * f["--batch_size"] + f["--n_eval"]) * 2 ** depth * (width + 1)
    steps = f["--samples_per_epoch"] // f["--batch_size"]  # an epoch's keys (2 words a step) and losses, per seed
    return 4 * f["--n_seeds"] * (3 * params + acts + 3 * steps)


def main(argv):
    del argv
    t0 = time.time()
    pid, n_proc = cli.start_processes(FLAGS)  # before any JAX work
    cfg = cli.or_fail(
        hltm_grid.GridConfig, readings=tuple(FLAGS.readings), depths=cli.ints(FLAGS.depths),
        widths=cli.ints(FLAGS.widths), deltas_lower=cli.floats(FLAGS.deltas_lower), n_seeds=FLAGS.n_seeds,
        seed=FLAGS.seed, tau=FLAGS.tau, lr=FLAGS.lr, batch_size=FLAGS.batch_size,
        samples_per_epoch=FLAGS.samples_per_epoch, epochs=FLAGS.epochs, n_eval=FLAGS.n_eval,
        eval_every=FLAGS.eval_every)
    sizes = cli.sizes_of(FLAGS, ("depths", "widths", "n_seeds", "batch_size", "n_eval", "samples_per_epoch"))
    cli.check_memory_of(_memory, *sizes, "float32 n_seeds x (3 x the parameters + the activations of 3 batch_size + "
                        "n_eval samples + 3 words per step, samples_per_epoch / batch_size steps an epoch)")
    cli.check_counts(FLAGS, ("epochs", "samples_per_epoch", "batch_size"), steps=lambda **f: len(cfg.settings()) *
                     f["--epochs"] * max(1, f["--samples_per_epoch"] // f["--batch_size"]),
                     formula="settings x epochs x samples_per_epoch / batch_size sequential SGD steps")
    settings = cfg.settings()  # process 0 alone writes; the settings are spread over the processes
    run, _ = cli.open_run_of_process_0(pid, n_proc, FLAGS.output_dir, cfg.run_config(), script="scripts/hltm.py",
                                       outputs=OUTPUTS, overwrite=FLAGS.overwrite, resume=FLAGS.resume)
    records = grid.run(run, settings, lambda i: _train(cfg, settings[i], i, len(settings)), resume=FLAGS.resume,
                       log=cli.log)
    if pid != 0:  # the other processes trained their share of the settings
        return
    out = run.path
    rows = hltm_grid.table6_rows(records)
    train_s = sum(r["wall_s"] for r in records)
    steps = sum(r["seed_steps"] for r in records)
    timing = {"train_wall_s": train_s, "seed_steps": steps, "seed_steps_per_s": steps / train_s,
              "script_wall_s": time.time() - t0, "load_avg_1_5_15min_at_end": os.getloadavg(),
              "cpu_count": os.cpu_count()}
    verdicts = claims.grid_verdicts(rows, cfg.readings)
    io.write_csv(out / "results.csv", *hltm_grid.results_csv(rows))
    for reading in cfg.readings:
        cells = claims.table6_cells(rows, reading)
        if cells:
            io.atomic_write_bytes(out / f"table6_{reading}.md", claims.table6_markdown(cells).encode())
            io.atomic_write_bytes(out / f"table4_{reading}.md", claims.table6_markdown(
                cells, ("init", "converged"), ("s",)).encode())
    for reading in cfg.readings:
        for key in ("op", "op_authors"):
            panels = hltm_grid.figure_panels(records, reading, key)
            if panels:
                title = (f"{reading} reading, ||OP_mu||_F ({'paper' if key == 'op' else 'authors'} arrangement), "
                         f"median over {cfg.n_seeds} seeds")
                fig = figures.ddn_op_figure(panels, hltm_grid.FIGURE_LATENTS, title)
                io.save_figure(out / f"{key}_{reading}.png", fig)
    io.write_json(out / "results.json", {"state": "complete", **cli.run_record("scripts/hltm.py", None, n_proc),
                                         "config": cfg.__dict__, "timing": timing, "rows": rows,
                                         "verdicts": verdicts})  # last: results.json means complete
    out = cli.finish(run)
    print("\n".join(["", report.format_table(*hltm_grid.results_table(rows)), *hltm_grid.results_table_key(),
                     *claims.summary_lines(rows, verdicts, cfg.n_seeds)]))
    print(f"\ntraining {train_s:.0f} s for {steps} seed-steps ({steps / train_s:.0f} seed-steps/s); "
          f"wrote {out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    cli.start(main)
