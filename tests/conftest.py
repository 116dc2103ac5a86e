"""Tests run in float64: the identities checked here are exact up to rounding.

Most of the fast suite's time is XLA compiling many small programs once each, so on CPU the tests
(and the scripts they start) compile with XLA's CPU backend optimization level 0 and without LLVM's expensive
passes (:data:`ccdyn.compiling.QUICK`'s options): the same programs, compiled in about half the time, run a
little slower. Every check compares two routes computed
under the same setting or holds to a stated tolerance; the scripts, benchmarks and committed results
use XLA's default level. Set ``XLA_FLAGS`` yourself (any ``--xla_backend_optimization_level``) to
test at another level.

For the same reason the CPU backend emits its fused loops with its older LLVM IR emitter
(``--xla_cpu_use_fusion_emitters=false``) where this jaxlib has that flag: its MLIR fusion emitters
compile the suite's programs about 2.5 times as slowly (jaxlib 0.10: the fast suite's CPU time
330 s -> 196 s, every test passing). Set ``--xla_cpu_use_fusion_emitters`` yourself to test with them.
"""

import glob
import importlib.util
import mmap
import os


def _jaxlib_has_flag(name: str) -> bool:
    """Whether the installed jaxlib's XLA defines the flag ``name`` (an unknown flag in ``XLA_FLAGS`` ends
    the process at the first compile, so a flag that an older or newer jaxlib lacks is left out)."""
    spec = importlib.util.find_spec("jaxlib")
    for path in glob.glob(os.path.join(os.path.dirname(spec.origin), "*.so")) if spec and spec.origin else ():
        try:
            with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                if m.find(name.encode()) >= 0:
                    return True
        except (OSError, ValueError):  # an empty or unreadable file
            continue
    return False


# The suite runs in two pytest-xdist workers; on a GPU they must not each preallocate 75% of memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
os.environ.setdefault("CCDYN_COMPILE_CACHE", "")  # the scripts run by the tests compile afresh and write nothing to ~
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0"
                               " --xla_llvm_disable_expensive_passes=true").strip()
if "xla_cpu_use_fusion_emitters" not in os.environ["XLA_FLAGS"] and _jaxlib_has_flag("xla_cpu_use_fusion_emitters"):
    os.environ["XLA_FLAGS"] += " --xla_cpu_use_fusion_emitters=false"

import jax  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_enable_x64", True)


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)
