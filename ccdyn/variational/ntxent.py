"""NT-Xent losses on weighted point sets: the generalized loss of Eq. 4-5, the original Eq. 1 and the
latent form of Prop. 2.1.

Equation numbers refer to *Understanding Contrastive Learning through Variational Analysis and Neural
Network Optimization Perspectives* (the SimCLR variational-analysis paper). A distribution is a set of
support points with probabilities ``p`` (a discrete measure; a sample of a continuous one is the
empirical measure, ``p = 1/n``); augmentations are ``V`` views per support point with probabilities
``q``, i.e. ``z`` of shape (n, V, d) holds f(T_v(x_i)). Pairwise squared distances are one GEMM
(|a|^2 + |b|^2 - 2 a b^T), never an (n, n, d) tensor.

Readings (docs/variational.md): Eq. 4 keeps the y = x term (the paper drops the indicator); Eq. 1's
1_{x != y} is applied in one of three ways, ``exclude``:
  "none": 1 a.e., the reading for an absolutely continuous mu (x = y has probability 0);
  "self": on a discrete measure, y = x means the same support point: the atom's own mass p_i is removed;
  "atom": as "self", but on the embedded points: every y at the same place as x is removed (what the
          indicator does when it is written on the latent measure f#mu, as in Prop. 2.1).
"""

from __future__ import annotations

import functools

import chex
import jax
import jax.numpy as jnp

__all__ = ["sq_dists", "cosine", "log1p_psi", "gaussian_eta", "eq4_loss", "eq4_loss_views", "eq1_loss_views",
           "latent_loss", "EXCLUDE"]

EXCLUDE = ("none", "self", "atom")


def sq_dists(a, b=None):
    """||a_i - b_j||^2 as one GEMM (shapes (n, d), (m, d) -> (n, m))."""
    b = a if b is None else b
    return jnp.sum(a * a, -1)[:, None] + jnp.sum(b * b, -1)[None, :] - 2.0 * a @ b.T


def cosine(a, b=None):
    """Cosine similarities (Eq. 2) of the rows of a and b as one GEMM."""
    b = a if b is None else b
    na = a / jnp.linalg.norm(a, axis=-1, keepdims=True)
    nb = b / jnp.linalg.norm(b, axis=-1, keepdims=True)
    return na @ nb.T


def log1p_psi(t):
    """Psi(t) = log(1 + t), the default of Eq. 4 (Sec. 2)."""
    return jnp.log1p(t)


def gaussian_eta(tau: float):
    """eta(t) = exp(-t / tau), so eta_f(x, y) = exp(-||f(x) - f(y)||^2 / (2 tau)) (Eq. 5)."""
    return lambda t: jnp.exp(-t / tau)


@functools.partial(jax.jit, static_argnames=("psi", "eta"))
def eq4_loss(z, p, tau: float = 0.5, psi=log1p_psi, eta=None):
    """Eq. 4 for an invariant map (T = T' = Id): sum_i p_i Psi(sum_j p_j eta(||z_i - z_j||^2 / 2) / eta(0)).

    Args:
      z: (n, d) embedded support points (on S^{d-1} for the constraint set C of Sec. 2, or anywhere).
      p: (n,) probabilities.
      tau: temperature of the default eta (ignored when ``eta`` is given).
    """
    chex.assert_rank(z, 2)
    chex.assert_shape(p, (z.shape[0],))
    eta = gaussian_eta(tau) if eta is None else eta
    g = eta(0.5 * sq_dists(z)) @ p / eta(jnp.zeros((), z.dtype))
    return jnp.dot(p, psi(g))


@functools.partial(jax.jit, static_argnames=("psi", "eta"))
def eq4_loss_views(z, p, q, tau: float = 0.5, psi=log1p_psi, eta=None):
    """Eq. 4 with augmentations: E_{x, T=v, T'=v'} Psi(E_y eta_f(T x, T' y) / eta_f(T x, T' x)).

    Args:
      z: (n, V, d), z[i, v] = f(T_v(x_i)); p: (n,) support probabilities; q: (V,) view probabilities.
    """
    chex.assert_rank(z, 3)
    chex.assert_shape(p, (z.shape[0],))
    chex.assert_shape(q, (z.shape[1],))
    eta = gaussian_eta(tau) if eta is None else eta
    zv = jnp.swapaxes(z, 0, 1)  # (V, n, d)

    def pair(a, b):  # views v (of x) and v' (of y and of the positive)
        e = eta(0.5 * sq_dists(a, b))
        return psi((e @ p) / jnp.diagonal(e)) @ p

    terms = jax.vmap(lambda a: jax.vmap(lambda b: pair(a, b))(zv))(zv)  # (V, V)
    return q @ terms @ q


def _mask(z_first_view, exclude: str):
    n = z_first_view.shape[0]
    if exclude == "none":
        return jnp.ones((n, n), z_first_view.dtype)
    if exclude == "self":
        return 1.0 - jnp.eye(n, dtype=z_first_view.dtype)
    if exclude == "atom":
        same = sq_dists(z_first_view) <= 1e-12 * jnp.max(jnp.sum(z_first_view ** 2, -1))
        return 1.0 - same.astype(z_first_view.dtype)
    raise ValueError(f"exclude must be one of {', '.join(EXCLUDE)}, got {exclude!r}")


@functools.partial(jax.jit, static_argnames=("exclude",))
def eq1_loss_views(z, p, q, tau: float = 0.5, exclude: str = "self"):
    """The original NT-Xent of Eq. 1 on a discrete measure with views:

    E_{x, T=v, T'=v'} log(1 + sum_{h in {T, T'}} E_y[1_{x != y} exp(sim(T x, h y) / tau)] / exp(sim(T x, T' x) / tau)),

    with 1_{x != y} read as ``exclude`` (module docstring; "atom" compares the first view's embeddings).
    """
    chex.assert_rank(z, 3)
    chex.assert_shape(p, (z.shape[0],))
    chex.assert_shape(q, (z.shape[1],))
    m = _mask(z[:, 0], exclude) * p[None, :]
    zv = jnp.swapaxes(z, 0, 1)

    def pair(a, b):
        s_same, s_other = cosine(a, a), cosine(a, b)
        num = (jnp.exp(s_same / tau) * m).sum(1) + (jnp.exp(s_other / tau) * m).sum(1)
        return jnp.log1p(num / jnp.exp(jnp.diagonal(s_other) / tau)) @ p

    terms = jax.vmap(lambda a: jax.vmap(lambda b: pair(a, b))(zv))(zv)
    return q @ terms @ q


@functools.partial(jax.jit, static_argnames=("exclude", "positive"))
def latent_loss(u, r, tau: float = 0.5, exclude: str = "none", positive: bool = True):
    """Prop. 2.1's latent form: E_{x~rho} log(1 + 2 E_{y~rho}[1_{x != y} exp(sim(x, y)/tau)] / c),

    rho = sum_k r_k delta_{u_k}. ``positive=True`` keeps the positive pair's denominator of Eq. 1,
    c = exp(sim(x, x) / tau) = exp(1 / tau), which an invariant map leaves in place; ``positive=False``
    is the formula as printed in Prop. 2.1 (c = 1).
    """
    chex.assert_rank(u, 2)
    chex.assert_shape(r, (u.shape[0],))
    m = _mask(u, exclude) * r[None, :]
    c = jnp.exp(1.0 / tau) if positive else 1.0
    return jnp.log1p(2.0 * (jnp.exp(cosine(u) / tau) * m).sum(1) / c) @ r
