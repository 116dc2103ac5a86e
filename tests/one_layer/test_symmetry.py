"""App. B.5 for a discrete group: with the whole cyclic group Z_d of shifts E(S w) = E(w) and u(S w) = S u(w);
optima fall into shift orbits (``ccdyn.one_layer.symmetry``) whose basins are compared with Wilson
intervals and a chi-square test."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from ccdyn import activations, data, one_layer, stats
from ccdyn.one_layer import symmetry


def _signals(key, n=6, d=8):
    """A generic population of n random signals of length d with random probabilities."""
    kx, kp = jax.random.split(key)
    p = np.asarray(jax.random.uniform(kp, (n,), minval=0.5, maxval=1.5))
    return data.make_dataset(np.asarray(jax.random.normal(kx, (n, d))), p / p.sum())


def _energy_by_hand(x, p, h, w, shifts):
    """E = 1/2 sum_i p_i (b_i - b_bar)^2 with b_i = mean_s h(w . roll(x_i, s)): uniform alpha (Eq. 105),
    computed with np.roll, independently of shift_views and ccdyn.one_layer."""
    b = np.mean([h(np.roll(x, s, axis=1) @ w) for s in shifts], axis=0)
    return 0.5 * np.sum(p * (b - p @ b) ** 2)


@pytest.mark.parametrize("name", ["relu", "gelu"])
def test_full_shift_group_energy_is_shift_invariant(key, name):
    act = activations.get_activation(name)
    ds = _signals(key)
    full = data.shift_views(ds, 4)
    w = np.asarray(jax.random.normal(jax.random.fold_in(key, 1), (5, 8)))
    shifted = np.stack([np.roll(w, s, axis=1) for s in range(8)])  # (8, 5, 8)
    e = np.asarray(one_layer.energy(full, act, jnp.asarray(shifted.reshape(-1, 8)))).reshape(8, 5)
    np.testing.assert_allclose(e, np.broadcast_to(e[0], e.shape), rtol=1e-12, atol=0)
    h = lambda z: np.asarray(act.h(jnp.asarray(z)))
    by_hand = [_energy_by_hand(np.asarray(ds.x), np.asarray(ds.p), h, wi, range(8)) for wi in w]
    np.testing.assert_allclose(e[0], by_hand, rtol=1e-12)
    # With a fixed alpha (stop-gradient, Eq. 2) the invariance holds for any alpha, not just uniform.
    a = np.asarray(jax.random.uniform(jax.random.fold_in(key, 2), (6, 6)))
    alpha = jnp.asarray(a + a.T)
    ea = np.asarray(jax.vmap(lambda v: one_layer.energy_given_alpha(full, act, v, alpha))(jnp.asarray(shifted[:, 0])))
    np.testing.assert_allclose(ea, ea[0], rtol=1e-12)
    # ... and the ascent field is equivariant, u(S w) = S u(w): equal basins for the shifts of an optimum.
    u = np.asarray(one_layer.ascent(full, act, jnp.asarray(shifted[:, 0])))
    np.testing.assert_allclose(u, np.stack([np.roll(u[0], s) for s in range(8)]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("max_shift", [None, 1])
def test_without_the_whole_group_the_energy_is_not_invariant(key, max_shift):
    act = activations.get_activation("relu")
    ds = _signals(key)
    ds = ds if max_shift is None else data.shift_views(ds, max_shift)
    w = np.asarray(jax.random.normal(jax.random.fold_in(key, 1), (8,)))
    e = np.asarray(one_layer.energy(ds, act, jnp.asarray(np.stack([np.roll(w, s) for s in range(8)]))))
    assert (e.max() - e.min()) / np.abs(e).max() > 1e-2


def test_shift_orbits_and_orbit_summary(key):
    w = np.array(jax.random.normal(key, (8,)))
    w /= np.linalg.norm(w)
    alt = np.tile([1.0, -1.0], 4) / np.sqrt(8)  # stabilizer {0, 2, 4, 6}: an orbit of 2
    optima = np.concatenate([symmetry.cyclic_shifts(w)[[0, 3, 1, 2, 4, 5, 6, 7]], [alt, -alt],
                             symmetry.cyclic_shifts(w)[:3] + 1e-3 * np.eye(8)[:3]])
    labels = symmetry.shift_orbits(optima, 1e-2)
    assert labels.tolist() == [0] * 8 + [1, 1] + [0] * 3
    assert symmetry.shift_stabilizer(alt, 1e-9) == 4 and symmetry.shift_stabilizer(w, 1e-9) == 1
    counts = [50, 52, 48, 51, 49, 50, 50, 50, 100, 98]
    rows = [{"count": c, "energy": 0.3 if i < 8 else 0.2, "stable": True} for i, c in enumerate(counts)]
    orbits = symmetry.orbit_summary(rows, optima[:10], 1000, 1e-2)
    assert [(o["size"], o["expected_size"], o["complete"]) for o in orbits] == [(8, 8, True), (2, 2, True)]
    assert orbits[0]["members"] == list(range(8)) and orbits[0]["relative_spread"] == 0.0
    assert orbits[0]["mass"] == pytest.approx(0.4) and orbits[0]["wilson_overlap"] and orbits[0]["covering"] == 8
    partial = symmetry.orbit_summary(rows[:3], optima[:3], 1000, 1e-2)
    assert partial[0]["size"] == 3 and not partial[0]["complete"]


def test_sign_symmetric_orbits_take_w_and_minus_w_as_one_optimum(key):
    """For an odd or even h basins keeps one of w, -w (either sign): a shift orbit then holds S^s w or -S^s w,
    and the alternating signal (S w = -w) is an orbit of one."""
    w = np.array(jax.random.normal(key, (8,)))
    w /= np.linalg.norm(w)
    alt = np.tile([1.0, -1.0], 4) / np.sqrt(8)
    signs = np.array([1, -1, 1, 1, -1, -1, 1, -1])[:, None]
    optima = np.concatenate([signs * symmetry.cyclic_shifts(w), [-alt]])
    assert symmetry.shift_orbits(optima, 1e-2, sign_symmetric=True).tolist() == [0] * 8 + [1]
    assert symmetry.shift_orbits(optima, 1e-2).tolist() == [0, 1, 0, 0, 1, 1, 0, 1, 2]  # signs split them
    assert symmetry.shift_stabilizer(alt, 1e-9, sign_symmetric=True) == 8 and symmetry.shift_stabilizer(alt, 1e-9) == 4
    rows = [{"count": 10, "energy": 0.3 if i < 8 else 0.2, "stable": True} for i in range(9)]
    orbits = symmetry.orbit_summary(rows, optima, 1000, 1e-2, sign_symmetric=True)
    assert [(o["size"], o["expected_size"], o["complete"]) for o in orbits] == [(8, 8, True), (1, 1, True)]


def test_equal_counts_pvalue_against_scipy_and_wilson_helpers():
    for counts in ([100, 100, 100], [120, 95, 88, 101], [10, 100]):
        assert stats.equal_counts_pvalue(counts) == pytest.approx(scipy.stats.chisquare(counts).pvalue, rel=1e-6)
    assert stats.equal_counts_pvalue([7]) == 1.0
    assert stats.intervals_overlap([100, 110], 1000) and not stats.intervals_overlap([100, 200], 1000)
    assert stats.covering_intervals([100, 200], 1000) == 0
