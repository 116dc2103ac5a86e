"""The record behind the DDN part of ``results/theory/appendix_forms`` (``scripts/appendix_forms.py``):
statements of the DDN paper that had no check, each against a route that does not use it.

- **The remark after Eq. 2**: for unit vectors, -1/2 ||u - v||^2 = sim(u, v) - 1, and Eq. 2's InfoNCE on
  r = 1/2 ||f_1 - f||^2 is SimCLR's cosine InfoNCE (e^{-1/tau} cancels): both losses evaluated directly on
  random unit vectors, H negatives.
- **Eq. 59**: dL/dr_k- at an augmented sample minus its value at the un-augmented one, eps, is bounded:
  |eps| <= 1 for the soft triplet loss, <= 2/tau for InfoNCE. The derivatives by autodiff (jax.grad of the
  losses of Sec. 4) at random distance configurations, including the extremes where the bound is nearly
  reached; the sup of |eps| is the range of dL/dr_k-, 1 (triplet) and 1/tau (InfoNCE).
- **Eq. 125**: y/(1 + y^2) < r(y) < 1/y and 0 < e(y) < 1/y with r(y) the Mills ratio of Eq. 116 by mpmath
  quadrature of its integral (40 digits; not the erfc form) and e = 1/r - y (Eq. 117), on a log grid of y.

- **Eq. 79**: the residue theta of Thm. 4 is at most (2 M_K^2 / tau^2) {2 E_{x,x'}[||f(x) - f(x')||
  (sqrt tr V_aug[f|x] + c_0(x))] + 3 E_x tr V_aug[f|x]} for InfoNCE (1/tau for the soft triplet loss),
  M_K = max ||K_l|| (spectral, over every view), c_0(x) = ||f(x) - E_aug f||. Checked through its
  consequence ||theta vec W_l|| <= bound ||vec W_l||, with theta vec W_l the autodiff first-branch descent
  minus the operator term (``ccdyn.deep.operator.residue``), on one random network and noise populations of
  growing sigma_aug, every layer.

A frozen :class:`DDNFormsConfig` in, a plain dict out (no I/O).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["DDNFormsConfig", "run", "remark_eq2", "eq59", "eq125"]


@dataclasses.dataclass(frozen=True)
class DDNFormsConfig:
    taus: tuple = (0.1, 0.5, 1.0, 2.0)
    H: tuple = (1, 4, 16)  # negatives
    dim: int = 8  # output dimension for the remark after Eq. 2
    n_samples: int = 20_000  # random configurations per (tau, H) for Eq. 59
    r_max: float = 50.0  # distances drawn in [0, r_max] (log-uniformly above 1e-3)
    margins: tuple = (0.0, 1.0)  # the soft triplet loss's r0
    ys: tuple = tuple(float(y) for y in np.logspace(-3, 3, 25))
    eq79_sizes: tuple = (6, 8, 5, 3)  # the network of Eq. 79's check (as results/ddn/operator)
    eq79_sigmas: tuple = (0.0, 0.05, 0.1, 0.2, 0.4)
    eq79_tau: float = 0.5
    seed: int = 0


def _nce(rp, rn, tau):
    """Eq. 2: -log(e^{-r+/tau} / (e^{-r+/tau} + sum_k e^{-r_k-/tau}))."""
    return -(-rp / tau) + jax.scipy.special.logsumexp(jnp.concatenate([-rp[None] / tau, -rn / tau]))


def _tri(rp, rn, tau, r0):
    """Sec. 4 (2): tau log(1 + e^{(r+ - r- + r0)/tau})."""
    return tau * jnp.logaddexp(0.0, (rp - rn[0] + r0) / tau)


def remark_eq2(c: DDNFormsConfig, key) -> dict:
    worst_identity, worst_loss = 0.0, 0.0
    for tau in c.taus:
        for h in c.H:
            key, sub = jax.random.split(key)
            z = jax.random.normal(sub, (h + 2, c.dim), jnp.float64)
            z = z / jnp.linalg.norm(z, axis=1, keepdims=True)
            anchor, pos, negs = z[0], z[1], z[2:]
            r = lambda a, b: 0.5 * jnp.sum((a - b) ** 2, -1)  # noqa: E731
            sim = lambda a, b: (b @ a) / (jnp.linalg.norm(a) * jnp.linalg.norm(b, axis=-1))  # noqa: E731
            ident = jnp.abs(-r(anchor, z[1:]) - (sim(anchor, z[1:]) - 1.0)).max()
            eq2 = _nce(r(anchor, pos), r(anchor, negs), tau)
            logits = jnp.concatenate([sim(anchor, pos[None]), sim(anchor, negs)]) / tau
            simclr = -logits[0] + jax.scipy.special.logsumexp(logits)
            worst_identity = max(worst_identity, float(ident))
            worst_loss = max(worst_loss, float(abs(eq2 - simclr) / abs(simclr)))
    return {"max_abs_identity_err": worst_identity, "max_rel_loss_diff": worst_loss}


def eq59(c: DDNFormsConfig, key) -> dict:
    """Per (loss, tau, H or r0): the largest |eps| over pairs of random configurations (an augmented X and
    its X_0), the bound, and the range of dL/dr_k- (its sup |.|, the largest possible |eps|)."""
    out = []
    for tau in c.taus:
        for h in c.H:
            key, k1, k2 = jax.random.split(key, 3)
            u = jax.random.uniform(k1, (2, c.n_samples, h + 1), jnp.float64)
            rs = jnp.where(u < 0.1, 0.0, 1e-3 * (c.r_max / 1e-3) ** jax.random.uniform(k2, u.shape, jnp.float64))
            g = jax.vmap(jax.grad(_nce, argnums=1), (0, 0, None))
            d_aug, d_0 = g(rs[0, :, 0], rs[0, :, 1:], tau), g(rs[1, :, 0], rs[1, :, 1:], tau)
            out.append({"loss": "nce", "tau": tau, "H": h, "max_abs_eps": float(jnp.abs(d_aug - d_0).max()),
                        "bound": 2.0 / tau, "derivative_range": [float(d_aug.min()), float(d_aug.max())],
                        "sup_abs_eps": 1.0 / tau})
        for r0 in c.margins:
            key, k1 = jax.random.split(key)
            rs = c.r_max * jax.random.uniform(k1, (2, c.n_samples, 2), jnp.float64)
            g = jax.vmap(jax.grad(_tri, argnums=1), (0, 0, None, None))
            d_aug, d_0 = g(rs[0, :, 0], rs[0, :, 1:], tau, r0), g(rs[1, :, 0], rs[1, :, 1:], tau, r0)
            out.append({"loss": "tri", "tau": tau, "r0": r0, "max_abs_eps": float(jnp.abs(d_aug - d_0).max()),
                        "bound": 1.0, "derivative_range": [float(d_aug.min()), float(d_aug.max())],
                        "sup_abs_eps": 1.0})
    return {"rows": out}


def eq125(c: DDNFormsConfig) -> dict:
    import mpmath  # noqa: PLC0415

    mpmath.mp.dps = 40
    rows = []
    for y in c.ys:
        yy = mpmath.mpf(y)
        r = mpmath.quad(lambda t, yy=yy: mpmath.e ** (-yy * t - t * t / 2),
                        [0, 1 / (1 + yy), 10 / (1 + yy), mpmath.inf])
        e = 1 / r - yy
        rows.append({"y": y, "r": float(r), "e": float(e), "r_lower": float(yy / (1 + yy ** 2)),
                     "r_upper": float(1 / yy),
                     "holds": bool(yy / (1 + yy ** 2) < r < 1 / yy and 0 < e < 1 / yy)})
    return {"rows": rows}


def eq79(c: DDNFormsConfig, key) -> dict:
    from ccdyn.deep import network, operator  # noqa: PLC0415

    k1, k2 = jax.random.split(key)
    ws = network.init_weights(k1, c.eq79_sizes)
    run = jax.jit(operator.residue, static_argnames=("l", "loss", "branch"))
    rows = []
    for sigma in c.eq79_sigmas:
        pop = operator.noise_population(k2, 6, c.eq79_sizes[0], 3, sigma)
        f0 = jax.vmap(lambda x: network.output(ws, x))(pop.x0)
        fv = jax.vmap(jax.vmap(lambda x: network.output(ws, x)))(pop.views)
        mean = jnp.einsum("nv,nvk->nk", pop.pv, fv)
        trv = jnp.einsum("nv,nvk->n", pop.pv, (fv - mean[:, None]) ** 2)
        c0 = jnp.linalg.norm(f0 - mean, axis=-1)
        dist = jnp.linalg.norm(f0[:, None] - f0[None], axis=-1)
        braces = (2 * jnp.einsum("x,y,xy,x->", pop.p, pop.p, dist, jnp.sqrt(trv) + c0)
                  + 3 * jnp.dot(pop.p, trv))
        for l in range(1, len(c.eq79_sizes)):
            kv = operator.view_connections(ws, pop, l)
            mk = float(jnp.max(jnp.linalg.norm(kv, ord=2, axis=(-2, -1))))
            w = network.vec(ws[l - 1])
            for loss, scale in (("nce", 1 / c.eq79_tau ** 2), ("tri", 1 / c.eq79_tau)):
                theta, _ = run(ws, pop, l=l, loss=loss, tau=c.eq79_tau, branch="first")
                bound = 2 * mk ** 2 * scale * float(braces)
                rows.append({"sigma": sigma, "layer": l, "loss": loss, "theta_w": float(jnp.linalg.norm(theta)),
                             "bound_times_w": bound * float(jnp.linalg.norm(w)), "M_K": mk, "braces": float(braces)})
    return {"rows": rows}


def run(c: DDNFormsConfig = DDNFormsConfig()) -> dict:
    key = jax.random.PRNGKey(c.seed)
    k1, k2 = jax.random.split(key)
    return {"config": dataclasses.asdict(c), "remark_eq2": remark_eq2(c, k1), "eq59": eq59(c, k2), "eq125": eq125(c),
            "eq79": eq79(c, jax.random.fold_in(key, 79))}
