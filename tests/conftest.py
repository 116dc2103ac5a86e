"""Tests run in float64: the identities checked here are exact up to rounding.

Most of the fast suite's time is XLA compiling many small programs once each, so on CPU the tests
(and the scripts they start) compile with XLA's CPU backend optimization level 0: the same programs,
compiled in about half the time, run a little slower. Every check compares two routes computed
under the same setting or holds to a stated tolerance; the scripts, benchmarks and committed results
use XLA's default level. Set ``XLA_FLAGS`` yourself (any ``--xla_backend_optimization_level``) to
test at another level.
"""

import os

# The suite runs in two pytest-xdist workers; on a GPU they must not each preallocate 75% of memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0".strip()

import jax  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_enable_x64", True)


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)
