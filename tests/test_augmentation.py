"""Group augmentations (App. B.5): rotation / shift views, the invariance E(R w) = E(w), the registry,
shift orbits, landscape prominence, and scripts/augmentation.py."""

import json
import subprocess
import sys
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from ccdyn import activations, data, one_layer, pairwise, stats
from ccdyn.one_layer import landscape, symmetry
from ccdyn.data.registry import DataSpec, build_dataset

ROOT = Path(__file__).resolve().parents[1]
UNIFORM = pairwise.get_pairwise("uniform")


def _signals(key, n=6, d=8):
    """A generic population of n random signals of length d with random probabilities."""
    kx, kp = jax.random.split(key)
    p = np.asarray(jax.random.uniform(kp, (n,), minval=0.5, maxval=1.5))
    return data.make_dataset(np.asarray(jax.random.normal(kx, (n, d))), p / p.sum())


def _angles(x):
    return np.arctan2(np.asarray(x)[..., 1], np.asarray(x)[..., 0])


# --- views ------------------------------------------------------------------------------------------


def test_rotation_views_midpoint_angles_probabilities_norms():
    ds = data.circle()
    aug = data.rotation_views(ds, 0.25, 5)
    chex.assert_shape((aug.x_aug, aug.p_aug), ((9, 5, 2), (9, 5)))
    np.testing.assert_allclose(aug.p_aug, 0.2, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(aug.x_aug, axis=-1), 1.0, atol=1e-14)
    # Views sit at x0 rotated by the midpoints of 5 equal cells of [-pi/4, pi/4].
    t = (_angles(aug.x_aug) - _angles(ds.x)[:, None] + np.pi) % (2 * np.pi) - np.pi
    np.testing.assert_allclose(t, np.broadcast_to(np.pi / 4 * np.array([-0.8, -0.4, 0.0, 0.4, 0.8]), (9, 5)),
                               atol=1e-12)
    np.testing.assert_array_equal(aug.x, ds.x)
    # The whole circle: V angles spaced 2 pi / V, a coset of the cyclic group C_V.
    r = data.rotation_matrices(1.0, 8)
    np.testing.assert_allclose(np.einsum("vij,vkj->vik", r, r), np.broadcast_to(np.eye(2), (8, 2, 2)), atol=1e-15)
    np.testing.assert_allclose(np.diff(np.arctan2(r[:, 1, 0], r[:, 0, 0])), 2 * np.pi / 8, atol=1e-12)


def test_views_compose_with_existing_views(key):
    noisy = data.gaussian_noise_views(data.circle(), key, 3, 0.1)
    both = data.rotation_views(noisy, 0.5, 4)
    chex.assert_shape((both.x_aug, both.p_aug), ((9, 12, 2), (9, 12)))
    np.testing.assert_allclose(both.p_aug.sum(1), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(both.x_aug, axis=-1),
                               np.repeat(np.linalg.norm(noisy.x_aug, axis=-1), 4, axis=1), atol=1e-14)


def test_shift_views_are_exact_cyclic_shifts(key):
    ds = _signals(key, n=3, d=5)
    x = np.asarray(ds.x)
    part = data.shift_views(ds, 1)
    chex.assert_shape((part.x_aug, part.p_aug), ((3, 3, 5), (3, 3)))
    for v, s in enumerate([-1, 0, 1]):
        np.testing.assert_array_equal(part.x_aug[:, v], np.roll(x, s, axis=1))
    np.testing.assert_allclose(part.p_aug, 1 / 3, atol=1e-15)
    full = data.shift_views(ds, 2)  # 2 * 2 + 1 >= 5: the whole group Z_5
    assert full.x_aug.shape == (3, 5, 5)
    np.testing.assert_array_equal(full.x_aug[:, np.argsort(data.shift_amounts(5, 2) % 5)],
                                  np.stack([np.roll(x, s, axis=1) for s in range(5)], axis=1))


@pytest.mark.parametrize("d,max_shift,expected", [
    (8, 4, list(range(-4, 4))), (8, 100, list(range(-4, 4))), (8, 1, [-1, 0, 1]), (3, 5, [-1, 0, 1]),
    (7, 3, list(range(-3, 4))),
])
def test_shift_amounts_each_shift_once(d, max_shift, expected):
    s = data.shift_amounts(d, max_shift)
    assert s.tolist() == expected
    assert len(set((s % d).tolist())) == s.size


@pytest.mark.parametrize("call,match", [
    (lambda: data.rotation_views(data.circle(), 0.0, 4), r"max_angle=0.0 must lie in \(0, 1\]"),
    (lambda: data.rotation_views(data.circle(), 1.5, 4), r"max_angle=1.5 must lie in \(0, 1\]"),
    (lambda: data.rotation_views(data.circle(), 0.5, 0), r"n_views=0 must be an integer >= 1"),
    (lambda: data.rotation_views(data.latent_categorical(np.eye(3)), 0.5, 4), "d must be 2"),
    (lambda: data.shift_views(data.latent_categorical(np.eye(3)), 0), r"max_shift=0 must be an integer >= 1"),
    (lambda: data.shift_views(data.latent_categorical(np.eye(3)), 1.5), r"max_shift=1.5 must be an integer"),
    (lambda: data.zero_mean_basis(jax.random.PRNGKey(0), 4, 4), r"m=4 must be an integer \[1, 3\]"),
])
def test_bad_view_arguments_raise_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_zero_mean_basis(key):
    u = data.zero_mean_basis(key, 8, 3, 0.1)
    np.testing.assert_allclose(u.sum(0), 0.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(u, axis=0), 1.0, atol=1e-14)
    np.testing.assert_allclose(np.linalg.norm(u.T @ u - np.eye(3), 2), 0.1, atol=1e-12)


# --- App. B.5: invariance of the energy -----------------------------------------------------------


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


def test_full_circle_rotations_flatten_the_energy_as_views_grow():
    act = activations.get_activation("relu")
    theta = jnp.linspace(-np.pi, np.pi, 721)[:-1]
    scale = float(np.max(np.asarray(landscape.energy_on_circle(data.circle(), act, UNIFORM, theta))))
    ranges = []
    for v in (16, 64, 256):
        ds = data.rotation_views(data.circle(), 1.0, v)
        e = np.asarray(landscape.energy_on_circle(ds, act, UNIFORM, theta))
        ranges.append((e.max() - e.min()) / scale)
        # Exactly invariant under the cyclic group C_V (Eq. 107-108 for a discrete group).
        shifted = np.asarray(landscape.energy_on_circle(ds, act, UNIFORM, theta + 2 * np.pi / v))
        np.testing.assert_allclose(shifted, e, rtol=0, atol=1e-14 * scale)  # ripple: >= 1e-9 scale
    assert ranges[0] > 10 * ranges[1] > 100 * ranges[2]
    assert ranges[2] < 1e-8


def test_linear_rotation_energy_is_scaled_by_mean_cosine():
    """Independent route: for h linear, b(w|x0) = w^T E_t[R(t)] x0 = c w^T x0 with c = mean_k cos t_k."""
    act = activations.get_activation("linear")
    theta = jnp.linspace(-np.pi, np.pi, 97)[:-1]
    a, v = 0.3, 7
    t = a * np.pi * ((2 * np.arange(v) + 1) / v - 1)
    e0 = np.asarray(landscape.energy_on_circle(data.circle(), act, UNIFORM, theta))
    e = np.asarray(landscape.energy_on_circle(data.rotation_views(data.circle(), a, v), act, UNIFORM, theta))
    np.testing.assert_allclose(e, np.mean(np.cos(t)) ** 2 * e0, rtol=1e-12)


# --- registry ---------------------------------------------------------------------------------------


def test_registry_builds_and_validates_group_augmentations():
    rot = build_dataset(DataSpec(data="circle", aug="rotation", aug_range=0.5, aug_views=6))
    chex.assert_shape((rot.x_aug, rot.p_aug), ((9, 6, 2), (9, 6)))
    sh = build_dataset(DataSpec(data="latent_categorical", d=6, m=3, aug="shift", aug_range=3))
    chex.assert_shape(sh.x_aug, (3, 6, 6))
    np.testing.assert_array_equal(sh.x_aug[:, 0], np.roll(np.asarray(sh.x), -3, axis=1))
    for spec, match in [
        (DataSpec(data="circle", aug="rotation", aug_range=0.0), r"--aug_range=0.0 must lie in \(0, 1\]"),
        (DataSpec(data="circle", aug="rotation", aug_range=1.5), r"--aug_range=1.5 must lie in \(0, 1\]"),
        (DataSpec(d=4, m=4, aug="rotation", aug_range=0.5), "--aug=rotation needs 2-D data; this data has d=4"),
        (DataSpec(d=4, m=4, aug="shift", aug_range=2.5), "--aug_range=2.5 must be an integer >= 1"),
        (DataSpec(d=4, m=4, aug="shift", aug_range=0), "--aug_range=0 must be an integer >= 1"),
        (DataSpec(aug="flip"), "--aug='flip' is unknown"),
    ]:
        with pytest.raises(ValueError, match=match):
            build_dataset(spec)


# --- orbits and prominence --------------------------------------------------------------------------


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


def test_equal_counts_pvalue_against_scipy_and_wilson_helpers():
    for counts in ([100, 100, 100], [120, 95, 88, 101], [10, 100]):
        assert stats.equal_counts_pvalue(counts) == pytest.approx(scipy.stats.chisquare(counts).pvalue, rel=1e-6)
    assert stats.equal_counts_pvalue([7]) == 1.0
    assert stats.intervals_overlap([100, 110], 1000) and not stats.intervals_overlap([100, 200], 1000)
    assert stats.covering_intervals([100, 200], 1000) == 0


def test_prominence_and_summits_on_a_small_periodic_grid():
    theta = np.linspace(-np.pi, np.pi, 9)[:-1]
    e = np.array([0.0, 3.0, 1.0, 2.0, 0.0, 5.0, 4.0, 4.5])
    idx = np.array([1, 3, 5, 7])
    np.testing.assert_allclose(landscape.prominence(theta, e, theta[idx], e[idx]), [3.0, 1.0, 5.0, 0.5])
    np.testing.assert_array_equal(landscape.grid_index(theta, theta[idx] + 0.1), idx)
    labels = landscape.summit_labels(theta, e, theta[[5, 1]], e[[5, 1]], 1.5)
    assert labels.tolist() == [-1, 1, -1, -1, -1, 0, 0, 0]


def test_circle_maxima_disappear_with_the_whole_circle():
    act = activations.get_activation("relu")
    theta, e, m = landscape.local_maxima(data.circle(), act, UNIFORM, n_grid=720, refine_iters=0, newton_iters=0)
    scale = np.max(np.abs(e))
    assert np.sum(landscape.prominence(theta, e, m.theta, m.energy) / scale >= 5e-5) == 9
    ds = data.rotation_views(data.circle(), 1.0, 64)
    theta, e, m = landscape.local_maxima(ds, act, UNIFORM, n_grid=720, refine_iters=0, newton_iters=0)
    assert m.theta.size > 0 and np.max(landscape.prominence(theta, e, m.theta, m.energy)) / scale < 1e-7


# --- scripts ----------------------------------------------------------------------------------------


def _run(cwd, *args, script="augmentation.py", timeout=600):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout)


def test_bad_flag_exits_nonzero_naming_the_flag(tmp_path):
    r = _run(tmp_path, "--ranges=0,1.5", "--output_dir=o")
    assert r.returncode != 0 and "--ranges must be numbers or fractions in [0, 1]" in r.stderr, r.stderr[-1500:]
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
@pytest.mark.parametrize("script,flag,message", [
    ("augmentation.py", "--basin_acts=gelu", "--basin_acts must be a subset of --acts"),
    ("basins.py", "--aug=shift --aug_range=0.5", "--aug_range must be an integer >= 1 for --aug=shift"),
    ("basins.py", "--aug=rotation --aug_range=1.5", "--aug_range must lie in (0, 1] for --aug=rotation"),
    ("basins.py", "--aug=rotation --aug_range=0.5", "--aug=rotation needs 2-D data; this data has d=10"),
    ("landscape.py", "--aug=rotation --aug_range=0", "--aug_range must lie in (0, 1]"),
])
def test_more_bad_flags(tmp_path, script, flag, message):
    r = _run(tmp_path, *flag.split(), "--output_dir=o", script=script)
    assert r.returncode != 0 and message in r.stderr, r.stderr[-1500:]
    assert not (tmp_path / "o" / "summary.json").exists()


@pytest.mark.slow
def test_augmentation_script_end_to_end(tmp_path):
    r = _run(tmp_path, "--output_dir=aug", "--ranges=0,1", "--acts=relu", "--views_per_circle=16", "--min_views=4",
             "--ripple_views=4,8", "--n_grid=256", "--n_init=64", "--max_steps=50", "--tile=64", "--shift_d=4",
             "--shift_m=2", "--shift_n_init=200", "--shift_ranges=0,2")
    assert r.returncode == 0, r.stderr[-3000:]
    out = tmp_path / "aug"
    s = json.loads((out / "augmentation.json").read_text())
    assert s["command"].startswith("python scripts/augmentation.py --output_dir=aug")
    assert "rotation verdict: App. B.5 HOLDS" in s["verdicts"]["rotation"]
    assert "shift verdict: App. B.5 HOLDS for Z_4" in s["verdicts"]["shift"]
    rows = s["rotation"]["per_act"]["relu"]["rows"]
    assert rows[0]["grid"]["n_prominent"] >= 8 and rows[1]["grid"]["n_prominent"] == 0
    z4 = s["shift"]["settings"][1]
    assert z4["n_complete"] == z4["n_orbits"] >= 1 and z4["max_relative_spread"] < 1e-12
    for name in ("augmentation.md", "rotation.csv", "shift.csv", "rotation.png", "shift.png", "shift_data.npz"):
        assert (out / name).stat().st_size > 0
    assert s["verdicts"]["shift"] in (out / "augmentation.md").read_text() and s["verdicts"]["rotation"] in r.stdout
