"""The tree-shaped deep ReLU network trained with SimCLR on SB-HLTM data, and its scores
(*Understanding Self-supervised Learning with Dual Deep Networks*, Sec. 6, App. D.1; docs/ddn.md).

Network: every non-leaf latent z_mu (``ccdyn.data.hltm``, heap order) owns a group N_mu of ``width``
nodes; a group at level l (its latent is l steps above the leaves) reads the concatenated ReLU
outputs of its two children's groups (the two leaves themselves at level 1) through its own weights
and biases: f~_mu = W_mu [psi(f~_left); psi(f~_right)] + b_mu. The root group's pre-activation
f~_0 in R^width is the output, l2-normalized: f = f~_0 / (||f~_0|| + eps). Initialization as
PyTorch's nn.Linear (the authors' code): W, b ~ U[-1/sqrt(fan_in), 1/sqrt(fan_in)].

Readings (H = 1, one negative per sample), each a sign rule for the polarities rho and a loss
(:data:`READING_PARTS`): ``paper``, rho > 0 and L_nce^tau of Eq. 2 per sample on r = 1/2 ||f - f'||^2,
averaged over the batch; ``authors``, random signs of rho and the batch-level
-sigmoid((mse_- - mse_+)/tau) of the authors' code, mse the mean over batch and output entries;
``nce_random_sign``, random signs of rho with the per-sample L_nce (the paper's loss on the authors' trees).
Training: plain SGD, a fresh batch of (sample, positive view, negative) every step
(``ccdyn.data.hltm.sample_views``), seeds vmapped; each seed draws its own tree, init and data.

Scores, on a fixed evaluation sample per seed:
- normalized correlation NC_mu = max_{j in N_mu} |Pearson(z_mu, f~_j)| (pre-activations, 0 where a
  node is constant, clipped to [0, 1] against rounding), for every non-leaf latent;
- ||OP_mu||_F with OP_mu = V_{z_0}[K̄_mu(z_0)], K_mu = f_{N_mu^ch} (x) J_mu^T and J_mu = d f~_0 / d f~_mu
  (un-normalized output, as the authors): with z_0 binary, OP_mu = p_0 p_1 D D^T where
  D = K̄_mu(1) - K̄_mu(0), whose columns are d/dW_mu of sum_x g(x) f~_0(x) with
  g = 1[z_0=1]/n_1 - 1[z_0=0]/n_0; ||D D^T||_F = ||D^T D||_F (a width x width Gram). ``op_authors`` is
  the authors' arrangement of the same tensor (rows input x output, contracted over the group's nodes).
"""

from __future__ import annotations

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax

from ccdyn.data import hltm as tree_data

__all__ = ["READINGS", "READING_PARTS", "HltmConfig", "init_params", "forward", "embed", "batch_loss", "nc_scores",
           "op_norms", "evaluate", "make_epoch", "train", "latent_names"]

# reading -> (random signs of rho?, loss): "nce" is L_nce per sample, "batch_sigmoid" the authors' batch loss
READING_PARTS = {"paper": (False, "nce"), "authors": (True, "batch_sigmoid"), "nce_random_sign": (True, "nce")}
READINGS = tuple(READING_PARTS)


@dataclasses.dataclass(frozen=True)
class HltmConfig:
    """One training setting (App. D.1 defaults: L = 5, tau = 0.1, SGD lr 0.1, batch 128, N = 64 000
    samples per epoch, 50 epochs).

    Attributes:
      depth: L, depth of the tree (>= 2).
      width: |N_mu| nodes per latent (>= 1).
      delta_lower, delta_upper: polarities rho ~ U[delta_lower, delta_upper] per edge.
      reading: ``paper`` (L_nce per sample, rho > 0), ``authors`` (batch sigmoid loss, random sign of rho) or
        ``nce_random_sign`` (L_nce per sample, random sign of rho); :data:`READING_PARTS`.
      tau, lr, batch_size, samples_per_epoch, epochs: training.
      n_eval: samples of the fixed evaluation set (NC and ||OP||_F).
      eps: added to the output norm before normalizing.
    """

    depth: int = 5
    width: int = 10
    delta_lower: float = 0.7
    delta_upper: float = 1.0
    reading: str = "paper"
    tau: float = 0.1
    lr: float = 0.1
    batch_size: int = 128
    samples_per_epoch: int = 64000
    epochs: int = 50
    n_eval: int = 8192
    eps: float = 1e-4

    def __post_init__(self):
        checks = [("depth", self.depth >= 2, ">= 2"), ("width", self.width >= 1, ">= 1"),
                  ("delta_lower", -1 <= self.delta_lower <= self.delta_upper <= 1, "in [-1, delta_upper]"),
                  ("reading", self.reading in READINGS, f"one of {', '.join(READINGS)}"),
                  ("tau", self.tau > 0, "> 0"), ("lr", self.lr > 0, "> 0"),
                  ("batch_size", self.batch_size >= 2, ">= 2"),
                  ("samples_per_epoch", self.samples_per_epoch >= self.batch_size, ">= batch_size"),
                  ("epochs", self.epochs >= 1, ">= 1"), ("n_eval", self.n_eval >= 16, ">= 16")]
        for name, ok, allowed in checks:
            if not ok:
                raise ValueError(f"{name}={getattr(self, name)!r} must be {allowed}")

    @property
    def steps_per_epoch(self) -> int:
        return self.samples_per_epoch // self.batch_size


def latent_names(depth: int) -> list:
    """Names of the non-leaf latents in heap order (the order of every score vector)."""
    return [tree_data.node_name(i) for i in range(2 ** depth - 1)]


def init_params(key, depth: int, width: int) -> list:
    """[(W_l (n_l, width, fan_in), b_l (n_l, width)) for l = 1..L]; n_l = 2^(L-l) latents at level l."""
    params = []
    for l, k in zip(range(1, depth + 1), jax.random.split(key, depth)):
        n, fan_in = 2 ** (depth - l), 2 * (1 if l == 1 else width)
        bound = 1.0 / np.sqrt(fan_in)
        kw, kb = jax.random.split(k)
        params.append((jax.random.uniform(kw, (n, width, fan_in), minval=-bound, maxval=bound),
                       jax.random.uniform(kb, (n, width), minval=-bound, maxval=bound)))
    return params


def forward(params, x) -> list:
    """Pre-activations [f~ at level 1 (..., n_1, width), ..., root (..., 1, width)] of leaves x (..., 2^L)."""
    a, pres = x[..., None], []
    for w, b in params:
        inp = a.reshape(a.shape[:-2] + (w.shape[0], w.shape[2]))
        h = jnp.einsum("...ni,noi->...no", inp, w) + b
        pres.append(h)
        a = jax.nn.relu(h)
    return pres


def embed(params, x, eps: float = 1e-4):
    """The l2-normalized output f (..., width)."""
    h = forward(params, x)[-1][..., 0, :]
    return h / (jnp.linalg.norm(h, axis=-1, keepdims=True) + eps)


def batch_loss(params, x, xp, xn, cfg: HltmConfig):
    """The training loss of one batch (samples x, positives xp, negatives xn), per ``cfg.reading``."""
    f = embed(params, jnp.concatenate([x, xp, xn]), cfg.eps)
    f, fp, fn = jnp.split(f, 3)
    if READING_PARTS[cfg.reading][1] == "nce":
        rp, rn = 0.5 * jnp.sum((f - fp) ** 2, -1), 0.5 * jnp.sum((f - fn) ** 2, -1)
        return jnp.mean(jax.nn.softplus((rp - rn) / cfg.tau))
    pos, neg = jnp.mean((f - fp) ** 2), jnp.mean((f - fn) ** 2)
    return -jax.nn.sigmoid((neg - pos) / cfg.tau)


def nc_scores(pres, z, depth: int):
    """NC_mu for every non-leaf latent (heap order): max over the group of |Pearson(z_mu, f~_j)|."""
    out = []
    for l in range(depth, 0, -1):
        lo = 2 ** (depth - l) - 1
        zl = z[:, lo:2 * lo + 1].astype(pres[l - 1].dtype)
        zc, hc = zl - zl.mean(0), pres[l - 1] - pres[l - 1].mean(0)
        cov = jnp.mean(zc[..., None] * hc, 0)
        sd = jnp.sqrt(jnp.mean(zc ** 2, 0))[:, None] * jnp.sqrt(jnp.mean(hc ** 2, 0))
        corr = jnp.where(sd > 1e-12, cov / jnp.where(sd > 1e-12, sd, 1.0), 0.0)
        out.append(jnp.clip(jnp.max(jnp.abs(corr), -1), 0.0, 1.0))
    return jnp.concatenate(out)


def op_norms(params, x, z0):
    """(||OP_mu||_F as the paper defines it, the authors' arrangement) for every non-leaf latent (heap order)."""
    is1 = (z0 == 1).astype(x.dtype)
    n1 = jnp.sum(is1)
    n0 = is1.size - n1
    g = is1 / jnp.maximum(n1, 1) - (1 - is1) / jnp.maximum(n0, 1)
    ws = [w for w, _ in params]
    bs = [b for _, b in params]

    def summed_output(ws_):
        return jnp.einsum("n,nk->k", g, forward(list(zip(ws_, bs)), x)[-1][:, 0, :])

    jac = jax.jacrev(summed_output)(ws)                     # per level: (b, n_l, c, a)
    p01 = n0 * n1 / is1.size ** 2
    paper = [jnp.linalg.norm(jnp.einsum("bnca,enca->nbe", d, d), axis=(1, 2)) for d in reversed(jac)]
    authors = [jnp.linalg.norm(jnp.einsum("bnca,bnea->nce", d, d), axis=(1, 2)) for d in reversed(jac)]
    return p01 * jnp.concatenate(paper), p01 * jnp.concatenate(authors)


def evaluate(params, z, depth: int) -> dict:
    """{"nc", "op", "op_authors"}: the scores of one network on latents z (n, n_nodes)."""
    x = tree_data.leaves(z, depth).astype(params[0][0].dtype)
    op, op_a = op_norms(params, x, z[:, 0])
    return {"nc": nc_scores(forward(params, x), z, depth), "op": op, "op_authors": op_a}


def _setup(cfg: HltmConfig, key):
    k_tree, k_init, k_eval, k_data = jax.random.split(key, 4)
    tree = tree_data.make_tree(k_tree, cfg.depth, cfg.delta_lower, cfg.delta_upper,
                               random_sign=READING_PARTS[cfg.reading][0])
    params = init_params(k_init, cfg.depth, cfg.width)
    return tree, params, tree_data.sample(k_eval, tree, cfg.n_eval, cfg.depth), k_data


def make_epoch(cfg: HltmConfig):
    """A jitted epoch of all seeds: (params, opt_state, trees, data_keys, epoch) -> (params, opt_state, mean loss)."""
    opt = optax.sgd(cfg.lr)

    def step(tree, carry, key):
        params, state = carry
        views = tree_data.sample_views(key, tree, cfg.batch_size, cfg.depth)
        x, xp, xn = (tree_data.leaves(v, cfg.depth).astype(jnp.float32) for v in views)
        loss, grads = jax.value_and_grad(batch_loss)(params, x, xp, xn, cfg)
        updates, state = opt.update(grads, state, params)
        return (optax.apply_updates(params, updates), state), loss

    def one_seed(params, state, tree, key, epoch):
        keys = jax.random.split(jax.random.fold_in(key, epoch), cfg.steps_per_epoch)
        (params, state), losses = jax.lax.scan(lambda c, k: step(tree, c, k), (params, state), keys)
        return params, state, jnp.mean(losses)

    return opt, jax.jit(jax.vmap(one_seed, in_axes=(0, 0, 0, 0, None)))


@functools.lru_cache(maxsize=8)
def _compiled_epoch(cfg: HltmConfig):
    """One compiled epoch per training shape (the polarity range only changes the trees' values)."""
    return make_epoch(cfg)


@functools.lru_cache(maxsize=8)
def _compiled_score(depth: int):
    return jax.jit(lambda p, z: jax.lax.map(lambda a: evaluate(a[0], a[1], depth), (p, z)))


def train(cfg: HltmConfig, seed_keys, *, eval_epochs=None, on_epoch=None) -> dict:
    """Trains one network per key of ``seed_keys`` (n_seeds, 2) together and scores them before training
    and after every epoch in ``eval_epochs`` (default: all).

    Returns {"epochs" (E,), "nc" / "op" / "op_authors" (n_seeds, E, n_latents), "loss" (n_seeds, epochs),
    "rho" (n_seeds, n_nodes)}; ``on_epoch(epoch, mean loss)`` is called after each epoch.
    """
    chex.assert_rank(seed_keys, 2)
    eval_epochs = sorted(set(range(cfg.epochs + 1) if eval_epochs is None else eval_epochs) | {0})
    trees, params, z_eval, data_keys = jax.vmap(lambda k: _setup(cfg, k))(seed_keys)
    opt, epoch_fn = _compiled_epoch(dataclasses.replace(cfg, delta_lower=0.0, delta_upper=1.0))
    state = jax.vmap(opt.init)(params)
    score = _compiled_score(cfg.depth)
    scores, losses, done = [score(params, z_eval)], [], [0]
    for e in range(1, cfg.epochs + 1):
        params, state, loss = epoch_fn(params, state, trees, data_keys, e)
        losses.append(np.asarray(loss))
        if e in eval_epochs:
            scores.append(score(params, z_eval))
            done.append(e)
        if on_epoch is not None:
            on_epoch(e, float(np.mean(losses[-1])))
    out = {k: np.stack([np.asarray(s[k]) for s in scores], 1) for k in scores[0]}
    return {"epochs": np.asarray(done), **out, "loss": np.stack(losses, 1), "rho": np.asarray(trees.rho)}
