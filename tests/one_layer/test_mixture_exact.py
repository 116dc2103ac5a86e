"""ccdyn.one_layer.mixture_exact: the closed forms against brute force (quadrature, dense grids, the pairwise
covariance of ccdyn.covariance) and the first-order roughness against finite differences."""

import numpy as np
import pytest

from ccdyn import covariance
from ccdyn.one_layer import mixture_exact as mx

MEANS = np.array([[2.0, 0.1, -0.2], [0.0, 1.9, 0.3], [-0.1, 0.2, 2.1]])
STD = 0.3


def _gauss_hermite(a, s, f, n=200):
    z, wt = np.polynomial.hermite_e.hermegauss(n)
    return float(wt @ f(a + s * z) / np.sqrt(2 * np.pi))


@pytest.mark.parametrize("tau", [None, 8.0, 0.5, 0.05])
def test_relu_moments_against_quadrature(tau):
    w = np.array([0.6, 0.7, -0.2])
    w /= np.linalg.norm(w)
    phi = (lambda h: np.ones_like(h)) if tau is None else (lambda h: np.exp(-h * h / (2 * tau)))
    ref = {"E_h": 0.0, "z0": 0.0, "E_phi0_h": 0.0}
    for mu in MEANS:  # the kink at 0 is split: quadrature on each side of it
        a = mu @ w
        t = np.linspace(-12 * STD + a, 12 * STD + a, 400001)
        dens = np.exp(-(t - a) ** 2 / (2 * STD ** 2)) / (STD * np.sqrt(2 * np.pi))
        h = np.maximum(t, 0)
        for key, f in (("E_h", h), ("z0", phi(h)), ("E_phi0_h", phi(h) * h)):
            ref[key] += np.trapezoid(f * dens, t) / 3
    got = mx.relu_moments(MEANS, STD, w, tau)
    for key in ref:
        assert got[key] == pytest.approx(ref[key], rel=1e-7, abs=1e-12)
    assert got["E_phi0_h"] <= got["z0"] * got["E_h"] + 1e-15  # Chebyshev: phi0 falls as h grows


def test_plane_second_moment_and_density_max_against_a_dense_grid():
    w = np.array([0.3, -0.5, 0.8])
    w /= np.linalg.norm(w)
    q = np.linalg.svd(np.eye(3) - np.outer(w, w))[0][:, :2]  # a basis of the plane
    g = np.linspace(-5, 5, 801)
    y = np.stack(np.meshgrid(g, g, indexing="ij"), -1).reshape(-1, 2) @ q.T
    p = mx.mixture_density(MEANS, STD, y)
    da = (g[1] - g[0]) ** 2
    m = np.einsum("n,ni,nj->ij", p, y, y) * da
    np.testing.assert_allclose(mx.plane_second_moment(MEANS, STD, w), m, rtol=1e-6, atol=1e-9)
    best, where = mx.plane_density_max(MEANS, STD, w)
    assert abs(where @ w) < 1e-12 and best >= p.max() - 1e-12 and best <= p.max() * (1 + 1e-3)


def test_frozen_alpha_difference_is_the_pairwise_covariance_difference():
    rng = np.random.default_rng(1)
    x = mx.sample_mixture(MEANS, STD, 300, rng)
    w = np.array([0.2, 0.5, 0.84])
    w /= np.linalg.norm(w)
    v = w + 0.3 * np.array([1.0, -0.4, 0.0])
    v /= np.linalg.norm(v)
    p = np.full(300, 1 / 300)
    h = np.maximum(x @ w, 0)
    for tau in (None, 0.5):
        alpha = None if tau is None else np.exp(-(h[:, None] - h[None]) ** 2 / (2 * tau))

        def a_w(u):
            g = x * (x @ u >= 0)[:, None]
            return np.asarray(covariance.population_cov(g, g @ w, p, alpha))[:, 0]

        np.testing.assert_allclose(mx.frozen_alpha_difference(x, w, v, tau, chunk=7), a_w(v) - a_w(w),
                                   rtol=1e-10, atol=1e-13)


def test_first_order_change_matches_the_closed_form():
    """Richardson-extrapolated finite differences of Eq. 3 on 20 000 draws: the vector within sampling
    noise, and the Gaussian / uniform ratio (same draws, same planes) closely."""
    w = MEANS[0] / np.linalg.norm(MEANS[0])
    x = mx.sample_mixture(MEANS, STD, 20000, np.random.default_rng(0))
    fd = {}
    for tau in (None, 0.5):
        fr = mx.frozen_roughness(MEANS, STD, w, tau)
        if tau is None:
            u = fr["u_top"] - (fr["u_top"] @ w) * w
            u /= np.linalg.norm(u)
        per = [mx.frozen_alpha_difference(x, w, np.cos(e) * w + np.sin(e) * u, tau) / (2 * np.sin(e / 2))
               for e in (0.04, 0.02)]
        fd[tau] = 2 * per[1] - per[0]
        exact = -fr["E_phi0_h"] * fr["M"] @ u
        assert np.linalg.norm(fd[tau] - exact) <= 0.15 * np.linalg.norm(exact)
        assert np.linalg.norm(exact) == pytest.approx(fr["rho"], rel=1e-12)
    ratio = mx.relu_moments(MEANS, STD, w, 0.5)["E_phi0_h"] / mx.relu_moments(MEANS, STD, w)["E_h"]
    assert np.linalg.norm(fd[0.5]) / np.linalg.norm(fd[None]) == pytest.approx(ratio, rel=0.05)


def test_bad_inputs():
    with pytest.raises(ValueError, match="std"):
        mx.relu_moments(MEANS, 0.0, np.ones(3))
    with pytest.raises(ValueError, match="tau"):
        mx.relu_moments(MEANS, STD, np.ones(3), tau=-1.0)
    with pytest.raises(ValueError, match="weights"):
        mx.plane_second_moment(MEANS, STD, np.ones(3), weights=[0.5, 0.5, 0.5])
