"""The one runner of the 1-layer engine: chunks of inits, tiled and sharded over devices, to a stop, with
an optional values axis (one dataset per value of a data parameter), the method's finish and resume.

:class:`ChunkRunner` runs chunks of inits (:func:`collect` drives the chunks: stores, resume, stopping
rules, several processes). Given a list of datasets of one shape instead of one dataset, it runs every
init at every value (e.g. ``ortho_eps``, the pattern overlap of Fig. 1) in one compiled program: the
values axis is folded into the rows, every tile holds rows of one value only and reads its value's dataset
from the stacked datasets (a dynamic index, so the block is compiled once for all values and A(w) w stays
two GEMMs per tile). Inits are shared across values (``fold_in(key, i)``), so the tipping between values is
paired: init i is the same point of the sphere at every value.

Every per-init number is computed by programs of fixed shapes (one ``(tile, ...)`` program walked over
each device's live tiles, :func:`ccdyn.parallel.tiled_sharded` with ``counted``), and rows of a tile never
mix, so it is the same bits whatever the chunk size, the number of devices or processes, the values batched
beside it (docs/reproducibility.md): between blocks only gathers and scatters of whole rows (re-packing,
recording), which do no arithmetic. Re-packing keeps the arrays' shape (the running rows move to each
device's first tiles, and only those run), so a block is compiled once per method and chunk size, not once
per number of tiles left (on a user set the sliding flow's block, seconds to compile, was compiled 3 times).
The method's finish passes (:mod:`ccdyn.one_layer.methods.base`) run the same way on every path: a
:class:`~ccdyn.one_layer.methods.base.Rerun` re-packs the rows that ended in its status onto tiles of its
own, a :class:`~ccdyn.one_layer.methods.base.Watch` runs tile by tile over the stopped chunk where a row is still
running (after ``max_steps``; it marks only those). Every program is compiled on the calling thread, at its
first call (compiling a pass ahead on a worker thread was tried and removed: docs/flow.md, "Seventeenth round").

Parameters that change the dataset's shapes (``m``, ``n_samples``, ...) or the compiled program (the
activation, alpha, the dynamics) cannot share one program: :mod:`ccdyn.one_layer.studies.continuation`
runs those value by value.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from ccdyn import compiling, parallel
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import engine, gaussian_kernel, methods
from ccdyn.one_layer.engine import Dynamics, State, Status
from ccdyn.one_layer.methods import Rerun
from ccdyn.pairwise import Pairwise

__all__ = ["ChunkRunner", "collect", "same_shapes", "stack"]


def same_shapes(datasets) -> bool:
    """Whether the datasets have one pytree structure and the same shapes and dtypes leaf by leaf."""
    first: Any = jax.tree.structure(datasets[0])  # a PyTreeDef (jaxlib's, a type mypy cannot resolve)
    spec = lambda ds: [(np.shape(a), np.asarray(a).dtype) for a in jax.tree.leaves(ds)]
    return all(jax.tree.structure(ds) == first and spec(ds) == spec(datasets[0]) for ds in datasets)


def stack(datasets) -> Dataset:
    """The datasets stacked leaf by leaf on a new leading axis (``ValueError`` if shapes differ)."""
    if not datasets or not same_shapes(datasets):
        raise ValueError("the values change the dataset's shapes: they cannot share one compiled program")
    return jax.tree.map(lambda *a: jnp.stack(a), *datasets)


def _pack(st: State, vidx, sel, live):
    """Rows ``sel`` of (``st``, ``vidx``); rows where ``live`` is False are padding (not running)."""
    packed = jax.tree.map(lambda a: a[sel], st)
    status = jnp.where(live, packed.status, int(Status.NOT_CONVERGED)).astype(jnp.int32)
    return packed._replace(status=status), vidx[sel]


def _reopen(st: State, vidx, sel, live):
    """:func:`_pack` of the rows ``sel`` marked running (a Rerun pass)."""
    return _pack(st._replace(status=jnp.full_like(st.status, int(Status.RUNNING))), vidx, sel, live)


def _record(done: State, st: State, rows) -> State:
    """``done`` with row ``rows[i]`` set to row i of ``st`` (a row index past the end is dropped)."""
    return jax.tree.map(lambda d, a: d.at[rows].set(a, mode="drop"), done, st)


class ChunkRunner:
    """Runs chunks of inits, tiled and sharded over one mesh (default :func:`ccdyn.parallel.device_mesh`:
    every device of every process, docs/reproducibility.md "Several hosts").

    Args:
      ds: the dataset, or a list of datasets of one shape (the values axis: every init runs at every
        value; ``run`` then returns arrays of shape (count, V, ...), the init axis first, so :func:`collect`
        concatenates chunks as for one value).
      tile: rows per compiled program.
      wide: run the method's Rerun passes (the sliding flow's second pass over its KINK_LIMIT rows with
        the wider kink analysis; False: they stay KINK_LIMIT, the engine before it, kept for comparisons).

    Every process runs the same program on the whole chunk; each holds only its devices' rows. The compiled
    blocks are built once and reused by every chunk of the same padded size. A Gaussian ``pw`` gets its
    ``feature_range`` from the data here (:func:`ccdyn.one_layer.gaussian_kernel.bounded`): the field then
    applies alpha through Lemma 1's features where they pay (:func:`ccdyn.one_layer.dynamics.taylor_order`).
    """

    def __init__(self, ds, act: Activation, pw: Pairwise, dyn: Dynamics, *, tile: int, mesh=None, wide: bool = True):
        self.values = len(ds) if isinstance(ds, (list, tuple)) else None
        one = ds[0] if self.values is not None else ds
        self.dyn, self.tile, self.dim = dyn, int(tile), one.dim
        pw = gaussian_kernel.bounded(pw, [d.x for d in ds] if self.values is not None else [ds.x], act)
        self.mesh = parallel.device_mesh() if mesh is None else mesh
        self.n_devices = self.mesh.devices.size
        shared = stack(list(ds)) if self.values is not None else ds
        self.ds = parallel.to_global(shared, self.mesh, PartitionSpec())  # replicated on every device
        self.method = methods.select(dyn, act)
        rows = NamedSharding(self.mesh, PartitionSpec(parallel.AXIS))
        pick = (lambda s, v: jax.tree.map(lambda a: a[v[0]], s)) if self.values is not None else (lambda s, v: s)

        def tiled(fn, tile, method=None):  # fn(ds, st) -> st per tile, lifted to (ds, st, vidx, counts) -> (st, vidx)
            lifted = parallel.tiled_sharded(lambda s, t: (fn(pick(s, t[1]), t[0]), t[1]), self.mesh, tile,
                                            counted=True)

            def tiled_block(ds, st, vidx, counts):
                return lifted(ds, (st, vidx), counts)

            # st is donated: the block updates its live tiles in place instead of copying the whole chunk
            return jax.jit(tiled_block, donate_argnums=1, compiler_options=compiling.block_options(
                None if method is None else method.compiler_options))

        self._block = tiled(engine.make_block(act, pw, dyn, self.method), self.tile, self.method)
        self._pack = jax.jit(_pack, out_shardings=(rows, rows))
        self._reopen = jax.jit(_reopen, out_shardings=(rows, rows))
        self._record = jax.jit(_record, out_shardings=rows)
        # the inits' state before their first step in one program: the methods' init carries are constants and
        # copies of W (the same values as op by op, which compiled some 15 small programs per run)
        values = self.values
        self._initial = jax.jit(lambda W: engine.initial_state(W if values is None else jnp.tile(W, (values, 1)), dyn,
                                                               method=self.method), compiler_options=compiling.QUICK)
        # the finish passes, tile by tile too (over the whole chunk XLA would compile them for the chunk's
        # shape, so an init's result could depend on what was run with it)
        self._passes = []
        for p in engine.finish_passes(one, act, dyn, self.method):
            if isinstance(p, Rerun):
                if wide:
                    tile_p = min(self.tile, p.tile)
                    self._passes.append((p, tiled(engine.make_block(act, pw, dyn, p.method, p.block), tile_p, p.method),
                                         tile_p))
            else:
                self._passes.append((p, tiled(lambda d, s, p=p: engine.watch(d, act, pw, dyn, s, p), self.tile),
                                     self.tile))

    def padded(self, count: int) -> int:
        return parallel.padded_chunk(count, self.tile, self.n_devices)

    def _replicated(self, a):
        return parallel.to_global(a, self.mesh, PartitionSpec())

    def _counts(self, counts):
        """The live tiles per device as the counted block's third argument."""
        return parallel.to_global(np.asarray(counts, np.int32), self.mesh)

    def _layout(self, keep, tile: int, size: int):
        """(sel, live, counts): ``size`` state rows holding the rows ``keep`` (per value, the rows), each
        value's padded with its own first row to whole tiles; the tiles are dealt to the devices in order,
        ``counts[d]`` of them at the start of device d's share of the rows (the rest: padding, never run).
        The shape is always ``size``: one compiled block serves every layout."""
        tiles = []
        for k in keep:
            if k.size:
                pad = -(-k.size // tile) * tile
                rows = np.concatenate([k, np.full(pad - k.size, k[0])])
                tiles += [(rows[i:i + tile], np.arange(i, i + tile) < k.size) for i in range(0, pad, tile)]
        per_device = size // self.n_devices
        c = -(-len(tiles) // self.n_devices)  # tiles per device
        assert c * tile <= per_device, (len(tiles), tile, size)
        sel, live = np.full(size, tiles[0][0][0], np.int32), np.zeros(size, bool)
        for j, (rows, on) in enumerate(tiles):
            at = (j // c) * per_device + (j % c) * tile
            sel[at:at + tile], live[at:at + tile] = rows, on
        counts = [min(c, max(0, len(tiles) - d * c)) for d in range(self.n_devices)]
        return sel, live, counts

    def _pass_rows(self, total: int, per: int, tile: int) -> int:
        """Rows of a pass on tiles of ``tile``: the chunk's ``total``, or more where each value's ``per`` rows
        padded to whole pass tiles need more (the pass's tile need not divide the run's)."""
        return parallel.padded_chunk(max(total, (self.values or 1) * -(-per // tile) * tile), tile, self.n_devices)

    def _drive(self, block, tile, st, vidx, rows, vhost, done, per, on_block, counts):
        """Runs the rows of ``st`` (row i is row ``rows[i]`` of ``done``, ``vhost[i]`` its value; a row
        index past ``done``'s end: padding) block by block until none runs, on each device its first
        ``counts`` tiles, re-packing the running rows onto fewer tiles when they fit (the stopped rows
        first recorded into ``done``); returns ``done``."""
        total, V = done.status.shape[0], self.values or 1
        live_tiles = self._counts(counts)  # on the devices until the next re-pack
        while True:
            st, vidx = block(self.ds, st, vidx, live_tiles)
            status, steps = parallel.to_host((st.status, st.steps))
            running = (status == int(Status.RUNNING)) & (steps < self.dyn.max_steps) & (rows < total)
            if on_block is not None:  # the inits with a value still running (collect counts inits, not rows)
                on_block(int(np.unique(rows[running] % per).size), int(steps.max()))
            n_run = int(running.sum())
            if n_run == 0:
                return self._record(done, st, self._replicated(rows.astype(np.int32)))
            sel, live, fewer = self._layout([np.flatnonzero(running & (vhost == v)) for v in range(V)], tile,
                                            rows.size)
            if max(fewer) < max(counts):
                done = self._record(done, st, self._replicated(rows.astype(np.int32)))
                st, vidx = self._pack(st, vidx, self._replicated(sel), self._replicated(live))
                rows, vhost, counts = np.where(live, rows[sel], total), vhost[sel], fewer
                live_tiles = self._counts(counts)

    def run(self, key, start: int, count: int, dtype, on_block=None, capacity: int | None = None) -> dict:
        """Inits start .. start+count-1 to a stop (at every value); numpy arrays of length ``count`` (with the
        values axis: (count, V, ...)), on every process.

        ``on_block(n_running, max_steps_taken)``, if given, is called after every block (``n_running``: the
        inits with at least one value still running). ``capacity`` (default ``count``): the inits per value
        the arrays are shaped for; a chunk of fewer inits runs on the same compiled blocks as a full one
        (:func:`collect` passes its chunk size, so a run's last, partial chunk compiles nothing new), its
        rows dealt to the devices' first tiles and only those run.

        Between blocks only the status and step counts come to the host (the freeze check). When the
        running inits fit in fewer tiles they are re-packed on the devices (the stopped rows are first
        recorded, also on the devices); this leaves every init's arithmetic unchanged, since rows of a
        tile never mix. Then the method's finish passes. The chunk's results come to the host once, at
        its end.
        """
        V = self.values or 1
        per = -(-max(count, capacity or 0) // self.tile) * self.tile  # rows of one value
        W = parallel.init_weights(key, start, per, self.dim, dtype)  # the same inits at every value
        st = jax.device_get(self._initial(W))
        first = V * per
        total = parallel.padded_chunk(first, self.tile, self.n_devices)
        if total > first:  # whole padding tiles (value 0) up to the devices' multiple
            st = jax.tree.map(lambda a: np.concatenate([a, np.repeat(a[:1], total - first, axis=0)]), st)
        real = np.concatenate([np.tile(np.arange(per) < count, V), np.zeros(total - first, bool)])
        st = st._replace(status=np.where(real, int(Status.RUNNING), int(Status.NOT_CONVERGED)).astype(np.int32))
        vhost = np.concatenate([np.repeat(np.arange(V), per), np.zeros(total - first, np.int64)]).astype(np.int32)
        done, vidx = parallel.to_global((st, vhost), self.mesh)  # init order (the block donates its state)
        # the real rows on the devices' first tiles, as a re-pack lays them out (a full chunk: in init order)
        sel, live, counts = self._layout([np.flatnonzero(real & (vhost == v)) for v in range(V)], self.tile, total)
        st, v_st = self._pack(done, vidx, self._replicated(sel), self._replicated(live))
        done = self._drive(self._block, self.tile, st, v_st, np.where(live, sel, total), vhost[sel], done, per,
                           on_block, counts)
        all_tiles = [total // (self.n_devices * self.tile)] * self.n_devices
        for p, program, tile in self._passes:
            if isinstance(p, Rerun):
                status = parallel.to_host(done.status)
                idx = np.flatnonzero((status == int(Status[p.status])) & real)
                if idx.size:
                    sel, live, counts = self._layout([idx[vhost[idx] == v] for v in range(V)], tile,
                                                     self._pass_rows(total, per, tile))
                    st, v_st = self._reopen(done, vidx, self._replicated(sel), self._replicated(live))
                    done = self._drive(program, tile, st, v_st, np.where(live, sel, total), vhost[sel], done, per,
                                       on_block, counts)
            elif np.any(parallel.to_host(done.status) == int(Status.RUNNING)):  # a Watch marks running rows only
                done = program(self.ds, done, vidx, self._counts(all_tiles))[0]  # every tile
        host = parallel.to_host((done.w, done.status, done.steps, done.residual))
        host = [a[:first].reshape((V, per) + a.shape[1:])[:, :count] for a in host]  # (V, count, ...)
        w, status, steps, residual = [a.reshape((V * count,) + a.shape[2:]) for a in host]
        out = engine.result(State(w, status, steps, residual, None))
        if self.values is None:
            return out
        return {k: np.swapaxes(a.reshape((V, count) + a.shape[1:]), 0, 1) for k, a in out.items()}


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
            out = runner.run(key, start, count, dtype, on_block, capacity=ranges[0][1])
            if lead and store is not None:
                store.save(c, out)
            if lead:
                memory[c] = out
            done += count
            if progress is not None:
                progress(done, n_init, 0, 0)
        if stop is not None:
            ends = lead and stop({k: np.concatenate([chunk(i)[k] for i in range(c + 1)]) for k in engine.RESULT_FIELDS})
            if parallel.broadcast_from_0(np.int32(ends)):
                ranges = ranges[:c + 1]
                break
    if not lead:
        return None
    return {k: np.concatenate([chunk(c)[k] for c in range(len(ranges))]) for k in engine.RESULT_FIELDS}
