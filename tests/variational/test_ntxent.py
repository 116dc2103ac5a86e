"""Eq. 1 / Eq. 4 losses on weighted point sets against explicit loops, and Prop. 2.1 (an invariant map
makes the loss a function of the latent distribution only) on two different input distributions."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.variational import ntxent
from tests.variational.mp_reference import eq4_grad_hessian_mp


def _eq4_loop(z, p, tau):
    z, p = np.asarray(z), np.asarray(p)
    out = 0.0
    for i in range(len(p)):
        g = sum(p[j] * np.exp(-np.sum((z[i] - z[j]) ** 2) / (2 * tau)) for j in range(len(p)))
        out += p[i] * np.log1p(g)
    return out


def _eq1_loop(z, p, q, tau, exclude_self):
    z, p, q = np.asarray(z), np.asarray(p), np.asarray(q)
    cos = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)
    out = 0.0
    for i in range(z.shape[0]):
        for v in range(z.shape[1]):
            for w in range(z.shape[1]):
                num = sum(p[j] * (np.exp(cos(z[i, v], z[j, v]) / tau) + np.exp(cos(z[i, v], z[j, w]) / tau))
                          for j in range(z.shape[0]) if not (exclude_self and j == i))
                out += p[i] * q[v] * q[w] * np.log1p(num / np.exp(cos(z[i, v], z[i, w]) / tau))
    return out


@pytest.mark.slow
def test_eq4_matches_a_loop_and_views_reduce_to_it(key):
    z = jax.random.normal(key, (7, 3))
    p = jax.random.dirichlet(jax.random.PRNGKey(1), jnp.ones(7))
    chex.assert_trees_all_close(ntxent.eq4_loss(z, p, 0.3), _eq4_loop(z, p, 0.3), rtol=1e-12)
    same_views = jnp.repeat(z[:, None], 3, 1)
    chex.assert_trees_all_close(ntxent.eq4_loss_views(same_views, p, jnp.array([0.2, 0.3, 0.5]), 0.3),
                                ntxent.eq4_loss(z, p, 0.3), rtol=1e-12)


@pytest.mark.slow
def test_eq4_with_views_against_its_definition(key):
    z = jax.random.normal(key, (4, 2, 3))
    p, q = jnp.array([0.1, 0.2, 0.3, 0.4]), jnp.array([0.3, 0.7])
    zn, pn, qn = map(np.asarray, (z, p, q))
    e = lambda a, b: np.exp(-np.sum((a - b) ** 2) / (2 * 0.4))
    ref = sum(pn[i] * qn[v] * qn[w] * np.log1p(sum(pn[j] * e(zn[i, v], zn[j, w]) for j in range(4)) / e(zn[i, v], zn[i, w]))
              for i in range(4) for v in range(2) for w in range(2))
    chex.assert_trees_all_close(ntxent.eq4_loss_views(z, p, q, 0.4), ref, rtol=1e-12)
    chex.assert_trees_all_close(ntxent.eq4_loss_views(z, p, q, 0.4, dists="diff"), ref, rtol=1e-12)


@pytest.mark.parametrize("exclude", ["none", "self"])
@pytest.mark.slow
def test_eq1_matches_a_loop(key, exclude):
    z = jax.random.normal(key, (5, 2, 3))
    p, q = jnp.full((5,), 0.2), jnp.array([0.5, 0.5])
    chex.assert_trees_all_close(ntxent.eq1_loss_views(z, p, q, 0.5, exclude),
                                _eq1_loop(z, p, q, 0.5, exclude == "self"), rtol=1e-12)


@pytest.mark.slow
def test_eq5_gaussian_similarity_is_the_cosine_on_the_sphere(key):
    u = jax.random.normal(key, (6, 4))
    u = u / jnp.linalg.norm(u, axis=1, keepdims=True)
    tau = 0.2
    chex.assert_trees_all_close(jnp.exp(-ntxent.sq_dists(u) / (2 * tau)),
                                jnp.exp(-1 / tau) * jnp.exp(ntxent.cosine(u) / tau), rtol=1e-12)


def _invariant_inputs(u, r, D, per_atom, n_views, seed):
    """Inputs in R^D whose first two coordinates are positive multiples of the latent points u_k and whose
    views add noise in the other coordinates: f(x) = x[:2] (cosine-normalized) is invariant."""
    rng = np.random.default_rng(seed)
    xs, ps = [], []
    for k, m in enumerate(per_atom):
        for _ in range(m):
            base = np.concatenate([rng.uniform(0.5, 3.0) * np.asarray(u[k]), np.zeros(D - 2)])
            views = [base + np.concatenate([np.zeros(2), rng.normal(size=D - 2)]) for _ in range(n_views)]
            xs.append(views)
            ps.append(float(r[k]) / m)
    q = rng.dirichlet(np.ones(n_views))
    return jnp.asarray(np.array(xs)), jnp.asarray(ps), jnp.asarray(q)


def test_prop21_invariant_map_gives_the_latent_form_whatever_the_input():
    u = jnp.array([[1.0, 0.0], [0.0, 1.0], [-0.6, -0.8]])
    r = jnp.array([0.5, 0.3, 0.2])
    f = lambda x: x[..., :2]
    a = _invariant_inputs(u, r, D=4, per_atom=(2, 1, 3), n_views=2, seed=0)
    b = _invariant_inputs(u, r, D=6, per_atom=(1, 4, 1), n_views=3, seed=1)
    la = ntxent.eq1_loss_views(f(a[0]), a[1], a[2], 0.5, "none")
    lb = ntxent.eq1_loss_views(f(b[0]), b[1], b[2], 0.5, "none")
    latent = ntxent.latent_loss(u, r, 0.5, "none", positive=True)
    chex.assert_trees_all_close(la, latent, rtol=1e-12)
    chex.assert_trees_all_close(lb, latent, rtol=1e-12)


@pytest.mark.slow
def test_prop21_for_the_generalized_loss_eq4():
    u = jnp.array([[1.0, 0.0], [0.0, 1.0], [-0.6, -0.8]])
    r = jnp.array([0.5, 0.3, 0.2])
    a = _invariant_inputs(u, r, D=4, per_atom=(2, 1, 3), n_views=2, seed=0)
    b = _invariant_inputs(u, r, D=6, per_atom=(1, 4, 1), n_views=3, seed=1)
    unit = lambda x: x[..., :2] / jnp.linalg.norm(x[..., :2], axis=-1, keepdims=True)  # noqa: E731
    e4 = lambda s: ntxent.eq4_loss_views(unit(s[0]), s[1], s[2], 0.5)  # noqa: E731
    chex.assert_trees_all_close(e4(a), e4(b), rtol=1e-12)
    chex.assert_trees_all_close(e4(a), ntxent.eq4_loss(u, r, 0.5), rtol=1e-12)


@pytest.mark.slow
def test_prop21_readings_that_break_it():
    """The formula as printed (no positive-pair denominator e^{1/tau}) and the per-sample indicator on an
    input that f merges are not the latent form: the checks above can fail."""
    u = jnp.array([[1.0, 0.0], [0.0, 1.0]])
    r = jnp.array([0.5, 0.5])
    x, p, q = _invariant_inputs(u, r, D=3, per_atom=(2, 2), n_views=1, seed=0)
    eq1 = ntxent.eq1_loss_views(x[..., :2], p, q, 0.5, "none")
    assert abs(float(ntxent.latent_loss(u, r, 0.5, "none", positive=False) - eq1)) > 0.1
    self_excl = ntxent.eq1_loss_views(x[..., :2], p, q, 0.5, "self")
    atom = ntxent.latent_loss(u, r, 0.5, "atom", positive=True)
    assert abs(float(self_excl - atom)) > 1e-3


@pytest.mark.slow
def test_bad_exclude_is_refused():
    with pytest.raises(ValueError, match="exclude"):
        ntxent.latent_loss(jnp.eye(2), jnp.array([0.5, 0.5]), exclude="others")


def test_distances_by_differences_keep_second_derivatives_exact(key):
    """Both forms give the same values; only the differences give the antipodal pair's Hessian at tau = 0.01
    (closed form 1.84e-83 for d^2 L / dz_0x^2, docs/variational.md): the GEMM form's self term leaves 1e-16
    absolute errors that swamp it. The written-out gradient and Hessian, and autodiff through the
    differences, are within the stated bounds of a 200-digit finite-difference reference."""
    z = jax.random.normal(key, (4, 3))
    z = z.at[3].set(z[2])                                             # two coincident points
    chex.assert_trees_all_close(ntxent.sq_dists_diff(z), ntxent.sq_dists(z), atol=1e-14)
    assert float(ntxent.sq_dists_diff(z)[2, 3]) == 0.0
    p, tau = jnp.array([0.1, 0.2, 0.3, 0.4]), 0.2
    g_mp, h_mp = eq4_grad_hessian_mp(z, p, tau)
    g, g_err, h, h_err = ntxent.eq4_grad_hessian(z, p, tau)
    autodiff = jax.hessian(lambda x: ntxent.eq4_loss(x.reshape(4, 3), p, tau, dists="diff"))(z.reshape(-1))
    for route in (h, autodiff):
        assert np.all(np.abs(np.asarray(route) - h_mp) <= np.asarray(h_err))
    assert np.all(np.abs(np.asarray(g) - g_mp) <= np.asarray(g_err))
    assert float(jnp.max(h_err)) < 1e-12 * float(jnp.max(jnp.abs(h)))
    anti, half, tau = jnp.array([[1.0, 0.0], [-1.0, 0.0]]), jnp.array([0.5, 0.5]), 0.01
    exact = 1.8405823805598607e-83
    hess = {}
    for d in ntxent.DISTS:
        loss = functools.partial(ntxent.eq4_loss, p=half, tau=tau, dists=d)
        hess[d] = jax.hessian(lambda x: loss(x.reshape(2, 2)))(anti.reshape(-1))[0, 0]  # noqa: B023
    assert float(hess["diff"]) == pytest.approx(exact, rel=1e-13)
    assert abs(float(hess["gemm"]) - exact) > 0.5 * exact
    with pytest.raises(ValueError, match="dists"):
        ntxent.pairwise_sq_dists(z, dists="cosine")
