"""The flow (Eq. 7) integrated to a tolerance, without sliding (:mod:`ccdyn.one_layer.stepper`, docs/flow.md).

One attempted step of an embedded Runge-Kutta pair (Bogacki-Shampine 3(2)) per init and engine step,
accepted or rejected per init; the step eta_i (starting at ``step_size``, the first one moving w by
``stepper.FIRST_MOVE`` radians) controlled so that each step's angular error is <= ``flow_rtol``.
Converged: ||P^perp A w|| <= tol ||A w|| (a critical point), or *pinned*: the field reverses within a
step of length <= tol (a kink or a zero of the field within tol of w; the init stops there).
With ReLU / leaky ReLU, ``Dynamics.sliding`` selects :mod:`ccdyn.one_layer.methods.sliding_flow`
instead, which slides along the kinks from where this one stops; :func:`choose` picks between them.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ccdyn import sphere
from ccdyn.one_layer import dynamics, stepper
from ccdyn.one_layer.methods.base import KINKED, Method, Proposal

__all__ = ["Carry", "FLOW", "init", "check", "choose"]


class Carry(NamedTuple):
    u: jax.Array  # (k, d) A(w) w at w, cached from the last accepted stage (FSAL; 0 before the first step)
    eta: jax.Array  # (k,) the step size


def init(W, dyn) -> Carry:
    return Carry(jnp.zeros_like(W), jnp.full((W.shape[0],), dyn.step_size, W.dtype))


def step(ds, act, pw, dyn, w, carry: Carry, steps, active) -> Proposal:
    first = jnp.any(active & (steps == 0))  # A(w) w of the inits is not cached yet
    u = jax.lax.cond(first, lambda: dynamics.ascent(ds, act, w, pw), lambda: carry.u)
    eta = jnp.where(steps == 0, stepper.first_step(w, u, carry.eta), carry.eta)
    att = stepper.attempt(ds, act, pw, stepper.BS32, w, u, eta)
    accepted, eta_next = stepper.next_step_size(stepper.BS32, eta, att.error, att.reversal, dyn.flow_rtol,
                                                  att.length)
    bad = ~jnp.all(jnp.isfinite(att.w), axis=1)  # let a non-finite proposal reach the status checks
    move = (accepted | bad)[:, None]
    res = jnp.linalg.norm(sphere.tangent(w, u), axis=1)
    done = (res <= dyn.tol * jnp.linalg.norm(u, axis=1)) | (att.reversal & (att.length <= dyn.tol))
    return Proposal(w=jnp.where(move, att.w, w), u=u, u_new=att.u, residual=res, done=done,
                    carry=Carry(jnp.where(move, att.u, u), jnp.where(active, eta_next, carry.eta)))


def check(act, dyn) -> None:
    if not 0 < dyn.flow_rtol < 1:
        raise ValueError(f"flow_rtol={dyn.flow_rtol} must lie in (0, 1)")


FLOW = Method("flow", knobs=("tol", "step_size", "flow_rtol"), init=init, step=step, check=check)


def choose(act, dyn) -> Method:
    """``--method=flow``: the sliding flow with ReLU / leaky ReLU and ``dyn.sliding``, else :data:`FLOW`."""
    from ccdyn.one_layer.methods import sliding_flow  # noqa: PLC0415 -- it builds on this module

    if act is None:
        raise ValueError("--method=flow slides on kinks or not depending on the activation: pass it")
    return sliding_flow.method() if dyn.sliding and act.name in KINKED else FLOW
