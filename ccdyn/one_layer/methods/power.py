"""Power iteration (App. B.4, Eq. PI): w <- normalize(A(w) w + shift w).

Converged when one step moves w by at most ``tol``. A period-2 cycle (||w(t+1) - w(t-1)|| <= tol <
||w(t+1) - w(t)||) is flagged (CYCLING); longer or chaotic wandering (seen for ReLU) ends as not
converged. Finish: with ReLU / leaky ReLU, the kink watch (:func:`circles`): an init still running after
``max_steps`` whose iterate crosses a kink hyperplane in the next ``CIRCLE_STEPS`` steps is circling a kink
(CIRCLING_KINK): on a kink A(w) w is not parallel to w, so power iteration has no fixed point there.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ccdyn import sphere
from ccdyn.one_layer import dynamics, sliding
from ccdyn.one_layer.methods.base import KINKED, Method, Proposal, Watch

__all__ = ["Carry", "POWER", "CIRCLE_STEPS", "step", "circles"]

CIRCLE_STEPS = 8  # power steps after max_steps in which a still-running iterate is watched for kink crossings


class Carry(NamedTuple):
    previous: jax.Array  # (k, d) the previous iterate (the start at first): w(t+1) = w(t-1) is a cycle


def init(W, dyn) -> Carry:
    return Carry(W)


def step(ds, act, pw, dyn, w, carry: Carry, steps, active, row_shift=None) -> Proposal:
    """One power step of every row, shifted by ``dyn.shift`` or by ``row_shift`` (k,), each row's own."""
    u = dynamics.ascent(ds, act, w, pw)
    res = jnp.linalg.norm(sphere.tangent(w, u), axis=1)
    w_new = dynamics.power_update(w, u, dyn.shift if row_shift is None else row_shift[:, None], fallback=w)
    done = jnp.linalg.norm(w_new - w, axis=1) <= dyn.tol
    cycling = jnp.linalg.norm(w_new - carry.previous, axis=1) <= dyn.tol  # w(t+1) = w(t-1)
    return Proposal(w=w_new, u=u, u_new=u, residual=res, done=done, carry=Carry(w), cycling=cycling)


def circles(ds, act, pw, dyn, w):
    """(k,) bool: the iterate crosses a kink hyperplane (the sign of w^T x_i changes for some view
    x_i != 0) within ``CIRCLE_STEPS`` more power steps from w."""
    x = sliding.flat_views(ds)[0]
    real = jnp.linalg.norm(x, axis=1) > 0

    side = lambda w: (w @ x.T) > 0

    def body(carry, _):
        w, crossed = carry
        w = dynamics.power_update(w, dynamics.ascent(ds, act, w, pw), dyn.shift, fallback=w)
        return (w, crossed | jnp.any((side(w) != start) & real, axis=1)), None

    start = side(w)
    # zeros_like: a value of the same kind as w's rows (varying over the devices under shard_map)
    return jax.lax.scan(body, (w, jnp.zeros_like(w[:, 0], dtype=bool)), None, length=CIRCLE_STEPS)[0][1]


def finish(ds, act, dyn) -> tuple:
    return (Watch("CIRCLING_KINK", circles),) if act.name in KINKED else ()


def check(act, dyn) -> None:
    if not act.homogeneous:
        raise ValueError(f"--method=power needs a homogeneous activation; act={act.name!r} is not")


POWER = Method("power", knobs=("tol", "shift"), init=init, step=step, finish=finish, check=check)
