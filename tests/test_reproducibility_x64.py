"""The same seed gives the same data and inits with or without ``jax_enable_x64`` (docs/reproducibility.md).

The draws are made once under ``jax.enable_x64(False)`` (a library call with x64 off) and once with x64
on (the tests' mode, and the scripts'), in this process, and compared as float32. The end-to-end check
(``basins.run`` with x64 off in its own process against ``scripts/basins.py``, init by init) is the slow
``tests/scripts/test_basins_library_vs_script.py``.
"""

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import data, parallel
from ccdyn.data.dataset import sample_batch


def _draws() -> dict:
    key = jax.random.PRNGKey(7)
    U = data.near_orthogonal_basis(key, d=6, m=4, eps=0.2)
    sampled = data.latent_summation(U, q=0.3, key=jax.random.PRNGKey(2), n_samples=50)
    mix = data.gaussian_mixture(key, np.eye(3), 0.1, 40, weights=[0.2, 0.3, 0.5])
    views = data.gaussian_noise_views(mix, jax.random.PRNGKey(4), 3, 0.05)
    batch = sample_batch(views, jax.random.PRNGKey(5), 16)
    w = parallel.init_weights(key, 3, 20, 6, jnp.float32)
    out = {"U": U, "sampled": sampled.x, "mix": mix.x, "views": views.x_aug, "batch": batch[1], "w": w}
    return {k: np.asarray(v, np.float32) for k, v in out.items()}


def test_draws_do_not_depend_on_the_x64_mode():
    with jax.enable_x64(False):
        off = _draws()
        assert jnp.zeros(1).dtype == jnp.float32  # the context really turned x64 off
    on = _draws()
    for name in off:
        # The draws are float32 in both modes; the float64 mode's QR / eigh / products round once to
        # float32 here, so equal to a float32 ulp or two, where float64 draws would differ at O(1).
        np.testing.assert_allclose(off[name], on[name], rtol=0, atol=2e-6, err_msg=name)


def test_float64_inits_are_the_float32_draws_normalized():
    w64 = np.asarray(parallel.init_weights(jax.random.PRNGKey(1), 0, 50, 5, jnp.float64))
    w32 = np.asarray(parallel.init_weights(jax.random.PRNGKey(1), 0, 50, 5, jnp.float32))
    np.testing.assert_allclose(np.linalg.norm(w64, axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(w64, w32, rtol=0, atol=1e-6)
