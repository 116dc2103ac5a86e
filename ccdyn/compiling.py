"""XLA compiler options for ``jax.jit`` (``compiler_options=``), chosen by what a program costs.

On CPU, XLA's LLVM back end spends seconds optimizing programs full of unrolled threefry rounds
(drawing token data, keys, initializations), far longer than they run. ``QUICK`` compiles such
one-off programs without the expensive passes (about 6x faster to compile, same results); ``LOOP``
drops only LLVM's expensive passes, for training loops whose run time matters (faster to compile and
no slower to run in benchmarks/bench_two_layer.py).
"""

from __future__ import annotations

__all__ = ["QUICK", "LOOP"]

QUICK = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}
LOOP = {"xla_llvm_disable_expensive_passes": True}
