"""ccdyn.one_layer.gaussian_kernel: Lemma 1's feature map against the Gaussian alpha it expands (g with
negative entries, so the shift matters), the multi-index count, and Eq. 4's variance sum against the
pairwise population form."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import covariance
from ccdyn.one_layer import gaussian_kernel as gk


def test_multi_indices_count():
    for k, deg in [(1, 5), (2, 7), (3, 4)]:
        idx = gk.multi_indices(k, deg)
        assert idx.shape == (math.comb(deg + k, k), k) and idx.sum(1).max() == deg and len({tuple(a) for a in idx}) == len(idx)
    with pytest.raises(ValueError, match="degree"):
        gk.multi_indices(2, -1)


@pytest.mark.parametrize("tau", [1.5, 3.0])
def test_features_are_nonnegative_and_expand_alpha(tau):
    g = np.random.default_rng(0).standard_normal((12, 2)) - 1.0
    alpha = np.exp(-np.sum((g[:, None] - g[None]) ** 2, axis=2) / (2 * tau))
    errs = [np.abs(gk.gaussian_features(g, tau, deg) @ gk.gaussian_features(g, tau, deg).T - alpha).max()
            for deg in (5, 15, 45)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-13
    assert gk.gaussian_features(g, tau, 45).min() >= 0
    one_d = gk.gaussian_features(g[:, 0], tau, 40)
    a1 = np.exp(-(g[:, :1] - g[:, 0][None]) ** 2 / (2 * tau))
    np.testing.assert_allclose(one_d @ one_d.T, a1, atol=1e-14)


def test_variance_sum_is_the_population_pairwise_form():
    rng = np.random.default_rng(2)
    g, f = rng.standard_normal((15, 2)), rng.standard_normal((15, 3))
    p = rng.dirichlet(np.ones(15))
    alpha = np.exp(-np.sum((g[:, None] - g[None]) ** 2, axis=2) / 4.0)
    phi = gk.gaussian_features(g, 2.0, 50)
    np.testing.assert_allclose(gk.variance_sum(f, p, phi), np.asarray(covariance.population_cov(f, f, p, alpha)),
                               atol=1e-13)
    # uniform alpha (the degree-0 map phi = 1 of a constant g): the p-weighted covariance
    mean = p @ f
    np.testing.assert_allclose(gk.variance_sum(f, p, np.ones((15, 1))), (f - mean).T @ (p[:, None] * (f - mean)),
                               atol=1e-14)


# --- the engine's Taylor path (taylor_order, feature_range, taylor_laplacian_rows) -----------------------

def test_taylor_order_is_the_smallest_order_within_eps():
    for x, eps in [(0.0, 1e-8), (0.3, 2.0 ** -24), (6.4, 2.0 ** -24), (6.4, 2.0 ** -53), (40.0, 1e-10)]:
        k = gk.taylor_order(x, eps)
        assert k is not None and k * math.log(max(x, 1e-300)) - math.lgamma(k + 1) <= math.log(eps)
        if k > 1:  # one term fewer is not enough
            assert (k - 1) * math.log(x) - math.lgamma(k) > math.log(eps)
    assert gk.taylor_order(200.0, 2.0 ** -24) is None and gk.taylor_order(float("nan"), 1e-8) is None


@pytest.mark.parametrize("name", ["relu", "tanh", "gelu", "quadratic", "leaky_relu"])
def test_feature_range_bounds_every_unit_node(name):
    from ccdyn.activations import get_activation

    act = get_activation(name)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((60, 5)) * rng.uniform(0.2, 3.0, (60, 1))
    bound = gk.feature_range([x, 0.5 * x], act)
    w = rng.standard_normal((4000, 5))
    w = np.vstack([w / np.linalg.norm(w, axis=1, keepdims=True), x / np.linalg.norm(x, axis=1, keepdims=True)])
    g = np.asarray(act.h(w @ x.T), np.float64)
    worst = float(np.max(g.max(1) - g.min(1)))
    assert worst <= bound <= 1.01 * (np.max(act.h(np.linspace(-1, 1, 100001) * np.linalg.norm(x, axis=1).max()))
                                     - np.min(act.h(np.linspace(-1, 1, 100001) * np.linalg.norm(x, axis=1).max()))) + 1e-9
    assert worst > 0.5 * bound  # the bound is not loose by orders: the nodes along the longest x come near it
    with jax.enable_x64(False):  # the same float64 bound whatever the x64 mode (so the same K, the same numbers)
        assert gk.feature_range([x, 0.5 * x], act) == bound


def _dense_rows(g, s, p, tau):
    alpha = np.exp(-((g[:, :, None] - g[:, None, :]) ** 2) / (2 * tau))
    return np.stack([np.asarray(covariance.laplacian_apply(si, p, ai)) for si, ai in zip(s, alpha)])


@pytest.mark.parametrize("tau", [0.3, 1.0, 4.0])
def test_taylor_laplacian_within_its_truncation_bound(tau):
    """float64 against the dense kernel (covariance.laplacian_apply): every row within the bound
    |delta alpha_ij| <= x^K / K! (x = A^2) times max_i sum_j p_i p_j |s_i - s_j|, the error falling with the
    order as the truncation does (at order 3 it is large: the features, not luck, are being measured), and
    at the order taylor_order picks for float64, within rounding of the dense kernel."""
    rng = np.random.default_rng(int(tau * 10))
    g, s = rng.uniform(-0.5, 2.0, (6, 70)), rng.standard_normal((6, 70))
    p = rng.dirichlet(np.ones(70))
    ref = _dense_rows(g, s, p, tau)
    x = np.max((g.max(1) - g.min(1)) / 2) ** 2 / tau
    scale = np.max(p[None, :, None] * p[None, None, :] * np.abs(s[:, :, None] - s[:, None, :]), axis=0).sum(1).max()
    errs = []
    for order in (3, 6, 10, gk.taylor_order(x, 2.0 ** -53)):
        got = np.asarray(gk.taylor_laplacian_rows(jnp.asarray(g), jnp.asarray(s), jnp.asarray(p), tau, order))
        errs.append(np.max(np.abs(got - ref)))
        assert errs[-1] <= math.exp(order * math.log(x) - math.lgamma(order + 1)) * scale + 1e-15, (order, errs)
    assert errs[0] > 1e-5 * np.max(np.abs(ref)) and errs[0] > errs[1] > errs[2], errs
    assert errs[3] <= 1e-13 * np.max(np.abs(ref)), errs


def test_engine_field_with_the_taylor_path_is_the_dense_field():
    """dynamics.ascent through the features (Pairwise.feature_range set) against the dense kernel in float64:
    the float64 features to 1e-13, the float32 ones to 5e-6 of the largest ||u|| (the float32 dense kernel is
    off by 4-6e-7 here; the features' exp(m log|a| - ...) rounds arguments of size ~m log m, measured 1.8e-6 at
    K = 37); too few points for 4 K <= n: the dense path, bit for bit."""
    from ccdyn import pairwise
    from ccdyn.activations import get_activation
    from ccdyn.data import make_dataset
    from ccdyn.one_layer import dynamics

    rng = np.random.default_rng(7)
    x = rng.standard_normal((300, 6)) + 2.0 * rng.standard_normal((4, 6))[rng.integers(0, 4, 300)]
    w = rng.standard_normal((40, 6))
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    field = jax.jit(lambda W, ds, act, pw: dynamics.ascent(ds, act, W, pw), static_argnums=(2, 3))
    for name in ("relu", "tanh"):
        act = get_activation(name)
        dense = pairwise.get_pairwise("gaussian", 2.0)
        fast = gk.bounded(dense, [x], act)
        ref = np.asarray(field(jnp.asarray(w), make_dataset(x, dtype=jnp.float64), act, dense))
        for dtype, rtol in ((jnp.float64, 1e-13), (jnp.float32, 5e-6)):
            assert dynamics.taylor_order(fast, dtype, 300) is not None
            got = np.asarray(field(jnp.asarray(w, dtype), make_dataset(x, dtype=dtype), act, fast), np.float64)
            assert np.max(np.abs(got - ref)) <= rtol * np.max(np.abs(ref)), (name, dtype)
    small = make_dataset(x[:40], dtype=jnp.float32)
    fast = gk.bounded(pairwise.get_pairwise("gaussian", 2.0), [x[:40]], get_activation("relu"))
    assert dynamics.taylor_order(fast, jnp.float32, 40) is None
    np.testing.assert_array_equal(dynamics.ascent(small, get_activation("relu"), jnp.asarray(w, jnp.float32), fast),
                                  dynamics.ascent(small, get_activation("relu"), jnp.asarray(w, jnp.float32),
                                                  pairwise.get_pairwise("gaussian", 2.0)))
