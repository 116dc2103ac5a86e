"""The MNIST experiment of App. E.3 (Figs. 12-13): the 2-layer network of Sec. 5 / App. E.2 on images
cut into 4 disjoint receptive fields, trained with and without random resized crops, and the
numbers the figures only show: how much high-frequency energy the learned filters hold and how
alike the filters of one receptive field are (docs/two_layer_readings.md, "MNIST"). The verdicts and
tables of a run are in :mod:`ccdyn.two_layer.claims` (``mnist_*``).

Settings (:class:`MnistConfig`), and where each comes from:
- batch 8, 50 000 minibatches, a new shuffled pass when the data run out (App. E.3);
- InfoNCE, tau = 0.1, outputs L2-normalized; SGD lr 2e-3, momentum 0.9, weight decay 5e-3 (Sec. 5,
  "the same 2-layer network as in Sec. E.2"); tau = 0.1 is also the authors' ``bn_gen.yaml``;
- M = 10 filters per RF, d_out = 20, BatchNorm through both statistics: the paper is silent; the
  authors' code (luckmatters ``ssl/real-dataset/bn_gen.py``, ``config/bn_gen.yaml``) uses
  ``multi = 10 * beta`` with beta = 1 for MNIST, ``output_d: 20`` and ``use_bn`` with
  ``backprop_mean`` and ``backprop_var`` true;
- views: two independent crops of the same image with
  ``RandomResizedCrop((28, 28), scale=(0.5, 1.0), ratio=(0.5, 1.5))`` (App. E.3; :mod:`ccdyn.data.crops`),
  or without augmentation the image itself twice (x[i'] = x[i]); pixels in [0, 1].

Training (:func:`train`): runs = seeds x {no augmentation, augmentation}, vmapped in one jit, steps a
``lax.scan`` in blocks. Seed s fixes the initialization and the minibatch order of both of its runs,
so the two conditions are paired. A pass is a fresh permutation of the images (drop-last), kept in
the scan carry and redrawn at the first step of each pass.

Scores of a filter bank W (K, M, s*s) (:func:`ccdyn.two_layer.metrics.high_frequency_fraction`,
:func:`ccdyn.two_layer.metrics.max_cosine`):
- high-frequency fraction: the share of a filter's energy sum |DFT|^2 at radial frequencies above
  half the Nyquist frequency, sqrt(fx^2 + fy^2) > 1/4 cycles per pixel (fx, fy in [-1/2, 1/2));
  a white-noise filter has the share of such frequencies, a smooth blob little;
- max cosine: for each filter, the largest cosine with another filter of the same RF, averaged;
  lower means more diverse. For ReLU, w and -w are different features, so the cosine is signed (|cos|
  for an odd activation, as for the matching scores);
- dead fraction: filters whose pre-activation is <= 0 on every (un-augmented) input; with pixels
  >= 0 an all-negative ReLU filter never fires, gets no gradient from the loss and only decays; and
  the max cosine among the filters that do fire (``max_cos_live``), which such filters cannot inflate.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations
from ccdyn.data import crops
from ccdyn.data import mnist as mnist_data
from ccdyn.two_layer import metrics
from ccdyn.two_layer import network as net_lib
from ccdyn.two_layer.mnist_claims import CONDITIONS

__all__ = ["MnistConfig", "network", "run_keys", "minibatch", "train", "filter_scores",
           "left_out_seeds", "run", "CONDITIONS"]



@dataclasses.dataclass(frozen=True)
class MnistConfig:
    """One App. E.3 experiment (see the module docstring for the sources of the defaults).

    Attributes:
      n_filters: M filters per receptive field, >= 1.
      d_out: rows of V, >= 1.
      bn: BatchNorm variant (:data:`ccdyn.two_layer.network.BN_VARIANTS`).
      act: activation name.
      scale, ratio: RandomResizedCrop ranges of the augmented condition.
      rf_side: the image is cut into rf_side x rf_side receptive fields.
      n_seeds: seeds (each trains both conditions), >= 1.
      seed: base seed.
      train: loss and optimizer (batch_size, steps included).
    """

    n_filters: int = 10
    d_out: int = 20
    bn: str = "vanilla"
    act: str = "relu"
    scale: tuple = (0.5, 1.0)
    ratio: tuple = (0.5, 1.5)
    rf_side: int = 2
    n_seeds: int = 3
    seed: int = 0
    train: net_lib.TrainConfig = net_lib.TrainConfig(batch_size=8, steps=50_000)

    def __post_init__(self):
        crops.check_params(tuple(self.scale), tuple(self.ratio))
        if self.n_seeds < 1 or self.rf_side < 1:
            raise ValueError(f"n_seeds={self.n_seeds} and rf_side={self.rf_side} must be >= 1")
        activations.get_activation(self.act)


def network(cfg: MnistConfig, image_shape) -> net_lib.Net:
    """The 2-layer network on (H, W) images: K = rf_side^2 RFs of d = H W / K pixels each."""
    h, w = image_shape
    k = cfg.rf_side * cfg.rf_side
    return net_lib.Net(n_rf=k, d=h * w // k, n_filters=cfg.n_filters, d_out=cfg.d_out,
                       act=activations.get_activation(cfg.act), bn=cfg.bn)


def run_keys(seed: int, n_seeds: int):
    """(init keys, data keys, crop keys, augment flags) of the 2 n_seeds runs: seed s is runs 2s (no
    augmentation) and 2s + 1 (augmentation), sharing the init and data keys; crop keys differ."""
    def one(s):
        k_init, k_data, k_crop = jax.random.split(jax.random.fold_in(jax.random.PRNGKey(seed), s), 3)
        return k_init, k_data, k_crop

    ki, kd, kc = jax.vmap(one)(np.arange(n_seeds))
    pair = lambda k: jnp.repeat(k, 2, axis=0)  # noqa: E731
    aug = jnp.tile(jnp.array([False, True]), n_seeds)
    crop = jax.vmap(jax.random.fold_in)(pair(kc), jnp.tile(jnp.arange(2), n_seeds))
    return pair(ki), pair(kd), crop, aug


def _views(images, idx, crop_key, aug, cfg: MnistConfig):
    """The two views of the minibatch ``images[idx]`` as (N, K, d): independent crops, or the image twice."""
    x = images[idx]
    k1, k2 = jax.random.split(crop_key)
    v1 = jnp.where(aug, crops.random_resized_crop(k1, x, cfg.scale, cfg.ratio), x)
    v2 = jnp.where(aug, crops.random_resized_crop(k2, x, cfg.scale, cfg.ratio), x)
    return mnist_data.receptive_fields(v1, cfg.rf_side), mnist_data.receptive_fields(v2, cfg.rf_side)


def minibatch(perm, data_key, t, n: int, b: int):
    """(permutation, indices (b,)) of step t: pass p = t // (n // b) is the permutation drawn from
    ``fold_in(data_key, p)`` (drop-last), redrawn at its first step and otherwise taken from ``perm``."""
    per_pass = n // b
    pos = t % per_pass
    perm = jax.lax.cond(pos == 0, lambda: jax.random.permutation(jax.random.fold_in(data_key, t // per_pass), n),
                        lambda: perm)
    return perm, jax.lax.dynamic_slice(perm, (pos * b,), (b,))


def _step(carry, t, images, data_key, crop_key, aug, net, cfg: MnistConfig):
    state, perm = carry
    perm, idx = minibatch(perm, data_key, t, images.shape[0], cfg.train.batch_size)
    x1, x2 = _views(images, idx, jax.random.fold_in(crop_key, t), aug, cfg)
    state, value = net_lib.train_step(state, t, (x1, x2), net, cfg.train)
    return (state, perm), value


@functools.partial(jax.jit, static_argnames=("net", "cfg", "n_steps"))
def _block(carry, start, images, data_keys, crop_keys, augs, net, cfg, n_steps: int):
    """``n_steps`` steps of every run (vmapped; the step counter is shared, so the pass test stays a cond)."""
    def one(c, dk, ck, a):
        c, losses = jax.lax.scan(lambda c, t: _step(c, t, images, dk, ck, a, net, cfg), c, start + jnp.arange(n_steps))
        return c, jnp.mean(losses)

    return jax.vmap(one)(carry, data_keys, crop_keys, augs)


def train(images, cfg: MnistConfig, block: int = 1000, on_block=None):
    """Train the 2 n_seeds runs (seed-major, no augmentation first) on ``images`` (n, H, W) in [0, 1].

    Returns (final :class:`ccdyn.two_layer.network.TrainState` with a leading run axis, initial W
    (runs, K, M, d), augment flags (runs,), mean loss per block (n_blocks, runs)). A run that goes
    non-finite keeps its last finite parameters (``finite`` False, ``stopped_at`` the step)."""
    images = jnp.asarray(images)
    if images.ndim != 3 or images.shape[0] < cfg.train.batch_size:
        raise ValueError(f"train: need (n, H, W) images with n >= batch_size={cfg.train.batch_size}; got shape "
                         f"{images.shape}")
    net = network(cfg, images.shape[1:])
    init_keys, data_keys, crop_keys, augs = run_keys(cfg.seed, cfg.n_seeds)
    states = jax.vmap(lambda k: net_lib.init_state(k, net, cfg.train))(init_keys)
    w0 = states.params["W"]
    carry = (states, jnp.tile(jnp.arange(images.shape[0]), (augs.shape[0], 1)))
    history, done = [], 0
    while done < cfg.train.steps:
        n = min(block, cfg.train.steps - done)
        carry, mean_loss = _block(carry, jnp.int32(done), images, data_keys, crop_keys, augs, net, cfg, n)
        done += n
        history.append(mean_loss)
        if on_block is not None:
            on_block(done, mean_loss)
    return carry[0], w0, augs, jnp.stack(history)


def filter_scores(w, side: int, x, signed: bool = True) -> dict:
    """Scores of filters (runs, K, M, side^2) on the un-augmented inputs x (n, K, side^2): ``hf``,
    ``max_cos``, ``dead`` (fraction of filters that never fire) and ``max_cos_live`` (max cosine among the
    filters that do), each (runs,), and ``hf_rf``, ``max_cos_rf`` (runs, K)."""
    hf, mc = metrics.high_frequency_fraction(w, side), metrics.max_cosine(w, signed)
    dead = jax.lax.map(lambda v: metrics.dead_filters(v, x), w)
    live = metrics.max_cosine(w, signed, mask=~dead)
    return {"hf": np.asarray(hf.mean(axis=(-2, -1))), "max_cos": np.asarray(mc.mean(axis=(-2, -1))),
            "dead": np.asarray(dead.mean(axis=(-2, -1))), "max_cos_live": np.asarray(jnp.nanmean(live, axis=(-2, -1))),
            "hf_rf": np.asarray(hf.mean(axis=-1)), "max_cos_rf": np.asarray(mc.mean(axis=-1))}


def left_out_seeds(record: dict, cond: str) -> list:
    """[(seed, why)] of the seeds of condition ``cond`` of a :func:`run` record that its scores leave out:
    one that went non-finite (and the step), or one still finite whose final scores are NaN (a score
    undefined for its filters, e.g. the high-frequency fraction 0 / 0 of filters that vanished)."""
    out = []
    for s, ok in enumerate(record["finite"][cond]):
        bad = [k for k, v in record["final"][cond].items() if not np.all(np.isfinite(v[s]))]
        if not ok:
            out.append((s, f"went non-finite at step {record['stopped_at'][cond][s]}"))
        elif bad:
            out.append((s, f"has NaN scores ({', '.join(bad)})"))
    return out


def run(images, cfg: MnistConfig, block: int = 1000, on_block=None) -> dict:
    """Train and score: a record with, per condition (``no_aug``, ``aug``), arrays over seeds of the
    final scores, the scores of the initial filters, the loss curve and the filters, plus ``finite``."""
    states, w0, augs, history = train(images, cfg, block, on_block)
    side = images.shape[1] // cfg.rf_side
    signed = not activations.get_activation(cfg.act).odd
    x = mnist_data.receptive_fields(jnp.asarray(images), cfg.rf_side)
    final, init = filter_scores(states.params["W"], side, x, signed), filter_scores(w0, side, x, signed)
    finite = np.asarray(states.finite)
    out = {"side": side, "n_images": int(images.shape[0]), "finite": {}, "stopped_at": {}, "final": {},
           "init": {}, "loss": {}, "W": {}}
    for c, cond in enumerate(CONDITIONS):
        sel = np.asarray(augs) == bool(c)
        out["finite"][cond] = finite[sel]
        out["stopped_at"][cond] = np.asarray(states.stopped_at)[sel]
        out["final"][cond] = {k: np.where(finite[sel].reshape((-1,) + (1,) * (v.ndim - 1)), v[sel], np.nan)
                              for k, v in final.items()}
        out["init"][cond] = {k: v[sel] for k, v in init.items()}
        out["loss"][cond] = np.asarray(history)[:, sel]
        out["W"][cond] = np.asarray(states.params["W"])[sel]
    return out
