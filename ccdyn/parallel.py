"""Chunking, tiling and sharding of the init axis over one global mesh; multi-host start and gathers.

Reproducibility rule (docs/reproducibility.md): the initial weight of init i is drawn from
``jax.random.fold_in(key, i)``, and every init is advanced inside a *tile* of fixed size, so the
arithmetic an init sees is the same whatever the chunk size, the number of devices or the number of
processes. A chunk is padded up to a whole number of tiles per device, split over the devices of
the mesh with ``jax.shard_map`` and, on each device, walked tile by tile (``lax.map``, or with ``counted`` a loop
over the device's first live tiles only, so that re-packing the running rows never changes a shape).

Several hosts (docs/reproducibility.md, "Several hosts"): every process calls
:func:`initialize_distributed`, then runs the same jitted program on :func:`device_mesh`, one mesh
over the devices of *all* processes (``jax.devices()``). Arrays enter the mesh with :func:`to_global`
(every process holds the same host value) and come back, whole, on every process with
:func:`to_host` (``process_allgather``); :func:`broadcast_from_0` and :func:`gather_rows` carry the
small decisions (resume plan, config agreement). No file system is shared.

Sizing (:func:`default_tile`, :func:`default_chunk`): when ``--tile`` / ``--chunk_size`` are not
given they follow a stated rule from the backend and the device memory.
"""

from __future__ import annotations

import math
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["init_weights", "INIT_BLOCK", "GPU_INIT_BLOCK", "init_block", "device_mesh", "padded_chunk", "tiled_sharded",
           "initialize_distributed", "chunk_ranges", "device_memory", "MAX_INITS", "AUTO", "to_global", "to_host",
           "broadcast_from_0", "gather_rows", "gather_bytes", "spread", "host_device", "default_tile", "default_chunk",
           "CPU_TILE", "ACCEL_TILE_MAX", "FUSED_TILE_MAX", "TILES_PER_CHUNK", "SIZING_RULE"]

MAX_INITS = 2**31  # init indices stay below 2**31: exact in int32 keys and never wrapped by fold_in

AXIS = "init"


INIT_BLOCK = 512  # init_weights draws inits in blocks of this many rows, each by the same compiled program
GPU_INIT_BLOCK = 65536  # ... on a GPU: the same bits per init as blocks of 512 there, 82x faster (an H100, bench)


def init_block(backend: str | None = None) -> int:
    """Rows per block of :func:`init_weights` on ``backend`` (default ``jax.default_backend()``):
    :data:`INIT_BLOCK` on CPU and TPU, :data:`GPU_INIT_BLOCK` on a GPU, where 1024 blocks of 512 rows
    for one chunk of 524288 inits took 2.8 s in dispatches and 8 blocks of 65536 take 34 ms, with the
    same bits per init (measured on an H100, docs/reproducibility.md)."""
    backend = jax.default_backend() if backend is None else backend
    return GPU_INIT_BLOCK if backend == "gpu" else INIT_BLOCK


def init_weights(key, start: int, count: int, dim: int, dtype=jnp.float32):
    """Uniform random unit vectors for inits start .. start+count-1, (count, dim).

    Init i uses ``fold_in(key, i)`` only, so any subset of inits can be drawn independently. The
    normals are drawn in float32 in every x64 mode, so a seed gives the same inits with or without
    ``jax_enable_x64`` (docs/reproducibility.md). The inits are drawn in blocks of :func:`init_block`
    rows, each by one compiled program of that fixed shape (the last block padded), so init i is the
    same bits whatever ``start`` and ``count``: XLA fuses a multiply and an add into one FMA or not
    depending on how a kernel of the given shape is vectorized, so the same formula over 16 rows and
    over 48 rounded |w|^2 differently in the last bit.
    """
    start, count, dtype = int(start), int(count), jnp.dtype(dtype)
    if count <= 0:
        return jnp.zeros((0, dim), dtype)
    rows = init_block()
    blocks = [_init_block(key, s, rows, dim, dtype) for s in range(start, start + count, rows)]
    return (blocks[0] if len(blocks) == 1 else jnp.concatenate(blocks))[:count]


def _init_block(key, start: int, rows: int, dim: int, dtype):
    """Inits start .. start+rows-1, op by op as before the blocks (the same bits: the normals from
    JAX's own compiled draws, the square root and the division each by itself; one jitted program
    gives other bits, e.g. XLA rewrites w / sqrt(s) as w * rsqrt(s))."""
    idx = jnp.asarray(start) + jnp.arange(rows)
    w = jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(key, i), (dim,), jnp.float32))(idx)
    w = w.astype(dtype)  # drawn in float32 whatever the x64 mode, normalized in the working dtype
    return w / jnp.sqrt(_sum_squares(w))[:, None]


@jax.jit
def _sum_squares(w):
    """|w|^2 per row summed column by column: elementwise adds in a fixed order."""
    return jax.lax.fori_loop(0, w.shape[1], lambda j, s: s + w[:, j] ** 2, jnp.zeros(w.shape[:1], w.dtype))


def device_mesh(devices=None) -> Mesh:
    """A 1-D mesh with axis name ``init`` over ``devices``; default every device of every process
    (``jax.devices()``: the global mesh of a multi-host run, this process's devices otherwise)."""
    devices = jax.devices() if devices is None else devices
    return Mesh(np.asarray(devices), (AXIS,))


def to_global(tree, mesh: Mesh, spec: PartitionSpec = PartitionSpec(AXIS)):
    """Host values (the same on every process) as global arrays on ``mesh``: split along the leading
    axis over its devices (default ``spec``) or replicated (``PartitionSpec()``). Each process fills
    only its own devices' shards, so this works across hosts without any transfer between them."""
    sharding = NamedSharding(mesh, spec)

    def put(a):
        a = np.asarray(a)
        return jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])

    return jax.tree.map(put, tree)


def to_host(tree):
    """The whole value of every (possibly sharded, multi-process) array of ``tree`` as numpy, on every
    process: ``device_get`` when this process holds all shards, else ``process_allgather``."""
    leaves = jax.tree.leaves(tree)
    if all(getattr(a, "is_fully_addressable", True) for a in leaves):
        return jax.tree.map(np.asarray, jax.device_get(tree))
    return jax.tree.map(np.asarray, multihost_utils.process_allgather(tree, tiled=True))


def broadcast_from_0(value):
    """Process 0's value (a numpy array or pytree) on every process; the value itself with one process."""
    if jax.process_count() == 1:
        return value
    return jax.tree.map(np.asarray, multihost_utils.broadcast_one_to_all(value))


def gather_rows(row) -> np.ndarray:
    """(num_processes, ...) array of every process's ``row`` (same shape and dtype on all), in process order."""
    row = np.asarray(row)
    if jax.process_count() == 1:
        return row[None]
    return np.asarray(multihost_utils.process_allgather(row, tiled=False))


def gather_bytes(payload: bytes) -> list:
    """Every process's ``payload`` (any length), in process order, on every process."""
    sizes = gather_rows(np.array([len(payload)], np.int64))[:, 0]
    buf = np.zeros(max(1, int(sizes.max())), np.uint8)
    buf[:len(payload)] = np.frombuffer(payload, np.uint8)
    return [bytes(row[:n]) for row, n in zip(gather_rows(buf), sizes)]


def spread(items, work):
    """Yields ``(item, work(item))`` for every item, in order, on every process, where item i is computed
    by process i mod P alone (on its own devices: independent units such as the settings of a grid)
    and ``work`` returns bytes. With one process it is ``work`` over the items in order."""
    items, count, me = list(items), jax.process_count(), jax.process_index()
    for r in range(0, len(items), count):
        batch = items[r:r + count]
        mine = work(batch[me]) if me < len(batch) else b""
        yield from zip(batch, gather_bytes(mine) if count > 1 else [mine])


def host_device():
    """This process's first CPU device (the host), which every JAX build has beside its accelerators."""
    return jax.local_devices(backend="cpu")[0]


def padded_chunk(count: int, tile: int, n_devices: int) -> int:
    """Smallest multiple of tile * n_devices that holds ``count`` inits."""
    unit = tile * n_devices
    return max(1, math.ceil(count / unit)) * unit


def tiled_sharded(fn, mesh: Mesh, tile: int, *, counted: bool = False):
    """Lifts ``fn(shared, tree)`` on (tile, ...) arrays to (k * tile * n_dev, ...) arrays.

    ``shared`` (e.g. the dataset) is replicated on every device. The leading axis of ``tree`` is
    split over the mesh devices; each device applies ``fn`` to its tiles one after another with
    ``lax.map``, so ``fn`` always sees the same shapes.

    ``counted``: the lifted function takes a third argument, ``counts`` (n_dev,) int32 split over the
    devices, and each device applies ``fn`` to its first ``counts[device]`` tiles only (a loop with a
    dynamic trip count, each tile updated in place); its other rows are returned unchanged. ``fn`` must
    then return a tree of ``tree``'s shapes. One compiled program serves every number of live tiles: a
    runner that packs its running rows onto fewer tiles keeps the shape, not a program per tile count.
    """

    def per_device(shared, tree):
        lead = jax.tree.leaves(tree)[0].shape[0]
        tiles = jax.tree.map(lambda a: a.reshape((lead // tile, tile) + a.shape[1:]), tree)
        out = jax.lax.map(lambda t: fn(shared, t), tiles)
        return jax.tree.map(lambda a: a.reshape((lead,) + a.shape[2:]), out)

    def per_device_counted(shared, tree, counts):
        lead = jax.tree.leaves(tree)[0].shape[0]

        def one(i, tree):
            at = i * tile
            out = fn(shared, jax.tree.map(lambda a: jax.lax.dynamic_slice_in_dim(a, at, tile), tree))
            return jax.tree.map(lambda a, o: jax.lax.dynamic_update_slice_in_dim(a, o, at, 0), tree, out)

        return jax.lax.fori_loop(0, jnp.minimum(counts[0], lead // tile), one, tree)

    spec = PartitionSpec(AXIS)
    if counted:
        return jax.shard_map(per_device_counted, mesh=mesh, in_specs=(PartitionSpec(), spec, spec), out_specs=spec)
    return jax.shard_map(per_device, mesh=mesh, in_specs=(PartitionSpec(), spec), out_specs=spec)


def chunk_ranges(n_init: int, chunk_size: int):
    """[(start, count)] of consecutive chunks covering 0 .. n_init-1."""
    return [(s, min(chunk_size, n_init - s)) for s in range(0, n_init, chunk_size)]


AUTO = "auto"  # --coordinator_address=auto: let jax.distributed.initialize() read the cluster's environment
# Processes > 0 wait at exit for process 0, which analyses and writes alone after the last chunk. (A
# process that dies is noticed at once by the others' next collective, which fails; their exit then
# waits for JAX's heartbeat timeout, 100 s, before it aborts.)
SHUTDOWN_TIMEOUT_S = 3600


def initialize_distributed(coordinator_address: str | None, num_processes: int, process_id: int) -> tuple:
    """Starts ``jax.distributed`` (one call per process, before any other JAX work); returns
    (process index, process count).

    ``coordinator_address=HOST:PORT`` with the process count and index given explicitly; ``"auto"``:
    ``jax.distributed.initialize()`` without arguments, which reads them from the cluster's
    environment (SLURM, Open MPI, TPU pods, ...); ``None`` with one process: a no-op.
    """
    if coordinator_address == AUTO:
        jax.distributed.initialize(shutdown_timeout_seconds=SHUTDOWN_TIMEOUT_S)
        return jax.process_index(), jax.process_count()
    if num_processes <= 1:
        return 0, 1
    if not coordinator_address:
        raise ValueError("--coordinator_address is required when --num_processes > 1 (--coordinator_address)")
    if not (0 <= process_id < num_processes):
        raise ValueError(f"--process_id={process_id} must lie in [0, {num_processes - 1}]")
    jax.distributed.initialize(coordinator_address=coordinator_address, num_processes=num_processes,
                               process_id=process_id, shutdown_timeout_seconds=SHUTDOWN_TIMEOUT_S)
    return jax.process_index(), jax.process_count()


def device_memory(device=None) -> int:
    """Bytes one run may use on ``device`` (default: the first): an accelerator's memory limit, or the
    host's physical memory for the CPU backend."""
    device = jax.devices()[0] if device is None else device
    stats = device.memory_stats() if device.platform != "cpu" else None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


CPU_TILE = 512  # the CPU tile, as before this rule (every committed CPU result was made with it)
ACCEL_TILE_MAX = 16384  # an accelerator tile is at most this wide (wider only adds padding)
GPU_TILE_CACHE = 32 * 2**20  # on a GPU one tile's activations (tile x points x views) fit in this: the L2
# cache of current GPUs (40 MB A100, 50 MB H100/H200); on an H100 the default data's tile of 8192 (32 MiB)
# ran the engine 1.6x as fast as 16384 (64 MiB), whose activations go through device memory (bench_basins)
FUSED_TILE_MAX = 131072  # a GPU tile whose step is the fused kernel (no activations in memory) is at most this
# wide: each step is then a few kernel launches over ~5e9 FLOP, far above the launch cost (bench_fused)
ACCEL_MEMORY_SHARE = 8  # an accelerator tile uses at most 1/8 of the device memory
TILES_PER_CHUNK = 32  # each device walks this many tiles per chunk (CPU: 32 x 512 = 16384 inits)
SIZING_RULE = (f"tile: cpu {CPU_TILE}; gpu/tpu the largest power of 2 <= {ACCEL_TILE_MAX} whose tile memory "
               f"(memory estimate) is <= 1/{ACCEL_MEMORY_SHARE} of the device memory and <= the inits per "
               f"device, on a gpu also whose activations (tile x points x views x 4 bytes) are <= "
               f"{GPU_TILE_CACHE >> 20} MiB (the L2 cache), or, where the fused kernel computes the step (no "
               f"activations in memory), <= {FUSED_TILE_MAX}; chunk_size: tile x devices x {TILES_PER_CHUNK}")


def default_tile(per_init_bytes: float, fixed_bytes: float, n_init: int, *, activation_bytes: float = 0,
                 fused: bool = False, backend: str | None = None, memory: int | None = None,
                 n_devices: int | None = None) -> int:
    """The tile when ``--tile`` is not given (:data:`SIZING_RULE`).

    Args:
      per_init_bytes, fixed_bytes: the run's memory estimate is ``fixed_bytes + tile * per_init_bytes``.
      n_init: inits of the run (an accelerator tile is not wider than the inits per device).
      activation_bytes: bytes of one init's activations (points x views x 4); on a GPU a tile's must fit
        in :data:`GPU_TILE_CACHE`.
      fused: on a GPU the step is the fused kernel (:mod:`ccdyn.one_layer.fused_ascent`): no activations
        are written, so no cache bound, and the tile is at most :data:`FUSED_TILE_MAX`.
      backend, memory, n_devices: default ``jax.default_backend()``, :func:`device_memory`, ``jax.device_count()``.
    """
    backend = jax.default_backend() if backend is None else backend
    if backend == "cpu":
        return CPU_TILE
    memory = device_memory() if memory is None else memory
    n_devices = jax.device_count() if n_devices is None else n_devices
    fused = fused and backend == "gpu"
    widest = FUSED_TILE_MAX if fused else ACCEL_TILE_MAX
    cap = min(widest, 1 << max(0, math.ceil(n_init / n_devices) - 1).bit_length())
    tile = cap
    cache = GPU_TILE_CACHE if backend == "gpu" and not fused else math.inf
    while tile > 1 and (fixed_bytes + tile * per_init_bytes > memory / ACCEL_MEMORY_SHARE
                        or tile * activation_bytes > cache):
        tile //= 2
    return tile


def default_chunk(tile: int, n_devices: int | None = None) -> int:
    """The chunk size when ``--chunk_size`` is not given: :data:`TILES_PER_CHUNK` tiles per device."""
    n_devices = jax.device_count() if n_devices is None else n_devices
    return tile * n_devices * TILES_PER_CHUNK
