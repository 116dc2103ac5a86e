"""App. E.3: the filter scores against explicit sums and loops, the passes of the minibatch stream, the
claims' verdicts and (slow) the paired runs of the trainer."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import stats
from ccdyn.two_layer import metrics
from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import mnist


def _loop_hf(f):
    """Share of energy above radial frequency 1/4 from the DFT written as a double sum."""
    s = f.shape[0]
    total = high = 0.0
    for u in range(s):
        for v in range(s):
            c = sum(f[a, b] * np.exp(-2j * np.pi * (u * a + v * b) / s) for a in range(s) for b in range(s))
            fu, fv = (u if u < s / 2 else u - s) / s, (v if v < s / 2 else v - s) / s
            total += abs(c) ** 2
            high += abs(c) ** 2 if fu * fu + fv * fv > 1 / 16 else 0.0
    return high / total


def test_high_frequency_fraction():
    rng = np.random.default_rng(0)
    for side in (4, 5, 6):
        w = rng.normal(size=(3, side * side))
        got = np.asarray(metrics.high_frequency_fraction(jnp.asarray(w), side))
        np.testing.assert_allclose(got, [_loop_hf(f.reshape(side, side)) for f in w], rtol=1e-10)
    checker = np.indices((4, 4)).sum(0) % 2 * 2.0 - 1  # all energy at (1/2, 1/2)
    flat, ramp = np.ones((4, 4)), np.outer(np.ones(4), np.cos(2 * np.pi * np.arange(4) / 4))
    got = metrics.high_frequency_fraction(jnp.asarray(np.stack([checker, flat, ramp]).reshape(3, 16)), 4)
    np.testing.assert_allclose(got, [1.0, 0.0, 0.0], atol=1e-12)


def test_max_cosine_against_a_loop():
    w = np.random.default_rng(1).normal(size=(2, 5, 7))
    for signed in (True, False):
        got = np.asarray(metrics.max_cosine(jnp.asarray(w), signed))
        for k in range(2):
            for m in range(5):
                cos = [w[k, m] @ w[k, n] / np.linalg.norm(w[k, m]) / np.linalg.norm(w[k, n]) for n in range(5) if n != m]
                np.testing.assert_allclose(got[k, m], max(cos) if signed else max(np.abs(cos)), rtol=1e-12)
    masked = np.asarray(metrics.max_cosine(jnp.asarray(w[0]), True, mask=jnp.array([True, True, False, True, False])))
    assert np.all(np.isnan(masked[[2, 4]]))
    for m, partners in ((0, (1, 3)), (1, (0, 3)), (3, (0, 1))):
        cos = [w[0, m] @ w[0, n] / np.linalg.norm(w[0, m]) / np.linalg.norm(w[0, n]) for n in partners]
        np.testing.assert_allclose(masked[m], max(cos), rtol=1e-12)
    assert np.isnan(metrics.max_cosine(jnp.asarray(w[0]), True, mask=jnp.arange(5) == 2)[2])  # no partner
    twins = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(metrics.max_cosine(jnp.asarray(twins), True), [0, 0, 0], atol=1e-12)
    np.testing.assert_allclose(metrics.max_cosine(jnp.asarray(twins), False), [1, 1, 0], atol=1e-12)


def test_dead_filters_never_fire():
    x = np.abs(np.random.default_rng(2).normal(size=(20, 2, 3)))  # pixels >= 0
    w = np.array([[[-1.0, -2, -0.5], [1, -5, 0], [0, 0, 0]], [[-1, -1, -1], [0.1, 0.1, 0.1], [-3, 1e-3, -3]]])
    dead = np.asarray(metrics.dead_filters(jnp.asarray(w), jnp.asarray(x)))
    loop = [[all(w[k, m] @ x[n, k] <= 0 for n in range(20)) for m in range(3)] for k in range(2)]
    np.testing.assert_array_equal(dead, loop)
    assert dead[0, 0] and dead[0, 2] and not dead[1, 1]


def test_minibatches_cover_each_pass_once_and_passes_differ():
    n, b, key = 10, 3, jax.random.PRNGKey(3)
    step = jax.jit(lambda p, t: mnist.minibatch(p, key, t, n, b))
    perm, seen = jnp.arange(n), []
    for t in range(9):  # 3 passes of 3 steps (drop-last: one image left out per pass)
        perm, idx = step(perm, t)
        seen.append(np.asarray(idx))
    passes = [np.concatenate(seen[i:i + 3]) for i in (0, 3, 6)]
    for p in passes:
        assert len(set(p)) == 9
    assert not np.array_equal(passes[0], passes[1])


@pytest.mark.slow
def test_paired_runs():  # ~10 s on 2 idle cores: the training step compiles once
    images = np.random.default_rng(0).random((12, 4, 4)).astype(np.float64)
    base = mnist.MnistConfig()
    cfg = dataclasses.replace(base, n_filters=3, d_out=4, n_seeds=2,
                              train=dataclasses.replace(base.train, steps=6, batch_size=4, lr=0.05))
    states, w0, augs, history = mnist.train(images, cfg, block=3)
    assert list(np.asarray(augs)) == [False, True, False, True] and history.shape == (2, 4)
    np.testing.assert_array_equal(w0[0], w0[1])  # a seed's two conditions start together
    assert not np.array_equal(w0[0], w0[2])
    w = np.asarray(states.params["W"])
    assert not np.allclose(w[0], w[1]) and np.all(np.asarray(states.finite))
    assert np.all(np.asarray(history)[:, 0::2] < 0)  # identical views: d_i = 0, the InfoNCE loss is -log sum
    with pytest.raises(ValueError, match="n >= batch_size=4"):
        mnist.train(images[:3], cfg)


def test_verdicts_on_paired_differences():
    fake = {"final": {"no_aug": {"hf": np.array([0.5, 0.6, 0.55]), "max_cos": np.array([0.4, 0.5, 0.45]),
                                 "max_cos_live": np.array([0.4, 0.5, 0.45])},
                      "aug": {"hf": np.array([0.3, 0.35, 0.3]), "max_cos": np.array([0.5, 0.4, np.nan]),
                              "max_cos_live": np.array([0.3, 0.45, 0.44])}}}
    hf, mc, live = claims.mnist_claims(fake)
    assert hf["holds"] and hf["numbers"]["seeds"] == 3 and hf["numbers"]["diff_ci"][1] < 0
    d = np.array([-0.2, -0.25, -0.25])  # the t interval by hand: t_{0.975, 2} = 4.302653
    half = 4.302653 * d.std(ddof=1) / np.sqrt(3)
    np.testing.assert_allclose(hf["numbers"]["diff_ci"], [d.mean() - half, d.mean() + half], rtol=1e-6)
    assert not mc["holds"] and mc["numbers"]["seeds"] == 2 and mc["numbers"]["seeds_dropped"] == 1
    assert live["parts"] == {"lower with augmentation on average": True, "95% interval over seeds below 0": False}
    assert stats.t_interval([0.3]) == (0.3, -np.inf, np.inf) and np.all(np.isnan(stats.t_interval([])))


def test_left_out_seeds_names_non_finite_runs_and_nan_scores():
    """Seed 0 fine, seed 1 went non-finite at step 7, seed 2 finite with a NaN score (0 / 0 of vanished filters)."""
    final = {"hf": np.array([0.3, np.nan, np.nan]), "max_cos": np.array([[0.5], [np.nan], [0.0]])}
    record = {"finite": {"aug": np.array([True, False, True])}, "stopped_at": {"aug": np.array([-1, 7, -1])},
              "final": {"aug": final}}
    assert mnist.left_out_seeds(record, "aug") == [(1, "went non-finite at step 7"), (2, "has NaN scores (hf)")]


def test_verdicts_when_every_seed_went_non_finite_name_it_without_a_warning(recwarn):
    nan = np.full(3, np.nan)
    fake = {"final": {c: {k: nan for k in ("hf", "max_cos", "max_cos_live")} for c in ("aug", "no_aug")},
            "init": {"no_aug": {k: nan for k in ("hf", "max_cos", "dead", "max_cos_live")}}}
    for v in claims.mnist_claims(fake):
        assert v["holds"] is None and v["numbers"]["reason"] == "every seed's run went non-finite (3 of 3)"
        assert np.isnan(v["numbers"]["aug"]) and v["numbers"]["seeds"] == 0
    assert stats.finite_mean([1.0, np.nan, 3.0, np.inf]) == 2.0 and np.isnan(stats.finite_mean([np.nan]))
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]
