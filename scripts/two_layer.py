"""2-layer contrastive learning on token-generator data (Sec. 5, App. E.2): one run or a grid.

    python scripts/two_layer.py --acts=relu --betas=5 --Ps=3 --n_seeds=1          # one setting
    python scripts/two_layer.py --acts=linear,relu,leaky_relu,quadratic,gelu \\
        --output_dir=results/two_layer/fig4_infonce                                # Fig. 4 / 9 grid

Every combination of --losses x --bn x --zeta x --acts x --Ps x --betas is a setting; its --n_seeds runs are
trained together, vmapped (SGD, the paper's settings by default). Writes into --output_dir:
  runs/<setting>.json   per-seed chi_+ / chi_- (overall and per RF), turn_deg, loss per block, finiteness;
                        the unit of --resume (which may add settings, never change lr, seeds, ...)
  results.json, results.csv   mean and std over the finite seeds of every setting, and the scores of
                        the untrained initial filters (chance level); results.json is written last
  chi_<loss>_zeta<z>.png      chi_bar_+ and chi_bar_- against beta, a panel per P (Fig. 4/9/10/11)
  weights.npz, weights.png    with --save_weights: seed-0 filters in the token basis (Fig. 5)
"""

from __future__ import annotations

import sys
import time

import numpy as np
from absl import flags

from ccdyn import activations, cli, grid, io, report, two_layer
from ccdyn.data import tokens
from ccdyn.two_layer import figures
from ccdyn.two_layer.studies import token_grid

FLAGS = flags.FLAGS
_T = two_layer.TrainConfig()
_S = tokens.TokenSpec()
flags.DEFINE_list("acts", ["relu"], f"Activations, from {', '.join(activations.ACTIVATIONS)}.")
flags.DEFINE_list("betas", ["1", "2", "5", "10"], "Over-parameterization beta (integers >= 1); M = beta P.")
flags.DEFINE_list("Ps", ["1", "3", "5", "10"], "Candidate tokens per position P, integers in [1, --n_tokens].")
flags.DEFINE_list("losses", ["infonce"], f"Losses, from {', '.join(two_layer.LOSSES)}.")
flags.DEFINE_list("bn", ["none"], f"BatchNorm variants, from {', '.join(two_layer.BN_VARIANTS)}.")
flags.DEFINE_list("zeta", ["1"], "Embedding norm non-uniformity zeta (> 0), App. E.2.")
flags.DEFINE_integer("n_seeds", 3, "Seeds per setting (vmapped together).", lower_bound=1)
cli.define_seed("seed", 0, "Base seed (seed s: fold_in(seed, s)).")
flags.DEFINE_integer("steps", _T.steps, "Minibatches.", lower_bound=1)
flags.DEFINE_integer("batch_size", _T.batch_size, "Positive pairs per minibatch (>= 2).")
flags.DEFINE_float("lr", _T.lr, "SGD learning rate (> 0).")
flags.DEFINE_float("momentum", _T.momentum, "SGD momentum, in [0, 1).")
flags.DEFINE_float("weight_decay", _T.weight_decay, "Weight decay (>= 0), PyTorch SGD semantics.")
flags.DEFINE_float("tau", _T.tau, "InfoNCE temperature (> 0).")
flags.DEFINE_bool("normalize", _T.normalize, "L2-normalize the outputs before the loss.")
flags.DEFINE_enum("quadratic_form", _T.quadratic_form, two_layer.QUADRATIC_FORMS, "tau*InfoNCE limit, or authors'.")
flags.DEFINE_enum("on_nonfinite", _T.on_nonfinite, two_layer.ON_NONFINITE, "Non-finite run: drop, or revert + keep.")
flags.DEFINE_integer("d_out", 50, "Output dimension (rows of V).", lower_bound=1)
flags.DEFINE_integer("n_generators", _S.n_generators, "Generators G.", lower_bound=1)
flags.DEFINE_integer("n_positions", _S.n_positions, "Positions / receptive fields K.", lower_bound=1)
flags.DEFINE_integer("n_tokens", _S.n_tokens, "Tokens d (also the embedding dimension).", lower_bound=1)
flags.DEFINE_integer("n_fixed", _S.n_fixed, "Positions each generator fixes, in [1, --n_positions].", lower_bound=1)
flags.DEFINE_integer("block", 500, "Steps per compiled scan block (progress between blocks).", lower_bound=1)
flags.DEFINE_bool("save_weights", False, "Write weights.npz and weights.png (seed-0 filters, Fig. 5).")
cli.define_run_flags("runs/two_layer")
cli.define_multihost_flags()
cli.register_subset("acts", activations.ACTIVATIONS)
cli.register_subset("losses", two_layer.LOSSES)
cli.register_subset("bn", two_layer.BN_VARIANTS)
cli.register_numbers("betas", int, 1)
cli.register_numbers("zeta", float, 0, lo_open=True)
flags.register_validator("batch_size", lambda v: v >= 2, "--batch_size must be >= 2 (negatives are needed)")
flags.register_validator("lr", lambda v: 0 < v < float("inf"), "--lr must be a finite number > 0")
flags.register_validator("momentum", lambda v: 0 <= v < 1, "--momentum must lie in [0, 1)")
flags.register_validator("weight_decay", lambda v: v >= 0, "--weight_decay must be >= 0")
flags.register_validator("tau", lambda v: v > 0, "--tau must be > 0")
flags.register_multi_flags_validator(
    ["Ps", "n_tokens"], lambda f: bool(cli.ints(f["Ps"])) and all(1 <= p <= f["n_tokens"] for p in cli.ints(f["Ps"])),
    "--Ps must be a comma-separated list of integers in [1, --n_tokens]")
flags.register_multi_flags_validator(["n_fixed", "n_positions"], lambda f: f["n_fixed"] <= f["n_positions"],
                                     "--n_fixed must be <= --n_positions")

OUTPUTS = ("runs", "results.json", "results.csv", "chi_*.png", "weights.*", "table1.*")  # table1: two_layer_table.py
SIZES = ("n_seeds", "batch_size", "n_positions", "n_tokens", "d_out", "betas", "Ps", "n_generators")  # of _memory


def _memory(**f) -> int:  # token_grid.memory_estimate's bytes at these flag values (the largest beta P)
    width = max(f["--n_tokens"], f["--betas"] * f["--Ps"], f["--d_out"])
    return (16 * 4 * f["--n_seeds"] * 2 * f["--batch_size"] * f["--n_positions"] * width
            + 4 * f["--n_generators"] * (2 + 2 * f["--n_positions"]))


def _train(cfg, s, i, n, save_weights):
    """Trains one setting (on this process's devices); returns its record and weights (or None)."""
    t1, steps = time.time(), cfg.train.steps

    def progress(done, ls):  # the mean loss of the finite seeds (nan when none is, without numpy's warning)
        if done == steps or done % max(cfg.block, steps // 5) == 0:
            loss = v.mean() if (v := np.asarray(ls)[np.isfinite(ls)]).size else np.nan
            cli.log(f"[{i + 1}/{n}] {s.tag}: step {done}/{steps}  loss {loss:.4f}  {time.time() - t1:.1f} s")
    r = token_grid.run_setting(s, cfg.train, n_seeds=cfg.n_seeds, seed=cfg.seed, spec=cfg.spec, d_out=cfg.d_out,
                               block=cfg.block, on_block=progress)
    for k, step in token_grid.nonfinite_seeds(r):
        cli.log(f"  WARNING {s.tag} seed {k} went non-finite at step {step} (--on_nonfinite={cfg.train.on_nonfinite}); "
                "lower --lr or raise --tau")
    return token_grid.setting_result(s, r), token_grid.token_coords(r) if save_weights else None


def _figures(out, cfg, rows, settings, save_weights):
    for (loss, zeta), curves in token_grid.matching_curves(rows).items():
        title = f"{loss}, ζ = {zeta:g}, {cfg.n_seeds} seeds, {cfg.train.steps} steps, lr {cfg.train.lr:g}"
        fig = figures.matching_figure(curves, cfg.betas, cfg.ps, title)
        io.save_figure(out / f"chi_{loss}_zeta{zeta:g}.png", fig)
    if save_weights:
        panels, arrays = {}, {}
        for s in settings:
            z = np.load(out / "runs" / f"{s.tag}.weights.npz")
            panels[token_grid.weights_label(s)] = (z["coords"], z["used"])
            arrays[s.tag], arrays[s.tag + ".used"] = z["coords"], z["used"]
        io.write_npz(out / "weights.npz", **arrays)
        io.save_figure(out / "weights.png", figures.weights_figure(panels, "learned filters, seed 0"))


def main(argv):
    del argv
    t0 = time.time()
    pid, n_proc = cli.start_processes(FLAGS)  # before any JAX work
    cfg = token_grid.GridConfig(
        acts=tuple(FLAGS.acts), betas=cli.ints(FLAGS.betas), ps=cli.ints(FLAGS.Ps), losses=tuple(FLAGS.losses),
        bns=tuple(FLAGS.bn), zetas=cli.floats(FLAGS.zeta), n_seeds=FLAGS.n_seeds, seed=FLAGS.seed, d_out=FLAGS.d_out,
        block=FLAGS.block, spec=tokens.TokenSpec(n_generators=FLAGS.n_generators, n_positions=FLAGS.n_positions,
                                                 n_tokens=FLAGS.n_tokens, n_fixed=FLAGS.n_fixed,  # P: per setting
                                                 n_candidates=min(_S.n_candidates, FLAGS.n_tokens)),
        train=two_layer.TrainConfig(tau=FLAGS.tau, normalize=FLAGS.normalize, lr=FLAGS.lr, momentum=FLAGS.momentum,
                                    weight_decay=FLAGS.weight_decay, batch_size=FLAGS.batch_size, steps=FLAGS.steps,
                                    quadratic_form=FLAGS.quadratic_form, on_nonfinite=FLAGS.on_nonfinite))
    cli.check_counts(FLAGS, SIZES + ("steps",), memory=_memory, steps=lambda **f: len(cfg.settings()) * f["--steps"],
                     formula=f"{token_grid.memory_estimate(cfg)[2]}; settings x steps sequential steps")
    settings = cfg.settings()  # process 0 alone writes; the settings are spread over the processes
    run, _ = cli.open_run_of_process_0(pid, n_proc, FLAGS.output_dir, cfg.run_config(), script="scripts/two_layer.py",
                                       outputs=OUTPUTS, overwrite=FLAGS.overwrite, resume=FLAGS.resume)
    records = grid.run(run, settings, lambda i: _train(cfg, settings[i], i, len(settings), FLAGS.save_weights),
                       resume=FLAGS.resume, weights=FLAGS.save_weights, log=cli.log)
    if pid != 0:  # the other processes trained their share of the settings
        return
    rows, out = [token_grid.result_row(s, records[i], cfg) for i, s in enumerate(settings)], run.path
    io.write_csv(out / "results.csv", *token_grid.results_csv(rows))
    _figures(out, cfg, rows, settings, FLAGS.save_weights)
    io.write_json(out / "results.json", {"state": "complete", **cli.run_record("scripts/two_layer.py", None, n_proc),
                                         "config": cfg.results_config(" ".join(sys.argv)), "rows": rows,
                                         "wall_s": time.time() - t0})  # last: results.json means complete
    out = cli.finish(run)
    print("\n" + "\n".join([report.format_table(*token_grid.results_table(rows)), *token_grid.results_table_key()]))
    print(f"\nwrote {out}/results.json, results.csv and figures in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    cli.start(main)
