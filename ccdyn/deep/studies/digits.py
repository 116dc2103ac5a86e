"""A small analogue of Tables 2-3 of *Understanding Self-supervised Learning with Dual Deep Networks*
on the 8x8 digits that scikit-learn ships (docs/ddn.md, results/ddn/README.md say what it does and
does not reproduce).

Encoder: a ReLU MLP 64 -> hidden -> hidden -> out with biases; the representation probed is the
second hidden layer (the "backbone"), the loss sees the l2-normalized output. Views: a random
shift by at most one pixel in each direction (zero-filled) plus Gaussian pixel noise.
Losses on a batch of B samples, each with two views; the negatives of sample i are the second views
of the other B - 1 samples (H = B - 1), r = 1/2 ||f - f'||^2:

- ``nce``: L_nce^tau (Eq. 2);
- ``nce_exact`` (Eq. 7 with the weights of Eq. 80): sum_k StopGrad(xi_k) (r_+ - r_{k-}), with
  xi_k = (1/tau) e^{-r_k/tau} / (1 + sum_k' e^{-r_k'/tau}) on the un-augmented images' distances r_k
  (-dL_nce/dr_{k-} at r_+ = 0 and the un-augmented distances);
- ``nce_beta``: L_nce + beta StopGrad(dL_nce/dr_+) r_+, i.e. the gradient through r_+ scaled by
  (1 + beta), so that dL/dr_+ + sum_k dL/dr_{k-} = beta dL_nce/dr_+ (our reading of Sec. 4.2 for
  InfoNCE; the paper does not spell out its beta-extended InfoNCE).

Training: Adam, seeds vmapped; linear probe: ridge regression on one-hot labels of the frozen
representation of un-augmented training images, accuracy on a held-out split.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax

__all__ = ["DIGIT_LOSSES", "DigitsConfig", "load_digits", "augment", "init_mlp", "encode", "pair_distances",
           "batch_loss", "probe_accuracy", "train", "VARIANTS", "run_variants"]

DIGIT_LOSSES = ("nce", "nce_exact", "nce_beta")


@dataclasses.dataclass(frozen=True)
class DigitsConfig:
    loss: str = "nce"
    beta: float = 0.0
    tau: float = 0.5
    hidden: int = 32
    out: int = 16
    lr: float = 1e-3
    batch_size: int = 256
    steps: int = 2000
    noise: float = 0.1
    ridge: float = 1e-2

    def __post_init__(self):
        if self.loss not in DIGIT_LOSSES:
            raise ValueError(f"loss={self.loss!r} must be one of {', '.join(DIGIT_LOSSES)}")
        if self.tau <= 0 or self.lr <= 0 or self.batch_size < 2 or self.steps < 1:
            raise ValueError("tau and lr must be > 0, batch_size >= 2 and steps >= 1")


def load_digits(test_fraction: float = 0.3, seed: int = 0):
    """(x_train, y_train, x_test, y_test): scikit-learn's 1797 8x8 digits scaled to [0, 1], split at random."""
    from sklearn.datasets import load_digits as _load

    d = _load()
    x, y = d.data.astype(np.float32) / 16.0, d.target.astype(np.int32)
    perm = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    return x[perm[n_test:]], y[perm[n_test:]], x[perm[:n_test]], y[perm[:n_test]]


def augment(key, x, noise: float):
    """A view of each image x (n, 64): shift by (dy, dx) in {-1, 0, 1}^2 with zero fill, plus noise."""
    k1, k2, k3 = jax.random.split(key, 3)
    img = x.reshape(-1, 8, 8)
    pad = jnp.pad(img, ((0, 0), (1, 1), (1, 1)))
    dy, dx = jax.random.randint(k1, (2, x.shape[0]), 0, 3)
    crop = jax.vmap(lambda p, a, b: jax.lax.dynamic_slice(p, (a, b), (8, 8)))(pad, dy, dx)
    return crop.reshape(x.shape) + noise * jax.random.normal(k3, x.shape)


def init_mlp(key, hidden: int, out: int):
    sizes = (64, hidden, hidden, out)
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (n, m)) * jnp.sqrt(2.0 / n), jnp.zeros(m))
            for k, n, m in zip(keys, sizes[:-1], sizes[1:])]


def encode(params, x):
    """(representation = second hidden layer, l2-normalized output)."""
    h = x
    for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
    w, b = params[-1]
    z = h @ w + b
    return h, z / (jnp.linalg.norm(z, axis=-1, keepdims=True) + 1e-8)


def pair_distances(f1, f2):
    """r_+ (B,) and r_- (B, B) with r_-[i, k] = 1/2 ||f1_i - f2_k||^2 (the diagonal is r_+)."""
    r = 0.5 * jnp.sum((f1[:, None] - f2[None]) ** 2, -1)
    return jnp.diagonal(r), r


def batch_loss(params, x0, x1, x2, cfg: DigitsConfig):
    """Mean over the batch of the ``cfg.loss`` of each sample (views x1, x2; un-augmented x0)."""
    _, f1 = encode(params, x1)
    _, f2 = encode(params, x2)
    rp, r = pair_distances(f1, f2)
    b = rp.shape[0]
    off = ~jnp.eye(b, dtype=bool)
    logits = jnp.where(off, -r / cfg.tau, -jnp.inf).at[jnp.arange(b), jnp.arange(b)].set(-rp / cfg.tau)
    nce = -jax.nn.log_softmax(logits, axis=1)[jnp.arange(b), jnp.arange(b)]
    if cfg.loss == "nce":
        return jnp.mean(nce)
    if cfg.loss == "nce_beta":
        dpos = (1 - jnp.exp(-nce)) / cfg.tau                       # dL_nce/dr_+ = (1 - softmax_pos) / tau
        return jnp.mean(nce + cfg.beta * jax.lax.stop_gradient(dpos) * rp)
    _, f0 = encode(params, x0)
    _, r0 = pair_distances(f0, f0)
    e = jnp.where(off, jnp.exp(-r0 / cfg.tau), 0.0)
    xi = jax.lax.stop_gradient(e / (1 + e.sum(1, keepdims=True)) / cfg.tau)
    return jnp.mean(jnp.sum(xi * (rp[:, None] - r), 1))


def probe_accuracy(params, x_train, y_train, x_test, y_test, ridge: float):
    """Test accuracy of a ridge-regression linear probe on the frozen representation."""
    def feats(x):
        h, _ = encode(params, x)
        return jnp.concatenate([h, jnp.ones((h.shape[0], 1), h.dtype)], 1)

    f = feats(x_train)
    y = jax.nn.one_hot(y_train, 10)
    w = jnp.linalg.solve(f.T @ f + ridge * f.shape[0] * jnp.eye(f.shape[1]), f.T @ y)
    return jnp.mean(jnp.argmax(feats(x_test) @ w, 1) == y_test)


def train(cfg: DigitsConfig, seed_keys, data, checkpoints) -> dict:
    """Trains one encoder per seed key (vmapped); probe accuracy (n_seeds, len(checkpoints)) at the given
    step counts (0 = untrained), NaN from the checkpoint where a seed's loss or parameters went
    non-finite (``finite``: per seed, False then)."""
    x_train, y_train, x_test, y_test = (jnp.asarray(a) for a in data)
    opt = optax.adam(cfg.lr)
    n = x_train.shape[0]

    def step(carry, key):
        params, state = carry
        k0, k1, k2 = jax.random.split(key, 3)
        idx = jax.random.choice(k0, n, (cfg.batch_size,), replace=False)
        x0 = x_train[idx]
        x1, x2 = augment(k1, x0, cfg.noise), augment(k2, x0, cfg.noise)
        loss, g = jax.value_and_grad(batch_loss)(params, x0, x1, x2, cfg)
        up, state = opt.update(g, state, params)
        return (optax.apply_updates(params, up), state), loss

    def run_block(params, state, key, n_steps):
        (params, state), losses = jax.lax.scan(step, (params, state), jax.random.split(key, n_steps))
        return params, state, losses

    probe = jax.jit(jax.vmap(lambda p: probe_accuracy(p, x_train, y_train, x_test, y_test, cfg.ridge)))
    k_init = jax.vmap(lambda k: jax.random.fold_in(k, 0))(seed_keys)
    params = jax.vmap(lambda k: init_mlp(k, cfg.hidden, cfg.out))(k_init)
    state = jax.vmap(opt.init)(params)
    acc, losses, done = [], [], 0
    finite = np.ones(len(seed_keys), bool)
    for c in sorted(checkpoints):
        if c > done:
            keys = jax.vmap(lambda k, c=c: jax.random.fold_in(k, c))(seed_keys)
            block = jax.jit(jax.vmap(lambda p, s, k, n=c - done: run_block(p, s, k, n)))
            params, state, ls = block(params, state, keys)
            losses.append(np.asarray(ls))
            finite &= np.all(np.isfinite(losses[-1]), 1) & np.all(
                [np.all(np.isfinite(leaf), axis=tuple(range(1, leaf.ndim)))
                 for leaf in jax.tree_util.tree_leaves(params)], 0)
            done = c
        acc.append(np.where(finite, np.asarray(probe(params)), np.nan))  # a non-finite seed has no accuracy
    return {"checkpoints": sorted(checkpoints), "accuracy": np.stack(acc, 1), "finite": finite,
            "final_loss": np.concatenate(losses, 1)[:, -50:].mean(1) if losses else None}


VARIANTS = {"nce": ("nce", 0.0), "nce_exact": ("nce_exact", 0.0), "beta-0.5": ("nce_beta", -0.5),
            "beta+0.2": ("nce_beta", 0.2)}


def run_variants(variants, n_seeds: int, seed: int, checkpoints, base: DigitsConfig = DigitsConfig()) -> list:
    """Rows {variant, loss, beta, checkpoints, accuracy (n_seeds x checkpoints), mean, std (over the seeds
    still finite), nonfinite_seeds (only when some went non-finite)} per variant of
    :data:`VARIANTS`; every variant sees the same split, initializations and minibatch keys."""
    data = load_digits(seed=seed)
    keys = jax.vmap(lambda s: jax.random.fold_in(jax.random.PRNGKey(seed), s))(np.arange(n_seeds))
    rows = []
    for v in variants:
        loss, beta = VARIANTS[v]
        r = train(dataclasses.replace(base, loss=loss, beta=beta), keys, data, checkpoints)
        acc, n = r["accuracy"], np.sum(np.isfinite(r["accuracy"]), 0)  # means over the seeds still finite
        mean = np.where(n > 0, np.nansum(acc, 0) / np.maximum(n, 1), np.nan)
        std = np.where(n > 0, np.sqrt(np.nansum((acc - mean) ** 2, 0) / np.maximum(n, 1)), np.nan)
        rows.append({"variant": v, "loss": loss, "beta": beta, "checkpoints": r["checkpoints"],
                     "accuracy": acc.tolist(), "mean": mean.tolist(), "std": std.tolist(),
                     **({"nonfinite_seeds": np.flatnonzero(~r["finite"]).tolist()} if not r["finite"].all() else {})})
    return rows
