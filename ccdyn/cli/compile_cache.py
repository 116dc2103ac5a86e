"""The scripts' persistent compilation cache: compiled XLA programs are kept on disk and reused by the
next run that compiles the same program (same shapes, code, JAX version and device), so a second run
skips compilation (the sliding flow's blocks take seconds to compile; docs/guide.md, "Compilation").

``CCDYN_COMPILE_CACHE``: the cache directory (default ``~/.cache/ccdyn/xla``); empty: no cache. A
directory that cannot be created or written is skipped silently (the run compiles as without a cache).
The cache changes no result: a cached program is the program XLA compiled, bit for bit. Every program is
kept, however quick to compile (``MIN_COMPILE_S`` = 0): a run also compiles some 150 small programs (the
engine's bookkeeping, op-by-op steps of the init draw and the analysis), 10-50 ms each, which together cost
seconds; with them cached a rerun of the main job at 10^4 inits took 5.4 s instead of 8.9 s (power
iteration) and 9.8-11.3 s instead of 12.1-12.6 s (auto), its first run no longer (within the machine's
spread), for 0.8-1.7 MB of cache (issue 36's thirteenth round, docs/flow.md). The directory is bounded by
``MAX_BYTES`` (JAX evicts the least recently used).
"""

from __future__ import annotations

import os

import jax

__all__ = ["ENV", "MIN_COMPILE_S", "MAX_BYTES", "cache_dir", "enable"]

ENV = "CCDYN_COMPILE_CACHE"
MIN_COMPILE_S = 0.0  # seconds of compilation below which a program is not kept (module docstring)
MAX_BYTES = 2 ** 30


def cache_dir() -> str:
    """The directory ``CCDYN_COMPILE_CACHE`` names (``''``: none), by default ``~/.cache/ccdyn/xla``."""
    return os.environ.get(ENV, os.path.join(os.path.expanduser("~"), ".cache", "ccdyn", "xla"))


def enable() -> str | None:
    """Turns JAX's persistent compilation cache on at :func:`cache_dir`; returns the directory, or None
    when there is none or it cannot be written."""
    path = cache_dir()
    if not path:
        return None
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return None
    if not os.access(path, os.W_OK | os.X_OK):
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", MIN_COMPILE_S)
    jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
    return path
