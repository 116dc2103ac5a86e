"""Saddles seeded where the basins touch (ccdyn.one_layer.saddle_seeds, saddle_paths, saddle_graph and the
study's searches): the seeded starting path against the exact geometry of the circle, the boundary regions
and the saddle database against hand-made cases, and (slow) the whole pipeline on 2-D point sets not used
while developing: every local minimum of E between neighbouring maxima, computed independently on a dense
grid of the angle with bisection on dE/dtheta, found among the certified saddles joining that pair."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.data import files, models
from ccdyn.data.dataset import make_dataset
from ccdyn.data.registry import DataSpec
from ccdyn.one_layer import basins, engine, exact2d, saddle_graph, saddle_paths, saddle_seeds, saddles
from ccdyn.one_layer.studies import saddles as study
from ccdyn.one_layer.studies.flow_accuracy import random_angles
from ccdyn.stats import wilson_interval
from tests.one_layer.test_saddles import RELU, UNIFORM, arc_minima

jax.config.update("jax_enable_x64", True)


def _on_arc(theta, start, span, tol=1e-9):
    return ((np.asarray(theta) - start) % (2 * np.pi) <= span + tol) | ((np.asarray(theta) - start) % (2 * np.pi) >= 2 * np.pi - tol)


def test_seeded_path_runs_along_the_far_arc_where_the_great_circle_crosses_a_third_maximum():
    """Three maxima on the circle whose arc between maxima 2 and 0 is longer than pi: the great circle
    between them is the other arc, over maximum 1. The seeded path from a bracket at that arc's minimum
    is the two ascents along the far arc: every image on it, in order, from one maximum to the other."""
    ds = models.circle(random_angles(7, 4, 9)).astype(jnp.float64)
    arcs = arc_minima(ds, RELU, UNIFORM, 1 << 14)
    a0, span, t, _, _ = max(arcs, key=lambda a: a[1])
    assert len(arcs) == 3 and span > np.pi
    pt = lambda th: np.array([[np.cos(th), np.sin(th)]])  # noqa: E731
    path = np.asarray(saddle_paths.seeded_paths(ds, RELU, UNIFORM, pt(t - 1e-4), pt(t + 1e-4), pt(a0), pt(a0 + span),
                                                15))[0]
    th = np.arctan2(path[:, 1], path[:, 0])
    rel = (th - a0) % (2 * np.pi)
    rel[0] = 0.0 if rel[0] > np.pi else rel[0]
    assert np.all(_on_arc(th, a0, span)) and np.all(np.diff(rel) > 0), rel
    np.testing.assert_allclose(path[[0, -1]], np.concatenate([pt(a0), pt(a0 + span)]), atol=1e-12)
    gc = np.asarray(saddles.great_circle_paths(pt(a0), pt(a0 + span), 15))[0]
    assert not np.all(_on_arc(np.arctan2(gc[:, 1], gc[:, 0]), a0, span))


def test_ascent_paths_climb_and_stop_at_the_target():
    ds = models.circle().astype(jnp.float64)
    th = exact2d.circle_basins(exact2d.circle_energy(ds, RELU, UNIFORM, 1 << 14))["theta"][0]
    target = np.array([[np.cos(th), np.sin(th)]])
    start = np.array([[np.cos(th + 0.3), np.sin(th + 0.3)]])
    up = np.asarray(saddle_paths.ascent_paths(ds, RELU, UNIFORM, start, target, n_steps=40, h=0.02))[0]
    e = np.asarray(saddles.landscape(ds, RELU, UNIFORM, up))
    assert np.all(np.diff(e) >= -1e-12) and np.array_equal(up[-1], target[0])


def test_regions_group_the_boundary_points_of_each_pair():
    """Brackets of pair (0, 1) in two places and of pair (1, 2) in one (one bracket with its ends swapped):
    three regions, seeds at each region's highest point, lo on the lower optimum's side, max_seeds kept."""
    ang = np.array([0.0, 0.01, 0.02, 2.0, 2.02, 4.0, 4.01])
    mid = np.stack([np.cos(ang), np.sin(ang)], 1)
    off = 1e-4 * np.stack([-np.sin(ang), np.cos(ang)], 1)
    lab = np.array([[0, 1], [0, 1], [1, 0], [0, 1], [0, 1], [1, 2], [2, 1]])
    br = {"lo": mid - off, "hi": mid + off, "labels": lab}
    energy = lambda w: np.asarray(w)[:, 1]  # noqa: E731  (E = sin theta: highest near theta = pi / 2)
    seeds, per = saddle_seeds.regions(br, energy, region_angle=0.1, max_seeds=4)
    assert per == {(0, 1): 2, (1, 2): 1} and [s["pair"] for s in seeds] == [(0, 1), (0, 1), (1, 2)]
    first = seeds[0]  # the region near 2 rad (higher E) first; its best point is at 2.0 (sin falls past pi/2)
    assert first["region"] == 1 and first["n_probes"] == 2 and abs(np.arctan2(*first["point"][::-1]) - 2.0) < 1e-6
    assert seeds[1]["n_probes"] == 3 and abs(np.arctan2(*seeds[1]["point"][::-1]) - 0.02) < 1e-6
    # the swapped bracket (labels (1, 0)) put back: lo on optimum 0's side
    np.testing.assert_allclose(seeds[1]["lo"], (mid + off)[2])
    assert [s["pair"] for s in saddle_seeds.regions(br, energy, region_angle=0.1, max_seeds=1)[0]] == [(0, 1), (1, 2)]


def test_distinct_saddles_and_kinds():
    w = np.array([1.0, 0.0])
    found = [(w, 0.5, (1, 0), 0), (w + 1e-9, 0.5, (0, 1), 3), (-w, 0.4, (0, 1), 4), (w, 0.5, (1, 2), 5)]
    d = saddle_graph.distinct_saddles(found)
    assert [(s["ends"], s["found_by"]) for s in d] == [((0, 1), [0, 3]), ((0, 1), [4]), ((1, 2), [5])]
    assert saddle_graph.classify_kind([0, 1], (0, 1), 0.5, [0.6, 0.7]) == "direct"
    assert saddle_graph.classify_kind([0, 1], (0, 1), 0.65, [0.6, 0.7]) == "not below both optima it reaches"
    # a pair joined by two saddles counts through the higher one (its lowest barrier)
    b = saddle_graph.barrier_matrix([1.0, 1.0, 1.0], [(s["energy"], *s["ends"]) for s in d])
    assert b[0, 1] == 0.5 and b[0, 2] == 0.5


def test_refine_status_is_an_intenum_with_key_and_text():
    s = saddles.SaddleStatus(1)
    assert s is saddles.SaddleStatus.NO_ACTIVE_SET and s.key == "no_active_set" and "region's closure" in s.text
    assert saddles.SaddleStatus.CONVERGED == 0 and saddles.SaddleStatus.NONFINITE.text == "non-finite"


def summary_2d(ds, spec, method="flow"):
    """A basins summary of the exact maxima of E on the circle (dense grid), with the error-controlled flow
    as the run's dynamics (a fixed step can jump over a shallow maximum's basin)."""
    ex = exact2d.circle_basins(exact2d.circle_energy(ds, RELU, UNIFORM, 1 << 16))
    cfg = basins.BasinsConfig(data=spec, dynamics=engine.Dynamics(method=method))
    ci = wilson_interval(np.round(ex["fraction"] * 1000).astype(int), 1000)
    rows = [{"w": [float(np.cos(t)), float(np.sin(t))], "energy": float(e), "fraction": float(f),
             "ci95": ci[k].tolist(), "stable": True, "pattern": None, "overlap": None}
            for k, (t, e, f) in enumerate(zip(ex["theta"], ex["energy"], ex["fraction"]))]
    return {"config": dataclasses.asdict(cfg), "optima": rows, "command": "python scripts/basins.py"}


def arcs_found(rec, ds):
    """Per arc between neighbouring maxima (exact route), the certified saddle joining that pair nearest
    the arc's minimum: (pair, arc length, angle error, energy error); None: no such saddle."""
    th_opt = np.array([np.arctan2(r["w"][1], r["w"][0]) for r in rec["optima_w"]])
    out = []
    for a0, span, t, e, flat in arc_minima(ds, RELU, UNIFORM):
        if flat:  # a flat arc (E constant on an interval) has no single saddle
            continue
        near = lambda th: int(np.argmin(np.abs((th_opt - th + np.pi) % (2 * np.pi) - np.pi)))  # noqa: E731
        pair = tuple(sorted((near(a0), near(a0 + span))))
        err = [(abs((np.arctan2(s["w"][1], s["w"][0]) - t + np.pi) % (2 * np.pi) - np.pi), abs(s["energy"] - e))
               for s in rec["saddles"] if tuple(s["ends"]) == pair]
        out.append((pair, span, *(min(err) if err else (None, None))))
    return out


def unseen_2d(kind, seed, tmp_path):
    if kind == "circle":
        ang = random_angles(seed, 4, 9)
        return models.circle(ang).astype(jnp.float64), DataSpec(data="circle", angles=ang)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13))
    x, p = rng.standard_normal((n, 2)), rng.dirichlet(np.ones(n))
    path = tmp_path / f"g{seed}.npz"
    files.save_dataset(path, make_dataset(x, p))
    return make_dataset(x, p, dtype=jnp.float64), DataSpec(data="file", data_path=str(path))


# developed on circle sets 0-9 and Gaussian sets 0-9 of these generators; checked on these (never run before)
UNSEEN = [("circle", s) for s in (600, 601, 602)] + [("gaussian", s) for s in (700, 701, 702)]
# chosen among seeds 800-899 by their exact geometry alone (never searched before): an arc between
# neighbouring maxima longer than pi with an isolated minimum, so the great circle between its two maxima
# is the other arc (over a third maximum when there are three or more); with two maxima, the pair is
# joined by two saddles, one on each arc
FAR_ARC = [("gaussian", 835), ("gaussian", 839), ("gaussian", 853), ("circle", 841), ("circle", 886),
           ("circle", 807), ("gaussian", 808)]


@pytest.mark.slow  # several minutes per set on 2 busy cores (the flow's probes, one compile per set)
@pytest.mark.parametrize("kind,seed", UNSEEN + FAR_ARC)
def test_every_arc_minimum_is_a_certified_saddle_on_unseen_2d_sets(kind, seed, tmp_path):
    ds, spec = unseen_2d(kind, seed, tmp_path)
    summ = summary_2d(ds, spec)
    rec = study.run(study.SaddlesConfig(n_steps=600, n_images=13, touch_inits=500), summ)
    rec["optima_w"] = summ["optima"]
    found = arcs_found(rec, ds)
    print(kind, seed, [(p, round(s, 3), a, e) for p, s, a, e in found], rec["n_pairs_several"])
    assert found and all(a is not None and a <= 1e-8 and e <= 1e-8 for _, _, a, e in found), found
    if (kind, seed) in FAR_ARC:
        assert max(span for _, span, _, _ in found) > np.pi
    pairs = [p for p, _, _, _ in found]
    assert rec["n_pairs_several"] == len(pairs) - len(set(pairs))  # two arcs of one pair: two saddles, said so
    rows, _ = study.pair_rows(rec)
    for r in rows:  # no negative barrier in the table
        assert r[5] == "-" or (float(r[5]) > 0 and float(r[6]) > 0), r


def test_disconnectivity_figure_shows_every_optimum_names_its_energy_and_has_a_legend():
    """Every optimum (also one below every saddle, an unstable one, and one joined to none) and every merge
    inside the main panel's y range; the y label names the energy (E, or the flow's potential Psi with
    Gaussian alpha and its tau); a legend."""
    from ccdyn.one_layer import figures
    opt = [{"energy": e, "fraction": 0.25, "ci95": [0.2, 0.3], "stable": k != 2, "pattern": k if k < 2 else None}
           for k, e in enumerate([0.32, 0.31, 0.20, 0.30])]
    rec = {"optima": opt, "merges": [[0.25, 0, 1, [0], [1]], [0.22, 1, 2, [0, 1], [2]]], "landscape": "E_alpha"}
    for landscape, tau, want in (("E_alpha", None, "energy E"), ("potential Psi (Gaussian alpha)", 0.2, "Psi")):
        fig = figures.disconnectivity_figure({**rec, "landscape": landscape, "tau": tau})
        ax = fig.axes[0]
        lo, hi = ax.get_ylim()
        assert all(lo < o["energy"] < hi for o in opt) and all(lo < m[0] < hi for m in rec["merges"])
        assert want in ax.get_ylabel() and want in fig.axes[1].get_ylabel()
        assert (tau is None) or "tau = 0.2" in ax.get_ylabel()
        assert fig.legends and len(fig.legends[0].get_texts()) == 4
