"""1-layer dynamics (Sec. 3): the batched ascent field against dense A(w) and autodiff, closed forms."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, one_layer, pairwise
from ccdyn.one_layer import certify


def _unit_rows(key, n, d):
    w = jax.random.normal(key, (n, d))
    return w / jnp.linalg.norm(w, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def mixture():
    base = data.gaussian_mixture(jax.random.PRNGKey(1), np.eye(4) * 1.5 + 0.2, 0.5, 30)
    return {"none": base, "aug": data.gaussian_noise_views(base, jax.random.PRNGKey(2), 3, 0.3)}


# fast: half of the cases, each activation with both alphas and both view settings (a + k + v even); all: -m slow
CASES = [(a, k, v) if (i + j + l) % 2 == 0 else pytest.param(a, k, v, marks=pytest.mark.slow)
         for i, a in enumerate(activations.HOMOGENEOUS) for j, k in enumerate(pairwise.KINDS)
         for l, v in enumerate(("none", "aug"))]


@pytest.mark.parametrize("name,kind,views", CASES)
def test_autodiff_gradient_is_a_times_w_over_degree(mixture, name, kind, views):
    """grad_w E_{sg(alpha)}(w) = A(w) w / p (Lemma 3) and the batched field equals dense A(w) w."""
    ds, act = mixture[views], activations.get_activation(name)
    pw = pairwise.get_pairwise(kind, 0.8)
    W = _unit_rows(jax.random.PRNGKey(3), 5, ds.dim)
    u = one_layer.ascent(ds, act, W, pw)
    chex.assert_shape(u, W.shape)
    for w, uw in zip(W, u):
        alpha = one_layer.node_alpha(ds, act, pw, w)
        grad = jax.grad(lambda v: one_layer.energy_given_alpha(ds, act, v, alpha))(w)
        dense = one_layer.a_matrix(ds, act, w, pw) @ w
        chex.assert_trees_all_close(uw, dense, rtol=1e-10, atol=1e-12)
        chex.assert_trees_all_close(grad, dense / act.degree, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["tanh", "gelu"])
def test_non_homogeneous_ascent_is_the_gradient(mixture, name):
    ds, act = mixture["aug"], activations.get_activation(name)
    W = _unit_rows(jax.random.PRNGKey(4), 3, ds.dim)
    grads = jax.vmap(jax.grad(lambda v: one_layer.energy_given_alpha(ds, act, v)))(W)
    chex.assert_trees_all_close(one_layer.ascent(ds, act, W), grads, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="power iteration needs a homogeneous activation"):
        one_layer.power_step(ds, act, W)


@pytest.mark.parametrize("kind", pairwise.KINDS)
def test_batched_energy_matches_single_and_quadratic_form(mixture, kind):
    ds, act = mixture["aug"], activations.get_activation("quadratic")
    pw = pairwise.get_pairwise(kind, 0.8)
    W = _unit_rows(jax.random.PRNGKey(5), 4, ds.dim)
    e = one_layer.energy(ds, act, W, pw)
    for w, ew in zip(W, e):
        alpha = one_layer.node_alpha(ds, act, pw, w)
        chex.assert_trees_all_close(ew, one_layer.energy_given_alpha(ds, act, w, alpha), rtol=1e-12)
        a = one_layer.a_matrix(ds, act, w, pw)  # E = w^T A(w) w / (2 p^2): h = w^T x~ / p (Eq. 6)
        chex.assert_trees_all_close(ew, w @ a @ w / (2 * act.degree**2), rtol=1e-10)


def test_population_a_is_psd(mixture):
    ds = mixture["aug"]
    for w in _unit_rows(jax.random.PRNGKey(6), 6, ds.dim):
        a = one_layer.a_matrix(ds, activations.get_activation("relu"), w, pairwise.get_pairwise("gaussian", 0.3))
        assert np.linalg.eigvalsh(np.asarray(a))[0] > -1e-12


def test_latent_categorical_closed_form_eq8():
    # An exactly orthonormal basis: with rounded u_m^T u_m' = +-1e-17 the ReLU gate h'(0) would flip.
    u = np.eye(6)[:, [3, 0, 5, 1]]
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    ds = data.latent_categorical(u, probs)
    act = activations.get_activation("relu")
    for m in range(4):
        a = one_layer.a_matrix(ds, act, jnp.asarray(u[:, m]))
        chex.assert_trees_all_close(a, probs[m] * (1 - probs[m]) * np.outer(u[:, m], u[:, m]), atol=1e-13)


@pytest.mark.parametrize("q", [0.1, 0.3, 0.45])
def test_latent_summation_closed_form_eq9(key, q):
    u = data.near_orthogonal_basis(key, 5, 5)
    ds = data.latent_summation(u, q)
    act = activations.get_activation("relu")
    for m in range(5):
        um = u[:, m]
        expected = (1 - q) ** 2 * np.outer(um, um) + q * (np.eye(5) - np.outer(um, um))
        chex.assert_trees_all_close(one_layer.a_matrix(ds, act, jnp.asarray(um)), expected, atol=1e-12)


def test_flow_step_stays_on_sphere_and_linear_flow_finds_pca(key):
    ds = data.gaussian_mixture(key, np.diag([3.0, 1.0, 0.5]), 0.3, 200)
    act = activations.get_activation("linear")
    W0 = _unit_rows(jax.random.PRNGKey(7), 16, 3)
    W, moves, res = one_layer.flow(ds, act, W0, step_size=0.5, n_steps=400)
    chex.assert_shape((moves, res), ((400, 16),) * 2)
    chex.assert_trees_all_close(jnp.linalg.norm(W, axis=1), jnp.ones(16), atol=1e-12)
    cov = np.cov(np.asarray(ds.x).T, bias=True)
    top = np.linalg.eigh(cov)[1][:, -1]
    chex.assert_trees_all_close(np.abs(np.asarray(W) @ top), np.ones(16), atol=1e-8)
    assert float(res[-1].max()) < 1e-8


def test_power_iteration_near_um_thm3_fig1(key):
    """Thm. 3 / Fig. 1: with ||U^T U - I||_2 = 0.1, PI from near u_m reaches a certified optimum near u_m."""
    m = 8
    u = data.near_orthogonal_basis(key, m, m, 0.1)
    ds = data.latent_summation(u, 0.2)
    act = activations.get_activation("relu")
    pw = pairwise.get_pairwise("uniform")
    w0 = jnp.asarray(u.T) + 0.05 * jax.random.normal(jax.random.PRNGKey(8), (m, m))
    w0 = w0 / jnp.linalg.norm(w0, axis=1, keepdims=True)
    W, moves, res = one_layer.power_iteration(ds, act, w0, n_steps=60, pairwise=pw)
    assert float(moves[-1].max()) < 1e-12
    overlap = np.abs(np.sum(np.asarray(W) * u.T / np.linalg.norm(u, axis=0)[:, None], axis=1))
    assert np.all(overlap > 0.98), overlap
    certs = jax.vmap(lambda w: certify.certify(ds, act, w, pw))(W)
    assert bool(jnp.all(certs.is_lme)) and bool(jnp.all(certs.is_stable))
    # The App. B.4 shift changes the path, not the fixed points (Eq. 104).
    W_b4, _, _ = one_layer.power_iteration(ds, act, w0, n_steps=60, pairwise=pw, shift="b4")
    chex.assert_trees_all_close(W_b4, W, atol=1e-9)


def test_float32_stays_float32(key):
    ds = data.latent_summation(data.near_orthogonal_basis(key, 4, 4), 0.2)
    ds32 = data.make_dataset(ds.x, ds.p, dtype=jnp.float32)
    W = _unit_rows(key, 3, 4).astype(jnp.float32)
    W1, res = one_layer.flow_step(ds32, activations.get_activation("relu"), W, 0.1)
    chex.assert_type((W1, res), jnp.float32)


def test_bad_w_shape_names_argument(mixture):
    with pytest.raises(ValueError, match=r"W has shape \(3, 7\); expected \(n_init, 4\)"):
        one_layer.ascent(mixture["none"], activations.get_activation("relu"), jnp.ones((3, 7)))
    with pytest.raises(ValueError, match="step_size=0 must be > 0"):
        one_layer.flow(mixture["none"], "relu", jnp.ones((1, 4)), step_size=0, n_steps=1)
