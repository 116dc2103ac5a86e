"""2-layer dynamics: Lemma 4 (Eq. 12) and Lemma 6 (Eq. 166) against autodiff and the dense Eq. 12,
Thm. 4 co-linearity, the losses' alpha-CL gradients, BatchNorm variants and the vmapped trainer."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, covariance, pairwise, two_layer
from ccdyn.data import tokens

K, D, M, DOUT, N = 3, 5, 4, 6, 12


def setup(key, act="relu", bn="none", augment=True):
    net = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=DOUT, act=activations.get_activation(act), bn=bn)
    k1, k2, k3 = jax.random.split(key, 3)
    params = two_layer.init_params(k1, net)
    params["W"] = params["W"] * 3.0  # O(1) pre-activations
    x1 = jax.random.normal(k2, (N, K, D))
    x2 = x1 + 0.4 * jax.random.normal(k3, (N, K, D)) if augment else x1
    return net, params, x1, x2


def alphas(key, net, params, x1, x2):
    f2a, _ = two_layer.outputs(params, x1, x2, net)
    return {"uniform": pairwise.uniform(N, x1.dtype),
            "gaussian": pairwise.gaussian(f2a, 2.0),
            "infonce": pairwise.infonce(f2a, 0.5),
            "random": jax.random.uniform(key, (N, N))}


def project(w, g):
    wn = w / jnp.linalg.norm(w, axis=-1, keepdims=True)
    return g - jnp.sum(g * wn, axis=-1, keepdims=True) * wn


@pytest.mark.parametrize("act,bn", [  # fast: each activation once, the batch norms alternating; all: -m slow
    (a, b) if (i + j) % 2 == 0 else pytest.param(a, b, marks=pytest.mark.slow)
    for i, a in enumerate(("relu", "leaky_relu", "linear", "quadratic")) for j, b in enumerate(("none", "mean_only"))])
def test_lemma4_velocity_is_degree_times_autodiff_of_energy(key, act, bn):
    """V' = dE/dV and w' = P^perp (p dE/dw) with alpha held fixed (Eq. 2, 12; Lemma 6 for BN)."""
    net, params, x1, x2 = setup(key, act, bn)
    p = activations.get_activation(act).degree
    for name, alpha in alphas(jax.random.PRNGKey(9), net, params, x1, x2).items():
        grad = jax.grad(two_layer.energy)(params, x1, x2, alpha, net)
        vel = two_layer.lemma4_velocity(params, x1, x2, alpha, net, project=False)
        chex.assert_trees_all_close(vel["V"], grad["V"], rtol=1e-10, atol=1e-13, custom_message=name)
        chex.assert_trees_all_close(vel["W"], p * grad["W"], rtol=1e-10, atol=1e-13, custom_message=name)
        proj = two_layer.lemma4_velocity(params, x1, x2, alpha, net)
        chex.assert_trees_all_close(proj["W"], project(params["W"], p * grad["W"]), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("act", ["relu", "quadratic"])
def test_lemma4_velocity_matches_dense_eq12(key, act):
    """Brute force Eq. 12: the (KMd x KMd) matrix (S (x) 1 1^T) o C_alpha[x~], applied to w, projected."""
    net, params, x1, x2 = setup(key, act)
    h = activations.get_activation(act)
    alpha = alphas(jax.random.PRNGKey(9), net, params, x1, x2)["infonce"]
    w, v = params["W"], params["V"]

    def gated(x):  # x~ = [x_k h'(w_km^T x_k)] concatenated over (k, m): (N, K M d)
        z = jnp.einsum("nkd,kmd->nkm", x, w)
        return (x[:, :, None, :] * h.dh(z)[..., None]).reshape(N, -1)

    c = covariance.batch_cov(gated(x1), gated(x1), alpha, gated(x2), gated(x2))
    big = jnp.kron(v.T @ v, jnp.ones((D, D))) * c
    w_dot = project(w, (big @ w.reshape(-1)).reshape(K, M, D))
    f1a, f1b = two_layer.hidden(w, x1, h), two_layer.hidden(w, x2, h)
    v_dot = v @ covariance.batch_cov(f1a, f1a, alpha, f1b, f1b)
    got = two_layer.lemma4_velocity(params, x1, x2, alpha, net)
    chex.assert_trees_all_close(got["W"], w_dot, rtol=1e-10, atol=1e-13)
    chex.assert_trees_all_close(got["V"], v_dot, rtol=1e-10, atol=1e-13)


def test_lemma4_rejects_bn_variants_without_a_closed_form(key):
    net, params, x1, x2 = setup(key, bn="vanilla")
    with pytest.raises(ValueError, match="bn='vanilla' has no Lemma 4/6 form"):
        two_layer.lemma4_velocity(params, x1, x2, pairwise.uniform(N, x1.dtype), net)


def _rank(a, rtol=1e-9):
    s = np.linalg.svd(np.asarray(a), compute_uv=False)
    return int(np.sum(s > rtol * s[0]))


def test_theorem4_linear_filters_get_colinear_gradients(key):
    """With V = v s^T (fast top layer), linear h gives w'_km = s_km b_k (Eq. 14): rank 1 over m per RF."""
    for act, expect_colinear in [("linear", True), ("relu", False)]:
        net, params, x1, x2 = setup(key, act)
        s = jax.random.normal(jax.random.PRNGKey(3), (K * M,))
        vvec = jax.random.normal(jax.random.PRNGKey(4), (DOUT,))
        params["V"] = jnp.outer(vvec, s)
        alpha = pairwise.uniform(N, x1.dtype)
        w_dot = np.asarray(two_layer.lemma4_velocity(params, x1, x2, alpha, net, project=False)["W"])
        ranks = [_rank(w_dot[k]) for k in range(K)]
        if expect_colinear:
            assert ranks == [1] * K
            # ... and w'_km / s_km is the same vector b_k for every m.
            b = w_dot / np.asarray(s).reshape(K, M, 1)
            np.testing.assert_allclose(b, np.broadcast_to(b[:, :1], b.shape), rtol=1e-9, atol=1e-12)
        else:
            assert min(ranks) > 1, ranks


@pytest.mark.parametrize("loss_name", ["infonce", "quadratic"])
def test_loss_gradient_is_alpha_cl_gradient(key, loss_name):
    """grad L_nce = -(2N/tau) grad E_{sg(alpha_nce)}; grad L_quad = -2N grad E_{1/(N-1)} (Eq. 1-2)."""
    net, params, x1, x2 = setup(key)
    cfg = two_layer.TrainConfig(loss=loss_name, tau=0.7, normalize=False, batch_size=N)
    g_loss = jax.grad(two_layer.loss)(params, x1, x2, net, cfg)
    f2a, _ = two_layer.outputs(params, x1, x2, net)
    if loss_name == "infonce":
        alpha, scale = pairwise.infonce(f2a, cfg.tau), -2 * N / cfg.tau
    else:
        alpha, scale = pairwise.uniform(N, x1.dtype) / (N - 1), -2 * N
    g_energy = jax.grad(two_layer.energy)(params, x1, x2, alpha, net)
    chex.assert_trees_all_close(g_loss, jax.tree_util.tree_map(lambda g: scale * g, g_energy), rtol=1e-9, atol=1e-12)


def test_batch_norm_variants_share_the_forward_and_differ_in_backward(key):
    """Same f^bn for all four. For a 1-homogeneous h, vanilla BN makes the loss invariant to scaling
    w_km, so <grad_w, w> = 0 exactly; a stop-gradient on mu or sigma breaks that invariance."""
    grads = {}
    ref = None
    for bn in ["vanilla", "mean_only", "var_only", "none_backprop"]:
        net, params, x1, x2 = setup(key, "relu", bn)
        net = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=DOUT, act=net.act, bn=bn, bn_eps=1e-300)
        out = two_layer.outputs(params, x1, x2, net)
        ref = out if ref is None else ref
        chex.assert_trees_all_close(out, ref, rtol=1e-12)
        f1a, f1b = two_layer.batch_norm(*[two_layer.hidden(params["W"], x, net.act) for x in (x1, x2)], bn, 1e-300)
        both = np.concatenate([f1a, f1b])
        np.testing.assert_allclose(both.mean(0), 0, atol=1e-12)
        np.testing.assert_allclose(both.std(0), 1, rtol=1e-10)
        cfg = two_layer.TrainConfig(batch_size=N)
        g = jax.grad(two_layer.loss)(params, x1, x2, net, cfg)["W"]
        grads[bn] = np.abs(np.sum(np.asarray(g) * np.asarray(params["W"]), axis=-1)).max() / np.abs(g).max()
    assert grads["vanilla"] < 1e-10
    assert min(grads["mean_only"], grads["var_only"], grads["none_backprop"]) > 1e-3


def token_runs(n_runs, p=2, zeta=1.0):
    spec = tokens.TokenSpec(n_candidates=p, n_generators=8, n_positions=K, n_tokens=D, n_fixed=2, zeta=zeta)
    keys = jax.random.split(jax.random.PRNGKey(11), n_runs)
    return jax.vmap(lambda k: tokens.make_tokens(k, spec))(keys)


@pytest.mark.slow  # 8 s; the grid's resume tests check the same runs bit for bit
def test_training_is_deterministic_per_run_and_independent_of_block_and_batching():
    """Blocks of 4 or 8 steps give the same runs; a run does not depend on the others in its batch
    (permuting the runs permutes the results; the same compiled program, so no extra compile)."""
    net = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=DOUT)
    cfg = two_layer.TrainConfig(steps=8, batch_size=16, lr=0.05)
    datas = token_runs(3)
    ik, dk = jax.random.split(jax.random.PRNGKey(1), 3), jax.random.split(jax.random.PRNGKey(2), 3)
    st, hist = two_layer.train(ik, dk, datas, net, cfg, block=4)
    assert hist.shape == (2, 3) and bool(jnp.all(st.finite))
    st2, _ = two_layer.train(ik, dk, datas, net, cfg, block=8)
    chex.assert_trees_all_close(st.params, st2.params, rtol=1e-12)
    perm = jnp.array([2, 0, 1])
    take = lambda tree: jax.tree_util.tree_map(lambda a: a[perm], tree)
    st3, _ = two_layer.train(ik[perm], dk[perm], take(datas), net, cfg, block=4)
    chex.assert_trees_all_close(take(st.params), st3.params, rtol=1e-12)
    init = jax.vmap(lambda k: two_layer.init_params(k, net))(ik)
    assert float(jnp.abs(st.params["W"] - init["W"]).max()) > 1e-3  # it moved


@pytest.mark.slow  # 6 s
def test_non_finite_run_is_stopped_and_reported_others_go_on():
    net = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=DOUT)
    cfg = two_layer.TrainConfig(steps=6, batch_size=8, lr=0.05)
    datas = token_runs(3)
    emb = datas.embeddings.at[1].set(jnp.nan)  # run 1 sees NaN inputs from step 0
    datas = datas.replace(embeddings=emb)
    ik, dk = jax.random.split(jax.random.PRNGKey(1), 3), jax.random.split(jax.random.PRNGKey(2), 3)
    st, hist = two_layer.train(ik, dk, datas, net, cfg, block=3)
    np.testing.assert_array_equal(st.finite, [True, False, True])
    np.testing.assert_array_equal(st.stopped_at, [-1, 0, -1])
    init = jax.vmap(lambda k: two_layer.init_params(k, net))(ik)
    chex.assert_trees_all_close(st.params["W"][1], init["W"][1])  # frozen at its last finite state
    assert np.all(np.isfinite(np.asarray(st.params["W"])))
    assert np.isnan(np.asarray(hist)[:, 1]).all() and np.isfinite(np.asarray(hist)[:, [0, 2]]).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(loss="triplet"), "loss='triplet' must be one of infonce, quadratic"),
    (dict(batch_size=1), "batch_size=1 must be >= 2"),
    (dict(tau=0.0), "tau=0.0 must be a finite number > 0"),
    (dict(momentum=1.0), r"momentum=1.0 must be in \[0, 1\)"),
    (dict(lr=-1.0), "lr=-1.0 must be a finite number > 0"),
])
def test_bad_training_config_names_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        two_layer.TrainConfig(**kwargs)


def test_bad_network_names_the_field():
    with pytest.raises(ValueError, match="bn='batch' is unknown; allowed: none, vanilla, mean_only"):
        two_layer.Net(n_rf=2, d=3, n_filters=1, bn="batch")
    with pytest.raises(ValueError, match="n_filters=0 must be >= 1"):
        two_layer.Net(n_rf=2, d=3, n_filters=0)


def test_normalized_loss_has_finite_gradient_when_an_output_is_zero(key):
    """With ReLU and one filter per RF a sample can switch every hidden unit off: f2 = 0 exactly."""
    net, params, x1, x2 = setup(key)
    params["W"] = params["W"].at[:, :, :].set(jnp.abs(params["W"]))
    x1 = x1.at[0].set(-jnp.abs(x1[0]))  # sample 0: all pre-activations < 0 -> f2[0] = 0
    x1 = x1.at[1:].set(jnp.abs(x1[1:]))
    assert float(jnp.abs(two_layer.outputs(params, x1, x2, net)[0][0]).max()) == 0.0
    for loss_name in ["infonce", "quadratic"]:
        g = jax.grad(two_layer.loss)(params, x1, x2, net, two_layer.TrainConfig(loss=loss_name, batch_size=N))
        assert all(bool(jnp.all(jnp.isfinite(leaf))) for leaf in jax.tree_util.tree_leaves(g))
