"""Chunking, tiling and sharding of the init axis; multi-host start.

Reproducibility rule (docs/reproducibility.md): the initial weight of init i is drawn from
``jax.random.fold_in(key, i)``, and every init is advanced inside a *tile* of fixed size, so the
arithmetic an init sees is the same whatever the chunk size, the number of local devices or the
number of processes. A chunk is padded up to a whole number of tiles per device, split over the
local devices with ``jax.shard_map`` and, on each device, walked tile by tile with ``lax.map``.
"""

from __future__ import annotations

import math
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec

__all__ = ["init_weights", "local_mesh", "padded_chunk", "tiled_sharded", "initialize_distributed",
           "chunk_ranges", "chunks_of_process", "device_memory", "MAX_INITS"]

MAX_INITS = 2**31  # init indices stay below 2**31: exact in int32 keys and never wrapped by fold_in

AXIS = "init"


def init_weights(key, start, count: int, dim: int, dtype=jnp.float32):
    """Uniform random unit vectors for inits start .. start+count-1, (count, dim).

    Init i uses ``fold_in(key, i)`` only, so any subset of inits can be drawn independently.
    """
    idx = jnp.asarray(start) + jnp.arange(count)
    w = jax.vmap(lambda i: jax.random.normal(jax.random.fold_in(key, i), (dim,)))(idx)
    w = w / jnp.linalg.norm(w, axis=1, keepdims=True)
    return w.astype(dtype)


def local_mesh(devices=None) -> Mesh:
    """A 1-D mesh over this process's devices with axis name ``init``."""
    devices = jax.local_devices() if devices is None else devices
    return Mesh(np.asarray(devices), (AXIS,))


def padded_chunk(count: int, tile: int, n_devices: int) -> int:
    """Smallest multiple of tile * n_devices that holds ``count`` inits."""
    unit = tile * n_devices
    return max(1, math.ceil(count / unit)) * unit


def tiled_sharded(fn, mesh: Mesh, tile: int):
    """Lifts ``fn(shared, tree)`` on (tile, ...) arrays to (k * tile * n_dev, ...) arrays.

    ``shared`` (e.g. the dataset) is replicated on every device. The leading axis of ``tree`` is
    split over the mesh devices; each device applies ``fn`` to its tiles one after another with
    ``lax.map``, so ``fn`` always sees the same shapes.
    """

    def per_device(shared, tree):
        lead = jax.tree.leaves(tree)[0].shape[0]
        tiles = jax.tree.map(lambda a: a.reshape((lead // tile, tile) + a.shape[1:]), tree)
        out = jax.lax.map(lambda t: fn(shared, t), tiles)
        return jax.tree.map(lambda a: a.reshape((lead,) + a.shape[2:]), out)

    spec = PartitionSpec(AXIS)
    return jax.shard_map(per_device, mesh=mesh, in_specs=(PartitionSpec(), spec), out_specs=spec)


def chunk_ranges(n_init: int, chunk_size: int):
    """[(start, count)] of consecutive chunks covering 0 .. n_init-1."""
    return [(s, min(chunk_size, n_init - s)) for s in range(0, n_init, chunk_size)]


def chunks_of_process(n_chunks: int, process_id: int, num_processes: int):
    """Chunk indices handled by one process: c with c % num_processes == process_id."""
    return [c for c in range(n_chunks) if c % num_processes == process_id]


def initialize_distributed(coordinator_address: str | None, num_processes: int, process_id: int):
    """Starts ``jax.distributed`` when num_processes > 1 (one call per process); no-op otherwise."""
    if num_processes <= 1:
        return
    if not coordinator_address:
        raise ValueError("--coordinator_address is required when --num_processes > 1 (--coordinator_address)")
    if not (0 <= process_id < num_processes):
        raise ValueError(f"--process_id={process_id} must lie in [0, {num_processes - 1}]")
    jax.distributed.initialize(coordinator_address=coordinator_address,
                               num_processes=num_processes, process_id=process_id)


def device_memory(device=None) -> int:
    """Bytes one run may use on ``device`` (default: the first): an accelerator's memory limit, or the
    host's physical memory for the CPU backend."""
    device = jax.devices()[0] if device is None else device
    stats = device.memory_stats() if device.platform != "cpu" else None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
