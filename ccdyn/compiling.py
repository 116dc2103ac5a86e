"""XLA compiler options for ``jax.jit`` (``compiler_options=``), chosen by what a program costs.

On CPU, XLA's LLVM back end spends seconds optimizing programs full of unrolled threefry rounds
(drawing token data, keys, initializations), far longer than they run. ``QUICK`` compiles such
one-off programs without the expensive passes (about 6x faster to compile, same results); ``LOOP``
drops only LLVM's expensive passes, for training loops whose run time matters (faster to compile and
no slower to run in benchmarks/bench_two_layer.py); ``SAMPLING`` sits between them, for random draws
repeated inside a loop (the two-layer trainer's minibatches, drawn per block): about 3x faster to
compile than ``LOOP`` and, unlike ``QUICK``, as fast to run (the #15 bar case end to end: 14.3 s with
the draws inside the ``LOOP`` program, 12.0 s with them in a ``SAMPLING`` program of their own).
``SLIDING`` (``SAMPLING``'s options and ``OLDER_EMITTER``) is a dynamics method's own choice for its blocks
(:class:`ccdyn.one_layer.methods.base.Method`'s ``compiler_options``): the sliding flow's step, a chain of
small loops and branches (the kink analysis), compiles about 1 s faster per block at level 1 and runs no
slower, often faster (docs/flow.md, "Twelfth round"); the float64 kink refinement uses them too.

``OLDER_EMITTER``: XLA's CPU backend has two emitters for its fused loops, the MLIR fusion emitters (its
default) and the older LLVM IR emitter. The programs of the sliding flow and of the analysis (the flow's
blocks, the float64 kink refinement, the kink and smooth certificates: chains of small ops and loops)
compile 1.3-3x faster with the older one, run as fast, and gave the same endpoints, labels and steps on the
main job and the user sets, certificate numbers moving in their last digits (``CERTIFYING``: ``QUICK``'s
options and it, for the kink certificate; issue 36's fourteenth round, docs/flow.md). Power iteration's block
keeps the default emitter: there it rounds differently.

:func:`block_options` turns such options into ``jax.jit``'s ``compiler_options``: it gives way to
``XLA_FLAGS`` (a level set there, the test suite's 0, is kept) and leaves ``OLDER_EMITTER`` out where this
jaxlib's XLA no longer has it (XLA is retiring the emitter, openxla/xla#48001; probed once by compiling a
trivial program, :func:`accepts`: the programs then compile as before). :func:`jit` is ``jax.jit`` with them
for a module-level function, built at its first use (the probe compiles, which must wait for the scripts'
start-up).

Which kernel computes the 1-layer field on a CUDA GPU (:mod:`ccdyn.one_layer.fused_ascent`):
``CCDYN_KERNEL`` in the environment, ``fused`` or ``xla`` (default :data:`DEFAULT_KERNEL`), read by
:func:`kernel` when a program is traced; the scripts check it at start.

Every program is compiled on the thread that first calls it. (Compiling the runner's finish passes ahead on a
worker thread saved 2-3% of a first run on 2 cores. It was removed after two segmentation faults inside XLA's
compiler in long test processes that had used it; a third came without it, so XLA's crash is its own, and the
thread stays out for its small gain: docs/flow.md, "Seventeenth round".)

:func:`timed`: what a jitted program costs to compile and to run (the benchmarks' one timing rule).
"""

from __future__ import annotations

import functools
import os
import statistics
import time

__all__ = ["QUICK", "LOOP", "SAMPLING", "OLDER_EMITTER", "SLIDING", "CERTIFYING", "block_options", "accepts", "jit",
           "KERNEL_ENV", "KERNELS", "DEFAULT_KERNEL", "kernel", "timed"]

QUICK = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
LOOP = {"xla_llvm_disable_expensive_passes": True}
SAMPLING = {"xla_backend_optimization_level": 1, "xla_llvm_disable_expensive_passes": True}
OLDER_EMITTER = {"xla_cpu_use_fusion_emitters": False}  # XLA's older LLVM IR emitter for fused loops (CPU)
SLIDING = {**SAMPLING, **OLDER_EMITTER}  # the sliding flow's blocks and the kink refinement (module docstring)
CERTIFYING = {**QUICK, **OLDER_EMITTER}  # the kink certificate: once per run on the distinct optima

KERNEL_ENV = "CCDYN_KERNEL"
KERNELS = ("fused", "xla")  # fused: the one-pass GPU kernel where it applies; xla: the two GEMMs everywhere
DEFAULT_KERNEL = "xla"  # until the fused kernel is compiled and measured on a GPU (ccdyn.one_layer.fused_ascent)


def block_options(options: dict | None) -> dict | None:
    """``options`` as ``jax.jit``'s ``compiler_options``: less those ``XLA_FLAGS`` sets itself (per-program options
    would override the environment's: the fast suite compiles everything at level 0), and less
    ``OLDER_EMITTER`` where this jaxlib's XLA does not have it (:func:`accepts`)."""
    if not options:
        return None
    flags = os.environ.get("XLA_FLAGS", "")
    kept = {k: v for k, v in options.items() if k not in flags}
    if any(k in kept for k in OLDER_EMITTER) and not accepts(OLDER_EMITTER):
        kept = {k: v for k, v in kept.items() if k not in OLDER_EMITTER}
    return kept or None


def accepts(options: dict) -> bool:
    """Whether this jaxlib's XLA knows every option of ``options`` (an option it does not know fails the
    compilation of a trivial program; probed once per set of options)."""
    return _accepts(tuple(sorted(options.items())))


@functools.cache
def _accepts(items: tuple) -> bool:
    import jax  # noqa: PLC0415 -- the options above need no JAX

    try:
        jax.jit(lambda x: x + 1, compiler_options=dict(items)).lower(0.0).compile()
    except jax.errors.JaxRuntimeError:
        return False
    return True


class _Deferred:
    """``jax.jit(fn, compiler_options=block_options(options), **kw)``, built at its first use (call or ``lower``):
    the options' probe (:func:`accepts`) compiles, which must wait for the scripts' start-up (several hosts:
    ``jax.distributed`` before any backend)."""

    def __init__(self, fn, options: dict, kw: dict):
        self.fn, self.options, self.kw = fn, options, kw
        functools.update_wrapper(self, fn)

    @functools.cached_property
    def jitted(self):
        import jax  # noqa: PLC0415

        return jax.jit(self.fn, compiler_options=block_options(self.options), **self.kw)

    def __call__(self, *args, **kwargs):
        return self.jitted(*args, **kwargs)

    def lower(self, *args, **kwargs):
        return self.jitted.lower(*args, **kwargs)


def jit(options: dict, **kw):
    """A decorator: ``jax.jit`` with :func:`block_options` of ``options``, built at the first use (module
    docstring); ``kw`` as ``jax.jit``'s."""
    return lambda fn: _Deferred(fn, dict(options), kw)


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
