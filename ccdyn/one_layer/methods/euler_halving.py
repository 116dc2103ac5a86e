"""The fixed-step flow with step halving: w <- normalize(w + eta_i P_w^perp A(w) w).

eta_i starts at ``step_size`` and is halved each time the tangent direction reverses (t_k . t_{k-1} < 0),
so the iterate converges onto a kink maximum instead of oscillating around it. Converged: ||P^perp A w||
<= tol ||A w||, or the direction reversed again with a move <= tol. No error control: a step can jump
over a neighbouring minimum into another basin, which biases the basin fractions (docs/flow.md measures
it); kept to reproduce older results.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ccdyn import sphere
from ccdyn.one_layer import dynamics
from ccdyn.one_layer.methods.base import Method, Proposal

__all__ = ["Carry", "EULER_HALVING"]


class Carry(NamedTuple):
    tangent: jax.Array  # (k, d) the previous step's tangent P^perp A(w) w (0 before the first)
    eta: jax.Array  # (k,) the step size


def init(W, dyn) -> Carry:
    return Carry(jnp.zeros_like(W), jnp.full((W.shape[0],), dyn.step_size, W.dtype))


def step(ds, act, pw, dyn, w, carry: Carry, steps, active) -> Proposal:
    u = dynamics.ascent(ds, act, w, pw)
    t = sphere.tangent(w, u)
    res = jnp.linalg.norm(t, axis=1)
    flip = jnp.sum(t * carry.tangent, axis=1) < 0
    eta = jnp.where(active & flip, carry.eta / 2, carry.eta)
    w_new = dynamics.flow_update(w, t, eta[:, None], fallback=w)
    move = jnp.linalg.norm(w_new - w, axis=1)
    # a critical point, or pinned on a kink: still reversing, but by steps below tol
    done = (res <= dyn.tol * jnp.linalg.norm(u, axis=1)) | (flip & (move <= dyn.tol))
    return Proposal(w=w_new, u=u, u_new=u, residual=res, done=done, carry=Carry(t, eta))


EULER_HALVING = Method("euler_halving", knobs=("tol", "step_size"), init=init, step=step)
