"""The covariance operator of *Understanding Self-supervised Learning with Dual Deep Networks*
(Sec. 4) on an exact finite population with augmentation views, and the gradient it is checked
against (docs/ddn.md).

A :class:`Population` holds n un-augmented points x (probabilities p) and V views of each
(probabilities pv), so every expectation below is an exact finite sum. With K_l the connection of
:mod:`ccdyn.deep.network` and K̄_l(x) = E_aug[K_l(x'') | x]:

- VE_l = V_x[K̄_l(x)]  (Thm. 3, Eq. 3: OP_l^simp; Eq. 10),  EV_l = E_x[V_aug[K_l | x]]  (Eq. 9);
- Cor. 1 (L_simp^beta = (1 + beta) r_+ - r_-): OP_l = VE_l - beta EV_l  (Eq. 8);
- Thm. 4 (H = 1): OP_l = 1/2 V^xi_{x,x'}[K̄_l(x) - K̄_l(x')] + theta, with xi(r) of Eq. 6 evaluated
  on the un-augmented distance r = 1/2 ||f_L(x) - f_L(x')||^2 (Eq. 60) and V^xi the xi-weighted
  second moment of Eq. 4 (the difference has mean 0).

The losses (Sec. 4): L_simp = r_+ - r_-, L_simp^beta, L_tri^tau = tau log(1 + e^{(r_+ - r_- + r_0)/tau}),
L_nce^tau = -log(e^{-r_+/tau} / (e^{-r_+/tau} + e^{-r_-/tau})) (Eq. 2, H = 1) and L^{tau,exact} =
StopGrad(xi(r)) (r_+ - r_-) (Eq. 7). :func:`population_loss` is the exact expectation over
(x, view 1, positive view, x', negative view). The paper differentiates through the first branch
only (Thm. 1, "w.r.t. W_1"); with tied weights the three branches (view 1, positive, negative) each
contribute the same expectation for L_simp^beta, L^exact and, without augmentation, for every loss,
so the full gradient is twice the operator expression: ``descent(branch="all") = 2 OP vec W``.
:func:`residue` measures theta as what is left of the descent direction after the operator term.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp

from ccdyn import pytree
from ccdyn.deep import network

__all__ = ["Population", "noise_population", "LOSSES", "pair_loss", "xi", "view_connections", "mean_connection",
           "op_ve", "op_ev", "op_beta", "op_weighted", "operator", "population_loss", "descent", "residue",
           "aug_spread", "residue_study"]

LOSSES = ("simp", "tri", "nce", "nce_exact")


@pytree.dataclass(frozen=True)
class Population:
    """x0 (n, d) un-augmented points with probabilities p (n,); views (n, V, d) with probabilities pv (n, V)."""

    x0: chex.Array
    p: chex.Array
    views: chex.Array
    pv: chex.Array


def noise_population(key, n: int, d: int, n_views: int, sigma: float) -> Population:
    """n Gaussian points in R^d, each with ``n_views`` equally likely views x0 + sigma * noise
    (sigma = 0: no augmentation); uniform p."""
    k1, k2 = jax.random.split(key)
    dt = jnp.result_type(float)  # drawn in float32 whatever the x64 mode, then cast (docs/reproducibility.md)
    x0 = jax.random.normal(k1, (n, d), jnp.float32).astype(dt)
    views = x0[:, None, :] + sigma * jax.random.normal(k2, (n, n_views, d), jnp.float32).astype(dt)
    return Population(x0=x0, p=jnp.full((n,), 1.0 / n), views=views, pv=jnp.full((n, n_views), 1.0 / n_views))


def pair_loss(rp, rn, loss: str, tau: float = 1.0, beta: float = 0.0, r0: float = 0.0, xi0=None):
    """L(r_+, r_-) of one (positive, negative) pair; ``xi0`` is the stop-gradient weight of
    ``nce_exact``; ``beta`` extends ``simp`` to L_simp^beta (Cor. 1)."""
    if loss == "simp":
        return (1 + beta) * rp - rn
    if loss == "tri":
        return tau * jax.nn.softplus((rp - rn + r0) / tau)
    if loss == "nce":
        return jax.nn.softplus((rp - rn) / tau)
    if loss == "nce_exact":
        return jax.lax.stop_gradient(xi0) * (rp - rn)
    raise ValueError(f"loss={loss!r} is unknown; allowed: {', '.join(LOSSES)}")


def xi(r, loss: str, tau: float = 1.0, r0: float = 0.0):
    """The pairwise weight xi(r) of Eq. 6 (``nce_exact`` uses the one of ``nce``)."""
    if loss == "simp":
        return jnp.ones_like(r)
    if loss == "tri":
        return jnp.exp(-(r - r0) / tau) / (1 + jnp.exp(-(r - r0) / tau))
    if loss in ("nce", "nce_exact"):
        return jnp.exp(-r / tau) / (1 + jnp.exp(-r / tau)) / tau
    raise ValueError(f"loss={loss!r} is unknown; allowed: {', '.join(LOSSES)}")


def view_connections(ws, pop: Population, l: int):
    """K_l at every view, (n, V, n_l n_{l-1}, n_L)."""
    return jax.vmap(jax.vmap(lambda x: network.connection(ws, x, l)))(pop.views)


def mean_connection(kv, pop: Population):
    """K̄_l(x) = E_aug[K_l], (n, D, n_L)."""
    return jnp.einsum("nv,nvde->nde", pop.pv, kv)


def op_ve(kv, pop: Population):
    """VE_l = V_x[K̄_l(x)] (Eq. 10; OP_l^simp of Thm. 3)."""
    kb = mean_connection(kv, pop)
    c = kb - jnp.einsum("n,nde->de", pop.p, kb)
    return jnp.einsum("n,nde,nfe->df", pop.p, c, c)


def op_ev(kv, pop: Population):
    """EV_l = E_x[V_aug[K_l | x]] (Eq. 9)."""
    c = kv - mean_connection(kv, pop)[:, None]
    return jnp.einsum("n,nv,nvde,nvfe->df", pop.p, pop.pv, c, c)


def op_beta(kv, pop: Population, beta: float):
    """Cor. 1: OP_l = VE_l - beta EV_l (Eq. 8)."""
    return op_ve(kv, pop) - beta * op_ev(kv, pop)


def op_weighted(ws, kv, pop: Population, loss: str, tau: float = 1.0, r0: float = 0.0):
    """Thm. 4 without theta: 1/2 E_{x,x'}[xi(r(x, x')) (K̄(x) - K̄(x'))(K̄(x) - K̄(x'))^T] (Eq. 5)."""
    f = jax.vmap(lambda x: network.output(ws, x))(pop.x0)
    r = 0.5 * jnp.sum((f[:, None] - f[None]) ** 2, -1)
    kb = mean_connection(kv, pop)
    diff = kb[:, None] - kb[None]
    w = pop.p[:, None] * pop.p[None] * xi(r, loss, tau, r0)
    return 0.5 * jnp.einsum("xy,xyde,xyfe->df", w, diff, diff)


def operator(ws, pop: Population, l: int, loss: str, tau: float = 1.0, beta: float = 0.0, r0: float = 0.0):
    """OP_l of ``loss`` (without theta): Cor. 1 for ``simp`` (beta), Thm. 4 for ``tri`` / ``nce`` / ``nce_exact``."""
    kv = view_connections(ws, pop, l)
    if loss == "simp":
        return op_beta(kv, pop, beta)
    return op_weighted(ws, kv, pop, loss, tau, r0)


def population_loss(ws1, wsp, wsn, pop: Population, loss: str, tau: float = 1.0, beta: float = 0.0,
                    r0: float = 0.0):
    """E[L(r_+, r_-)] exactly: view 1 through ``ws1``, the positive view through ``wsp``, the negative
    view (of an independent x') through ``wsn``."""
    out = lambda ws: jax.vmap(jax.vmap(lambda x: network.output(ws, x)))(pop.views)  # noqa: E731
    f1, fp, fn = out(ws1), out(wsp), out(wsn)
    rp = 0.5 * jnp.sum((f1[:, :, None] - fp[:, None]) ** 2, -1)                    # (x, a, b)
    rn = 0.5 * jnp.sum((f1[:, :, None, None] - fn[None, None]) ** 2, -1)           # (x, a, y, c)
    g = jax.vmap(lambda x: network.output(ws1, x))(pop.x0)
    r_un = 0.5 * jnp.sum((g[:, None] - g[None]) ** 2, -1)                          # (x, y) un-augmented
    xi0 = xi(r_un, "nce", tau)[:, None, None, :, None]
    lval = pair_loss(rp[:, :, :, None, None], rn[:, :, None], loss, tau, beta, r0, xi0)
    w = (pop.p[:, None, None, None, None] * pop.pv[:, :, None, None, None] * pop.pv[:, None, :, None, None]
         * pop.p[None, None, None, :, None] * pop.pv[None, None, None])
    return jnp.sum(w * lval)


def descent(ws, pop: Population, l: int, loss: str, tau: float = 1.0, beta: float = 0.0, r0: float = 0.0,
            branch: str = "all"):
    """-d E[L] / d vec(W_l) by autodiff: through every branch (tied weights, ``all``) or the first only."""
    args = (pop, loss, tau, beta, r0)
    if branch == "first":
        g = jax.grad(lambda w1: population_loss(w1, ws, ws, *args))(ws)
    elif branch == "all":
        g = jax.grad(lambda w: population_loss(w, w, w, *args))(ws)
    else:
        raise ValueError(f"branch={branch!r} must be 'all' or 'first'")
    return -network.vec(g[l - 1])


def residue(ws, pop: Population, l: int, loss: str, tau: float = 1.0, beta: float = 0.0, r0: float = 0.0,
            branch: str = "all"):
    """theta vec(W_l) := descent / c - OP_l vec(W_l), c = 2 (all branches) or 1 (first); returns
    (theta vec W_l, OP_l vec W_l)."""
    op_w = operator(ws, pop, l, loss, tau, beta, r0) @ network.vec(ws[l - 1])
    c = 2.0 if branch == "all" else 1.0
    return descent(ws, pop, l, loss, tau, beta, r0, branch) / c - op_w, op_w


def aug_spread(ws, pop: Population):
    """sigma_aug^2 averaged over x: E_x tr V_aug[f_L | x] (the scale of theta in Thm. 4)."""
    f = jax.vmap(jax.vmap(lambda x: network.output(ws, x)))(pop.views)
    m = jnp.einsum("nv,nvk->nk", pop.pv, f)
    return jnp.einsum("n,nv,nvk->", pop.p, pop.pv, (f - m[:, None]) ** 2)


def residue_study(key, sizes=(6, 8, 5, 3), n: int = 6, n_views: int = 3, tau: float = 0.5,
                  sigmas=(0.0, 0.025, 0.05, 0.1, 0.2, 0.4), betas=(0.0, -0.5, 0.2)) -> list:
    """Rows {loss, beta, sigma, layer, branch, rel}: ||descent / c - OP vec W|| / ||OP vec W|| per layer
    (c = 2 for all branches, 1 for the first), with ``sigma_aug2`` = E_x tr V_aug[f_L | x], on one random
    network and noise populations of growing augmentation ``sigmas`` (the same points and directions)."""
    k1, k2 = jax.random.split(key)
    ws = network.init_weights(k1, sizes)
    run = jax.jit(residue, static_argnames=("l", "loss", "branch"))
    rows = []
    cases = [("simp", b) for b in betas] + [("nce_exact", 0.0), ("nce", 0.0), ("tri", 0.0)]
    for sigma in sigmas:
        pop = noise_population(k2, n, sizes[0], n_views, sigma)
        spread = float(aug_spread(ws, pop))
        for loss, beta in cases:
            for l in range(1, len(sizes)):
                for branch in ("first", "all"):
                    theta, op_w = run(ws, pop, l=l, loss=loss, tau=tau, beta=beta, branch=branch)
                    rows.append({"loss": loss, "beta": beta, "sigma": sigma, "layer": l, "branch": branch,
                                 "rel": float(jnp.linalg.norm(theta) / jnp.linalg.norm(op_w)),
                                 "sigma_aug2": spread})
    return rows
