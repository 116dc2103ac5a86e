"""Error-controlled integration of the flow dw/dt = P_w^perp A(w) w (Eq. 7) on the sphere, per init.

One attempted step of an embedded explicit Runge-Kutta pair for every row of W at once (the same
fixed-shape GEMM batch as the rest of the engine: each stage is one :func:`dynamics.ascent`):

- stages k_j = P^perp_{v_j} u(v_j) at the retracted points v_j = normalize(w + h sum_l a_jl k_l)
  (a projection method: the order of the pair is kept on the sphere);
- the proposal w' = normalize(w + h sum_j b_j k_j); the error estimate is the angular distance
  between the two solutions of the pair, e = h ||sum_j (b_j - b^_j) k_j|| (radians, since ||w|| = 1);
- per-init acceptance: e <= rtol and no *reversal* (k_1 . k_j < 0 for some stage: the field turns by
  more than 90 degrees inside the step, e.g. across a ReLU kink that attracts from both sides, or
  past a maximum with too long a step); a rejected init keeps w and shrinks h, an accepted one moves
  and grows h with the usual controller h <- h clip(0.9 (rtol / e)^(1 / (q + 1)), 0.2, 5) (q: the
  lower order of the pair); a reversal shrinks h at least 4 times; no step moves w by more than 0.5
  rad. Rejecting reversals also keeps the steps inside the stability region near a maximum: the
  angular error alone would let h grow until the iterate oscillates at a distance ~ rtol from it;
- the first step moves w by 0.01 radians (:func:`first_step`), at most ``step_size``;
- FSAL (first same as last): the field at the accepted point is the last stage, cached in the
  flow method's carry (``methods.flow.Carry.u``) for the next step, so Bogacki-Shampine 3(2) costs 3
  field evaluations per attempted step.

Stopping (decided by the flow methods, :mod:`ccdyn.one_layer.methods.flow` and ``sliding_flow``, on
the returned quantities): a critical point, ||P^perp u(w)|| <= tol ||u(w)||, as for the other methods;
or *pinned*: the field reverses within a step of length h ||k_1|| <= tol, i.e. a zero or a
discontinuity of the field lies within tol of w (rejections on reversal drive h to 0 while w approaches
a ReLU kink from one side). With ReLU the sliding flow then looks for kink ridges there and, if it
finds any, continues with the sliding field on their intersection (``basis``: every stage projected on
it; :mod:`ccdyn.one_layer.sliding`, docs/flow.md); otherwise the init stops there (a kink maximum that is not on a
ridge).

The pair is Bogacki & Shampine (1989), Appl. Math. Lett. 2(4):321-325, tableau as in Hairer, Norsett
& Wanner, Solving ODEs I, Sec. II.4 (see docs/flow.md for the measurements behind the choice).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ccdyn import sphere
from ccdyn.one_layer import dynamics, sliding

__all__ = ["Pair", "BS32", "HEUN_EULER", "PAIRS", "Attempt", "field", "first_step", "attempt", "next_step_size"]

SAFETY, GROW_MAX, SHRINK_MIN, REVERSAL_SHRINK = 0.9, 5.0, 0.2, 0.25
MAX_MOVE = 0.5  # radians: the longest step (the retraction normalize(w + h t) turns w by < pi / 2)
FIRST_MOVE = 0.01  # radians: the first step's length (Hairer, Norsett & Wanner, Sec. II.4, h0 = 0.01 ||y|| / ||f||)


class Pair(NamedTuple):
    """An explicit embedded Runge-Kutta pair (Butcher tableau): a (stages x stages, strictly lower),
    b (solution weights, order ``order``), b_low (embedded weights, order ``order - 1``); ``fsal``:
    the last stage is evaluated at the solution, whose field then starts the next step."""

    name: str
    a: tuple
    b: tuple
    b_low: tuple
    order: int
    fsal: bool

    @property
    def evaluations(self) -> int:
        """Evaluations of A(w) w per attempted step (the first stage is the previous step's last)."""
        return len(self.a) - 1 + (not self.fsal)


BS32 = Pair("bogacki_shampine", a=((), (1 / 2,), (0.0, 3 / 4), (2 / 9, 1 / 3, 4 / 9)),
            b=(2 / 9, 1 / 3, 4 / 9, 0.0), b_low=(7 / 24, 1 / 4, 1 / 3, 1 / 8), order=3, fsal=True)
HEUN_EULER = Pair("heun_euler", a=((), (1.0,)), b=(1 / 2, 1 / 2), b_low=(1.0, 0.0), order=2, fsal=False)
PAIRS = {p.name: p for p in (BS32, HEUN_EULER)}


def field(ds, act, pw, W):
    """(u, t): the ascent u (:func:`dynamics.ascent`: A(w) w for a homogeneous h, grad E_{sg(alpha)} for any
    other, e.g. tanh, gelu or a user's softplus) and the flow's field t = P^perp_w u."""
    u = dynamics.ascent(ds, act, W, pw)
    return u, sphere.tangent(W, u)


def first_step(W, u, h_max):
    """Each init's first step: the one that moves w by ``FIRST_MOVE`` radians along P^perp A(w) w, at most
    ``h_max``. Starting small matters: a first step whose stages all land beyond a narrow basin sees a
    smooth field there, passes the error test and skips the basin."""
    speed = jnp.linalg.norm(sphere.tangent(W, u), axis=1)
    return jnp.minimum(h_max, FIRST_MOVE / jnp.where(speed > 0, speed, 1.0))


class Attempt(NamedTuple):
    w: jax.Array  # (k, d) the proposal (the input w where it does not move: dead rows)
    u: jax.Array  # (k, d) A(w) w at the proposal (the next step's first stage)
    error: jax.Array  # (k,) angular error estimate e
    reversal: jax.Array  # (k,) the field turned by more than 90 degrees inside the step
    length: jax.Array  # (k,) h ||k_1||, the length of the first stage's move


def attempt(ds, act, pw, pair: Pair, W, u, h, basis=None) -> Attempt:
    """One step of ``pair`` from every row of W (unit, (k, d)) with A(w) w = u and step h (k,).

    ``basis`` (k, m, d), optional: per row, an orthonormal basis Q of the span of the kink hyperplanes'
    normals it slides on (zero rows: none; :func:`ccdyn.one_layer.sliding.basis`). The stages then use
    the sliding field P_V P^perp_v u(v) (V = span(Q)^perp) at points retracted onto V and the sphere,
    normalize(P_V (w + h sum a k)); with ``basis=None`` the plain flow (no projection at all)."""
    h = h[:, None]
    if basis is None:
        tangent, retract = sphere.tangent, lambda v: v
    else:
        tangent = lambda V, uv: sliding.project(basis, sphere.tangent(V, uv))
        retract = lambda v: sliding.project(basis, v)
    ks = [tangent(W, u)]
    reversal = jnp.zeros(W.shape[0], bool)

    def move(coefs):
        step = sum(c * k for c, k in zip(coefs, ks) if c)
        if basis is None:
            return dynamics.flow_update(W, step, h, fallback=W)
        return sphere.normalize(retract(W + h * step), W)

    for row in pair.a[1:]:
        v = move(row)
        u_stage = dynamics.ascent(ds, act, v, pw)
        k = tangent(v, u_stage)
        reversal = reversal | (jnp.sum(ks[0] * k, axis=1) < 0)
        ks.append(k)
    w_new = move(pair.b)
    if pair.fsal:  # the last stage was evaluated at the solution
        u_new = u_stage
    else:
        u_new = dynamics.ascent(ds, act, w_new, pw)
        k_new = tangent(w_new, u_new)
        reversal = reversal | (jnp.sum(ks[0] * k_new, axis=1) < 0)
    err = jnp.linalg.norm(h * sum((c - c_low) * k for c, c_low, k in zip(pair.b, pair.b_low, ks)), axis=1)
    return Attempt(w_new, u_new, err, reversal, jnp.linalg.norm(h * ks[0], axis=1))


def next_step_size(pair: Pair, h, error, reversal, rtol, length):
    """The controller: (accepted, h_next) per init (see the module docstring). ``length``: h ||k_1||; the
    next step moves w by at most ``MAX_MOVE`` radians (so the retraction never overflows)."""
    ratio = error / rtol
    accepted = (ratio <= 1) & ~reversal
    factor = SAFETY * jnp.where(ratio > 0, ratio, 1.0) ** (-1.0 / pair.order)
    factor = jnp.clip(jnp.where(ratio > 0, factor, GROW_MAX), SHRINK_MIN, GROW_MAX)
    factor = jnp.where(reversal, jnp.minimum(factor, REVERSAL_SHRINK), factor)
    factor = jnp.minimum(factor, MAX_MOVE / jnp.where(length > 0, length, MAX_MOVE))
    return accepted, h * factor
