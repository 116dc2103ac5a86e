"""The interface of a 1-layer dynamics method (the engine's plug-in point, docs/layout.md).

A method is a :class:`Method` value, in the spirit of optax's ``GradientTransformation(init, update)``
and jax-md's ``init_fn, apply_fn``:

- ``init(W, dyn) -> carry``: the method's own per-row state (a NamedTuple of (k, ...) arrays, one row
  per init), e.g. the previous iterate of power iteration or the cached field and step size of the flow;
- ``step(ds, act, pw, dyn, w, carry, steps, active) -> Proposal``: one (attempted) step of every row:
  the proposed iterate, its new carry, and the flags the engine turns into a :class:`Status`;
- ``finish(ds, act, dyn) -> tuple``: what runs once every row of a chunk has stopped: a
  :class:`Rerun` (rows that ended in one status run on with another method, e.g. the sliding flow's
  wider second pass over its ``kink_limit`` rows) or a :class:`Watch` (a per-row test on the rows
  still running after ``max_steps``, e.g. power iteration's kink watch); ``None``: nothing;
- ``check(act, dyn)``: raises ``ValueError`` for a combination the method cannot run;
- ``knobs``: the fields of :class:`ccdyn.one_layer.engine.Dynamics` that ``step`` reads;
- ``compiler_options``: XLA's options for the compiled block of its steps (:mod:`ccdyn.compiling`,
  through :func:`ccdyn.compiling.block_options`; ``None``: XLA's defaults). They are part of the program:
  like the tile, they can change the last bits of a row's path.

The engine (:func:`ccdyn.one_layer.engine.step`) does the bookkeeping around ``step``, the same for
every method: which rows are active, the status codes (overflow, non-finite, dead, the method's flags),
freezing a stopped row (its w and carry are kept where the proposal is not finite), the step count.
Everything a method computes is per row: a row's result never depends on the other rows (the engine's
bit-reproducibility across chunks, tiles and devices rests on it).

Nothing here imports the engine: statuses are named by their :class:`ccdyn.one_layer.engine.Status`
names (``"KINK_LIMIT"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax

__all__ = ["Method", "Proposal", "Rerun", "Watch", "KINKED"]

KINKED = ("relu", "leaky_relu")  # activations whose energy has kinks (w^T x_i = 0): the sliding flow, the kink watch


class Proposal(NamedTuple):
    """One attempted step of every row (k rows), as a method returns it to the engine."""

    w: jax.Array  # (k, d) the proposed iterate (the current one where the row does not move)
    u: jax.Array  # (k, d) A(w) w at the current iterate (0 everywhere: DEAD; an infinity: OVERFLOW)
    u_new: jax.Array  # (k, d) A(w) w at the proposal, as far as the method evaluated it (an infinity: OVERFLOW)
    residual: jax.Array  # (k,) the row's stationarity residual (reported; NaN: NONFINITE)
    done: jax.Array  # (k,) bool: converged (CONVERGED)
    carry: Any  # the method's new per-row state (kept with w: where the proposal is not kept, the old carry)
    cycling: jax.Array | None = None  # (k,) bool: a period-2 cycle (CYCLING), or None
    over: jax.Array | None = None  # (k,) bool: more kinks than the method follows (KINK_LIMIT), or None
    stalled: jax.Array | None = None  # (k,) bool: no move for many steps, not stationary (STALLED), or None


class Rerun(NamedTuple):
    """Finish pass: the rows that ended in ``status`` run on from where they stopped with ``method`` (its
    carry must have the same structure), on tiles of at most ``tile`` rows, until they stop or reach
    ``max_steps`` in all; ``block``: steps per compiled block of the pass (None: the run's ``Dynamics.block``).
    Between blocks the runner re-packs the rows still running onto fewer tiles, moving whole rows (the same
    bits whatever the block): a pass of few rows and costly steps wastes less on stopped rows with short
    blocks."""

    status: str
    method: Method
    tile: int
    block: int | None = None


class Watch(NamedTuple):
    """Finish pass: ``mark(ds, act, pw, dyn, w) -> (k,) bool`` on every row; rows still running (after
    ``max_steps``) that it marks end in ``status``. w and the other fields are not changed."""

    status: str
    mark: Callable


class Method(NamedTuple):
    """A dynamics method (module docstring)."""

    name: str
    knobs: tuple
    init: Callable
    step: Callable
    finish: Callable | None = None
    check: Callable | None = None
    compiler_options: dict | None = None
