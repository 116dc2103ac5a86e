"""XLA compiler options for ``jax.jit`` (``compiler_options=``), chosen by what a program costs.

On CPU, XLA's LLVM back end spends seconds optimizing programs full of unrolled threefry rounds
(drawing token data, keys, initializations), far longer than they run. ``QUICK`` compiles such
one-off programs without the expensive passes (about 6x faster to compile, same results); ``LOOP``
drops only LLVM's expensive passes, for training loops whose run time matters (faster to compile and
no slower to run in benchmarks/bench_two_layer.py); ``SAMPLING`` sits between them, for random draws
repeated inside a loop (the two-layer trainer's minibatches, drawn per block): about 3x faster to
compile than ``LOOP`` and, unlike ``QUICK``, as fast to run (the #15 bar case end to end: 14.3 s with
the draws inside the ``LOOP`` program, 12.0 s with them in a ``SAMPLING`` program of their own).
``SLIDING`` (the same options as ``SAMPLING``) is a dynamics method's own choice for its blocks
(:class:`ccdyn.one_layer.methods.base.Method`'s ``compiler_options``): the sliding flow's step, a chain of
small loops and branches (the kink analysis), compiles about 1 s faster per block at level 1 and runs no
slower, often faster (docs/flow.md, "Twelfth round"). :func:`block_options` gives way to ``XLA_FLAGS``: a
level set there (the test suite's 0) is kept.

Which kernel computes the 1-layer field on a CUDA GPU (:mod:`ccdyn.one_layer.fused_ascent`):
``CCDYN_KERNEL`` in the environment, ``fused`` or ``xla`` (default :data:`DEFAULT_KERNEL`), read by
:func:`kernel` when a program is traced; the scripts check it at start.

:func:`timed`: what a jitted program costs to compile and to run (the benchmarks' one timing rule).
"""

from __future__ import annotations

import os
import statistics
import time

__all__ = ["QUICK", "LOOP", "SAMPLING", "SLIDING", "block_options", "KERNEL_ENV", "KERNELS", "DEFAULT_KERNEL", "kernel",
           "timed"]

QUICK = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
LOOP = {"xla_llvm_disable_expensive_passes": True}
SAMPLING = {"xla_backend_optimization_level": 1, "xla_llvm_disable_expensive_passes": True}
SLIDING = SAMPLING  # the same options, chosen for the sliding flow's blocks (module docstring)

KERNEL_ENV = "CCDYN_KERNEL"
KERNELS = ("fused", "xla")  # fused: the one-pass GPU kernel where it applies; xla: the two GEMMs everywhere
DEFAULT_KERNEL = "xla"  # until the fused kernel is compiled and measured on a GPU (ccdyn.one_layer.fused_ascent)


def block_options(options: dict | None) -> dict | None:
    """A method's ``compiler_options`` for ``jax.jit``, less those ``XLA_FLAGS`` sets itself (per-program options
    would override the environment's: the fast suite compiles everything at level 0)."""
    if not options:
        return None
    flags = os.environ.get("XLA_FLAGS", "")
    kept = {k: v for k, v in options.items() if k not in flags}
    return kept or None


def kernel() -> str:
    """The kernel ``CCDYN_KERNEL`` names (unset or empty: :data:`DEFAULT_KERNEL`); ``ValueError`` naming the
    variable for any other value."""
    name = os.environ.get(KERNEL_ENV, "") or DEFAULT_KERNEL
    if name not in KERNELS:
        raise ValueError(f"{KERNEL_ENV}={name!r} must be one of {', '.join(KERNELS)}")
    return name


def timed(fn, *args, repeats: int) -> tuple:
    """(compile seconds, median run seconds of ``repeats`` calls, the output) of the jitted ``fn`` on ``args``:
    compiled ahead of time, run once to warm up, then timed call by call, each to completion."""
    import jax  # noqa: PLC0415 -- the options above need no JAX

    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    out = jax.block_until_ready(compiled(*args))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(*args))
        times.append(time.perf_counter() - t0)
    return compile_s, statistics.median(times), out
