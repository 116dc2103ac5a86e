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
        r = mpmath.quad(lambda t: mpmath.e ** (-yy * t - t * t / 2), [0, 1 / (1 + yy), 10 / (1 + yy), mpmath.inf])
        e = 1 / r - yy
        rows.append({"y": y, "r": float(r), "e": float(e), "r_lower": float(yy / (1 + yy ** 2)), "r_upper": float(1 / yy),
                     "holds": bool(yy / (1 + yy ** 2) < r < 1 / yy and 0 < e < 1 / yy)})
    return {"rows": rows}


def run(c: DDNFormsConfig = DDNFormsConfig()) -> dict:
    key = jax.random.PRNGKey(c.seed)
    k1, k2 = jax.random.split(key)
    return {"config": dataclasses.asdict(c), "remark_eq2": remark_eq2(c, k1), "eq59": eq59(c, k2), "eq125": eq125(c)}
