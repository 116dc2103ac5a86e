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
- ``quadratic`` has two readings (``TrainConfig.quadratic_form``, docs/two_layer_readings.md):
  ``limit`` (default): L = 1/N sum_i [d_i^2 - 1/(N-1) sum_{j != i} d_ij^2], the tau -> infinity limit of
  tau * L_infonce (alpha_ij = 1/(N-1) constant); its gradient is -2N grad E_alpha.
  ``authors``: the loss of the authors' public code (facebookresearch/luckmatters,
  ``ssl/real-dataset/bn_gen.py``), applied like InfoNCE to the similarity matrix divided by tau:
  L = 1/(N tau) sum_i [-s_ii' + 1/N sum_{j != i} s_ij], s_ij = z[i]^T z[j], s_ii' = z[i]^T z[i'].
  With normalized outputs s = 1 - d^2, so tau L = (N-1)/N L_limit + 1/N mean_i d_i^2 - 1/N: the
  negatives get alpha_ij = 1/N, the positive keeps weight 1, and the gradient carries 1/tau (tested).

First layer: the token inputs are one-hot in the embedding basis, x_k = u_{t_k}. Given
:class:`~ccdyn.data.tokens.TokenInputs` (token ids) instead of dense x (n, K, d), the pre-activation
is a lookup z_km = (W_k U^T)[m, t_k] and its gradient a scatter-add (``first_layer="gather"`` of
:func:`train`, the default); ``"dense"`` embeds the tokens and multiplies (the general path, used
for any other input). Both give the same values and gradients (tested in x64).

Non-finite runs (``TrainConfig.on_nonfinite``): a run whose loss or parameters go non-finite is frozen
either way. ``drop`` (default) keeps its last finite parameters and leaves it out of the means;
``revert`` is the authors' reading: when the loss at parameters p_t is non-finite, the run ends with
p_{t-1} (``bn_gen.py`` keeps the last two models and stops), and it is kept in the means.

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

from ccdyn import compiling, covariance, pairwise, pytree, sphere
from ccdyn.activations import Activation, get_activation
from ccdyn.data import tokens as tokens_lib

__all__ = [
    "BN_VARIANTS", "LOSSES", "QUADRATIC_FORMS", "ON_NONFINITE", "FIRST_LAYERS", "Net", "TrainConfig", "init_params",
    "hidden", "batch_norm", "outputs", "energy", "lemma4_velocity", "loss", "make_optimizer", "TrainState",
    "init_state", "init_states", "train_step", "train",
]

BN_VARIANTS = ("none", "vanilla", "mean_only", "var_only", "none_backprop")
LOSSES = ("infonce", "quadratic")
QUADRATIC_FORMS = ("limit", "authors")
ON_NONFINITE = ("drop", "revert")
FIRST_LAYERS = ("gather", "dense")


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
      quadratic_form: reading of the quadratic loss, ``limit`` (tau -> infinity limit of tau L_infonce)
        or ``authors`` (their code's loss on the similarities / tau); see the module docstring.
      on_nonfinite: ``drop`` a run that goes non-finite from the means, or ``revert`` it to the
        parameters before the non-finite loss and keep it (the authors' code).
    """

    loss: str = "infonce"
    tau: float = 0.1
    normalize: bool = True
    lr: float = 2e-3
    momentum: float = 0.9
    weight_decay: float = 5e-3
    batch_size: int = 128
    steps: int = 5000
    quadratic_form: str = "limit"
    on_nonfinite: str = "drop"

    def __post_init__(self):
        checks = [
            ("loss", self.loss in LOSSES, f"one of {', '.join(LOSSES)}"),
            ("tau", math.isfinite(self.tau) and self.tau > 0, "a finite number > 0"),
            ("lr", math.isfinite(self.lr) and self.lr > 0, "a finite number > 0"),
            ("momentum", 0 <= self.momentum < 1, "in [0, 1)"),
            ("weight_decay", math.isfinite(self.weight_decay) and self.weight_decay >= 0, ">= 0"),
            ("batch_size", self.batch_size >= 2, ">= 2"),
            ("steps", self.steps >= 1, ">= 1"),
            ("quadratic_form", self.quadratic_form in QUADRATIC_FORMS, f"one of {', '.join(QUADRATIC_FORMS)}"),
            ("on_nonfinite", self.on_nonfinite in ON_NONFINITE, f"one of {', '.join(ON_NONFINITE)}"),
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
    """z_km = w_km^T x_k for a batch x: (n, K, M).

    x is dense (n, K, d), or :class:`~ccdyn.data.tokens.TokenInputs`: then z[n, k] is row t[n, k] of the
    (K, d_tokens, M) table U W_k^T, a gather whose gradient is a scatter-add into that table.
    """
    if isinstance(x, tokens_lib.TokenInputs):
        table = jnp.einsum("ad,kmd->kam", x.embeddings, w)
        return table[jnp.arange(w.shape[0])[None, :], x.tokens]
    return jnp.einsum("nkd,kmd->nkm", x, w)


def hidden(w, x, act: Activation):
    """Hidden layer before BatchNorm, f1 = [h(w_km^T x_k)] as (n, K M); x dense or token ids."""
    z = _preact(w, x)
    return act.h(z).reshape(z.shape[0], -1)


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
    off = ~jnp.eye(n, dtype=bool)
    if cfg.loss == "quadratic" and cfg.quadratic_form == "authors":
        s_neg = jnp.sum(jnp.where(off, za @ za.T, 0.0), axis=1)
        return jnp.mean(-jnp.sum(za * zb, axis=1) + s_neg / n) / cfg.tau
    d_pos = 0.5 * jnp.sum((za - zb) ** 2, axis=1)
    d_neg = 0.5 * pairwise.sq_dists(za)
    if cfg.loss == "infonce":
        lse = jax.scipy.special.logsumexp(jnp.where(off, -d_neg / cfg.tau, -jnp.inf), axis=1)
        return jnp.mean(d_pos / cfg.tau + lse)
    return jnp.mean(d_pos - jnp.sum(jnp.where(off, d_neg, 0.0), axis=1) / (n - 1))


def make_optimizer(cfg: TrainConfig) -> optax.GradientTransformation:
    """SGD with momentum; weight decay is added to the gradient first (PyTorch ``SGD`` semantics)."""
    return optax.chain(optax.add_decayed_weights(cfg.weight_decay),
                       optax.sgd(cfg.lr, momentum=cfg.momentum if cfg.momentum > 0 else None))


@pytree.dataclass
class TrainState:
    """State of one run (or of a vmapped batch of runs: every leaf gets a leading run axis).

    Attributes:
      params: network parameters.
      opt_state: optax state.
      finite: False once a step produced a non-finite loss or parameter; the run is then frozen.
      stopped_at: the step that went non-finite, -1 while finite.
      prev_params: the parameters one step before ``params`` (``on_nonfinite="revert"`` only; otherwise
        the initial parameters, never updated).
    """

    params: dict
    opt_state: optax.OptState
    finite: chex.Array
    stopped_at: chex.Array
    prev_params: dict


def init_state(key, net: Net, cfg: TrainConfig) -> TrainState:
    params = init_params(key, net)
    return TrainState(params=params, opt_state=make_optimizer(cfg).init(params),
                      finite=jnp.array(True), stopped_at=jnp.array(-1, jnp.int32), prev_params=params)


def _where(cond, a, b):
    return jax.tree_util.tree_map(lambda u, v: jnp.where(cond, u, v), a, b)


def _all_finite(tree):
    return jnp.all(jnp.array([jnp.all(jnp.isfinite(leaf)) for leaf in jax.tree_util.tree_leaves(tree)]))


def train_step(state: TrainState, step, views, net: Net, cfg: TrainConfig):
    """One SGD step on the minibatch ``views`` = (x1, x2); a run that is or goes non-finite is frozen."""
    value, grads = jax.value_and_grad(loss)(state.params, *views, net, cfg)
    updates, opt_state = make_optimizer(cfg).update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    loss_ok = jnp.isfinite(value)
    ok = state.finite & loss_ok & _all_finite(params)
    fails = state.finite & ~ok
    fallback, prev = state.params, state.prev_params
    if cfg.on_nonfinite == "revert":
        # bn_gen.py: a NaN loss at p_t ends the run with p_{t-1}; finite loss but non-finite p_{t+1}
        # is seen there one step later, as a NaN loss at p_{t+1}, and ends it with p_t.
        fallback = _where(fails & ~loss_ok, state.prev_params, state.params)
        prev = _where(ok, state.params, state.prev_params)
    new = TrainState(params=_where(ok, params, fallback), opt_state=_where(ok, opt_state, state.opt_state),
                     finite=ok, stopped_at=jnp.where(fails, step, state.stopped_at).astype(jnp.int32),
                     prev_params=prev)
    return new, jnp.where(ok, value, jnp.nan)


@functools.partial(jax.jit, static_argnames=("batch_size", "n_steps"), compiler_options=compiling.SAMPLING)
def _block_tokens(start, data_keys, datas: tokens_lib.TokenData, batch_size: int, n_steps: int):
    """The minibatches of steps start .. start + n_steps - 1 of every run (step t of run r uses
    ``fold_in(data_keys[r], t)``), drawn together before the block's scan: token ids (R, n_steps, N, K)
    per view. A program of its own, compiled with :data:`ccdyn.compiling.SAMPLING` (its threefry rounds
    cost seconds of LLVM time inside the training loop's program, not run time)."""

    def one_run(data_key, data):
        steps = start + jnp.arange(n_steps)
        return jax.vmap(lambda t: tokens_lib.sample_view_tokens(jax.random.fold_in(data_key, t), data,
                                                                batch_size))(steps)

    return jax.vmap(one_run)(data_keys, datas)


def _inputs(data: tokens_lib.TokenData, ids, first_layer: str):
    """The first layer's input of a view's token ids: kept as ids (``gather``) or embedded (``dense``)."""
    if first_layer == "gather":
        return tokens_lib.TokenInputs(tokens=ids, embeddings=data.embeddings)
    return tokens_lib.embed(data, ids)


@functools.partial(jax.jit, static_argnames=("net", "cfg", "n_steps", "first_layer"), compiler_options=compiling.LOOP)
def _run_block(states, start, tokens, datas, net: Net, cfg: TrainConfig, n_steps: int,
               first_layer: str = "gather"):
    """``n_steps`` steps of every run in the batch on the minibatches ``tokens`` (of :func:`_block_tokens`);
    returns the states and the mean loss per run."""

    def one_run(state, ids, data):
        steps = start + jnp.arange(n_steps)

        def body(s, xs):
            t, ids1, ids2 = xs
            return train_step(s, t, (_inputs(data, ids1, first_layer), _inputs(data, ids2, first_layer)), net, cfg)

        state, losses = jax.lax.scan(body, state, (steps, *ids))
        return state, jnp.mean(losses)

    return jax.vmap(one_run)(states, tokens, datas)


@functools.partial(jax.jit, static_argnames=("net", "cfg"), compiler_options=compiling.QUICK)
def init_states(init_keys, net: Net, cfg: TrainConfig) -> TrainState:
    """:func:`init_state` of each key (R, 2), in one compiled call: a TrainState with a leading run axis."""
    return jax.vmap(lambda k: init_state(k, net, cfg))(init_keys)


def train(init_keys, data_keys, datas: tokens_lib.TokenData, net: Net, cfg: TrainConfig,
          block: int = 250, on_block=None, first_layer: str = "gather", states: TrainState | None = None,
          start: int = 0):
    """Train a batch of runs of the same shapes together (vmapped, one jit, ``lax.scan`` over steps).

    Args:
      init_keys: (R, 2) keys of the parameter initializations.
      data_keys: (R, 2) keys of the minibatch streams; step t of run r uses ``fold_in(data_keys[r], t)``.
      datas: :class:`~ccdyn.data.tokens.TokenData` with a leading run axis R.
      net, cfg: shared by all runs.
      block: steps per compiled scan; the host reports progress between blocks. Every block but a
        shorter last one is the same compiled program.
      on_block: optional callback ``on_block(steps_done, mean_losses)`` after each block.
      first_layer: ``gather`` (token ids, a lookup) or ``dense`` (embedded inputs, a GEMM); the same
        numbers up to rounding.
      states, start: continue the runs ``states`` (returned by an earlier call) from step ``start`` to
        ``cfg.steps``; by default start from the initialization at step 0.

    Returns:
      (final :class:`TrainState` with a leading run axis, mean loss per block (n_blocks, R)).
      A run that goes non-finite keeps its last finite parameters, ``finite=False`` and the step in
      ``stopped_at``; the others go on.
    """
    if block < 1:
        raise ValueError(f"block={block} must be >= 1")
    if first_layer not in FIRST_LAYERS:
        raise ValueError(f"first_layer={first_layer!r} is unknown; allowed: {', '.join(FIRST_LAYERS)}")
    if not 0 <= start < cfg.steps:
        raise ValueError(f"start={start} must lie in [0, steps={cfg.steps})")
    states = init_states(init_keys, net, cfg) if states is None else states
    history, done = [], start
    block_cfg = dataclasses.replace(cfg, steps=1)  # one compiled block for any number of steps
    while done < cfg.steps:
        n = min(block, cfg.steps - done)
        tokens = _block_tokens(jnp.int32(done), data_keys, datas, cfg.batch_size, n)
        states, mean_loss = _run_block(states, jnp.int32(done), tokens, datas, net, block_cfg, n, first_layer)
        done += n
        history.append(mean_loss)
        if on_block is not None:
            on_block(done, mean_loss)
    return states, jnp.stack(history)
