"""Tests run in float64: the identities checked here are exact up to rounding."""

import jax
import pytest

jax.config.update("jax_enable_x64", True)


@pytest.fixture
def key():
    return jax.random.PRNGKey(0)
