"""Tests run in float64: the identities checked here are exact up to rounding."""

import os

# The suite runs in two pytest-xdist workers; on a GPU they must not each preallocate 75% of memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import pytest  # noqa: E402

jax.config.update("jax_enable_x64", True)


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)
