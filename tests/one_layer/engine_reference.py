"""Small engine runs whose results before the sliding flow are stored in ``engine_reference.npz``
(written by ``python -m tests.one_layer.engine_reference`` at commit e27283a, under the test suite's XLA
setting): power iteration and ``euler_halving`` must reproduce them bit for bit."""

import os

if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):  # the suite's setting (conftest.py)
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_backend_optimization_level=0".strip()

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from ccdyn import activations, data, pairwise, parallel  # noqa: E402
from ccdyn.data.registry import DataSpec, build_dataset  # noqa: E402
from ccdyn.one_layer import engine  # noqa: E402

PATH = os.path.join(os.path.dirname(__file__), "engine_reference.npz")
FIELDS = ("w", "status", "steps", "residual")


def cloud(seed: int = 1, n: int = 20, d: int = 3):
    """A random Gaussian point cloud (the issue's kind of data: every ReLU maximum on a kink)."""
    return data.make_dataset(x=np.random.default_rng(seed).standard_normal((n, d)), dtype=jnp.float64)


def runs() -> dict:
    """{name_field: array} for power and euler_halving on the default data (float32, 200 inits) and on
    :func:`cloud` (float64, 200 inits, where power iteration circles kinks)."""
    relu, uniform = activations.get_activation("relu"), pairwise.get_pairwise("uniform")
    cases = {"default": (build_dataset(DataSpec(), jnp.float32), jnp.float32), "cloud": (cloud(), jnp.float64)}
    out = {}
    for name, (ds, dtype) in cases.items():
        W = parallel.init_weights(jax.random.PRNGKey(3), 0, 200, ds.dim, dtype)
        for method in ("power", "euler_halving"):
            res = engine.converge(ds, relu, uniform, engine.Dynamics(method=method, max_steps=400), W)
            out.update({f"{name}_{method}_{k}": np.asarray(res[k]) for k in FIELDS})
    return out


if __name__ == "__main__":
    jax.config.update("jax_enable_x64", True)
    np.savez(PATH, **runs())
