"""The token trainer's readings and its fast path: the gather first layer against the dense one, the
authors' quadratic loss against autodiff of their formula and against the tau -> infinity limit, and
the authors' revert-and-keep of a run that goes non-finite against a loop written as their code runs."""

import collections
import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, two_layer
from ccdyn.data import tokens
from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import token_grid

K, D, M, DOUT, N = 3, 5, 4, 6, 12
SPEC = tokens.TokenSpec(n_candidates=2, n_generators=8, n_positions=K, n_tokens=D, n_fixed=2, zeta=3.0)


def token_batch(key, act="relu", bn="none"):
    """A network and a batch of token views as ids (TokenInputs) and embedded (dense)."""
    net = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=DOUT, act=activations.get_activation(act), bn=bn)
    k1, k2, k3 = jax.random.split(key, 3)
    data = tokens.make_tokens(k1, SPEC)
    params = two_layer.init_params(k2, net)
    params["W"] = params["W"] * 3.0
    t1, t2 = tokens.sample_view_tokens(k3, data, N)
    ids = [tokens.TokenInputs(tokens=t, embeddings=data.embeddings) for t in (t1, t2)]
    return net, params, ids, [tokens.embed(data, t) for t in (t1, t2)]


@pytest.mark.parametrize("act, bn, loss", [
    ("relu", "none", "infonce"), ("linear", "mean_only", "infonce"),
    pytest.param("gelu", "vanilla", "quadratic", marks=pytest.mark.slow)])  # about 2 s
def test_gather_first_layer_equals_dense(key, act, bn, loss):
    """z_km = (W_k U^T)[t_k] and its scatter-add gradient equal the dense GEMM route (x64)."""
    net, params, ids, dense = token_batch(key, act, bn)
    chex.assert_trees_all_close(two_layer.outputs(params, *ids, net), two_layer.outputs(params, *dense, net),
                                rtol=1e-12, atol=1e-13)
    cfg = two_layer.TrainConfig(loss=loss, batch_size=N)
    g_ids = jax.value_and_grad(two_layer.loss)(params, *ids, net, cfg)
    g_dense = jax.value_and_grad(two_layer.loss)(params, *dense, net, cfg)
    chex.assert_trees_all_close(g_ids, g_dense, rtol=1e-10, atol=1e-13)
    assert float(jnp.abs(g_ids[1]["W"]).max()) > 1e-3


@pytest.mark.slow  # about 5 s: two trainer compiles
def test_training_with_gather_equals_dense():
    """The trainer's two first layers give the same runs (same minibatches, x64)."""
    net = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=DOUT, bn="vanilla")
    cfg = two_layer.TrainConfig(steps=6, batch_size=16, lr=0.05)
    datas = tokens.make_tokens_batch(jax.random.split(jax.random.PRNGKey(11), 2), SPEC)
    ik, dk = jax.random.split(jax.random.PRNGKey(1), 2), jax.random.split(jax.random.PRNGKey(2), 2)
    runs = [two_layer.train(ik, dk, datas, net, cfg, block=3, first_layer=f) for f in ("gather", "dense")]
    chex.assert_trees_all_close(runs[0], runs[1], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="first_layer='sparse' is unknown; allowed: gather, dense"):
        two_layer.train(ik, dk, datas, net, cfg, first_layer="sparse")


def authors_quadratic(z1, z2, tau):
    """bn_gen.py's quadratic loss, as written there: M = z1 z1^T with the diagonal set to <z1_i, z2_i>,
    X = M / T, loss = -(1 + 1/N) mean(diag X) + mean(X)."""
    n = z1.shape[0]
    m = z1 @ z1.T
    m = m.at[jnp.arange(n), jnp.arange(n)].set(jnp.sum(z1 * z2, axis=1))
    x = m / tau
    return -(1 + 1 / n) * jnp.mean(jnp.diagonal(x)) + jnp.mean(x)


@pytest.mark.parametrize("normalize", [True, False])
def test_authors_quadratic_is_their_formula(key, normalize):
    net, params, _, (x1, x2) = token_batch(key)
    cfg = two_layer.TrainConfig(loss="quadratic", quadratic_form="authors", tau=0.1, normalize=normalize,
                                batch_size=N)

    def theirs(p):
        z1, z2 = two_layer.outputs(p, x1, x2, net)
        if normalize:
            z1, z2 = [z / jnp.linalg.norm(z, axis=1, keepdims=True) for z in (z1, z2)]
        return authors_quadratic(z1, z2, cfg.tau)

    ours = jax.value_and_grad(two_layer.loss)(params, x1, x2, net, cfg)
    chex.assert_trees_all_close(ours, jax.value_and_grad(theirs)(params), rtol=1e-10, atol=1e-12)


def test_authors_quadratic_against_the_limit(key):
    """Normalized outputs: tau L_authors = (N-1)/N L_limit + 1/N mean_i d_i^2 - 1/N (values and gradients):
    the factor 1/tau, alpha_ij = 1/N on the negatives, weight 1 on the positive pair."""
    net, params, ids, _ = token_batch(key)
    tau = 0.1
    auth = two_layer.TrainConfig(loss="quadratic", quadratic_form="authors", tau=tau, batch_size=N)
    lim = two_layer.TrainConfig(loss="quadratic", quadratic_form="limit", tau=tau, batch_size=N)

    def rhs(p):
        za, zb = [z / jnp.linalg.norm(z, axis=1, keepdims=True) for z in two_layer.outputs(p, *ids, net)]
        pos = jnp.mean(0.5 * jnp.sum((za - zb) ** 2, axis=1))
        return (N - 1) / N * two_layer.loss(p, *ids, net, lim) + pos / N - 1 / N

    lhs = jax.value_and_grad(lambda p: tau * two_layer.loss(p, *ids, net, auth))(params)
    chex.assert_trees_all_close(lhs, jax.value_and_grad(rhs)(params), rtol=1e-10, atol=1e-12)


def diverging_setup():
    """Two runs; run 1 has 1000x larger embeddings, so unnormalized quadratic training blows up at step 4."""
    net = two_layer.Net(n_rf=K, d=D, n_filters=M, d_out=DOUT)
    cfg = two_layer.TrainConfig(loss="quadratic", normalize=False, steps=8, batch_size=8, lr=0.003)
    datas = tokens.make_tokens_batch(jax.random.split(jax.random.PRNGKey(11), 2), SPEC)
    datas = datas.replace(embeddings=datas.embeddings.at[1].multiply(1e3))
    ik, dk = jax.random.split(jax.random.PRNGKey(1), 2), jax.random.split(jax.random.PRNGKey(2), 2)
    return net, cfg, datas, ik, dk


def authors_loop(net, cfg, data, init_key, data_key):
    """bn_gen.py's loop for one run: keep the last two models, and on a NaN loss end with the older one."""
    opt = two_layer.make_optimizer(cfg)
    params = two_layer.init_params(init_key, net)
    opt_state = opt.init(params)
    queue = collections.deque([params])
    value_and_grad = jax.jit(jax.value_and_grad(two_layer.loss), static_argnums=(3, 4))
    for t in range(cfg.steps):
        x1, x2 = tokens.sample_views(jax.random.fold_in(data_key, t), data, cfg.batch_size)
        value, grads = value_and_grad(params, x1, x2, net, cfg)
        if not np.isfinite(float(value)):
            return queue.popleft(), t
        updates, opt_state = opt.update(grads, opt_state, params)
        params = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
        queue.append(params)
        if len(queue) >= 3:
            queue.popleft()
    return params, -1


@pytest.mark.slow  # about 5 s: the authors' loop steps one jitted call at a time
def test_revert_and_keep_matches_the_authors_loop():
    net, cfg, datas, ik, dk = diverging_setup()
    drop, _ = two_layer.train(ik, dk, datas, net, cfg, block=8)
    revert, _ = two_layer.train(ik, dk, datas, net, dataclasses.replace(cfg, on_nonfinite="revert"), block=8)
    np.testing.assert_array_equal(revert.finite, [True, False])
    np.testing.assert_array_equal(revert.stopped_at, drop.stopped_at)
    run = lambda tree, r: jax.tree_util.tree_map(lambda a: a[r], tree)  # noqa: E731
    chex.assert_trees_all_close(run(revert.params, 0), run(drop.params, 0))  # a finite run is not touched
    theirs, stopped = authors_loop(net, cfg, run(datas, 1), ik[1], dk[1])
    chex.assert_trees_all_close(run(revert.params, 1), theirs, rtol=1e-9, atol=1e-12)
    # the authors see the NaN loss at step t: ours stopped at t or t - 1 (a finite loss, non-finite update)
    assert 1 < stopped and int(revert.stopped_at[1]) in (stopped - 1, stopped)
    assert not np.allclose(run(drop.params, 1)["W"], theirs["W"])  # drop freezes a later state


@pytest.mark.slow  # about 4 s
def test_run_setting_keeps_reverted_runs_and_drops_the_others():
    setting = token_grid.Setting(act="relu", beta=1, n_candidates=2, loss="quadratic")
    cfg = two_layer.TrainConfig(normalize=False, lr=50.0, steps=10, batch_size=8)
    spec = tokens.TokenSpec(n_generators=8, n_positions=K, n_tokens=D, n_fixed=2)
    out = {r: token_grid.run_setting(setting, dataclasses.replace(cfg, on_nonfinite=r), n_seeds=2, spec=spec,
                                     d_out=DOUT, block=10) for r in ("drop", "revert")}
    assert not out["drop"]["finite"].any() and not out["revert"]["finite"].any()
    assert np.isnan(out["drop"]["chi_plus"]).all() and np.isfinite(out["revert"]["chi_plus"]).all()


def test_bad_readings_name_the_field():
    with pytest.raises(ValueError, match="quadratic_form='tau' must be one of limit, authors"):
        two_layer.TrainConfig(quadratic_form="tau")
    with pytest.raises(ValueError, match="on_nonfinite='keep' must be one of drop, revert"):
        two_layer.TrainConfig(on_nonfinite="keep")


@pytest.mark.slow  # about 2 s
def test_checkpoints_are_the_runs_of_that_many_steps():
    """Scores after 3 and 6 steps of one continued training equal those of separate 3- and 6-step runs."""
    setting = token_grid.Setting(act="relu", beta=1, n_candidates=2)
    spec = tokens.TokenSpec(n_generators=8, n_positions=K, n_tokens=D, n_fixed=2)
    cfg = two_layer.TrainConfig(lr=0.1, batch_size=8)
    kw = dict(n_seeds=2, spec=spec, d_out=DOUT, block=3)
    both = token_grid.run_setting_checkpoints(setting, cfg, (6, 3), **kw)
    assert list(both) == [3, 6]
    for c, res in both.items():
        alone = token_grid.run_setting(setting, dataclasses.replace(cfg, steps=c), **kw)
        for k in ("W", "chi_plus", "chi_minus", "turn_deg", "finite"):
            np.testing.assert_allclose(res[k], alone[k], rtol=1e-12, err_msg=k)
    assert not np.allclose(both[3]["W"], both[6]["W"])


def test_more_steps_verdict():
    def row(act, steps, chi):
        return {"act": act, "n_candidates": 3, "beta": 5, "steps": steps, "chi_plus": {"mean": chi}}

    ref = [{k: v for k, v in row(a, 0, c).items() if k != "steps"} for a, c in (("relu", 0.95), ("linear", 0.80))]
    rows = [row("relu", 5000, 0.7), row("relu", 50000, 0.93), row("linear", 5000, 0.6), row("linear", 50000, 0.7)]
    v = claims.check_more_steps(rows, ref, margin=0.05)
    assert v["parts"] == {"linear: within 0.05 of the reference in every cell at 50000 steps": False,
                          "relu: within 0.05 of the reference in every cell at 50000 steps": True}
    assert claims.verdict_word(v) == "partly" and "| relu | 3 | 5 | 0.700" in claims.steps_markdown(
        [dict(r, chi_minus={"mean": 0.1}) for r in rows], [dict(r, chi_minus={"mean": 0.0}) for r in ref])
