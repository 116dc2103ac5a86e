"""The digits analogue of Tables 2-3 (ccdyn.deep.studies.digits): the Eq. 7 loss reproduces the InfoNCE
gradient exactly without augmentation, the beta extension acts through r_+ only, views are shifts."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.deep.studies import digits


_grad = jax.jit(jax.grad(digits.batch_loss), static_argnums=4)


def _grads(cfg, x0, x1, x2, params):
    return jax.tree_util.tree_leaves(_grad(params, x0, x1, x2, cfg))


@pytest.mark.slow
def test_exact_loss_and_beta_match_infonce_without_augmentation():
    params = digits.init_mlp(jax.random.PRNGKey(0), 16, 8)
    x0 = jax.random.uniform(jax.random.PRNGKey(1), (12, 64))
    x1 = x0 + 0.2 * jax.random.normal(jax.random.PRNGKey(2), x0.shape)
    base = digits.DigitsConfig(tau=0.3)
    ref = _grads(base, x0, x0, x0, params)
    for cfg in (digits.DigitsConfig(tau=0.3, loss="nce_exact"), digits.DigitsConfig(tau=0.3, loss="nce_beta", beta=-0.5)):
        for a, b in zip(_grads(cfg, x0, x0, x0, params), ref):
            np.testing.assert_allclose(a, b, atol=1e-12)
    # with augmentation (x1 != x0) the exact loss drops the residue: the gradients differ
    diff = [jnp.abs(a - b).max() for a, b in zip(_grads(digits.DigitsConfig(tau=0.3, loss="nce_exact"), x0, x1, x0, params),
                                                 _grads(base, x0, x1, x0, params))]
    assert max(diff) > 1e-4


@pytest.mark.slow
def test_views_are_one_pixel_shifts():
    img = np.zeros((3, 8, 8))
    img[:, 2:6, 3:5] = np.arange(8).reshape(4, 2) + 1.0
    x = jnp.asarray(img.reshape(3, 64))
    v = np.asarray(jax.jit(digits.augment, static_argnums=2)(jax.random.PRNGKey(0), x, 0.0)).reshape(3, 8, 8)
    for a, b in zip(img, v):
        assert any(np.array_equal(np.roll(np.roll(a, dy, 0), dx, 1), b) for dy in (-1, 0, 1) for dx in (-1, 0, 1))


@pytest.mark.slow  # trains (compiles) the encoder
def test_a_seed_that_diverges_is_left_out_of_the_means_and_named():
    """tau 1e-320 (subnormal in float64, 0 in float32): d^2 / tau overflows, the runs go non-finite; their
    accuracy is NaN from that checkpoint, the means are over the finite seeds only (NaN when none is left),
    and the row names them."""
    (row,) = digits.run_variants(["nce"], 2, 0, [0, 5], digits.DigitsConfig(lr=1e-2, tau=1e-320, batch_size=16))
    acc = np.asarray(row["accuracy"])
    assert row["nonfinite_seeds"] == [0, 1] and np.all(np.isfinite(acc[:, 0])) and np.all(np.isnan(acc[:, 1]))
    assert row["mean"][0] == pytest.approx(acc[:, 0].mean()) and np.isnan(row["mean"][1]) and np.isnan(row["std"][1])
