"""The engine that runs many 1-layer initializations to a stop (Sec. 3.3): per-init stopping rules
and :class:`Status`, compiled blocks of steps, chunks tiled and sharded over devices, resume.

Random unit inits (``ccdyn.parallel.init_weights``) are advanced by the flow (Eq. 7) or power
iteration (Eq. PI), one (attempted) step of :mod:`ccdyn.one_layer.dynamics` per method, until each stops.
:mod:`ccdyn.one_layer.basins` turns the stopped inits into optima and basins.

Per-init dynamics (each init is frozen once it stops, so its result never depends on the others):

- flow: the flow integrated to a tolerance: one attempted step of an embedded Runge-Kutta pair per
  init and engine step, accepted or rejected per init, the step eta_i (starting at ``step_size``)
  controlled so that each step's angular error is <= ``flow_rtol`` (:mod:`ccdyn.one_layer.stepper`;
  docs/flow.md). Converged: ||P^perp A w|| <= tol ||A w|| (a critical point). With ReLU, an init
  whose field reverses within a step of length <= tol is *pinned* near kink hyperplanes w^T x_i = 0
  (E not differentiable there): it then slides along the ridges among them (Filippov, projected
  field P_V P^perp A w; :mod:`ccdyn.one_layer.sliding`) and converges when that field is <= tol ||A w||
  (a Clarke-stationary point), or stops where pinned when there is no ridge to slide on and the Clarke
  box's minimum-norm element is <= tol ||A w|| (else it leaves the kinks along that element). An init with
  more views on its kinks than the analysis holds stops KINK_LIMIT and, once its chunk has run, goes on
  in a second pass with a wider analysis (:func:`second_pass`, :meth:`ChunkRunner._second_pass`).
- euler_halving: the fixed-step scheme w <- normalize(w + eta_i P_w^perp A(w) w); eta_i starts at
  ``step_size`` and is halved each time the tangent direction reverses (t_k . t_{k-1} < 0), so the
  iterate converges onto a kink maximum instead of oscillating around it. Converged: ||P^perp A w||
  <= tol ||A w||, or the direction reversed again with a move <= tol. No error control: a step can
  jump over a neighbouring minimum into another basin, which biases the basin fractions
  (docs/flow.md measures it); kept to reproduce older results.
- power: w <- normalize(A(w) w + shift w) (App. B.4); converged when one step moves w by at most
  ``tol``. A period-2 cycle (||w(t+1) - w(t-1)|| <= tol < ||w(t+1) - w(t)||) is detected and
  reported; longer or chaotic wandering (seen for ReLU) ends as not converged.

Every init ends with one :class:`Status`; only converged runs enter the basins, the others are
counted and reported, never averaged in.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from ccdyn import parallel, sphere
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics, sliding, stepper
from ccdyn.pairwise import Pairwise

METHODS = ("power", "flow", "euler_halving")

__all__ = ["METHODS", "Status", "FINAL_STATUSES", "Dynamics", "State", "initial_state", "make_block", "second_pass",
           "converge", "ChunkRunner",
           "collect", "status_counts", "recheck_dead", "range_problems"]


class Status(enum.IntEnum):
    """How an init's run ended (its code in ``optima.npz``'s ``status``; ``labels`` hold -code).

    RUNNING only exists inside the engine. NOT_CONVERGED: still moving after ``max_steps``.
    NONFINITE: NaN in w or its residual without an overflow. CYCLING: power iteration in a period-2
    cycle. DEAD: A(w) w = 0 exactly (a flat region of E, e.g. no data point on the active side of a
    ReLU). OVERFLOW: A(w) w or the step left the dtype's range (an infinity, or a retraction whose norm
    overflowed). UNDERFLOW: A(w) w is 0 in the run's dtype but not in float64 (:func:`recheck_dead`);
    both say: use ``--x64`` or rescale the data / the step. CIRCLING_KINK: power iteration not converged
    after ``max_steps`` and its iterate still crosses a ReLU kink hyperplane (w^T x_i = 0) in the next
    steps: on a kink A(w) w is not parallel to w, so power iteration has no fixed point there and
    circles it; the flow (``--method=flow``) slides onto such maxima. KINK_LIMIT: the flow reached more
    than :func:`ccdyn.one_layer.sliding.max_active` kink hyperplanes within ``KINK_DELTA * tol`` at once,
    and in the second pass with the wider analysis (:func:`second_pass`) more than
    :func:`ccdyn.one_layer.sliding.wide_active` (the most it follows), and stopped there.
    """

    RUNNING = 0
    CONVERGED = 1
    NONFINITE = 2
    CYCLING = 3
    NOT_CONVERGED = 4
    DEAD = 5
    OVERFLOW = 6
    UNDERFLOW = 7
    CIRCLING_KINK = 8
    KINK_LIMIT = 9

    @property
    def key(self) -> str:
        """Machine name: ``status_counts`` keys, ``n_<key>`` in summary.json."""
        return self.name.lower()

    @property
    def text(self) -> str:
        """Human name for tables."""
        return {"NONFINITE": "non-finite", "NOT_CONVERGED": "not converged", "DEAD": "dead (A(w)w = 0)",
                "CIRCLING_KINK": "circling a kink", "KINK_LIMIT": "too many kinks"}.get(self.name, self.name.lower())


FINAL_STATUSES = tuple(s for s in Status if s is not Status.RUNNING)


def status_counts(status) -> dict:
    """Number of inits ending in each final status, keyed by :attr:`Status.key`."""
    status = np.asarray(status)
    return {s.key: int(np.sum(status == s)) for s in FINAL_STATUSES}


@dataclasses.dataclass(frozen=True)
class Dynamics:
    """How each init is advanced (hashable; static under jit).

    Attributes:
      method: ``power`` (Eq. PI), ``flow`` (Eq. 7 integrated to ``flow_rtol``) or ``euler_halving``
        (Eq. 7 by fixed Euler steps, halved on reversal; no error control).
      step_size: initial step of the flow (> 0), in time units of Eq. 7.
      tol: relative convergence threshold (dimensionless): power stops when ||w(t+1) - w(t)|| <= tol,
        the flow when ||P^perp A(w) w|| <= tol ||A(w) w||.
      max_steps: steps after which a running init is declared not converged (for ``flow``: attempted
        steps, accepted or rejected, each ``stepper.BS32.evaluations`` = 3 evaluations of A(w) w).
      block: steps per ``lax.scan`` block between host checks.
      shift: power-iteration shift s in A(w) w + s w (App. B.4; populations have PSD A, s = 0).
      flow_rtol: ``flow`` only: the bound on each step's angular error (radians on the unit sphere).
      sliding: ``flow`` with ReLU / leaky ReLU only: an init pinned on kink hyperplanes slides along
        their intersection (Filippov; :mod:`ccdyn.one_layer.sliding`, docs/flow.md) instead of
        stopping there. False: the flow before sliding (stops where pinned), kept for comparisons.
    """

    method: str = "power"
    step_size: float = 1.0
    tol: float = 1e-6
    max_steps: int = 2000
    block: int = 50
    shift: float = 0.0
    flow_rtol: float = 1e-4
    sliding: bool = True


class State(NamedTuple):
    w: jax.Array  # (k, d) current iterate
    aux: jax.Array  # (k, d) flow: A(w) w at w (0 before the first step); euler_halving: previous tangent step;
    #                 power: previous iterate
    eta: jax.Array  # (k,) flow step size
    status: jax.Array  # (k,) int32
    steps: jax.Array  # (k,) int32 steps taken
    residual: jax.Array  # (k,) ||P^perp A(w) w|| at the last evaluated iterate (sliding: ||P_V P^perp A(w) w||)
    kinks: jax.Array  # (k, m) int32 sliding flow: the flat views whose kink hyperplanes w slides on (-1: none)
    pinned: jax.Array  # (k,) bool sliding flow: the last attempt reversed within tol (look for kinks)
    reach: jax.Array  # (k,) sliding flow: the length of the last attempt when it was rejected, else 0 (a jump
    #                   of the field within this many radians, if any, made it fail: look for ridges)


KINK_DELTA = 10.0  # a view is on its kink when |w^T x| <= KINK_DELTA * tol * ||x|| (a pinned step moves <= tol)
KINK_REACH = 10.0  # after a rejected step, ridges within its length (at most KINK_REACH * flow_rtol rad) are looked for


def initial_state(W, dyn: Dynamics) -> State:
    k = W.shape[0]
    aux = W if dyn.method == "power" else jnp.zeros_like(W)
    return State(W, aux, jnp.full((k,), dyn.step_size, W.dtype), jnp.zeros((k,), jnp.int32),
                 jnp.zeros((k,), jnp.int32), jnp.full((k,), jnp.inf, W.dtype),
                 jnp.full((k, sliding.max_active(W.shape[1])), -1, jnp.int32), jnp.zeros((k,), bool),
                 jnp.zeros((k,), W.dtype))


def _slides(act: Activation, dyn: Dynamics) -> bool:
    return dyn.method == "flow" and dyn.sliding and act.name in ("relu", "leaky_relu")


def _flow(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, active):
    """The ``flow`` method's attempted step (:mod:`ccdyn.one_layer.stepper`): (u at w, w_new, eta, done,
    aux_new, u at the proposal)."""
    first = jnp.any(active & (st.steps == 0))  # A(w) w of the inits is not cached yet
    u = jax.lax.cond(first, lambda: dynamics.ascent(ds, act, st.w, pw), lambda: st.aux)
    eta = jnp.where(st.steps == 0, stepper.first_step(st.w, u, st.eta), st.eta)
    att = stepper.attempt(ds, act, pw, stepper.BS32, st.w, u, eta)
    accepted, eta_next = stepper.next_step_size(stepper.BS32, eta, att.error, att.reversal, dyn.flow_rtol,
                                                  att.length)
    bad = ~jnp.all(jnp.isfinite(att.w), axis=1)  # let a non-finite proposal reach the status checks
    move = (accepted | bad)[:, None]
    res = jnp.linalg.norm(sphere.tangent(st.w, u), axis=1)
    done = (res <= dyn.tol * jnp.linalg.norm(u, axis=1)) | (att.reversal & (att.length <= dyn.tol))
    return (u, jnp.where(move, att.w, st.w), jnp.where(active, eta_next, st.eta), done,
            jnp.where(move, att.u, u), att.u)


ANALYSIS_SHARE = 8  # the kink analysis runs on buffers of tile / ANALYSIS_SHARE rows (only the rows that need it)


def analysis_buffer(tile: int) -> int:
    """Rows per buffer of the sliding flow's kink analysis in a tile of ``tile`` rows: tile / 8 rounded,
    at least 8 (XLA computes a 1-row product by another kernel, which rounds differently), at most the tile."""
    return min(tile, max(8, round(tile / ANALYSIS_SHARE)))


def _ridges(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, w, reach, u, m: int, wide: int | None = None):
    """The kink analysis of the rows w (:func:`ccdyn.one_layer.sliding.analyse`, each row within its
    delta): (the ridges to slide on, flat view indices in decreasing order, -1 last (k, m); the number of
    views within delta (k,); whether w is Clarke-stationary, the box's minimum-norm element
    ||v|| <= tol ||u|| (u = A(w) w) (k,); the views in the box (k, m') and the gates of their multipliers,
    lam > 1/2 (k, m'), m' = m or ``wide``). Only these integers leave it, so the last-bit rounding inside,
    which can differ with the number of rows analysed together, matters only where it would change them
    (equal to the whole tile's in tests/one_layer/test_sliding_compaction.py).

    ``wide``: the wider second analysis (:class:`ChunkRunner`'s second pass over KINK_LIMIT rows): up to
    ``wide`` views in the Clarke box, and the ridges it finds cut to an independent subset of at most m
    spanning the same hyperplanes' intersection (:func:`ccdyn.one_layer.sliding.independent`)."""
    delta = jnp.maximum(KINK_DELTA * dyn.tol, jnp.minimum(reach, KINK_REACH * dyn.flow_rtol))[:, None]
    an = sliding.analyse(ds, act, pw, w, delta=delta, m=m if wide is None else wide)
    ridges = jnp.where(an.slide, an.active.index, -1)
    if wide is not None:
        x = sliding.flat_views(ds)[0]
        keep = sliding.independent(jnp.where(an.slide[..., None], x[jnp.maximum(ridges, 0)], 0.0), an.slide, m)
        ridges = jnp.where(keep, ridges, -1)
    stationary = jnp.linalg.norm(an.v, axis=1) <= dyn.tol * jnp.linalg.norm(u, axis=1)
    return (-jnp.sort(-ridges, axis=1)[:, :m], an.active.count, stationary,  # canonical order
            an.active.index, an.active.mask & (an.lam > 0.5))


def _compacted(fn, need, rows, empty, buffer: int):
    """``fn(*rows)`` for the rows with ``need`` only, gathered ``buffer`` at a time (a ``lax.while_loop``
    over ceil(#need / buffer) passes; none when no row needs it) and scattered back; the other rows get
    ``empty``. ``fn`` must compute row by row. Whatever the buffer, the program around the loop is the
    same, so XLA compiles it the same way (the float rounding of an op can change with the graph around
    it: the same projection rounds differently next to the inlined analysis than after a loop)."""
    k = need.shape[0]
    order = jnp.nonzero(need, size=-(-k // buffer) * buffer, fill_value=k)[0]  # the rows that need it first
    passes = (jnp.sum(need.astype(jnp.int32)) + buffer - 1) // buffer

    def one(carry):
        p, out = carry
        idx = jax.lax.dynamic_slice(order, (p * buffer,), (buffer,))
        part = fn(*[a[jnp.minimum(idx, k - 1)] for a in rows])
        return p + 1, tuple(o.at[idx].set(v, mode="drop") for o, v in zip(out, part))  # the fill k is dropped

    return jax.lax.while_loop(lambda c: c[0] < passes, one, (jnp.int32(0), tuple(empty)))[1]


def _flow_sliding(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, active, buffer=None,
                  wide=None):
    """The ``flow`` method's attempted step with Filippov sliding on ReLU kinks (docs/flow.md):
    (u at w, w_new, eta, done, aux_new, u at the proposal, residual, kinks, pinned, over).

    An init that was pinned (a reversal within tol), slides, or whose last attempt was rejected (then
    views within that attempt's length, at most KINK_REACH flow_rtol rad: on an oblique ridge the field
    jumps without reversing and only the error test fails) is analysed first (:func:`_ridges`, under a
    ``lax.cond`` that skips tiles without one): its active set becomes the ridges whose minimum-norm
    multipliers lie in (0, 1); a new one snaps w onto the intersection (w <- normalize(P_V w), a move
    <= KINK_DELTA tol) and restarts the step size. A pinned init whose set does not change stops there when
    the box's minimum-norm element v is <= tol ||A(w) w|| (Clarke-stationary); otherwise it moves tol along v
    and restarts the step size (docs/flow.md, "Why a pinned init stops only where the box holds 0"). Only the
    rows that need it are analysed, gathered
    into buffers of ``buffer`` rows (default :func:`analysis_buffer` of the tile; ``buffer`` >= the tile:
    the whole tile in one buffer, the same results). The step is then the pair's, with every stage
    projected on V (:func:`stepper.attempt`). ``wide``: the analysis pads the views on the kinks to
    ``wide`` instead of m (:func:`_ridges`; the second pass of :class:`ChunkRunner`)."""
    k, m = st.kinks.shape
    buffer = analysis_buffer(k) if buffer is None else int(buffer)
    x = sliding.flat_views(ds)[0]
    vectors = lambda idx: jnp.where((idx >= 0)[..., None], x[jnp.maximum(idx, 0)], 0.0)
    first = jnp.any(active & (st.steps == 0))  # A(w) w of the inits is not cached yet
    u = jax.lax.cond(first, lambda: dynamics.ascent(ds, act, st.w, pw), lambda: st.aux)
    pinned = st.pinned
    near = st.reach > 0  # a rejected attempt: a jump of the field within its length?
    need = active & (pinned | near | jnp.any(st.kinks >= 0, axis=1))
    none = jnp.zeros_like(active)

    def analyse():
        box = jnp.zeros((k, m if wide is None else wide), jnp.int32) + st.kinks[:, :1]  # (varying under shard_map)
        empty = (jnp.full_like(st.kinks, -1), jnp.zeros_like(st.steps), jnp.zeros_like(need), box, box > box)
        new, count, stationary, index, side = _compacted(
            lambda w, reach, u: _ridges(ds, act, pw, dyn, w, reach, u, m, wide), need, (st.w, st.reach, u), empty,
            min(buffer, k))
        delta = jnp.maximum(KINK_DELTA * dyn.tol, jnp.minimum(st.reach, KINK_REACH * dyn.flow_rtol))
        old = -jnp.sort(-st.kinks, axis=1)
        added = jnp.any((new >= 0) & jnp.all(new[:, :, None] != old[:, None, :], axis=2), axis=1)
        q = sliding.basis(vectors(new), new >= 0)
        pw_ = sliding.project(q, st.w)
        w_snap = sphere.normalize(pw_, st.w)
        # the ridges' intersection must lie near w: each is within delta, but views farther than
        # KINK_DELTA tol (after a rejection) can be many and span w itself (P_V w ~ 0), or meet far away
        near_v = (jnp.linalg.norm(pw_, axis=1) >= 0.5) & (jnp.linalg.norm(w_snap - st.w, axis=1) <= 10 * delta)
        take = need & (near_v | ~added | (delta <= KINK_DELTA * dyn.tol))
        new = jnp.where(take[:, None], new, old)
        same = jnp.all(new == old, axis=1)
        kinks = jnp.where(need[:, None], new, st.kinks)
        snap = take & added
        # pinned with nothing new to slide on: a stop only where 0 lies in the projected Clarke box (its
        # minimum-norm element v <= tol ||A(w) w||). Elsewhere the field at w itself (of the gates w's
        # rounding gives) can point into a region whose field points back, so the steps shrink until pinned;
        # w moves tol along v, the field of the region v leaves the kinks into (gates of the multipliers at
        # 0 or 1; the ridges slid on drop out of P_V), and goes on from there
        leave = need & pinned & same & ~stationary
        exit_dir = jax.lax.cond(jnp.any(leave), lambda: sliding.project(sliding.basis(vectors(old), old >= 0), sphere.tangent(
            st.w, sliding.exit_field(ds, act, pw, st.w, index, side))), lambda: jnp.zeros_like(st.w))
        size = jnp.linalg.norm(exit_dir, axis=1)
        w_leave = sphere.normalize(st.w + dyn.tol * exit_dir / jnp.where(size > 0, size, 1.0)[:, None], st.w)
        w = jnp.where(snap[:, None], w_snap, jnp.where(leave[:, None], w_leave, st.w))
        moved = snap | leave
        u_snap = jax.lax.cond(jnp.any(moved), lambda: dynamics.ascent(ds, act, w, pw), lambda: u)
        return (w, jnp.where(moved[:, None], u_snap, u), kinks, need & ~same | leave, need & pinned & same & ~leave,
                need & (count > (m if wide is None else wide)) & (delta <= KINK_DELTA * dyn.tol))  # too many

    w, u, kinks, change, stop, over = jax.lax.cond(
        jnp.any(need), analyse, lambda: (st.w, u, st.kinks, none, none, none))
    q = sliding.basis(vectors(kinks), kinks >= 0)
    res = jnp.linalg.norm(sliding.project(q, sphere.tangent(w, u)), axis=1)
    restart = jnp.minimum(dyn.step_size, stepper.FIRST_MOVE / jnp.where(res > 0, res, 1.0))
    eta = jnp.where((st.steps == 0) | change, restart, st.eta)
    att = stepper.attempt(ds, act, pw, stepper.BS32, w, u, eta, basis=q)
    accepted, eta_next = stepper.next_step_size(stepper.BS32, eta, att.error, att.reversal, dyn.flow_rtol,
                                                  att.length)
    bad = ~jnp.all(jnp.isfinite(att.w), axis=1)  # let a non-finite proposal reach the status checks
    move = (accepted | bad)[:, None]
    done = (res <= dyn.tol * jnp.linalg.norm(u, axis=1)) | stop
    pinned = att.reversal & (att.length <= dyn.tol)
    reach = jnp.where(accepted, 0.0, att.length)
    return (u, jnp.where(move, att.w, w), jnp.where(active, eta_next, st.eta), done, jnp.where(move, att.u, u),
            att.u, res, kinks, pinned, reach, over)


def _step(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, buffer=None, wide=None) -> State:
    active = (st.status == int(Status.RUNNING)) & (st.steps < dyn.max_steps)
    cycling = over = jnp.zeros_like(active)
    kinks, pinned, reach = st.kinks, st.pinned, st.reach
    if _slides(act, dyn):
        (u, w_new, eta, done, aux_new, u_new, res_slide, kinks, pinned, reach,
         over) = _flow_sliding(ds, act, pw, dyn, st, active, buffer, wide)
    elif dyn.method == "flow":
        u, w_new, eta, done, aux_new, u_new = _flow(ds, act, pw, dyn, st, active)
    else:
        u = u_new = dynamics.ascent(ds, act, st.w, pw)
    t = sphere.tangent(st.w, u)
    res = jnp.linalg.norm(t, axis=1)
    if _slides(act, dyn):
        res = res_slide
    if dyn.method == "euler_halving":
        flip = jnp.sum(t * st.aux, axis=1) < 0
        eta = jnp.where(active & flip, st.eta / 2, st.eta)
        w_new = dynamics.flow_update(st.w, t, eta[:, None], fallback=st.w)
        move = jnp.linalg.norm(w_new - st.w, axis=1)
        # a critical point, or pinned on a kink: still reversing, but by steps below tol
        done = (res <= dyn.tol * jnp.linalg.norm(u, axis=1)) | (flip & (move <= dyn.tol))
        aux_new = t
    elif dyn.method == "power":
        eta = st.eta
        w_new = dynamics.power_update(st.w, u, dyn.shift, fallback=st.w)
        done = jnp.linalg.norm(w_new - st.w, axis=1) <= dyn.tol
        cycling = jnp.linalg.norm(w_new - st.aux, axis=1) <= dyn.tol  # w(t+1) = w(t-1)
        aux_new = st.w
    finite = jnp.all(jnp.isfinite(w_new), axis=1) & jnp.isfinite(res)
    # an infinity in A(w) w or the new iterate, or a retraction that lost the unit norm (its norm overflowed)
    lost = finite & (jnp.abs(jnp.linalg.norm(w_new, axis=1) - 1) > 0.5)
    overflow = jnp.any(jnp.isinf(u) | jnp.isinf(u_new), axis=1) | jnp.any(jnp.isinf(w_new), axis=1) | lost
    dead = jnp.all(u == 0, axis=1)  # A(w) w = 0 exactly: e.g. no input active for ReLU
    status = jnp.where(active & overflow, int(Status.OVERFLOW),
             jnp.where(active & ~finite, int(Status.NONFINITE),
             jnp.where(active & dead, int(Status.DEAD),
             jnp.where(active & over, int(Status.KINK_LIMIT),
             jnp.where(active & done, int(Status.CONVERGED),
             jnp.where(active & cycling, int(Status.CYCLING), st.status))))))
    keep = active & finite & ~lost
    return State(
        w=jnp.where(keep[:, None], w_new, st.w),
        aux=jnp.where(keep[:, None], aux_new, st.aux),
        eta=eta,
        status=status.astype(jnp.int32),
        steps=st.steps + active.astype(jnp.int32),
        residual=jnp.where(active, res, st.residual),
        kinks=jnp.where(keep[:, None], kinks, st.kinks),
        pinned=jnp.where(keep, pinned, st.pinned),
        reach=jnp.where(keep, reach, st.reach),
    )


def make_block(act: Activation, pw: Pairwise, dyn: Dynamics, *, buffer: int | None = None, wide: int | None = None):
    """``block(ds, state) -> state`` advancing every init by ``dyn.block`` steps (one lax.scan).
    ``buffer``: the sliding flow's kink-analysis buffer (default :func:`analysis_buffer` of the tile;
    the tile or more: analyse whole tiles; the results are the same). ``wide``: the sliding flow's wider
    second analysis (up to ``wide`` views on the kinks; :func:`second_pass`)."""
    if dyn.method not in METHODS:
        raise ValueError(f"method={dyn.method!r} must be one of {', '.join(METHODS)}")
    if dyn.method == "flow" and not 0 < dyn.flow_rtol < 1:
        raise ValueError(f"flow_rtol={dyn.flow_rtol} must lie in (0, 1)")
    if dyn.method == "power" and not act.homogeneous:
        raise ValueError(f"--method=power needs a homogeneous activation; act={act.name!r} is not")

    def block(ds, st):
        return jax.lax.scan(lambda s, _: (_step(ds, act, pw, dyn, s, buffer, wide), None), st, None,
                            length=dyn.block)[0]

    return block


CIRCLE_STEPS = 8  # power steps after max_steps in which a still-running iterate is watched for kink crossings


def _circles_kinks(act: Activation, dyn: Dynamics) -> bool:
    return dyn.method == "power" and act.name in ("relu", "leaky_relu")


def mark_circling(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State) -> State:
    """``st`` with every power-iteration init still running (after ``max_steps``) whose iterate crosses a
    kink hyperplane (the sign of w^T x_i changes for some view x_i != 0) within ``CIRCLE_STEPS`` more
    steps from its final w marked CIRCLING_KINK; w, steps and residual are not changed."""
    x = sliding.flat_views(ds)[0]
    real = jnp.linalg.norm(x, axis=1) > 0

    side = lambda w: (w @ x.T) > 0

    def body(carry, _):
        w, crossed = carry
        w = dynamics.power_update(w, dynamics.ascent(ds, act, w, pw), dyn.shift, fallback=w)
        return (w, crossed | jnp.any((side(w) != start) & real, axis=1)), None

    start = side(st.w)
    # zeros_like: a value of the same kind as w's rows (varying over the devices under shard_map)
    crosses = jax.lax.scan(body, (st.w, jnp.zeros_like(st.status, dtype=bool)), None, length=CIRCLE_STEPS)[0][1]
    circling = (st.status == int(Status.RUNNING)) & crosses
    return st._replace(status=jnp.where(circling, int(Status.CIRCLING_KINK), st.status).astype(st.status.dtype))


def _running(st: State, dyn: Dynamics) -> bool:
    status, steps = jax.device_get((st.status, st.steps))
    return bool(np.any((status == int(Status.RUNNING)) & (steps < dyn.max_steps)))


def _finish(st: State) -> dict:
    out = {k: np.asarray(v) for k, v in st._asdict().items() if k in ("w", "status", "steps", "residual")}
    out["status"] = np.where(out["status"] == int(Status.RUNNING), int(Status.NOT_CONVERGED), out["status"]).astype(np.int8)
    return out


def converge(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, W) -> dict:
    """Runs every row of W to a stop (unsharded, one jit); returns numpy w, status, steps, residual."""
    block = jax.jit(make_block(act, pw, dyn))
    st = initial_state(W, dyn)
    while _running(st, dyn):
        st = block(ds, st)
    st = second_pass(ds, act, pw, dyn, st)
    if _circles_kinks(act, dyn):
        st = jax.jit(lambda d, s: mark_circling(d, act, pw, dyn, s))(ds, st)
    return _finish(st)


class ChunkRunner:
    """Runs chunks of inits, tiled and sharded over one mesh (default :func:`ccdyn.parallel.device_mesh`:
    every device of every process, docs/reproducibility.md "Several hosts"). ``wide``: the sliding flow's
    KINK_LIMIT rows get the second pass with the wider kink analysis (:meth:`_second_pass`; False: they
    stay KINK_LIMIT, the engine before it, kept for comparisons).

    Every process runs the same program on the whole chunk; each holds only its devices' rows. The
    compiled block is built once and reused by every chunk of the same padded size.

    Every per-init number is computed by programs of fixed shapes, so it is the same bits whatever the
    chunk size, the number of devices or processes (docs/reproducibility.md): the inits in blocks of
    ``parallel.init_block()`` rows, the steps and the kink watch of power iteration tile by tile (one
    ``(tile, ...)`` program under ``lax.map`` on every device); between them only gathers and scatters
    of whole rows (re-packing, recording), which do no arithmetic.
    """

    def __init__(self, ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, *, tile: int,
                 mesh=None, wide: bool = True):
        self.dyn, self.tile = dyn, int(tile)
        self.mesh = parallel.device_mesh() if mesh is None else mesh
        self.n_devices = self.mesh.devices.size
        self.ds = parallel.to_global(ds, self.mesh, PartitionSpec())  # replicated on every device
        rows = NamedSharding(self.mesh, PartitionSpec(parallel.AXIS))
        self._block = jax.jit(parallel.tiled_sharded(make_block(act, pw, dyn), self.mesh, self.tile))
        self._pack = jax.jit(_pack, out_shardings=rows)
        self._record = jax.jit(_record, out_shardings=rows)
        # the kink watch after max_steps runs tile by tile too (its power steps are the same arithmetic
        # whatever the chunk; over the whole chunk XLA would compile them for the chunk's shape)
        circle = parallel.tiled_sharded(lambda d, s: mark_circling(d, act, pw, dyn, s), self.mesh, self.tile)
        self._circle = jax.jit(circle) if _circles_kinks(act, dyn) else None
        # the sliding flow's second pass: KINK_LIMIT rows again, with the wider analysis, on tiles of their own
        # (compiled only when a chunk has such rows)
        self.wide_tile = min(self.tile, WIDE_TILE)
        self._wide_block = self._reopen = None
        if wide and _slides(act, dyn):
            wide = sliding.wide_active(sliding.flat_views(ds)[0].shape[0], ds.dim)
            self._wide_block = jax.jit(parallel.tiled_sharded(make_block(act, pw, dyn, wide=wide), self.mesh,
                                                              self.wide_tile))
            self._reopen = jax.jit(_reopen, out_shardings=rows)

    def padded(self, count: int) -> int:
        return parallel.padded_chunk(count, self.tile, self.n_devices)

    def _replicated(self, a):
        return parallel.to_global(a, self.mesh, PartitionSpec())

    def run(self, key, start: int, count: int, dtype, on_block=None) -> dict:
        """Inits start .. start+count-1 to a stop; numpy arrays of length ``count`` (on every process).

        ``on_block(n_running, max_steps_taken)``, if given, is called after every block.

        Between blocks only the status and step counts come to the host (the freeze check). When the
        running inits fit in fewer tiles they are re-packed on the devices (the stopped rows are first
        recorded, also on the devices); this leaves every init's arithmetic unchanged, since rows of a
        tile never mix. The chunk's results come to the host once, at its end.
        """
        total = self.padded(count)
        W = parallel.init_weights(key, start, total, self.ds.dim, dtype)
        st = initial_state(W, self.dyn)
        rows = np.arange(total)  # the chunk row of each state row (count: a padding row)
        st = st._replace(status=np.where(rows < count, int(Status.RUNNING), int(Status.NOT_CONVERGED)).astype(np.int32))
        st = parallel.to_global(State(*jax.device_get(tuple(st))), self.mesh)
        done = st  # per chunk row, its state when it stopped (recorded at each re-pack)
        while True:
            st = self._block(self.ds, st)
            status, steps = parallel.to_host((st.status, st.steps))
            running = (status == int(Status.RUNNING)) & (steps < self.dyn.max_steps)
            if on_block is not None:
                on_block(int(np.sum(running & (rows < count))), int(steps.max()))
            size = self.padded(int(running.sum())) if running.any() else 0
            if size == 0 or size < rows.size:
                done = self._record(done, st, self._replicated(rows.astype(np.int32)))
                if size == 0:
                    if self._wide_block is not None:
                        done = self._second_pass(done, count, on_block)
                    if self._circle is not None:
                        done = self._circle(self.ds, done)
                    host = State(*parallel.to_host(tuple(done)))
                    return _finish(State(*[a[:count] for a in host]))
                keep = np.flatnonzero(running)
                sel = np.concatenate([keep, np.full(size - keep.size, keep[0])]).astype(np.int32)
                st = self._pack(st, self._replicated(sel), self._replicated(np.int32(keep.size)))
                rows = np.concatenate([rows[keep], np.full(size - keep.size, count)])


    def _second_pass(self, done: State, count: int, on_block=None) -> State:
        """``done`` with its KINK_LIMIT rows (of the first ``count``) run on from where they stopped by the
        block with the wider kink analysis (:func:`second_pass`; tiles of ``wide_tile`` rows, so a row's
        result does not depend on the others), until they stop or reach ``max_steps`` in all."""
        status = parallel.to_host(done.status)
        idx = np.flatnonzero(status[:count] == int(Status.KINK_LIMIT))
        if idx.size == 0:
            return done
        size = parallel.padded_chunk(idx.size, self.wide_tile, self.n_devices)
        sel = np.concatenate([idx, np.full(size - idx.size, idx[0])]).astype(np.int32)
        st = self._reopen(done, self._replicated(sel), self._replicated(np.int32(idx.size)))
        while True:
            st = self._wide_block(self.ds, st)
            status, steps = parallel.to_host((st.status, st.steps))
            running = (status == int(Status.RUNNING)) & (steps < self.dyn.max_steps)
            if on_block is not None:
                on_block(int(np.sum(running)), int(steps.max()))
            if not running.any():
                break
        rows = np.concatenate([idx, np.full(size - idx.size, count)]).astype(np.int32)  # count: padding (dropped)
        return self._record(done, st, self._replicated(rows))


WIDE_TILE = 64  # rows per tile of the second pass (few rows need it: 0.7% of the default data's inits)


def _reopen(st: State, sel, n_keep) -> State:
    """The rows ``sel`` of ``st`` running again (rows from ``n_keep`` on: padding, not running): :func:`_pack`
    of the rows marked running."""
    return _pack(st._replace(status=jnp.full_like(st.status, int(Status.RUNNING))), sel, n_keep)


def second_pass(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, block=None) -> State:
    """The sliding flow's second pass on one batch (:func:`converge`): every KINK_LIMIT row of ``st`` runs
    on from where it stopped with the wider kink analysis (up to :func:`ccdyn.one_layer.sliding.wide_active`
    views in the Clarke box, the ridges cut to an independent subset spanning the same intersection), until
    it stops or reaches ``max_steps`` in all; the other rows are frozen. A row that still has more views on
    its kinks than that ends KINK_LIMIT again."""
    if not _slides(act, dyn) or not np.any(np.asarray(st.status) == int(Status.KINK_LIMIT)):
        return st
    if block is None:
        wide = sliding.wide_active(sliding.flat_views(ds)[0].shape[0], ds.dim)
        block = jax.jit(make_block(act, pw, dyn, wide=wide))
    st = st._replace(status=jnp.where(st.status == int(Status.KINK_LIMIT), int(Status.RUNNING),
                                      st.status).astype(jnp.int32))
    while _running(st, dyn):
        st = block(ds, st)
    return st


def _pack(st: State, sel, n_keep) -> State:
    """The rows ``sel`` of ``st``; rows from ``n_keep`` on are padding (marked not running)."""
    packed = State(*[a[sel] for a in st])
    return packed._replace(status=jnp.where(jnp.arange(sel.shape[0]) < n_keep, packed.status,
                                            int(Status.NOT_CONVERGED)).astype(jnp.int32))


def _record(done: State, st: State, rows) -> State:
    """``done`` with row ``rows[i]`` set to row i of ``st`` (a row index past the end is dropped)."""
    return State(*[d.at[rows].set(a, mode="drop") for d, a in zip(done, st)])


def collect(runner: ChunkRunner, key, n_init: int, chunk_size: int, dtype, *, store=None, progress=None,
            stop=None):
    """Runs the chunks of inits 0 .. n_init-1 in order on the runner's mesh; with several processes,
    every process runs every chunk (each on its devices' share) and receives its whole result.

    Args:
      store: on process 0 only (the others pass ``None``): a :class:`ccdyn.rundir.ChunkStore` that
        receives every chunk; chunks already in it are skipped (resume: process 0 tells the others
        which, so all run the same chunks), or ``None`` to keep the results in memory.
      progress: optional callback ``progress(done_inits, total_inits, running_in_chunk, steps)``,
        called after every block of steps (``done_inits`` counts the inits of this chunk that have
        stopped) and at the end of every chunk (running_in_chunk = 0).
      stop: optional ``stop(result) -> bool``, evaluated on process 0 after every chunk with the arrays
        of inits 0 .. the chunk's end (its answer is sent to the others); the run ends at the first
        chunk where it says True. The chunks are the same as without it, so a stopped run is the first
        inits of the full one.

    Returns:
      On process 0, numpy arrays w, status, steps, residual in init order (n_init rows, fewer if
      ``stop`` ended the run); else None.
    """
    ranges = parallel.chunk_ranges(n_init, chunk_size)
    lead = jax.process_index() == 0
    if store is not None and not lead:
        raise ValueError("only process 0 writes chunks (the other processes pass store=None)")
    have = np.array([store is not None and store.has(c) for c in range(len(ranges))], np.int32)
    have = parallel.broadcast_from_0(have).astype(bool)  # every process runs the same chunks
    memory = {}
    done = sum(ranges[c][1] for c in range(len(ranges)) if have[c])

    def chunk(c):  # a finished chunk's arrays (process 0), read from the store at most once
        if c not in memory:
            memory[c] = store.load(c)
        return memory[c]

    for c, (start, count) in enumerate(ranges):
        if not have[c]:
            # inside a chunk the inits done are the finished chunks plus this chunk's stopped inits
            on_block = None if progress is None else (
                lambda r, k, d=done + count: r and progress(d - r, n_init, r, k))
            out = runner.run(key, start, count, dtype, on_block)
            if lead and store is not None:
                store.save(c, out)
            if lead:
                memory[c] = out
            done += count
            if progress is not None:
                progress(done, n_init, 0, 0)
        if stop is not None:
            ends = lead and stop({k: np.concatenate([chunk(i)[k] for i in range(c + 1)]) for k in _FIELDS})
            if parallel.broadcast_from_0(np.int32(ends)):
                ranges = ranges[:c + 1]
                break
    if not lead:
        return None
    return {k: np.concatenate([chunk(c)[k] for c in range(len(ranges))]) for k in _FIELDS}


_FIELDS = ("w", "status", "steps", "residual")


def recheck_dead(ds64: Dataset, act: Activation, pw: Pairwise, result: dict, *, batch: int = 4096) -> dict:
    """``result`` with every DEAD init whose A(w) w is not 0 in float64 relabelled UNDERFLOW (its float32
    A(w) w was 0 only because the products left float32's range). ``ds64``: the float64 dataset."""
    dead = np.flatnonzero(result["status"] == Status.DEAD)
    if dead.size == 0 or result["w"].dtype == np.float64:
        return result
    f = jax.jit(lambda W: jnp.any(dynamics.ascent(ds64, act, W, pw) != 0, axis=1))
    status = result["status"].copy()
    for lo in range(0, dead.size, batch):
        idx = dead[lo:lo + batch]
        W = np.zeros((batch, ds64.dim))
        W[:idx.size] = result["w"][idx]
        W[idx.size:, 0] = 1.0
        status[idx[np.asarray(f(jnp.asarray(W)))[:idx.size]]] = int(Status.UNDERFLOW)
    return {**result, "status": status}


def range_problems(ds64: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, dtype, *, n_probe: int = 64,
                   seed: int = 0) -> list:
    """Start-up check of the run's dtype against the problem's scale: one line per problem (naming the
    flag to change), empty if none. A(w) w is evaluated at ``n_probe`` random unit w in float64 and in
    ``dtype``: its float64 size must be representable in ``dtype`` with room for the step
    (``step_size * max ||A(w) w||`` squared must not overflow) and must not vanish there (0, or in
    float64 below its normal range). Where float64 itself gives 0 or inf, A(w) w on the data scaled to
    max |x| = 1 says whether it should be non-zero (float64 has no wider reference). A Gaussian alpha
    must not be 0 / 1 to ``dtype``'s precision at most w (:func:`ccdyn.pairwise.degenerate_tau`)."""
    from ccdyn.pairwise import degenerate_tau  # noqa: PLC0415 -- the check of a Gaussian alpha

    name, info, wide = np.dtype(dtype).name, np.finfo(np.dtype(dtype)), np.dtype(dtype) == np.float64
    W = parallel.init_weights(jax.random.PRNGKey(seed), 0, n_probe, ds64.dim, jnp.float64)
    top = float(np.max(np.abs(np.asarray(ds64.x))))
    with np.errstate(all="ignore"):
        u64 = np.linalg.norm(np.asarray(dynamics.ascent(ds64, act, W, pw)), axis=1)
        u_ref = u64  # where A(w) w is non-zero: on the data scaled to max |x| = 1 when float64 gave 0 or inf
        if not np.all(np.isfinite(u64) & (u64 > 0)) and 0 < top < np.inf:
            ref = dataclasses.replace(ds64, x=ds64.x / top, x_aug=None if ds64.x_aug is None else ds64.x_aug / top)
            u_ref = np.linalg.norm(np.asarray(dynamics.ascent(ref, act, W, pw)), axis=1)
        u_dt = u64 if wide else np.linalg.norm(np.asarray(
            dynamics.ascent(ds64.astype(dtype), act, W.astype(dtype), pw), np.float64), axis=1)
    scale = float(np.max(u64)) if np.all(np.isfinite(u64)) else np.inf
    fix = "rescale the data (--data_path / the data flags)" if wide else \
        "use --x64 or rescale the data (--data_path / the data flags)"
    problems = []
    if np.max(u_ref) > 0 and not np.all(np.isfinite(u_dt)) or scale > info.max / 1e3:
        size = f"overflows (the data's largest entry is {top:.1e})" if scale == np.inf else f"reaches {scale:.1e}"
        problems.append(f"||A(w) w|| {size}, beyond {name}'s range: {fix}")
    elif np.max(u_ref) > 0 and np.all(u_dt[u_ref > 0] < info.tiny if wide else u_dt[u_ref > 0] == 0):
        size = f"is about {scale:.1e}" if scale > 0 else f"vanishes (the data's largest entry is {top:.1e})"
        problems.append(f"||A(w) w|| {size}, which is 0 in {name}: " + (fix if scale > 0 else fix.split("use --x64 or ")[-1]))
    elif dyn.method == "euler_halving" and dyn.step_size * scale > np.sqrt(info.max) / 1e3:
        problems.append(f"--step_size={dyn.step_size:g} times ||A(w) w|| (up to {scale:.1e}) overflows "
                        f"{name} in the retraction; use --step_size <= "
                        f"{np.sqrt(info.max) / 1e3 / scale:.1e}" + ("" if wide else " or --x64"))
    if pw.kind == "gaussian" and not problems:
        tau_min, delta = degenerate_tau(act.h(np.asarray(W) @ np.asarray(ds64.x).T), dtype)
        if pw.tau < tau_min:
            problems.append(f"--tau={pw.tau:g} makes the Gaussian alpha 0 or 1 in {name} at most w (the closest "
                            f"distinct features h(w^T x) are about {delta:.1e} apart): every start would look "
                            f"stationary; use --tau >= {tau_min:.1e} or rescale the data")
    return problems
