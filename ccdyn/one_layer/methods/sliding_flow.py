"""The flow (Eq. 7) integrated to a tolerance, sliding along ReLU kinks (Filippov; docs/flow.md).

The step is :mod:`ccdyn.one_layer.methods.flow`'s (an embedded Runge-Kutta pair to ``flow_rtol``) with
every stage projected on the intersection V of the kink hyperplanes w^T x_i = 0 the init slides on. An init
whose field reverses within a step of length <= tol is *pinned* near kink hyperplanes (E not
differentiable there): it then slides along the ridges among them (projected field P_V P^perp A w;
:mod:`ccdyn.one_layer.sliding`) and converges when that field is <= tol ||A w|| (a Clarke-stationary
point), or stops where pinned when there is no ridge to slide on and the Clarke box's minimum-norm element
is <= tol ||A w|| (else it leaves the kinks along that element). An init whose analysis finds more views
within its delta than the padding holds stops KINK_LIMIT (the analysis of its first m views alone could slide
on the wrong ridges); :func:`finish` runs it on, once its chunk has run, with a wider analysis (:func:`method`
with ``wide``) on tiles of ``WIDE_TILE`` rows.
A row that makes no progress in ``STALL_STEPS`` steps in a row stops STALLED instead of going on to
``max_steps``. With uniform alpha progress is E(w) = w^T A(w) w / (2 p^2) rising past the highest value it
had at a step with progress (by ``PROGRESS_E`` of |E|), or the sliding residual falling ``PROGRESS_RES`` below
the lowest one. E is the flow's potential (Eq. 7 ascends it), so a row on its way to a maximum makes progress
at almost every step; one that does not has either stopped moving (every attempt rejected, or a snap undone,
at kinks: the default data's lattice points) or moves in a cycle among kink hyperplanes (its kinks change
every few steps, E and the residual come back to the same values: seen on the default data, where such rows
ran to ``max_steps``). With Gaussian alpha the flow has no potential (alpha moves with w), so there progress
is a move of w.

The method's own knobs (static, fixed per compiled block): ``buffer``, the rows per buffer of the kink
analysis (default :func:`analysis_buffer` of the tile; the same bits with 8, 56 or 64 rows on the data of
tests/one_layer/test_sliding_compaction.py, but on ``digits``, d = 64, whole-tile buffers rounded otherwise than
8-row ones: like the tile, it is part of the program), and ``wide``, the padding of the wider second analysis.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ccdyn import compiling, sphere
from ccdyn.one_layer import dynamics, sliding, stepper
from ccdyn.one_layer.methods import flow
from ccdyn.one_layer.methods.base import Method, Proposal, Rerun

__all__ = ["Carry", "KINK_DELTA", "KINK_REACH", "STALL_STEPS", "PROGRESS_E", "PROGRESS_RES", "WIDE_TILE",
           "WIDE_ACCURACY", "PASS_BLOCK", "progress", "analysis_buffer", "compacted", "init", "step", "method",
           "finish"]

KINK_DELTA = 10.0  # a view is on its kink when |w^T x| <= KINK_DELTA * tol * ||x|| (a pinned step moves <= tol)
KINK_REACH = 10.0  # after a rejected step, ridges within its length (at most KINK_REACH * flow_rtol rad) are looked for
STALL_STEPS = 100  # steps in a row without progress (and not stationary) after which a row ends STALLED
PROGRESS_E, PROGRESS_RES = 1e-6, 1e-2  # progress: E up by this share of |E|, or the residual down by this share
WIDE_TILE = 64  # rows per tile of the second pass (few rows need it: 0.7% of the default data's inits)
WIDE_ACCURACY = 1e-3  # the second pass's minimum-norm element is certified to this share of its length
PASS_BLOCK = 10  # steps per block of the sliding flow's finish passes (base.Rerun: the same bits whatever it is)


class Carry(NamedTuple):
    u: jax.Array  # (k, d) A(w) w at w (FSAL cache; 0 before the first step)
    eta: jax.Array  # (k,) the step size
    kinks: jax.Array  # (k, m) int32 the flat views whose kink hyperplanes w slides on (-1: none)
    pinned: jax.Array  # (k,) bool the last attempt reversed within tol (look for kinks)
    reach: jax.Array  # (k,) the length of the last attempt when it was rejected, else 0 (a jump of the field
    #                   within this many radians, if any, made it fail: look for ridges)
    q: jax.Array  # (k, m, d) an orthonormal basis of the kinks' views (sliding.basis; zero rows: none), kept
    #               from the step that set the kinks (a basis costs more than the step's three evaluations)
    idle: jax.Array  # (k,) int32 steps in a row without progress (STALL_STEPS of them: STALLED)
    best: jax.Array  # (k, 2) the highest E and the lowest sliding residual at the steps with progress


def init(W, dyn) -> Carry:
    k, d = W.shape
    m = sliding.max_active(d)
    return Carry(jnp.zeros_like(W), jnp.full((k,), dyn.step_size, W.dtype), jnp.full((k, m), -1, jnp.int32),
                 jnp.zeros((k,), bool), jnp.zeros((k,), W.dtype), jnp.zeros((k, m, d), W.dtype),
                 jnp.zeros((k,), jnp.int32), _no_progress_yet(W))


def _no_progress_yet(W):
    """(k, 2) [-inf, inf]: any E and residual at a row's first step are progress."""
    return jnp.zeros((W.shape[0], 2), W.dtype) + jnp.array([-jnp.inf, jnp.inf], W.dtype)


def progress(act, w, u, res, steps, best):
    """(progress (k,), best (k, 2)): whether the step from w (u = A(w) w, sliding residual ``res``) makes
    progress (module docstring) over ``best`` (reset at a row's first step, ``steps == 0``), and the new best."""
    energy = jnp.sum(w * u, axis=1) / (2.0 * act.degree ** 2)  # E = w^T A(w) w / (2 p^2) (Eq. 6, Lemma 3)
    best = jnp.where((steps == 0)[:, None], _no_progress_yet(w), best)
    rise = energy > best[:, 0] + PROGRESS_E * jnp.abs(energy)
    fall = res < (1.0 - PROGRESS_RES) * best[:, 1]
    made = rise | fall
    new = jnp.stack([jnp.where(rise, energy, best[:, 0]), jnp.where(fall, res, best[:, 1])], axis=1)
    return made, new


ANALYSIS_SHARE = 8  # the kink analysis runs on buffers of tile / ANALYSIS_SHARE rows (only the rows that need it)


def analysis_buffer(tile: int) -> int:
    """Rows per buffer of the sliding flow's kink analysis in a tile of ``tile`` rows: tile / 8 rounded,
    at least 8 (XLA computes a 1-row product by another kernel, which rounds differently), at most the tile."""
    return min(tile, max(8, round(tile / ANALYSIS_SHARE)))


def _ridges(ds, act, pw, dyn, w, reach, u, m: int, wide: int | None = None):
    """The kink analysis of the rows w (:func:`ccdyn.one_layer.sliding.analyse`, each row within its
    delta): (the ridges to slide on, flat view indices in decreasing order, -1 last (k, m); the number of
    views within delta (k,); whether w is Clarke-stationary, the box's minimum-norm element
    ||v|| <= tol ||u|| (u = A(w) w) (k,); the views in the box (k, m') and the gates of their multipliers,
    lam > 1/2 (k, m'), m' = m or ``wide``). Only these integers leave it, so the last-bit rounding inside,
    which can differ with the number of rows analysed together, matters only where it would change them
    (equal to the whole tile's in tests/one_layer/test_sliding_compaction.py).

    ``wide``: the wider second analysis (the second pass over KINK_LIMIT rows, :func:`finish`): up to
    ``wide`` views in the Clarke box, and the ridges it finds cut to an independent subset of at most m
    spanning the same hyperplanes' intersection (:func:`ccdyn.one_layer.sliding.independent`), and the box's
    minimum-norm element computed to WIDE_ACCURACY of its length (:func:`ccdyn.one_layer.sliding.min_norm`:
    its many dependent views leave the multipliers free to drift long after v has converged)."""
    delta = jnp.maximum(KINK_DELTA * dyn.tol, jnp.minimum(reach, KINK_REACH * dyn.flow_rtol))[:, None]
    an = sliding.analyse(ds, act, pw, w, delta=delta, m=m if wide is None else wide,
                         accuracy=0.0 if wide is None else WIDE_ACCURACY)
    ridges = jnp.where(an.slide, an.active.views, -1)
    if wide is not None:
        x = sliding.flat_views(ds)[0]
        keep = sliding.independent(jnp.where(an.slide[..., None], x[jnp.maximum(ridges, 0)], 0.0), an.slide, m)
        ridges = jnp.where(keep, ridges, -1)
    stationary = jnp.linalg.norm(an.v, axis=1) <= dyn.tol * jnp.linalg.norm(u, axis=1)
    return (-jnp.sort(-ridges, axis=1)[:, :m], an.active.n_near, stationary,  # canonical order
            an.active.views, an.active.mask & (an.lam > 0.5))


def compacted(fn, need, rows, empty, buffer: int):
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


def step(ds, act, pw, dyn, w_in, carry: Carry, steps, active, buffer=None, wide=None) -> Proposal:
    """The ``flow`` method's attempted step with Filippov sliding on ReLU kinks (docs/flow.md):
    the proposal, its carry and the KINK_LIMIT flag ``over``.

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
    the whole tile in one buffer, the same results on the tests' data, not always: module docstring). The step is
    then the pair's, with every stage
    projected on V (:func:`stepper.attempt`). An analysed row with more views within its delta than the
    padding stops KINK_LIMIT (``over``), whatever its delta (before issue 36's eleventh round only within
    KINK_DELTA tol: on the default data's lattice such rows slid on a cut box for 85 steps on average
    before they got there). ``wide``: the analysis pads the views on the kinks to ``wide`` instead of m
    (:func:`_ridges`; the second pass, :func:`finish`)."""
    k, m = carry.kinks.shape
    buffer = analysis_buffer(k) if buffer is None else int(buffer)
    x = sliding.flat_views(ds)[0]
    vectors = lambda idx: jnp.where((idx >= 0)[..., None], x[jnp.maximum(idx, 0)], 0.0)
    first = jnp.any(active & (steps == 0))  # A(w) w of the inits is not cached yet
    u = jax.lax.cond(first, lambda: dynamics.ascent(ds, act, w_in, pw), lambda: carry.u)
    pinned = carry.pinned
    near = carry.reach > 0  # a rejected attempt: a jump of the field within its length?
    need = active & (pinned | near | jnp.any(carry.kinks >= 0, axis=1))
    none = jnp.zeros_like(active)

    def analyse():
        box = jnp.zeros((k, m if wide is None else wide), jnp.int32) + carry.kinks[:, :1]  # (varying under shard_map)
        empty = (jnp.full_like(carry.kinks, -1), jnp.zeros_like(steps), jnp.zeros_like(need), box, box > box)
        new, count, stationary, index, side = compacted(
            lambda w, reach, u: _ridges(ds, act, pw, dyn, w, reach, u, m, wide), need, (w_in, carry.reach, u), empty,
            min(buffer, k))
        delta = jnp.maximum(KINK_DELTA * dyn.tol, jnp.minimum(carry.reach, KINK_REACH * dyn.flow_rtol))
        old = -jnp.sort(-carry.kinks, axis=1)
        added = jnp.any((new >= 0) & jnp.all(new[:, :, None] != old[:, None, :], axis=2), axis=1)
        q = sliding.basis(vectors(new), new >= 0)
        pw_ = sliding.project(q, w_in)
        w_snap = sphere.normalize(pw_, w_in)
        # the ridges' intersection must lie near w: each is within delta, but views farther than
        # KINK_DELTA tol (after a rejection) can be many and span w itself (P_V w ~ 0), or meet far away
        near_v = (jnp.linalg.norm(pw_, axis=1) >= 0.5) & (jnp.linalg.norm(w_snap - w_in, axis=1) <= 10 * delta)
        take = need & (near_v | ~added | (delta <= KINK_DELTA * dyn.tol))
        new = jnp.where(take[:, None], new, old)
        same = jnp.all(new == old, axis=1)
        kinks = jnp.where(need[:, None], new, carry.kinks)
        snap = take & added
        # pinned with nothing new to slide on: a stop only where 0 lies in the projected Clarke box (its
        # minimum-norm element v <= tol ||A(w) w||). Elsewhere the field at w itself (of the gates w's
        # rounding gives) can point into a region whose field points back, so the steps shrink until pinned;
        # w moves tol along v, the field of the region v leaves the kinks into (gates of the multipliers at
        # 0 or 1; the ridges slid on drop out of P_V), and goes on from there
        leave = need & pinned & same & ~stationary
        exit_dir = jax.lax.cond(jnp.any(leave), lambda: sliding.project(carry.q, sphere.tangent(
            w_in, sliding.exit_field(ds, act, pw, w_in, index, side))), lambda: jnp.zeros_like(w_in))
        size = jnp.linalg.norm(exit_dir, axis=1)
        w_leave = sphere.normalize(w_in + dyn.tol * exit_dir / jnp.where(size > 0, size, 1.0)[:, None], w_in)
        w = jnp.where(snap[:, None], w_snap, jnp.where(leave[:, None], w_leave, w_in))
        moved = snap | leave
        u_snap = jax.lax.cond(jnp.any(moved), lambda: dynamics.ascent(ds, act, w, pw), lambda: u)
        return (w, jnp.where(moved[:, None], u_snap, u), kinks, need & ~same | leave, need & pinned & same & ~leave,
                need & (count > (m if wide is None else wide)))  # too many views within delta for the padding

    w, u, kinks, change, stop, over = jax.lax.cond(
        jnp.any(need), analyse, lambda: (w_in, u, carry.kinks, none, none, none))
    # the basis of the kinks' views, recomputed only in a step where some row's kinks changed (in a program of its
    # own: a row's basis has the same bits whichever step computed it)
    q = jax.lax.cond(jnp.any(kinks != carry.kinks), lambda: sliding.basis(vectors(kinks), kinks >= 0),
                     lambda: carry.q)
    res = jnp.linalg.norm(sliding.project(q, sphere.tangent(w, u)), axis=1)
    restart = jnp.minimum(dyn.step_size, stepper.FIRST_MOVE / jnp.where(res > 0, res, 1.0))
    eta = jnp.where((steps == 0) | change, restart, carry.eta)
    att = stepper.attempt(ds, act, pw, stepper.BS32, w, u, eta, basis=q)
    accepted, eta_next = stepper.next_step_size(stepper.BS32, eta, att.error, att.reversal, dyn.flow_rtol,
                                                  att.length)
    bad = ~jnp.all(jnp.isfinite(att.w), axis=1)  # let a non-finite proposal reach the status checks
    move = (accepted | bad)[:, None]
    done = (res <= dyn.tol * jnp.linalg.norm(u, axis=1)) | stop
    pinned = att.reversal & (att.length <= dyn.tol)
    reach = jnp.where(accepted, 0.0, att.length)
    w_next = jnp.where(move, att.w, w)
    made, best = progress(act, w, u, res, steps, carry.best)
    if pw.kind != "uniform":  # no potential (alpha moves with w, Cor. 2): E_alpha(w) need not rise along the
        made = jnp.any(w_next != w_in, axis=1)  # flow, so progress is a move (the rule before the fourth round)
    idle = jnp.where(made, 0, carry.idle + 1)
    return Proposal(w=w_next, u=u, u_new=att.u, residual=res, done=done,
                    carry=Carry(jnp.where(move, att.u, u), jnp.where(active, eta_next, carry.eta), kinks, pinned,
                                reach, q, idle, best),
                    over=over, stalled=(idle >= STALL_STEPS) & ~done)


def method(buffer: int | None = None, wide: int | None = None) -> Method:
    """The sliding flow as a method value; ``buffer`` and ``wide`` as in :func:`step`."""
    bound = lambda ds, act, pw, dyn, w, carry, steps, active: step(ds, act, pw, dyn, w, carry, steps, active,
                                                                   buffer, wide)
    return Method("flow", knobs=("tol", "step_size", "flow_rtol"), init=init, step=bound,
                  finish=None if wide is not None else lambda ds, act, dyn: finish(ds, act, dyn, buffer),
                  check=flow.check, compiler_options=compiling.SLIDING)


def finish(ds, act, dyn, buffer: int | None = None) -> tuple:
    """The second pass: KINK_LIMIT rows run on with the wider analysis (up to
    :func:`ccdyn.one_layer.sliding.wide_active` views in the Clarke box, the ridges cut to an independent
    subset spanning the same intersection) on tiles of ``WIDE_TILE`` rows (so a row's result does not depend
    on the others), until they stop or reach ``max_steps`` in all. A row that still has more views on its
    kinks than that ends KINK_LIMIT again."""
    wide = sliding.wide_active(sliding.flat_views(ds)[0].shape[0], ds.dim)
    return (Rerun("KINK_LIMIT", method(buffer, wide), WIDE_TILE, PASS_BLOCK),)
