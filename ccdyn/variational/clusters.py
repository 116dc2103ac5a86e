"""Figs. 5-6 with numbers: four clusters on a line, embedded by (a) the one-hidden-layer network of
Eq. 18, (b) a 4-layer MLP (Fig. 6) or (c) plain gradient descent on the embedded points (Eq. 14,
K = I) from the same random start, trained on the loss of Sec. 4; cluster-preservation scores over
iterations for many seeds at once.

Equation numbers refer to *Understanding Contrastive Learning through Variational Analysis and Neural
Network Optimization Perspectives*. The paper leaves n, M, d, tau and the step sizes open; ours are the
defaults of :class:`ClusterConfig`, explained in docs/variational.md, together with the scores:

- silhouette of the normalized embedding with the true cluster labels (chordal distances), overall
  and per cluster;
- between / within ratio: mean squared distance of pairs from different clusters over that of pairs
  from the same cluster;
- per-cluster ratio: for cluster q, the mean squared distance from its points to the other clusters'
  points over the mean squared distance within q (Remark 4.4: is a small cluster lost?);
- Wang-Isola uniformity log mean_{i != j} exp(-2 ||u_i - u_j||^2) (lower: more uniform).

Clusters count as *kept* at an iteration when the embedding's between / within ratio is at least the
input data's own ratio (the embedding separates the clusters at least as well as the data do). On S^1
the silhouette cannot tell tight clusters from a uniform circle cut into contiguous arcs (about 0.5
for both, see docs/variational.md), so it is reported but does not decide.
Seeds are vmapped: seed s draws its data and its network with ``jax.random.fold_in(key, s)``; the
training loop is a ``lax.scan`` of ``record_every`` steps inside a ``lax.scan`` over records.
"""

from __future__ import annotations

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import optax

from ccdyn import stats
from ccdyn.variational import kernel as kr
from ccdyn.variational import ntxent

__all__ = ["ClusterConfig", "MODELS", "STARTS", "per_cluster_ratio", "data_ratio", "make_data", "init_model", "embed",
           "silhouette", "between_within", "mean_ci", "uniformity", "scores", "run", "kept_summary", "keep_times",
           "at_iteration", "kept_share"]

MODELS = ("net1", "mlp4", "points")
STARTS = ("net1", "mlp4", "random")


@dataclasses.dataclass(frozen=True)
class ClusterConfig:
    """One training setting. ``sizes`` are points per cluster (their ratio is Remark 4.4's); data lie
    at ``centers`` on the first axis of R^dim with Gaussian noise ``noise``; the embedding lives in
    R^dim and the loss sees it normalized (S^{dim-1}). ``width`` is M (net1) or the hidden width (mlp4).
    ``model="points"`` starts from the initial embedding of ``start`` (same seed: the same start) or,
    with ``start="random"``, from i.i.d. uniform points on the sphere (independent of the data)."""
    dim: int = 2
    centers: tuple = (-3.0, -1.0, 1.0, 3.0)
    sizes: tuple = (32, 32, 32, 32)
    noise: float = 0.3
    model: str = "net1"
    start: str = "net1"
    width: int = 128
    act: str = "relu"
    signed: bool = False
    tau: float = 0.2
    lr: float = 1.0
    steps: int = 2000
    record_every: int = 10
    n_seeds: int = 32
    seed: int = 0
    dtype: str = "float32"

    def validate(self) -> ClusterConfig:
        if self.model not in MODELS or self.start not in STARTS:
            raise ValueError(f"model must be one of {', '.join(MODELS)} and start one of {', '.join(STARTS)}")
        if self.act not in kr.ACTIVATIONS:
            raise ValueError(f"act must be one of {', '.join(kr.ACTIVATIONS)}")
        if self.dim < 2 or self.width < 1 or self.tau <= 0 or self.lr <= 0 or self.noise < 0:
            raise ValueError("need dim >= 2, width >= 1, tau > 0, lr > 0, noise >= 0")
        if len(self.sizes) != len(self.centers) or min(self.sizes) < 2:
            raise ValueError("sizes needs one entry >= 2 per center")
        if self.steps % self.record_every or self.n_seeds < 1:
            raise ValueError("steps must be a multiple of record_every, n_seeds >= 1")
        return self


def make_data(cfg: ClusterConfig, key):
    """(X (n, dim + 1) with the constant input 1 last, labels (n,)): cluster q at centers[q] e_1."""
    dt = jnp.dtype(cfg.dtype)
    labels = np.repeat(np.arange(len(cfg.sizes)), cfg.sizes)
    mean = np.zeros((len(labels), cfg.dim))
    mean[:, 0] = np.asarray(cfg.centers)[labels]
    x = jnp.asarray(mean, dt) + cfg.noise * jax.random.normal(key, mean.shape, dt)
    return jnp.concatenate([x, jnp.ones((len(labels), 1), dt)], 1), jnp.asarray(labels)


def init_model(cfg: ClusterConfig, key, model=None):
    """Parameters: net1, B (dim, M, dim + 1) ~ N(0, 1) (Prop. 4.4); mlp4, He-normal weights of
    dim + 1 -> W -> W -> W -> dim without biases (the constant input plays the first bias)."""
    model = model or cfg.model
    dt, D = jnp.dtype(cfg.dtype), cfg.dim + 1
    if model == "net1":
        return jax.random.normal(key, (cfg.dim, cfg.width, D), dt)
    sizes = (D, cfg.width, cfg.width, cfg.width, cfg.dim)
    keys = jax.random.split(key, 4)
    return [jax.random.normal(k, (a, b), dt) * jnp.sqrt(2.0 / a) for k, a, b in zip(keys, sizes[:-1], sizes[1:])]


def embed(params, X, model: str, act: str = "relu", signed: bool = False):
    """The embedding z_i = f(w, x_i) (net1: Eq. 18 with activation ``act``, A signed or not; mlp4: ReLU MLP)."""
    if model == "net1":
        return kr.net(params, X, act, signed)
    h = X
    for W in params[:-1]:
        h = jax.nn.relu(h @ W)
    return h @ params[-1]


def _normalize(Z):
    return Z / jnp.linalg.norm(Z, axis=-1, keepdims=True)


def silhouette(U, onehot):
    """(mean silhouette, per-cluster mean silhouette (N,)) of points U (n, d) with labels ``onehot`` (n, N)."""
    dist = jnp.sqrt(jnp.maximum(ntxent.sq_dists(U), 0.0))
    counts = onehot.sum(0)
    mean_to = dist @ onehot / counts[None]  # (n, N) mean distance to each cluster (self included, 0)
    own = jnp.sum(onehot * mean_to, 1) * jnp.sum(onehot * counts, 1) / jnp.maximum(jnp.sum(onehot * counts, 1) - 1, 1)
    other = jnp.min(jnp.where(onehot > 0, jnp.inf, mean_to), 1)
    s = jnp.where(jnp.maximum(own, other) > 0, (other - own) / jnp.maximum(jnp.maximum(own, other), 1e-30), 0.0)
    return s.mean(), (onehot.T @ s) / counts


def between_within(U, onehot):
    """Mean squared distance between clusters over mean squared distance within clusters (pairs i != j)."""
    d2 = jnp.maximum(ntxent.sq_dists(U), 0.0)
    same = onehot @ onehot.T
    n = U.shape[0]
    within = jnp.sum(d2 * same) / (jnp.sum(same) - n)
    between = jnp.sum(d2 * (1 - same)) / jnp.sum(1 - same)
    return between / jnp.maximum(within, 1e-30)


def per_cluster_ratio(U, onehot):
    """(N,): mean squared distance from cluster q to the other clusters over that within q (pairs i != j)."""
    d2 = jnp.maximum(ntxent.sq_dists(U), 0.0)
    counts = onehot.sum(0)
    to = onehot.T @ d2 @ onehot  # (N, N) sums of squared distances between clusters
    within = jnp.diagonal(to) / (counts * (counts - 1))
    between = (to.sum(1) - jnp.diagonal(to)) / (counts * (U.shape[0] - counts))
    return between / jnp.maximum(within, 1e-30)


def data_ratio(cfg: ClusterConfig, n_draws: int = 256) -> float:
    """The between / within ratio of the input data themselves (the constant input left out), averaged
    over ``n_draws`` draws: the reference an embedding must reach for its clusters to count as kept."""
    def one(k):
        X, labels = make_data(cfg, k)
        return between_within(X[:, :-1], jax.nn.one_hot(labels, len(cfg.sizes), dtype=X.dtype))
    keys = jax.random.split(jax.random.PRNGKey(12345), n_draws)
    return float(jnp.mean(jax.vmap(one)(keys)))


def uniformity(U):
    """Wang-Isola uniformity: log mean_{i != j} exp(-2 ||u_i - u_j||^2)."""
    n = U.shape[0]
    e = jnp.exp(-2 * jnp.maximum(ntxent.sq_dists(U), 0.0)) * (1 - jnp.eye(n, dtype=U.dtype))
    return jnp.log(e.sum() / (n * (n - 1)))


def scores(Z, onehot):
    """The scores of an embedding Z (normalized first): dict of scalars and per-cluster silhouettes."""
    chex.assert_rank([Z, onehot], 2)
    chex.assert_equal_shape_prefix([Z, onehot], 1)
    U = _normalize(Z)
    sil, per = silhouette(U, onehot)
    return {"silhouette": sil, "per_cluster": per, "ratio": between_within(U, onehot),
            "per_cluster_ratio": per_cluster_ratio(U, onehot), "uniformity": uniformity(U)}


def _one_seed(cfg: ClusterConfig, key):
    kd, kw = jax.random.split(key)
    X, labels = make_data(cfg, kd)
    onehot = jax.nn.one_hot(labels, len(cfg.sizes), dtype=X.dtype)
    n = X.shape[0]
    if cfg.model == "points":
        if cfg.start == "random":
            params = jax.random.normal(kw, (n, cfg.dim), X.dtype)
        else:
            params = embed(init_model(cfg, kw, cfg.start), X, cfg.start, cfg.act, cfg.signed)
        # Eq. 14: z_i <- z_i - lr grad L(z_i), grad L_i = n d(loss)/dz_i
        loss = lambda Z: n * kr.sphere_loss(Z, cfg.tau)
        out = lambda Z: Z
    else:
        params = init_model(cfg, kw)
        loss = lambda p: kr.sphere_loss(embed(p, X, cfg.model, cfg.act, cfg.signed), cfg.tau)
        out = lambda p: embed(p, X, cfg.model, cfg.act, cfg.signed)
    opt = optax.sgd(cfg.lr)

    def step(carry, _):
        p, s = carry
        g = jax.grad(loss)(p)
        upd, s = opt.update(g, s, p)
        return (optax.apply_updates(p, upd), s), None

    def block(carry, _):
        carry, _ = jax.lax.scan(step, carry, None, length=cfg.record_every)
        Z = out(carry[0])
        return carry, (scores(Z, onehot), loss(carry[0]) / (n if cfg.model == "points" else 1), _normalize(Z))

    Z0 = out(params)
    first = (scores(Z0, onehot), loss(params) / (n if cfg.model == "points" else 1), _normalize(Z0))
    _, rest = jax.lax.scan(block, (params, opt.init(params)), None, length=cfg.steps // cfg.record_every)
    return jax.tree_util.tree_map(lambda a, b: jnp.concatenate([a[None], b]), first, rest), labels


@functools.partial(jax.jit, static_argnums=0)
def _run(cfg: ClusterConfig, key):
    keys = jax.vmap(lambda s: jax.random.fold_in(key, s))(jnp.arange(cfg.n_seeds))
    (sc, loss, U), labels = jax.vmap(functools.partial(_one_seed, cfg))(keys)
    return sc, loss, U[0], labels[0]


def run(cfg: ClusterConfig) -> dict:
    """Trains ``n_seeds`` seeds at once. Returns numpy arrays: ``iters`` (T,), per seed and record
    ``silhouette``, ``ratio``, ``uniformity``, ``loss`` (S, T), ``per_cluster`` (silhouettes) and
    ``per_cluster_ratio`` (S, T, N), ``finite`` (S,) (no NaN / inf in the run), and seed 0's
    normalized embeddings ``snapshots`` (T, n, dim) with its ``labels``."""
    cfg.validate()
    sc, loss, U0, labels = _run(cfg, jax.random.PRNGKey(cfg.seed))
    iters = np.arange(0, cfg.steps + 1, cfg.record_every)
    out = {k: np.asarray(v) for k, v in sc.items()}
    loss = np.asarray(loss)
    return {"iters": iters, **out, "loss": loss,
            "finite": np.all(np.isfinite(loss), 1) & np.all(np.isfinite(out["ratio"]), 1),
            "snapshots": np.asarray(U0), "labels": np.asarray(labels)}


def keep_times(score, iters, keep: float) -> dict:
    """Per seed: the first recorded iteration with score >= keep (``t_on``, NaN if never) and the first
    one after it with score < keep or not finite (``t_off``, NaN if the clusters are kept to the end)."""
    score = np.asarray(score)
    on = np.nan_to_num(score, nan=-np.inf) >= keep
    t_on, t_off = np.full(score.shape[0], np.nan), np.full(score.shape[0], np.nan)
    for s in range(score.shape[0]):
        idx = np.flatnonzero(on[s])
        if idx.size:
            t_on[s] = iters[idx[0]]
            lost = np.flatnonzero(~on[s, idx[0]:])
            if lost.size:
                t_off[s] = iters[idx[0] + lost[0]]
    return {"t_on": t_on, "t_off": t_off}


def mean_ci(x):
    """Mean and normal 95% interval of the finite entries of x (None when fewer than two)."""
    x = np.asarray(x, float)
    x = x[np.isfinite(x)]
    if x.size < 2:
        return {"mean": float(x.mean()) if x.size else None, "ci": None, "n": int(x.size)}
    h = 1.96 * x.std(ddof=1) / np.sqrt(x.size)
    return {"mean": float(x.mean()), "ci": [float(x.mean() - h), float(x.mean() + h)], "n": int(x.size)}


def kept_summary(res: dict, keep: float, at=(0, 15, 200, 1000), score: str = "ratio") -> dict:
    """Clusters kept (``score`` >= ``keep``) at the recorded iterations nearest to ``at``: the count of
    seeds with a 95% Wilson interval, the mean score and mean silhouette with normal 95% intervals; per
    seed keep times (:func:`keep_times`): median t_on / t_off and how many seeds keep them to the end."""
    iters, sc = res["iters"], res[score]
    S = sc.shape[0]
    rows = {}
    for t in at:
        j = int(np.argmin(np.abs(iters - t)))
        k = int(np.sum(np.nan_to_num(sc[:, j], nan=-np.inf) >= keep))
        rows[int(iters[j])] = {"kept": k, "n": S, "kept_ci": stats.wilson_interval(k, S).tolist(),
                               score: mean_ci(sc[:, j]), "silhouette": mean_ci(res["silhouette"][:, j])}
    kt = keep_times(sc, iters, keep)
    on, off = kt["t_on"], kt["t_off"]
    return {"keep": keep, "at": rows, "n": S, "non_finite_seeds": int(np.sum(~res["finite"])),
            "median_t_on": float(np.nanmedian(on)) if np.any(np.isfinite(on)) else None,
            "median_t_off": float(np.nanmedian(off)) if np.any(np.isfinite(off)) else None,
            "kept_to_end": int(np.sum(np.isfinite(on) & ~np.isfinite(off))), "t_off": off.tolist()}


def at_iteration(summary: dict, t: int) -> dict:
    """The row of a :func:`kept_summary` at the recorded iteration nearest to ``t``."""
    return summary["at"][min(summary["at"], key=lambda j: abs(int(j) - t))]


def kept_share(summary: dict, t: int) -> float:
    """The share of seeds keeping the clusters at the recorded iteration of a :func:`kept_summary` nearest to ``t``."""
    r = at_iteration(summary, t)
    return r["kept"] / r["n"]
