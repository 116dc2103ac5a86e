"""Two-layer networks with disjoint receptive fields (Sec. 4, App. C.1, D, E.2).

The network: K receptive fields (RF) with inputs x_k in R^d, M filters w_km per RF, hidden
f1 = [h(w_km^T x_k)] in R^{KM} (optionally BatchNorm per hidden node), output f2 = V f1 with
V in R^{d_out x KM}; S = V^T V. Parameters are ``{"W": (K, M, d), "V": (d_out, K M)}``.

Two routes to the dynamics:

- :func:`lemma4_velocity`: the alpha-CL update of Lemma 4 (Eq. 12), V' = V C_alpha[f1] and
  w' = P_w^perp [(S (x) 1_d 1_d^T) o C_alpha[x~]] w, and with mean-backprop BatchNorm the form of
  Lemma 6 (Eq. 166) with x~_k^bn = x~_k / sigma_k. It is evaluated with GEMMs on the batch (no
  KMd x KMd matrix); tests compare it with autodiff of E_{sg(alpha)} and with the dense Eq. 12.
- :func:`train`: SGD with momentum and weight decay (optax) on a contrastive loss of the network
  output, the setting of Sec. 5; several runs of the same shapes (seeds) are vmapped in one jit and
  steps are a ``lax.scan``.

Losses (on the output of view 1 and view 2 of a batch of N positive pairs; ``normalize`` divides each
output by its norm first, which keeps both losses bounded):

- ``infonce``: Eq. 1 with epsilon = 0, L = 1/N sum_i [d_i^2/tau + log sum_{j != i} exp(-d_ij^2/tau)],
  d_i^2 = ||z[i] - z[i']||^2/2, d_ij^2 = ||z[i] - z[j]||^2/2 over view-1 outputs: N - 1 negatives per
  anchor, one direction (view 1 anchors). Its gradient is -(2N/tau) grad E_{sg(alpha)} with the
  InfoNCE alpha of :func:`ccdyn.pairwise.infonce` (tested).
- ``quadratic``: L = 1/N sum_i [d_i^2 - 1/(N-1) sum_{j != i} d_ij^2], the tau -> infinity limit of
  tau * L_infonce (alpha_ij = 1/(N-1) constant); its gradient is -2N grad E_alpha.

BatchNorm (App. D, E.2) normalizes each hidden node with the mean and variance over the 2N views of
the batch, (f - mu) / sqrt(sigma^2 + eps), no affine parameters; the backward pass goes through
both statistics (``vanilla``), mu only (``mean_only``, Def. 5), sigma only (``var_only``) or neither
(``none_backprop``).

Initialization (the paper does not give it): PyTorch's ``nn.Linear`` default, W ~ U(+-1/sqrt(d)),
V ~ U(+-1/sqrt(KM)), no biases.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import chex
import jax
import jax.numpy as jnp
import optax

from ccdyn import covariance, pairwise, sphere
from ccdyn.activations import Activation, get_activation
from ccdyn.data import tokens as tokens_lib

__all__ = [
    "BN_VARIANTS", "LOSSES", "Net", "TrainConfig", "init_params", "hidden", "batch_norm", "outputs",
    "energy", "lemma4_velocity", "loss", "make_optimizer", "TrainState", "init_state", "train",
]

BN_VARIANTS = ("none", "vanilla", "mean_only", "var_only", "none_backprop")
LOSSES = ("infonce", "quadratic")


@dataclasses.dataclass(frozen=True)
class Net:
    """Shapes and nonlinearity of the 2-layer network (hashable, jit-static).

    Attributes:
      n_rf: K >= 1 receptive fields.
      d: input dimension of one RF, >= 1.
      n_filters: M >= 1 filters per RF (M = beta P in Sec. 5).
      d_out: output dimension >= 1 (rows of V).
      act: activation h.
      bn: BatchNorm variant, one of BN_VARIANTS.
      bn_eps: added to the batch variance, > 0.
    """

    n_rf: int
    d: int
    n_filters: int
    d_out: int = 50
    act: Activation = dataclasses.field(default_factory=lambda: get_activation("relu"))
    bn: str = "none"
    bn_eps: float = 1e-5

    def __post_init__(self):
        for name in ("n_rf", "d", "n_filters", "d_out"):
            if getattr(self, name) < 1:
                raise ValueError(f"network: {name}={getattr(self, name)} must be >= 1")
        if self.bn not in BN_VARIANTS:
            raise ValueError(f"network: bn={self.bn!r} is unknown; allowed: {', '.join(BN_VARIANTS)}")
        if not self.bn_eps > 0:
            raise ValueError(f"network: bn_eps={self.bn_eps} must be > 0")

    @property
    def n_hidden(self) -> int:
        return self.n_rf * self.n_filters


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Loss and optimizer (Sec. 5 defaults: SGD lr 2e-3, momentum 0.9, weight decay 5e-3, batch 128).

    Attributes:
      loss: ``infonce`` or ``quadratic``.
      tau: InfoNCE temperature, > 0 (unused by the quadratic loss).
      normalize: divide each output by its norm before the loss.
      lr: learning rate, > 0.
      momentum: in [0, 1).
      weight_decay: >= 0, added to the gradient before momentum (PyTorch SGD semantics).
      batch_size: N >= 2 positive pairs per minibatch.
      steps: minibatches, >= 1.
    """

    loss: str = "infonce"
    tau: float = 0.1
    normalize: bool = True
    lr: float = 2e-3
    momentum: float = 0.9
    weight_decay: float = 5e-3
    batch_size: int = 128
    steps: int = 5000

    def __post_init__(self):
        checks = [
            ("loss", self.loss in LOSSES, f"one of {', '.join(LOSSES)}"),
            ("tau", math.isfinite(self.tau) and self.tau > 0, "a finite number > 0"),
            ("lr", math.isfinite(self.lr) and self.lr > 0, "a finite number > 0"),
            ("momentum", 0 <= self.momentum < 1, "in [0, 1)"),
            ("weight_decay", math.isfinite(self.weight_decay) and self.weight_decay >= 0, ">= 0"),
            ("batch_size", self.batch_size >= 2, ">= 2"),
            ("steps", self.steps >= 1, ">= 1"),
        ]
        for name, ok, allowed in checks:
            if not ok:
                raise ValueError(f"training: {name}={getattr(self, name)!r} must be {allowed}")


def init_params(key, net: Net, dtype=None) -> dict:
    """PyTorch ``nn.Linear`` default initialization: U(+-1/sqrt(fan_in)), no biases.

    ``dtype`` defaults to JAX's default float (float64 under x64).
    """
    dtype = dtype or jnp.result_type(float)
    kw, kv = jax.random.split(key)
    bw, bv = 1.0 / math.sqrt(net.d), 1.0 / math.sqrt(net.n_hidden)
    return {"W": jax.random.uniform(kw, (net.n_rf, net.n_filters, net.d), dtype, -bw, bw),
            "V": jax.random.uniform(kv, (net.d_out, net.n_hidden), dtype, -bv, bv)}


def _preact(w, x):
    """z_km = w_km^T x_k for a batch x (n, K, d): (n, K, M)."""
    return jnp.einsum("nkd,kmd->nkm", x, w)


def hidden(w, x, act: Activation):
    """Hidden layer before BatchNorm, f1 = [h(w_km^T x_k)] as (n, K M)."""
    z = _preact(w, x)
    return act.h(z).reshape(x.shape[0], -1)


def _bn_stats(f1a, f1b, eps):
    both = jnp.concatenate([f1a, f1b], axis=0)
    mu = jnp.mean(both, axis=0)
    sigma = jnp.sqrt(jnp.mean((both - mu) ** 2, axis=0) + eps)
    return mu, sigma


def batch_norm(f1a, f1b, variant: str, eps: float = 1e-5):
    """BatchNorm of the two views with statistics over all 2N of them (Eq. 164, 165; App. E.2)."""
    if variant == "none":
        return f1a, f1b
    mu, sigma = _bn_stats(f1a, f1b, eps)
    if variant in ("var_only", "none_backprop"):
        mu = jax.lax.stop_gradient(mu)
    if variant in ("mean_only", "none_backprop"):
        sigma = jax.lax.stop_gradient(sigma)
    return (f1a - mu) / sigma, (f1b - mu) / sigma


def outputs(params, x1, x2, net: Net):
    """Network outputs f2 = V BN(f1) of both views, each (n, d_out)."""
    f1a, f1b = hidden(params["W"], x1, net.act), hidden(params["W"], x2, net.act)
    f1a, f1b = batch_norm(f1a, f1b, net.bn, net.bn_eps)
    return f1a @ params["V"].T, f1b @ params["V"].T


def energy(params, x1, x2, alpha, net: Net):
    """E_alpha = 1/2 tr C_alpha[f2] of the batch (Eq. 3) for a fixed alpha (N, N)."""
    f2a, f2b = outputs(params, x1, x2, net)
    return covariance.batch_energy(f2a, alpha, f2b)


def _cov_columns(xa, xb, za, zb, ga, gb, alpha, act: Activation):
    """C_alpha[x~_km, g_km] for every (k, m) at once, (K, M, d).

    x~_km = x_k h'(z_km) and g (n, K M) is one scalar feature per hidden node. Expands Eq. 3 as in
    :func:`ccdyn.covariance.batch_cov`: 2N^2 C = sum_i x~[i] B_a[i] + sum_i x~[i'] B_b[i] with
    B_a = (r + c) g - alpha g - alpha^T g - r (g - g') and B_b = r (g - g').
    """
    n = xa.shape[0]
    alpha = alpha * (1.0 - jnp.eye(n, dtype=alpha.dtype))
    r, c = jnp.sum(alpha, axis=1), jnp.sum(alpha, axis=0)
    diff = ga - gb
    ba = (r + c)[:, None] * ga - alpha @ ga - alpha.T @ ga - r[:, None] * diff
    bb = r[:, None] * diff
    shape = za.shape
    out = (jnp.einsum("nkd,nkm->kmd", xa, act.dh(za) * ba.reshape(shape))
           + jnp.einsum("nkd,nkm->kmd", xb, act.dh(zb) * bb.reshape(shape)))
    return out / (2.0 * n * n)


def lemma4_velocity(params, x1, x2, alpha, net: Net, project: bool = True) -> dict:
    """The alpha-CL velocity of Lemma 4 (Eq. 12), or of Lemma 6 (Eq. 166) with mean-only BN.

    V' = V C_alpha[f1] and, for every filter,
    w'_km = P_{w_km}^perp sum_{k'm'} s_{km,k'm'} C_alpha[x~_km, x~_k'm'] w_k'm'.
    Since x~_k'm'^T w_k'm' = h'(z) z = p h(z) for a homogeneous h of degree p (Assumption 1), this is
    p C_alpha[x~_km, sum_{k'm'} s_{km,k'm'} f1_k'm'] (Eq. 117): p times the gradient of E_{sg(alpha)}
    before projection. For a non-homogeneous h (p := 1) it is the gradient (Eq. 117), which Eq. 12
    equals only under Assumption 1. With ``bn='mean_only'`` f1 -> f1^bn and x~_k -> x~_k / sigma_k
    (Eq. 172-174). Other BN variants have no such form and raise ``ValueError``.

    Args:
      params: ``{"W": (K, M, d), "V": (d_out, K M)}``.
      x1, x2: the two views (N, K, d); pass x2 = x1 for no augmentation.
      alpha: pairwise importance (N, N), held fixed (stop-gradient, Eq. 2).
      project: apply P_w^perp (Eq. 12); ``False`` gives the unprojected field of Thm. 4 (Eq. 14).

    Returns:
      ``{"W": (K, M, d), "V": (d_out, K M)}``.
    """
    if net.bn not in ("none", "mean_only"):
        raise ValueError(f"lemma4_velocity: bn={net.bn!r} has no Lemma 4/6 form; use 'none' or 'mean_only'")
    w, v = params["W"], params["V"]
    chex.assert_shape(w, (net.n_rf, net.n_filters, net.d))
    chex.assert_shape(v, (net.d_out, net.n_hidden))
    chex.assert_equal_shape([x1, x2])
    za, zb = _preact(w, x1), _preact(w, x2)
    f1a, f1b = net.act.h(za).reshape(x1.shape[0], -1), net.act.h(zb).reshape(x2.shape[0], -1)
    scale = jnp.ones((net.n_hidden,), w.dtype)
    if net.bn == "mean_only":
        mu, sigma = _bn_stats(f1a, f1b, net.bn_eps)
        f1a, f1b, scale = (f1a - mu) / sigma, (f1b - mu) / sigma, 1.0 / sigma
    v_dot = v @ covariance.batch_cov(f1a, f1a, alpha, f1b, f1b)
    s = v.T @ v
    w_dot = _cov_columns(x1, x2, za, zb, f1a @ s, f1b @ s, alpha, net.act)
    w_dot = net.act.degree * w_dot * scale.reshape(net.n_rf, net.n_filters, 1)
    if project:
        w_dot = sphere.tangent(sphere.normalize(w), w_dot)
    return {"W": w_dot, "V": v_dot}


def _unit_rows(z, eps: float = 1e-12):
    """z / max(||z||, eps) row-wise, with a finite gradient at z = 0 (the gradient of ||z|| there is
    0/0 = NaN; a ReLU network can output exactly 0 when every hidden unit is off)."""
    return z * jax.lax.rsqrt(jnp.maximum(jnp.sum(z * z, axis=1, keepdims=True), eps * eps))


def loss(params, x1, x2, net: Net, cfg: TrainConfig):
    """Contrastive loss of a batch (mean over the N anchors); see the module docstring."""
    za, zb = outputs(params, x1, x2, net)
    if cfg.normalize:
        za, zb = _unit_rows(za), _unit_rows(zb)
    n = za.shape[0]
    d_pos = 0.5 * jnp.sum((za - zb) ** 2, axis=1)
    d_neg = 0.5 * pairwise.sq_dists(za)
    off = ~jnp.eye(n, dtype=bool)
    if cfg.loss == "infonce":
        lse = jax.scipy.special.logsumexp(jnp.where(off, -d_neg / cfg.tau, -jnp.inf), axis=1)
        return jnp.mean(d_pos / cfg.tau + lse)
    return jnp.mean(d_pos - jnp.sum(jnp.where(off, d_neg, 0.0), axis=1) / (n - 1))


def make_optimizer(cfg: TrainConfig) -> optax.GradientTransformation:
    """SGD with momentum; weight decay is added to the gradient first (PyTorch ``SGD`` semantics)."""
    return optax.chain(optax.add_decayed_weights(cfg.weight_decay),
                       optax.sgd(cfg.lr, momentum=cfg.momentum if cfg.momentum > 0 else None))


@chex.dataclass
class TrainState:
    """State of one run (or of a vmapped batch of runs: every leaf gets a leading run axis).

    Attributes:
      params: network parameters.
      opt_state: optax state.
      finite: False once a step produced a non-finite loss or parameter; the run is then frozen.
      stopped_at: the step that went non-finite, -1 while finite.
    """

    params: dict
    opt_state: optax.OptState
    finite: chex.Array
    stopped_at: chex.Array


def init_state(key, net: Net, cfg: TrainConfig) -> TrainState:
    params = init_params(key, net)
    return TrainState(params=params, opt_state=make_optimizer(cfg).init(params),
                      finite=jnp.array(True), stopped_at=jnp.array(-1, jnp.int32))


def _step(state: TrainState, step, data_key, data: tokens_lib.TokenData, net: Net, cfg: TrainConfig):
    x1, x2 = tokens_lib.sample_views(jax.random.fold_in(data_key, step), data, cfg.batch_size)
    value, grads = jax.value_and_grad(loss)(state.params, x1, x2, net, cfg)
    updates, opt_state = make_optimizer(cfg).update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    ok = state.finite & jnp.isfinite(value) & jnp.all(jnp.array(
        [jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree_util.tree_leaves(params)]))
    keep = lambda new, old: jax.tree_util.tree_map(lambda a, b: jnp.where(ok, a, b), new, old)  # noqa: E731
    stopped_at = jnp.where(state.finite & ~ok, step, state.stopped_at)
    new = TrainState(params=keep(params, state.params), opt_state=keep(opt_state, state.opt_state),
                     finite=ok, stopped_at=stopped_at.astype(jnp.int32))
    return new, jnp.where(ok, value, jnp.nan)


@functools.partial(jax.jit, static_argnames=("net", "cfg", "n_steps"))
def _run_block(states, start, data_keys, datas, net: Net, cfg: TrainConfig, n_steps: int):
    """``n_steps`` steps of every run in the batch; returns the states and the mean loss per run."""

    def one_run(state, data_key, data):
        body = lambda s, t: _step(s, t, data_key, data, net, cfg)  # noqa: E731
        state, losses = jax.lax.scan(body, state, start + jnp.arange(n_steps))
        return state, jnp.mean(losses)

    return jax.vmap(one_run)(states, data_keys, datas)


def train(init_keys, data_keys, datas: tokens_lib.TokenData, net: Net, cfg: TrainConfig,
          block: int = 250, on_block=None):
    """Train a batch of runs of the same shapes together (vmapped, one jit, ``lax.scan`` over steps).

    Args:
      init_keys: (R, 2) keys of the parameter initializations.
      data_keys: (R, 2) keys of the minibatch streams; step t of run r uses ``fold_in(data_keys[r], t)``.
      datas: :class:`~ccdyn.data.tokens.TokenData` with a leading run axis R.
      net, cfg: shared by all runs.
      block: steps per compiled scan; the host reports progress between blocks.
      on_block: optional callback ``on_block(steps_done, mean_losses)`` after each block.

    Returns:
      (final :class:`TrainState` with a leading run axis, mean loss per block (n_blocks, R)).
      A run that goes non-finite keeps its last finite parameters, ``finite=False`` and the step in
      ``stopped_at``; the others go on.
    """
    if block < 1:
        raise ValueError(f"block={block} must be >= 1")
    states = jax.vmap(lambda k: init_state(k, net, cfg))(init_keys)
    history, done = [], 0
    while done < cfg.steps:
        n = min(block, cfg.steps - done)
        states, mean_loss = _run_block(states, jnp.int32(done), data_keys, datas, net, cfg, n)
        done += n
        history.append(mean_loss)
        if on_block is not None:
            on_block(done, mean_loss)
    return states, jnp.stack(history)
