"""Global modulation (Lemma 5, Thm. 5, Thm. 6, Eq. 155) and BatchNorm (Cor. 3) against independent routes."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, covariance, stats
from ccdyn.two_layer import modulation


def population(key, k=3, n=3, d=4, scales=None):
    pop = modulation.modulated_population(key, k, d, n, p1=0.3)
    if scales is not None:
        pop = pop.replace(x=pop.x * jnp.asarray(scales)[:, None, None])
    return pop


@pytest.mark.parametrize("act,batch_norm", [  # fast: a kinked h without batch norm, the linear one with it
    (a, bn) if (a, bn) in (("relu", False), ("linear", True)) else pytest.param(a, bn, marks=pytest.mark.slow)
    for a in ("relu", "leaky_relu", "linear") for bn in (False, True)])
def test_eq15_equals_lemma4_on_the_joint_population(key, act, batch_norm):
    """Thm. 5 (Eq. 15, 139-143) and Cor. 3 (Eq. 178) against Lemma 4 / Lemma 6 with S = s s^T, to 1e-10."""
    h = activations.get_activation(act)
    for i, (k, n, d) in enumerate([(3, 3, 4), (4, 2, 3)]):
        pop = population(jax.random.fold_in(key, i), k, n, d, scales=np.geomspace(0.2, 5, k))
        w = jax.random.normal(jax.random.fold_in(key, 100 + i), (k, d))
        if batch_norm and np.any(np.asarray(modulation.rf_moments(pop, w, h)["sigma"]) == 0):
            continue  # BatchNorm of a dead node is undefined
        v15 = jax.jit(modulation.eq15_velocity, static_argnums=(2, 3))(pop, w, h, batch_norm)
        v4 = jax.jit(modulation.lemma4_velocity, static_argnums=(2, 3))(pop, w, h, batch_norm)
        assert float(jnp.abs(v4).max()) > 1e-3
        chex.assert_trees_all_close(v15, v4, atol=1e-10 * float(jnp.abs(v4).max()), rtol=0)


def test_lemma5_variance_decomposition(key):
    """V[x~] = diag_k L_k + p0 p1 Delta Delta^T (Eq. 120) and V[f1] = D + p0 p1 b b^T (Eq. 138)."""
    pop = population(key, 3, 3, 4)
    act = activations.get_activation("relu")
    w = jax.random.normal(jax.random.PRNGKey(1), (3, 4))
    m = modulation.rf_moments(pop, w, act)
    x, p = modulation.joint_support(pop)
    np.testing.assert_allclose(float(p.sum()), 1.0, rtol=1e-14)
    g = (x * act.dh(jnp.einsum("nkd,kd->nk", x, w))[..., None]).reshape(x.shape[0], -1)
    want = jax.scipy.linalg.block_diag(*m["L"]) + m["p0p1"] * jnp.outer(m["Delta"].reshape(-1), m["Delta"].reshape(-1))
    chex.assert_trees_all_close(covariance.population_cov(g, g, p), want, atol=1e-13)
    f1 = act.h(jnp.einsum("nkd,kd->nk", x, w))
    chex.assert_trees_all_close(covariance.population_cov(f1, f1, p),
                                jnp.diag(m["d"]) + m["p0p1"] * jnp.outer(m["b"], m["b"]), atol=1e-13)


def test_top_eigen_secular_equation_and_delta(key):
    d = jax.random.uniform(key, (6,))
    b = jax.random.normal(jax.random.PRNGKey(2), (6,))
    p0p1 = 0.21
    lam, s, delta = modulation.top_eigen(d, b, p0p1)
    vals, vecs = np.linalg.eigh(np.diag(d) + p0p1 * np.outer(b, b))
    np.testing.assert_allclose(lam, vals[-1], rtol=1e-13)
    np.testing.assert_allclose(np.abs(s @ vecs[:, -1]), 1.0, rtol=1e-12)
    z2 = np.sum((b / (d - lam)) ** 2)
    for k in range(6):  # Eq. 143 by a loop
        rest = sum(b[j] ** 2 / (lam - d[j]) for j in range(6) if j != k)
        np.testing.assert_allclose(delta[k], p0p1 / (z2 * (lam - d[k])) * rest, rtol=1e-12)
        # The paper's "delta_k = 1 - p0 p1 b_k^2 / (lambda - d_k)" holds up to the factor Z^2 (lambda - d_k).
        np.testing.assert_allclose(delta[k] * z2 * (lam - d[k]), 1 - p0p1 * b[k] ** 2 / (lam - d[k]), rtol=1e-10)
    assert np.all(np.asarray(delta) >= 0)


def test_batch_norm_makes_d_uniform_cor3(key):
    """d_k^bn = d_k / (d_k + p0 p1 b_k^2) (Cor. 3 remark): independent of the scale of R_k."""
    pop = population(key, 3, 4, 3, scales=[0.01, 1.0, 100.0])
    act = activations.get_activation("linear")
    w = jax.random.normal(jax.random.PRNGKey(3), (3, 3))
    m, mb = modulation.rf_moments(pop, w, act), modulation.rf_moments(pop, w, act, batch_norm=True)
    np.testing.assert_allclose(mb["d"], m["d"] / (m["d"] + m["p0p1"] * m["b"] ** 2), rtol=1e-12)
    assert np.ptp(np.log10(np.asarray(m["d"]))) > 6 and np.all((0 < mb["d"]) & (mb["d"] <= 1))
    # Same population with every RF at scale 1: identical d^bn.
    same = modulation.rf_moments(population(key, 3, 4, 3), w, act, batch_norm=True)
    chex.assert_trees_all_close(mb["d"], same["d"], rtol=1e-12)


def test_one_d_dynamics_closed_form_and_blowup():
    """Eq. 147 against RK4; t* of Eq. 150 is where the closed form diverges; y(0) < 0 tends to -b."""
    for y0, b in [(0.5, 1.0), (0.1, 2.0), (1.5, 0.3)]:
        t_star = float(modulation.blowup_time(y0, b))
        t_end = 0.9 * t_star
        ys = modulation.integrate_1d(y0, b, t_end, 20000)
        np.testing.assert_allclose(ys[-1], modulation.closed_form_1d(y0, b, t_end), rtol=1e-9)
        assert float(modulation.closed_form_1d(y0, b, t_star * (1 - 1e-9))) > 1e6
        np.testing.assert_allclose(y0 / (y0 + b) * np.exp(b * t_star), 1.0, rtol=1e-12)  # Eq. 149
    ys = modulation.integrate_1d(-0.3, 1.0, 40.0, 4000)
    np.testing.assert_allclose(ys[-1], -1.0, rtol=1e-9)
    assert np.isinf(float(modulation.blowup_time(-0.3, 1.0)))


@pytest.mark.parametrize("d", [2, 5, 20])
def test_eq155_matches_quadrature_of_eq154(d):
    y = np.linspace(0, 1, 400001)
    for eps in [-1.5, -1.0, -0.4, 0.0, 0.3, 1.0, 1.7]:
        cdf = np.clip((y + eps + 1) / 2, 0, 1) ** (d - 1)
        np.testing.assert_allclose(modulation.p_converge(eps, d), np.trapezoid(cdf, y) / 2, atol=1e-9)


def test_eq155_within_monte_carlo_interval():
    for eps, d in [(0.0, 10), (0.3, 10), (-0.3, 5)]:
        n = 100_000
        count = modulation.p_converge_mc(jax.random.PRNGKey(7), eps, d, n)
        lo, hi = stats.wilson_interval(count, n)
        assert lo <= modulation.p_converge(eps, d) <= hi, (eps, d, count / n, modulation.p_converge(eps, d))


def test_modulation_enlarges_the_basin_thm6():
    """Flow of A(w) = sum_l (u_l^T w + b_l) u_l u_l^T: the basin of u_0 grows with its modulation c.

    Starts with every y_l(0) < 0 have no component that can blow up (Fig. 7) and end at an attractor
    in the negative orthant; every other start ends at some u_l."""
    d, n = 6, 2000
    y0 = jax.random.normal(jax.random.PRNGKey(0), (n, d))
    y0 = y0 / jnp.linalg.norm(y0, axis=1, keepdims=True)
    fractions = []
    for c in [0.0, 0.3]:
        b = jnp.full((d,), 0.5).at[0].add(c)
        y = np.asarray(modulation.structured_flow(y0, b, n_steps=3000))
        on_pattern = y.max(axis=1) > 1 - 1e-6
        assert np.all(y[~on_pattern] < 0) and on_pattern.mean() > 0.95
        counts = np.bincount(y.argmax(axis=1)[on_pattern], minlength=d)
        fractions.append(counts[0] / n)
        if c == 0:  # symmetric: u_0 gets its 1/d share of the starts that reach a pattern
            lo, hi = stats.wilson_interval(counts[0], n)
            assert lo <= on_pattern.mean() / d <= hi
    assert fractions[1] > fractions[0] + 0.05


def test_bad_population_arguments():
    with pytest.raises(ValueError, match=r"p1=1.0 must lie in \(0, 1\)"):
        modulation.modulated_population(jax.random.PRNGKey(0), 2, 3, 2, p1=1.0)
    with pytest.raises(ValueError, match="2 n\\^K = 2097152 points"):
        modulation.joint_support(modulation.modulated_population(jax.random.PRNGKey(0), 20, 2, 2))
