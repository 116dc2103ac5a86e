"""The engine over several datasets of one shape at once: a parameter's values as a batch axis.

:class:`ValuesRunner` runs the same inits at V values of a data parameter (e.g. ``ortho_eps``, the
pattern overlap of Fig. 1) in one compiled program. The values axis is folded into the init axis of
:class:`ccdyn.one_layer.engine.ChunkRunner`'s tiles: row (v, i) is init i at value v, every tile holds
rows of one value only, and each tile reads its value's dataset from the stacked datasets (a dynamic
index, so the block is compiled once for all values and A(w) w stays two GEMMs per tile). Inits are
shared across values (``fold_in(key, i)``), so the tipping between values is paired: init i is the same
point of the sphere at every value.

Each row is advanced by the same per-init arithmetic as in a value-by-value run (rows of a tile never
mix, the padding rows are frozen; the kink watch of power iteration runs tile by tile as well), so the
results equal those of ``ChunkRunner`` at each value, whatever else is batched; tests check this to the bit. Parameters that change the dataset's shapes (``m``, ``n_samples``, ...) or the
compiled program (the activation, alpha, the dynamics) cannot share one program: the continuation
runs those value by value (:mod:`ccdyn.one_layer.studies.continuation`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from ccdyn import parallel
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import engine
from ccdyn.one_layer.engine import Dynamics, State, Status
from ccdyn.pairwise import Pairwise

__all__ = ["same_shapes", "stack", "ValuesRunner"]


def same_shapes(datasets) -> bool:
    """Whether the datasets have one pytree structure and the same shapes and dtypes leaf by leaf."""
    first = jax.tree.structure(datasets[0])
    spec = lambda ds: [(np.shape(a), np.asarray(a).dtype) for a in jax.tree.leaves(ds)]
    return all(jax.tree.structure(ds) == first and spec(ds) == spec(datasets[0]) for ds in datasets)


def stack(datasets) -> Dataset:
    """The datasets stacked leaf by leaf on a new leading axis (``ValueError`` if shapes differ)."""
    if not datasets or not same_shapes(datasets):
        raise ValueError("the values change the dataset's shapes: they cannot share one compiled program")
    return jax.tree.map(lambda *a: jnp.stack(a), *datasets)


def _bucket(tiles: int) -> int:
    """The smallest 2^k or 3 x 2^(k-1) >= tiles: at most 2 log2(V x chunk / tile) sizes are ever compiled,
    and a packed layout wastes < 1/3 of its rows (a layout of whole tiles only would compile up to
    V x chunk / tile sizes)."""
    if tiles <= 2:
        return max(tiles, 1)
    k = (tiles - 1).bit_length()  # 2^(k-1) < tiles <= 2^k
    return 3 << (k - 2) if tiles <= 3 << (k - 2) else 1 << k


def _pack(st: State, vidx, sel, live):
    """Rows ``sel`` of (``st``, ``vidx``); rows where ``live`` is False are padding (not running)."""
    packed = State(*[a[sel] for a in st])
    status = jnp.where(live, packed.status, int(Status.NOT_CONVERGED)).astype(jnp.int32)
    return packed._replace(status=status), vidx[sel]


class ValuesRunner:
    """Runs chunks of inits at every value (one dataset per value, same shapes) on one mesh.

    ``run`` returns arrays of shape (count, V, ...): the init axis first, so
    :func:`ccdyn.one_layer.engine.collect` concatenates chunks as for a single value.
    """

    def __init__(self, datasets, act: Activation, pw: Pairwise, dyn: Dynamics, *, tile: int, mesh=None):
        self.dyn, self.tile, self.values, self.dim = dyn, int(tile), len(datasets), datasets[0].dim
        self.mesh = parallel.device_mesh() if mesh is None else mesh
        self.n_devices = self.mesh.devices.size
        self.ds = parallel.to_global(stack(datasets), self.mesh, PartitionSpec())  # replicated
        block = engine.make_block(act, pw, dyn)

        def per_tile(ds_stack, tree):
            st, vidx = tree
            ds = jax.tree.map(lambda a: a[vidx[0]], ds_stack)  # every row of a tile has one value
            return block(ds, st), vidx

        rows = NamedSharding(self.mesh, PartitionSpec(parallel.AXIS))
        self._block = jax.jit(parallel.tiled_sharded(per_tile, self.mesh, self.tile))
        self._pack = jax.jit(_pack, out_shardings=(rows, rows))
        self._record = jax.jit(engine._record, out_shardings=rows)
        # the kink watch after max_steps runs tile by tile too, as in ChunkRunner: one (tile, ...) program whatever
        # the values and inits batched (over the whole (values x inits) batch, XLA compiled it for the batch's
        # shape, so an init's verdict could depend on what was batched with it)
        self._circle = None
        if engine._circles_kinks(act, dyn):
            def circle_tile(ds_stack, tree):
                st, vidx = tree
                ds = jax.tree.map(lambda a: a[vidx[0]], ds_stack)
                return engine.mark_circling(ds, act, pw, dyn, st), vidx

            self._circle = jax.jit(parallel.tiled_sharded(circle_tile, self.mesh, self.tile))

    def _replicated(self, a):
        return parallel.to_global(a, self.mesh, PartitionSpec())

    def _layout(self, counts, fill_value: int):
        """Host plan of a packed layout: for each value its rows (indices into the state), padded with
        its own first row to whole tiles, then whole padding tiles up to a size of :func:`_bucket` (so
        few sizes are compiled), a multiple of the devices.
        Returns (sel, live, vidx) for ``counts`` = per value, the state rows to keep."""
        sel, live, vidx = [], [], []
        for v, keep in enumerate(counts):
            if keep.size == 0:
                continue
            size = -(-keep.size // self.tile) * self.tile
            sel.append(np.concatenate([keep, np.full(size - keep.size, keep[0])]))
            live.append(np.arange(size) < keep.size)
            vidx.append(np.full(size, v))
        tiles = _bucket(sum(s.size for s in sel) // self.tile)
        total = parallel.padded_chunk(tiles * self.tile, self.tile, self.n_devices)
        extra = total - sum(s.size for s in sel)
        sel.append(np.full(extra, fill_value))
        live.append(np.zeros(extra, bool))
        vidx.append(np.zeros(extra, np.int64))
        return (np.concatenate(sel).astype(np.int32), np.concatenate(live), np.concatenate(vidx).astype(np.int32))

    def run(self, key, start: int, count: int, dtype, on_block=None) -> dict:
        """Inits start .. start+count-1 at every value to a stop; numpy arrays (count, V, ...).

        ``on_block(n_running, max_steps_taken)`` as :meth:`ccdyn.one_layer.engine.ChunkRunner.run`
        (``n_running``: the inits with at least one value still running; it was the rows summed over the
        values, which made the progress line's inits done negative)."""
        V, per = self.values, -(-count // self.tile) * self.tile  # rows of one value in the first layout
        W = parallel.init_weights(key, start, per, self.dim, dtype)  # the same inits at every value
        st = engine.initial_state(jnp.tile(W, (V, 1)), self.dyn)
        real = np.tile(np.arange(per) < count, V)
        st = st._replace(status=np.where(real, int(Status.RUNNING), int(Status.NOT_CONVERGED)).astype(np.int32))
        st = State(*jax.device_get(tuple(st)))
        first = V * per
        total = parallel.padded_chunk(first, self.tile, self.n_devices)
        if total > first:  # whole padding tiles (value 0, not running) up to the devices' multiple
            st = State(*[np.concatenate([a, np.repeat(a[:1], total - first, axis=0)]) for a in st])
            st = st._replace(status=np.where(np.arange(total) < first, st.status, int(Status.NOT_CONVERGED)).astype(np.int32))
        vidx = np.concatenate([np.repeat(np.arange(V), per), np.zeros(total - first, np.int64)]).astype(np.int32)
        rows = np.where(np.arange(total) < first, np.arange(total), total)  # each row's place in `done`
        rows = np.where(np.concatenate([real, np.zeros(total - first, bool)]), rows, total)
        st = parallel.to_global(st, self.mesh)
        vidx_dev = done_vidx = parallel.to_global(vidx, self.mesh)  # done_vidx: the value of each row of `done`
        done = st
        while True:
            st, vidx_dev = self._block(self.ds, (st, vidx_dev))
            status, steps = parallel.to_host((st.status, st.steps))
            running = (status == int(Status.RUNNING)) & (steps < self.dyn.max_steps) & (rows < total)
            if on_block is not None:  # the inits with a value still running (collect counts inits, not rows)
                on_block(int(np.unique(rows[running] % per).size), int(steps.max()))
            keep = [np.flatnonzero(running & (vidx == v)) for v in range(V)]
            n_run = int(running.sum())
            sel, live, new_vidx = self._layout(keep, 0) if n_run else (None, None, None)
            if n_run == 0 or sel.size < rows.size:
                done = self._record(done, st, self._replicated(rows.astype(np.int32)))
                if n_run == 0:
                    if self._circle is not None:
                        done = self._circle(self.ds, (done, done_vidx))[0]
                    host = State(*parallel.to_host(tuple(done)))
                    host = State(*[a[:first].reshape((V, per) + a.shape[1:])[:, :count] for a in host])
                    out = engine._finish(State(*[np.asarray(a).reshape((V * count,) + a.shape[2:]) for a in host]))
                    return {k: np.swapaxes(a.reshape((V, count) + a.shape[1:]), 0, 1) for k, a in out.items()}
                st, vidx_dev = self._pack(st, vidx_dev, self._replicated(sel), self._replicated(live))
                rows = np.where(live, rows[sel], total)
                vidx = new_vidx
