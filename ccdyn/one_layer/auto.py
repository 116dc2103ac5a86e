"""``--method=auto``: power iteration where it converges, the sliding flow where it circles a ReLU kink.

On generic data every ReLU maximum sits on a kink hyperplane w^T x_i = 0 (the core paper's Fig. 8). There
A(w) w is not parallel to w, so power iteration (Eq. PI) has no fixed point and circles the kink until
``max_steps``; the flow with Filippov sliding (:mod:`ccdyn.one_layer.sliding`) reaches such maxima but costs
several times more per init. ``auto`` runs each init by power iteration first and hands it over to the
sliding flow only when it circles:

1. **Power phase**: the engine's power block (the very program of ``--method=power``, so every init that
   converges here has the bits of ``--method=power``). After every block, each init still running with
   at least ``AUTO_DETECT`` steps is watched for :data:`ccdyn.one_layer.engine.CIRCLE_STEPS` power steps
   (on a copy: the iterate is not changed): if it crosses a kink hyperplane it is *circling* and leaves
   the power phase at once (not after ``max_steps``, which is where ``--method=power`` notices it).
   An init still running at ``max_steps`` gets the power method's end-of-run watch as well.
2. **Flow phase**: every circling init runs on by the sliding flow (``--method=flow``'s program, with its
   second pass over ``kink_limit`` rows) from the iterate where power iteration left it, with a fresh
   step size and its own ``max_steps`` budget; its steps are added to the power steps. Power iteration
   circles close to the kink maximum, so the flow usually has a short way to go.

With a non-kinked homogeneous activation (linear, quadratic, ...) ``auto`` is power iteration; with a
non-homogeneous one (tanh, GELU: power iteration is not defined) it is the flow.

Every per-init number is the same bits whatever the chunk size or device count: both phases run tile by
tile (:class:`ccdyn.one_layer.engine.ChunkRunner`'s programs); the handover is decided per row from its own
state; between programs only whole rows are gathered and scattered.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from ccdyn import parallel
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics, engine, sliding
from ccdyn.one_layer.engine import Dynamics, State, Status
from ccdyn.pairwise import Pairwise

__all__ = ["AUTO_DETECT", "WATCH_STEPS", "RESTART", "flow_tile", "phases", "watch", "handover", "AutoRunner"]

RESTART = False  # circling inits restart from their init (False: the flow continues from power's iterate)
AUTO_DETECT = 20  # power steps before an init still running is first watched for circling (one power block)
WATCH_STEPS = 8  # power steps of the watch (on a copy of the iterate)
FLOW_TILE_SHARE = 8  # the flow phase runs on tiles of tile / FLOW_TILE_SHARE rows (at least FLOW_TILE_MIN)
FLOW_TILE_MIN = 64


def flow_tile(tile: int) -> int:
    """Rows per tile of the flow phase: few inits usually circle, so smaller tiles than the power phase's
    (tile / 8, at least 64, at most the tile); fixed by the tile, so results do not depend on the chunk."""
    return min(int(tile), max(FLOW_TILE_MIN, int(tile) // FLOW_TILE_SHARE))


def phases(act: Activation, dyn: Dynamics) -> tuple:
    """The Dynamics of auto's phases for ``act``: (power, flow), (power, None) or (None, flow)."""
    power = dataclasses.replace(dyn, method="power", block=min(dyn.block, AUTO_DETECT))  # a watch every block
    flow = dataclasses.replace(dyn, method="flow")
    if not act.homogeneous:
        return None, flow
    return (power, flow) if act.name in ("relu", "leaky_relu") else (power, None)


def watch(ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, st: State, detect: int = AUTO_DETECT) -> State:
    """``st`` with every running init of at least ``detect`` steps that *oscillates* across a kink marked
    CIRCLING_KINK: within ``WATCH_STEPS`` more power steps (on a copy: w and every other field unchanged) some
    view's side (the sign of w^T x_i, x_i != 0) changes at least twice. An iterate on its way to a smooth
    optimum crosses each hyperplane once; one that circles a kink crosses the same one back and forth."""
    x = sliding.flat_views(ds)[0]
    real = (jnp.linalg.norm(x, axis=1) > 0)[None]
    side = lambda w: (w @ x.T) > 0  # noqa: E731

    def body(carry, _):
        w, last, changes = carry
        w = dynamics.power_update(w, dynamics.ascent(ds, act, w, pw), dyn.shift, fallback=w)
        now = side(w)
        return (w, now, changes + ((now != last) & real).astype(jnp.int32)), None

    start = side(st.w)
    changes = jax.lax.scan(body, (st.w, start, jnp.zeros_like(start, jnp.int32)), None, length=WATCH_STEPS)[0][2]
    circling = (st.status == int(Status.RUNNING)) & (st.steps >= detect) & jnp.any(changes >= 2, axis=1)
    return st._replace(status=jnp.where(circling, int(Status.CIRCLING_KINK), st.status).astype(st.status.dtype))


def handover(w, flow: Dynamics, sel, live) -> State:
    """The initial state of ``flow`` at the rows ``sel`` of ``w`` (a fresh step size, no kinks, steps from 0):
    the rows where ``live`` holds run, the others are padding (not running)."""
    fresh = engine.initial_state(w[sel], flow)
    return fresh._replace(status=jnp.where(live, int(Status.RUNNING), int(Status.NOT_CONVERGED)).astype(jnp.int32))


def _merge(done: State, later: State, sel, live) -> State:
    """``done`` with row ``sel[i]`` replaced by ``later``'s row i where ``live`` holds, its steps ``done``'s
    plus ``later``'s (the phases' steps add up)."""
    later = later._replace(steps=later.steps + done.steps[sel])
    return engine._record(done, later, jnp.where(live, sel, done.steps.shape[0]))


class AutoRunner:
    """:class:`ccdyn.one_layer.engine.ChunkRunner` for ``method="auto"`` (same constructor and ``run``)."""

    def __init__(self, ds: Dataset, act: Activation, pw: Pairwise, dyn: Dynamics, *, tile: int, mesh=None,
                 wide: bool = True, detect: int = AUTO_DETECT, restart: bool = RESTART):
        self.dyn, self.tile, self.detect, self.restart = dyn, int(tile), int(detect), bool(restart)
        self.timings = {}  # the last run's phases: seconds, and how many inits were handed over
        self.mesh = parallel.device_mesh() if mesh is None else mesh
        self.n_devices = self.mesh.devices.size
        power, flow = phases(act, dyn)
        first = power if power is not None else flow
        self.first = engine.ChunkRunner(ds, act, pw, first, tile=tile, mesh=self.mesh, wide=wide)
        self.ds = self.first.ds
        self.flow = None
        if power is not None and flow is not None:
            self.flow = engine.ChunkRunner(ds, act, pw, flow, tile=flow_tile(tile), mesh=self.mesh, wide=wide)
            rows = NamedSharding(self.mesh, PartitionSpec(parallel.AXIS))
            self._watch = jax.jit(parallel.tiled_sharded(lambda d, s: watch(d, act, pw, power, s, self.detect),
                                                         self.mesh, self.tile))
            self._handover = jax.jit(lambda w, sel, live: handover(w, flow, sel, live), out_shardings=rows)
            self._merge = jax.jit(_merge, out_shardings=rows)
            if self.restart:  # the transit from the init: the flow without sliding (stops where pinned)
                transit = dataclasses.replace(flow, sliding=False)
                self.transit = engine.ChunkRunner(ds, act, pw, transit, tile=flow_tile(tile), mesh=self.mesh)
                self._start = jax.jit(lambda w, sel, live: handover(w, transit, sel, live), out_shardings=rows)
                self._slides = jax.jit(lambda st, live: live & (st.status == int(Status.CONVERGED)),
                                       out_shardings=rows)

    def padded(self, count: int, tile: int | None = None) -> int:
        return parallel.padded_chunk(count, self.tile if tile is None else tile, self.n_devices)

    def _replicated(self, a):
        return parallel.to_global(a, self.mesh, PartitionSpec())

    def run(self, key, start: int, count: int, dtype, on_block=None) -> dict:
        """As :meth:`ccdyn.one_layer.engine.ChunkRunner.run`; ``steps`` counts both phases' steps."""
        if self.flow is None:  # one phase: the power or the flow method itself
            return self.first.run(key, start, count, dtype, on_block)
        t0 = time.perf_counter()
        total = self.padded(count)
        W = parallel.init_weights(key, start, total, self.ds.dim, dtype)
        st = engine.initial_state(W, self.first.dyn)
        st = st._replace(status=np.where(np.arange(total) < count, int(Status.RUNNING),
                                         int(Status.NOT_CONVERGED)).astype(np.int32))
        st = parallel.to_global(State(*jax.device_get(tuple(st))), self.mesh)
        done = self._drive(self.first, st, np.arange(total), count, on_block, watch=True)
        done = self.first._circle(self.ds, done)  # still running at max_steps: the power method's own watch
        status = parallel.to_host(done.status)
        idx = np.flatnonzero(status[:count] == int(Status.CIRCLING_KINK))
        t1 = time.perf_counter()
        self.timings = {"power_s": t1 - t0, "handed_over": int(idx.size)}
        if idx.size:
            size = self.padded(idx.size, self.flow.tile)
            sel = self._replicated(np.concatenate([idx, np.full(size - idx.size, idx[0])]).astype(np.int32))
            live_host = np.arange(size) < idx.size
            live, rows = self._replicated(live_host), np.where(live_host, np.arange(size), size)
            if self.restart:  # from the init: the flow without sliding to its first kink, then the sliding flow
                tr = self._drive(self.transit, self._start(W, sel, live), rows, size, on_block)
                slide = self._slides(tr, live)
                fl = self._drive(self.flow, self._handover(tr.w, self._replicated(np.arange(size, dtype=np.int32)),
                                                           slide), rows, size, on_block)
                fl = self._merge(tr, fl, self._replicated(np.arange(size, dtype=np.int32)), slide)
            else:
                fl = self._drive(self.flow, self._handover(done.w, sel, live), rows, size, on_block)
            t2 = time.perf_counter()
            if self.flow._wide_block is not None:
                fl = self.flow._second_pass(fl, size, on_block)
            done = self._merge(done, fl, sel, live)
            parallel.to_host(done.status)
            self.timings.update(flow_s=t2 - t1, second_pass_s=time.perf_counter() - t2)
        host = State(*parallel.to_host(tuple(done)))
        return engine._finish(State(*[a[:count] for a in host]))

    def _drive(self, runner, st: State, rows, count: int, on_block, watch: bool = False) -> State:
        """Every running row of ``st`` advanced by ``runner``'s block to a stop, re-packed between blocks as
        :meth:`ccdyn.one_layer.engine.ChunkRunner.run` does; ``rows``: each state row's row in the result
        (``count`` and above: padding). ``watch``: the power phase's circling watch after every block."""
        rows = np.asarray(rows)
        done = st
        max_steps = runner.dyn.max_steps
        while True:
            st = runner._block(self.ds, st)
            status, steps = parallel.to_host((st.status, st.steps))
            running = (status == int(Status.RUNNING)) & (steps < max_steps)
            if watch and np.any(running & (steps >= self.detect)):
                st = self._watch(self.ds, st)
                status = parallel.to_host(st.status)
                running = (status == int(Status.RUNNING)) & (steps < max_steps)
            if on_block is not None:
                on_block(int(np.sum(running & (rows < count))), int(steps.max()))
            size = self.padded(int(running.sum()), runner.tile) if running.any() else 0
            if size == 0 or size < rows.size:
                done = runner._record(done, st, self._replicated(rows.astype(np.int32)))
                if size == 0:
                    return done
                keep = np.flatnonzero(running)
                sel = np.concatenate([keep, np.full(size - keep.size, keep[0])]).astype(np.int32)
                st = runner._pack(st, self._replicated(sel), self._replicated(np.int32(keep.size)))
                rows = np.concatenate([rows[keep], np.full(size - keep.size, count)])
