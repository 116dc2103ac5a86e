"""The gradients of *Understanding Self-supervised Learning with Dual Deep Networks* with an
l2-normalized output (App. A.2 Eq. 41, App. B.2 Eq. 51, App. B.3 Eq. 56), and Lemma 2 (Eq. 46), the
batch-of-one gradient they extend, as the paper writes them; the tests compare each with autodiff.

With f^ = f_L / ||f_L||, K_l^n(x) = K_l(x) / ||f_L(x)|| and P^perp(x) = I - f^ f^T (Eq. 42):

- Eq. 41: d r_n / d vec(W_l) = K_l^n(x_1) P^perp(x_1) [K_l^n(x_1) - K_l^n(x_2)]^T vec(W_l), r_n of Eq. 28
  (one tower's gradient, the other held: Thm. 1 differentiates "w.r.t. W_1");
- Eq. 46 (Lemma 2) and its normalized form Eq. 51, for a loss L(r_+, r_1-, ..., r_H-) that satisfies
  Thm. 2 (here L_nce^tau with H negatives): vec(g) = K(x_1) [P^perp] sum_k dL/dr_k- (K(x_+) - K(x_k-))^T
  vec(W_l) (K^n for Eq. 51), the gradient through the first branch x_1;
- Eq. 56 (L_simp, normalized, population): vec(g) = -Cov_x[mean_aug(K^n P^perp)(x), K̄^n(x)] vec(W_l),
  Cov[A, B] = E[A B^T] - E[A] E[B]^T, again through the first branch; with tied weights each of the
  three branches contributes the same expectation (x_1, x_+ and x_1, x_- are exchangeable), so the full
  descent is twice it. The operator is not symmetric, as the paper notes.
- Eq. 80 (H > 1, L_nce^tau): the pair weights xi_k = -dL/dr_k- at the un-augmented points,
  :func:`eq80_weights` (docs/readings.md#ddn-eq-80).

The network is :mod:`ccdyn.deep.network` (ReLU, or leaky ReLU with ``slope``); populations are
:class:`ccdyn.deep.operator.Population`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from ccdyn.deep import network
from ccdyn.deep.operator import Population

__all__ = ["unit", "normalized_connection", "projector", "eq41_gradient", "nce_multi", "lemma2_gradient",
           "eq56_operator", "simp_population_loss", "eq56_descent", "eq80_weights"]


def unit(ws, x, slope: float = 0.0):
    """f^(x) = f_L(x) / ||f_L(x)||."""
    f = network.output(ws, x, slope)
    return f / jnp.linalg.norm(f)


def normalized_connection(ws, x, l: int, slope: float = 0.0):
    """K_l^n(x) = K_l(x) / ||f_L(x)||, (n_l n_{l-1}, n_L)."""
    return network.connection(ws, x, l, slope) / jnp.linalg.norm(network.output(ws, x, slope))


def projector(ws, x, slope: float = 0.0):
    """P^perp_{f_L(x)} = I - f f^T / ||f||^2 (Eq. 42)."""
    u = unit(ws, x, slope)
    return jnp.eye(u.shape[0], dtype=u.dtype) - jnp.outer(u, u)


def eq41_gradient(ws, x1, x2, l: int, slope: float = 0.0):
    """Eq. 41: K^n(x_1) P^perp(x_1) [K^n(x_1) - K^n(x_2)]^T vec(W_l)."""
    k1, k2 = normalized_connection(ws, x1, l, slope), normalized_connection(ws, x2, l, slope)
    return k1 @ projector(ws, x1, slope) @ ((k1 - k2).T @ network.vec(ws[l - 1]))


def nce_multi(rp, rn, tau: float):
    """L_nce^tau with H negatives: -log(e^{-r_+/tau} / (e^{-r_+/tau} + sum_k e^{-r_k-/tau})) (Eq. 2)."""
    return jax.nn.logsumexp(jnp.concatenate([-rp[None], -rn]) / tau) + rp / tau


def lemma2_gradient(ws, xs, l: int, tau: float, normalize: bool, slope: float = 0.0):
    """Eq. 46 (``normalize`` False) or Eq. 51 (True) for xs = (x_1, x_+, x_1-, ..., x_H-) and L_nce^tau:
    K(x_1) [P^perp(x_1)] sum_k dL/dr_k- (K(x_+) - K(x_k-))^T vec(W_l), dL/dr_k- of Eq. 44."""
    out = (lambda x: unit(ws, x, slope)) if normalize else (lambda x: network.output(ws, x, slope))  # noqa: E731
    kfun = normalized_connection if normalize else network.connection
    f = jax.vmap(out)(xs)
    rp = 0.5 * jnp.sum((f[0] - f[1]) ** 2)
    rn = 0.5 * jnp.sum((f[0] - f[2:]) ** 2, -1)
    dl = -tau ** -1 * jax.nn.softmax(jnp.concatenate([-rp[None], -rn]) / tau)[1:]          # Eq. 44
    ks = jax.vmap(lambda x: kfun(ws, x, l, slope))(xs)
    w = network.vec(ws[l - 1])
    inner = jnp.einsum("k,kde->de", dl, ks[1][None] - ks[2:]).T @ w
    left = ks[0] @ projector(ws, xs[0], slope) if normalize else ks[0]
    return left @ inner


def _views(ws, pop: Population, fun):
    return jax.vmap(jax.vmap(fun))(pop.views)


def eq56_operator(ws, pop: Population, l: int, slope: float = 0.0):
    """Cov_x[mean_aug(K^n P^perp)(x), K̄^n(x)] (Eq. 56, the descent of L_simp through the first branch)."""
    kn = _views(ws, pop, lambda x: normalized_connection(ws, x, l, slope))           # (n, V, D, n_L)
    kp = _views(ws, pop, lambda x: normalized_connection(ws, x, l, slope) @ projector(ws, x, slope))
    a, b = jnp.einsum("nv,nvde->nde", pop.pv, kp), jnp.einsum("nv,nvde->nde", pop.pv, kn)
    ma, mb = jnp.einsum("n,nde->de", pop.p, a), jnp.einsum("n,nde->de", pop.p, b)
    return jnp.einsum("n,nde,nfe->df", pop.p, a, b) - ma @ mb.T


def simp_population_loss(ws1, wsp, wsn, pop: Population, slope: float = 0.0):
    """E[r_+ - r_-] with normalized outputs: view 1 through ``ws1``, the positive view through ``wsp``,
    the negative view (of an independent x') through ``wsn``; exact over the population."""
    u = lambda ws: _views(ws, pop, lambda x: unit(ws, x, slope))  # noqa: E731
    f1, fp, fn = u(ws1), u(wsp), u(wsn)
    rp = 0.5 * jnp.sum((f1[:, :, None] - fp[:, None]) ** 2, -1)                      # (x, a, b)
    rn = 0.5 * jnp.sum((f1[:, :, None, None] - fn[None, None]) ** 2, -1)             # (x, a, y, c)
    ep = jnp.einsum("x,xa,xb,xab->", pop.p, pop.pv, pop.pv, rp)
    en = jnp.einsum("x,xa,y,yc,xayc->", pop.p, pop.pv, pop.p, pop.pv, rn)
    return ep - en


def eq56_descent(ws, pop: Population, l: int, branch: str = "first", slope: float = 0.0):
    """-d E[L_simp] / d vec(W_l) by autodiff, through the first branch or all three (tied weights)."""
    if branch == "first":
        g = jax.grad(lambda w1: simp_population_loss(w1, ws, ws, pop, slope))(ws)
    elif branch == "all":
        g = jax.grad(lambda w: simp_population_loss(w, w, w, pop, slope))(ws)
    else:
        raise ValueError(f"branch={branch!r} must be 'all' or 'first'")
    return -network.vec(g[l - 1])


def eq80_weights(ws, x, negs, tau: float, slope: float = 0.0):
    """Eq. 80 at the un-augmented points X_0 (x_1 = x_+ = x, negatives x'_k): (-dL_nce/dr_k- by autodiff,
    the printed e^{-||x - x'_k||^2/tau} / (1 + sum_k' e^{-||x - x'_k'||^2/tau}), the same with the output
    distance r_k = 1/2 ||f_L(x) - f_L(x'_k)||^2 and the factor 1/tau of Eq. 63)."""
    f, fn = network.output(ws, x, slope), jax.vmap(lambda z: network.output(ws, z, slope))(negs)
    r = 0.5 * jnp.sum((f - fn) ** 2, -1)
    auto = -jax.grad(nce_multi, argnums=1)(jnp.zeros((), r.dtype), r, tau)
    e_in = jnp.exp(-jnp.sum((x - negs) ** 2, -1) / tau)
    e_out = jnp.exp(-r / tau)
    return auto, e_in / (1 + e_in.sum()), e_out / (1 + e_out.sum()) / tau
