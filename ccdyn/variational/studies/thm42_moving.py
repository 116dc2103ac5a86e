"""The record behind ``results/simclr_var/thm42_moving`` (``scripts/thm42_moving.py``): Thm. 4.2 with
perturbations that move the points (:mod:`ccdyn.variational.invariance`). A frozen :class:`Thm42Config`
in, a plain dict of numbers out (no I/O). Float64 expected.

Three cases on one random draw of the training inputs X (n, D) and the weights B (d, M, D):
``scaling`` (T x = c x, normalized map: the hypothesis holds), ``generic`` (T x = x + s n with B n = 0,
n generic: f invariant, grad_w f not) and ``orthogonal`` (the same with n orthogonal to the inputs).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from ccdyn.variational import invariance as inv
from ccdyn.variational import kernel as kr

__all__ = ["Thm42Config", "run"]


@dataclasses.dataclass(frozen=True)
class Thm42Config:
    n: int = 8
    D: int = 12
    d: int = 3
    M: int = 16
    tau: float = 0.5
    lr: float = 0.05
    steps: int = 20
    seed: int = 0


def _gaps(fn, Bs, X, TX):
    """max_i ||f(B_b, T x_i) - f(B_b, x_i)|| for every step b, as a list."""
    return jax.vmap(lambda b: kr.invariance_gap(fn(b, X), fn(b, TX)))(Bs).tolist()


def _moved(fn, B0, Bs, X):
    return float(jnp.max(jnp.linalg.norm(fn(Bs[-1], X) - fn(B0, X), axis=-1)))


def run(c: Thm42Config = Thm42Config()) -> dict:
    """The three cases' numbers: Jacobian gaps, gaps over ``steps`` weight steps, how far the points
    moved, and for the generic shift the one-step gap by the weight step against Eq. 15's closed form."""
    if c.D <= c.n:
        raise ValueError(f"D = {c.D} must exceed n = {c.n} (the orthogonal case needs a direction off the inputs)")
    key = jax.random.PRNGKey(c.seed)
    k = lambda i: jax.random.fold_in(key, i)  # noqa: E731
    X = jax.random.normal(k(1), (c.n, c.D))
    B = jax.random.normal(k(2), (c.d, c.M, c.D))
    out = {"config": dataclasses.asdict(c)}
    # scaling: T x = c x on the normalized map
    cs = jax.random.uniform(k(3), (c.n,), minval=0.5, maxval=2.0)
    TX = inv.scaling(X, cs)
    Bs = inv.train(B, X, c.tau, c.lr, c.steps)
    out["scaling"] = {"min_move_of_T": float(jnp.min(jnp.linalg.norm(TX - X, axis=-1))),
                      "jacobian_gap": float(inv.jacobian_gap(inv.normalized_net, B, X, TX)),
                      "gap_start": float(kr.invariance_gap(inv.normalized_net(B, X), inv.normalized_net(B, TX))),
                      "gaps": _gaps(inv.normalized_net, Bs, X, TX), "moved": _moved(inv.normalized_net, B, Bs, X),
                      "unnormalized_gap_start": float(kr.invariance_gap(kr.net(B, X), kr.net(B, TX)))}
    # generic and orthogonal shifts along a direction that B annihilates
    g = jax.random.normal(k(4), (c.D,))
    Q = jnp.linalg.qr(X.T)[0]  # (D, n): an orthonormal basis of span{x_j}
    o = g - Q @ (Q.T @ g)
    s = jax.random.uniform(k(5), (c.n,), minval=0.5, maxval=1.5)
    for name, n in (("generic", g / jnp.linalg.norm(g)), ("orthogonal", o / jnp.linalg.norm(o))):
        B0 = inv.project_out(B, n)
        TX = inv.kernel_shift(X, n, s)
        Bs = inv.train(B0, X, c.tau, c.lr, c.steps)
        gap1 = kr.net(Bs[0], TX) - kr.net(Bs[0], X)
        pred = inv.eq15_gap_step(B0, X, TX, c.tau, c.lr)
        out[name] = {"min_move_of_T": float(jnp.min(jnp.linalg.norm(TX - X, axis=-1))),
                     "n_along_data": float(jnp.linalg.norm(Q.T @ n)),
                     "gap_start": float(kr.invariance_gap(kr.net(B0, X), kr.net(B0, TX))),
                     "jacobian_gap": float(inv.jacobian_gap(kr.net, B0, X, TX)),
                     "one_step_condition": float(inv.one_step_condition(B0, X, TX, c.tau)),
                     "gap_one_step": float(jnp.max(jnp.abs(gap1))),
                     "eq15_one_step": float(jnp.max(jnp.abs(pred))),
                     "eq15_abs_diff": float(jnp.max(jnp.abs(gap1 - pred))),
                     "gate_flips_one_step": int(inv.gate_flips(B0, Bs[0], jnp.concatenate([X, TX]))),
                     "gaps": _gaps(kr.net, Bs, X, TX), "moved": _moved(kr.net, B0, Bs, X)}
    return out
