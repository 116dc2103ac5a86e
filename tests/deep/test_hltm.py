"""Tree network on SB-HLTM (ccdyn.deep.hltm): Thm. 6 on an enumerated tree, the scores against
direct routes, the three readings, and a short training run."""

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.data import hltm as tree_data
from ccdyn.deep import hltm, operator

DEPTH, WIDTH = 3, 3


def _net(seed=0):
    return hltm.init_params(jax.random.PRNGKey(seed), DEPTH, WIDTH)


@functools.partial(jax.jit, static_argnums=1)
def _theorem6_sides(tree, p_root):
    """Per mu in (s0, root): (V_{z_0}[E[f_ch | z_0]], the proof's rho_{0mu}^2 (1 - rho_0^2) a a^T, the main
    text's rho_{0mu}^2 (1 - rho_{0mu}^2) a a^T), all from the enumerated joint."""
    z, p = tree_data.enumerate_joint(tree, DEPTH)
    pres = hltm.forward(_net(), tree_data.leaves(z, DEPTH).astype(jnp.float64))
    rho0 = 2 * p_root - 1
    out = []
    for mu, level in [(1, 2), (0, 3)]:
        kids = [2 * mu + 1, 2 * mu + 2]
        first = 2 ** (DEPTH - level + 1) - 1                       # heap index of the first latent one level down
        f = jax.nn.relu(pres[level - 2][:, [k - first for k in kids], :])   # (configs, 2, width)
        f = f.reshape(f.shape[0], -1)
        cond = lambda i, v: (p * (z[:, i] == v)) @ f / jnp.sum(p * (z[:, i] == v))  # noqa: E731
        e0 = jnp.stack([cond(0, 0), cond(0, 1)])
        mean = (1 - p_root) * e0[0] + p_root * e0[1]
        var = (1 - p_root) * jnp.outer(e0[0] - mean, e0[0] - mean) + p_root * jnp.outer(e0[1] - mean, e0[1] - mean)
        a = jnp.concatenate([tree.rho[k] * (cond(k, 1) - cond(k, 0))[j * WIDTH:(j + 1) * WIDTH] / 2
                             for j, k in enumerate(kids)])
        r0mu = tree_data.path_polarity(tree, 0, mu)
        out.append((var, r0mu ** 2 * (1 - rho0 ** 2) * jnp.outer(a, a), r0mu ** 2 * (1 - r0mu ** 2) * jnp.outer(a, a)))
    return out


@pytest.mark.parametrize("p_root", [0.5, pytest.param(0.3, marks=pytest.mark.slow)])
def test_theorem6_activation_covariance_on_enumerated_tree(p_root):
    """V_{z_0}[E[f_{N_mu^ch} | z_0]] = rho_{0 mu}^2 (1 - rho_0^2) a_mu a_mu^T (Eq. 179), a_mu[k] =
    rho_{mu nu(k)} s_k, for mu = s0 (children s00, s01) and mu = root (children s0, s1)."""
    tree = tree_data.make_tree(jax.random.PRNGKey(5), DEPTH, 0.5, random_sign=True, p_root=p_root)
    (var1, proof1, main1), (var0, proof0, _) = _theorem6_sides(tree, p_root)
    assert np.abs(var1).max() > 1e-3 and np.abs(var0).max() > 1e-3
    np.testing.assert_allclose(var1, proof1, atol=1e-12)
    np.testing.assert_allclose(var0, proof0, atol=1e-12)
    if p_root == 0.5:  # the main text's o_mu = rho_{0mu}^2 (1 - rho_{0mu}^2) is another number
        assert not np.allclose(var1, main1, atol=1e-6)


@pytest.mark.slow
def test_nc_scores_match_numpy_corrcoef():
    tree = tree_data.make_tree(jax.random.PRNGKey(0), DEPTH, 0.7)

    @jax.jit
    def scores(tree):
        z = tree_data.sample(jax.random.PRNGKey(1), tree, 500, DEPTH)
        pres = hltm.forward(_net(), tree_data.leaves(z, DEPTH).astype(jnp.float64))
        return z, pres, hltm.nc_scores(pres, z, DEPTH)

    z, pres, nc = scores(tree)
    nc = np.asarray(nc)
    zz = np.asarray(z, float)
    for i in range(2 ** DEPTH - 1):
        level = DEPTH - tree_data.node_depth(i)
        h = np.asarray(pres[level - 1][:, i - (2 ** (DEPTH - level) - 1)])
        c = [abs(np.corrcoef(zz[:, i], h[:, j])[0, 1]) if h[:, j].std() > 0 else 0.0 for j in range(WIDTH)]
        np.testing.assert_allclose(nc[i], max(c), atol=1e-10)


@pytest.mark.slow
def test_op_norms_match_explicit_operator():
    """||V_{z_0}[K̄_mu(z_0)]||_F with K_mu = f_ch (x) J_mu^T built per sample from autodiff Jacobians."""
    params = _net(2)
    tree = tree_data.make_tree(jax.random.PRNGKey(0), DEPTH, 0.6)
    z = tree_data.sample(jax.random.PRNGKey(4), tree, 64, DEPTH)
    x = tree_data.leaves(z, DEPTH).astype(jnp.float64)
    op, op_a = hltm.op_norms(params, x, z[:, 0])
    p1 = float(jnp.mean(z[:, 0]))
    for mu, level in [(0, 3), (2, 2), (5, 1)]:
        pos = mu - (2 ** (DEPTH - level) - 1)

        def root_of(w_mu, xi):
            ps = [(w.at[pos].set(w_mu) if l == level - 1 else w, b) for l, (w, b) in enumerate(params)]
            return hltm.forward(ps, xi)[-1][0]

        w_mu = params[level - 1][0][pos]
        k = jax.vmap(jax.jacobian(lambda w, xi: root_of(w, xi)))(jnp.broadcast_to(w_mu, (64,) + w_mu.shape), x)
        k = k.reshape(64, WIDTH, -1)                               # (sample, output b, (c, a))
        kb = [k[z[:, 0] == v].mean(0) for v in (0, 1)]
        kall = (1 - p1) * kb[0] + p1 * kb[1]
        ops = sum(q * jnp.einsum("bi,bj->ij", kv - kall, kv - kall) for q, kv in zip((1 - p1, p1), kb))
        np.testing.assert_allclose(op[mu], jnp.linalg.norm(ops), rtol=1e-10)
        d = (kb[1] - kb[0]).reshape(WIDTH, WIDTH, -1)             # (b, c, a)
        np.testing.assert_allclose(op_a[mu], (1 - p1) * p1 * jnp.linalg.norm(jnp.einsum("bca,bea->ce", d, d)),
                                   rtol=1e-10)


@pytest.mark.slow
def test_loss_readings():
    paper = hltm.HltmConfig(depth=DEPTH, width=WIDTH)
    authors = hltm.HltmConfig(depth=DEPTH, width=WIDTH, reading="authors")

    @jax.jit
    def sides(params):
        x, xp, xn = (jax.random.bernoulli(jax.random.PRNGKey(i), 0.5, (8, 2 ** DEPTH)).astype(jnp.float64)
                     for i in range(3))
        f, fp, fn = (hltm.embed(params, v) for v in (x, xp, xn))
        rp, rn = 0.5 * jnp.sum((f - fp) ** 2, -1), 0.5 * jnp.sum((f - fn) ** 2, -1)
        pos, neg = jnp.mean((f - fp) ** 2), jnp.mean((f - fn) ** 2)
        return (hltm.batch_loss(params, x, xp, xn, paper),
                jnp.mean(-jnp.log(jnp.exp(-rp / 0.1) / (jnp.exp(-rp / 0.1) + jnp.exp(-rn / 0.1)))),
                jnp.mean(operator.pair_loss(rp, rn, "nce", 0.1)),
                hltm.batch_loss(params, x, xp, xn, authors),
                -jnp.exp(-pos / 0.1) / (jnp.exp(-pos / 0.1) + jnp.exp(-neg / 0.1)))

    ours, by_hand, pair, ours_authors, by_hand_authors = sides(_net())
    x, xp, xn = (jax.random.bernoulli(jax.random.PRNGKey(i), 0.5, (8, 2 ** DEPTH)).astype(jnp.float64)
                 for i in range(3))
    signed = hltm.HltmConfig(depth=DEPTH, width=WIDTH, reading="nce_random_sign", n_eval=16)
    assert float(hltm.batch_loss(_net(), x, xp, xn, signed)) == float(hltm.batch_loss(_net(), x, xp, xn, paper))
    for reading in ("paper", "nce_random_sign"):  # hltm's own set-up draws the reading's trees
        tree = hltm._setup(dataclasses.replace(signed, reading=reading), jax.random.PRNGKey(4))[0]
        assert np.any(np.asarray(tree.rho) < 0) == (reading == "nce_random_sign")
    np.testing.assert_allclose(ours, by_hand, rtol=1e-12)
    np.testing.assert_allclose(ours, pair, rtol=1e-12)
    np.testing.assert_allclose(ours_authors, by_hand_authors, rtol=1e-12)
    with pytest.raises(ValueError, match="reading"):
        hltm.HltmConfig(reading="other")


def test_nce_random_sign_reading_draws_the_authors_trees():
    """The third reading's polarities are the authors' (random signs, the same draws); its loss is the
    paper's (``test_loss_readings``, slow)."""
    rho = {r: np.asarray(tree_data.make_tree(jax.random.PRNGKey(4), DEPTH, 0.5, random_sign=hltm.READING_PARTS[r][0]).rho)
           for r in hltm.READINGS}
    np.testing.assert_array_equal(rho["nce_random_sign"], rho["authors"])
    np.testing.assert_array_equal(np.abs(rho["nce_random_sign"]), rho["paper"])
    assert np.any(rho["nce_random_sign"] < 0) and np.all(rho["paper"] >= 0)
    assert hltm.READING_PARTS["nce_random_sign"][1] == hltm.READING_PARTS["paper"][1] != hltm.READING_PARTS["authors"][1]


@pytest.mark.slow
def test_short_training_run_scores_every_latent():
    cfg = hltm.HltmConfig(depth=DEPTH, width=WIDTH, samples_per_epoch=256, batch_size=64, epochs=2, n_eval=128,
                          delta_lower=0.9)
    keys = jax.vmap(lambda s: jax.random.fold_in(jax.random.PRNGKey(0), s))(jnp.arange(2))
    r = hltm.train(cfg, keys, eval_epochs=[2])
    assert list(r["epochs"]) == [0, 2] and r["nc"].shape == (2, 2, 2 ** DEPTH - 1) and r["loss"].shape == (2, 2)
    assert np.all(np.isfinite(r["loss"])) and np.all((r["nc"] >= 0) & (r["nc"] <= 1)) and np.all(r["op"] >= 0)
    assert len(hltm.latent_names(DEPTH)) == 2 ** DEPTH - 1
