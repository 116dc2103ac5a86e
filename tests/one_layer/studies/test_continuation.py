"""Continuation of basins across a parameter (ccdyn.one_layer.studies.continuation): the matching rule on
hand-made analyses whose answer is known (an optimum that vanishes into a neighbour, a basin that
splits, a branch that moves), tipping rows, the parameter checks, and one tiny real run whose two
equal values must give the identity (same seed, same inits, same labels)."""

import dataclasses

import numpy as np
import pytest

from ccdyn.data.registry import DataSpec
from ccdyn.one_layer.studies import continuation
from ccdyn.one_layer.basins import BasinsConfig


def _unit(*v):
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v)


def _analysis(optima, labels, stable=None):
    labels = np.asarray(labels)
    n = labels.size
    rows = [{"fraction": np.sum(labels == k) / n, "ci95": [0.0, 1.0], "energy": float(k),
             "count": int(np.sum(labels == k)), "stable": True if stable is None else stable[k], "pattern": k,
             "overlap": 1.0} for k in range(len(optima))]
    return {"optima": np.asarray(optima), "labels": labels, "rows": rows}


# v0: optima x, y, z. v1: x moved a little, y gone (its inits went to x), z split into z' and z'', both
# within match_tol of z: z' (25 of z's 40 inits) continues z although z'' (15) is nearer.
X0, Y0, Z0 = _unit(1, 0, 0), _unit(0.7, 0.7, 0), _unit(0, 0, 1)
X1, Z1a, Z1b = _unit(0.98, 0.05, 0), _unit(-0.05, 0.1, 1), _unit(0.02, 0, 1)
L0 = np.array([0] * 40 + [1] * 20 + [2] * 40)
L1 = np.array([0] * 40 + [0] * 18 + [-4] * 2 + [1] * 25 + [2] * 15)  # -4: not converged


def _synthetic(**kw):
    an = [_analysis([X0, Y0, Z0], L0), _analysis([X1, Z1a, Z1b], L1)]
    return continuation.follow(an, [0.0, 1.0], odd=False, match_tol=0.2, **kw)


def test_matching_a_vanishing_optimum_and_a_split():
    out = _synthetic()
    t = {tr["id"]: tr for tr in out["tracks"]}
    assert len(t) == 4
    # x continues (moved 0.05), y dies at 1.0 and merges into x's track (90% of its basin went there)
    assert t[0]["optimum"] == [0, 0] and t[0]["dies_at"] is None and t[0]["born_at"] is None
    assert t[1]["optimum"] == [1, None] and t[1]["dies_at"] == 1.0 and t[1]["merges_into"] == 0
    assert t[1]["lost_to_not_converged"] == pytest.approx(0.1) and t[0]["lost_to_not_converged"] is None
    # z continues into z' (the larger share of its basin among optima within match_tol), z'' is born from z
    assert t[2]["optimum"] == [2, 1] and t[2]["dies_at"] is None
    assert t[3]["optimum"] == [None, 2] and t[3]["born_at"] == 1.0 and t[3]["born_from"] == 2
    assert t[2]["fraction"] == [0.4, 0.25] and t[3]["fraction"] == [None, 0.15]
    d = out["steps"][0]["distance"]
    assert d[2, 2] < d[2, 1] < 0.2 < d[1, 0]
    P = out["steps"][0]["tipping"]
    np.testing.assert_allclose(P[1], [0.9, 0, 0, 0.1])
    np.testing.assert_allclose(P[2], [0, 25 / 40, 15 / 40, 0])


def test_merge_needs_the_share_and_distance_decides_continuation():
    # with merge_share above y's 90% the vanishing optimum just dies
    t = _synthetic(merge_share=0.95)["tracks"]
    assert t[1]["dies_at"] == 1.0 and t[1]["merges_into"] is None
    # an optimum that moves farther than match_tol is a new branch even when it takes the whole basin
    an = [_analysis([X0], [0] * 10), _analysis([_unit(0.8, 0.6, 0)], [0] * 10)]
    tr = continuation.follow(an, [0, 1], odd=False, match_tol=0.2)["tracks"]
    assert [(x["dies_at"], x["merges_into"], x["born_at"], x["born_from"]) for x in tr] == [(1.0, 1, None, None),
                                                                                          (None, None, 1.0, 0)]


def test_odd_activations_match_w_and_minus_w():
    an = [_analysis([X0], [0] * 10), _analysis([-X1], [0] * 10)]
    assert continuation.follow(an, [0, 1], odd=True, match_tol=0.2)["tracks"][0]["optimum"] == [0, 0]
    assert len(continuation.follow(an, [0, 1], odd=False, match_tol=0.2)["tracks"]) == 2


def test_two_optima_onto_one_keep_the_larger_overlap():
    an = [_analysis([X0, _unit(1, 0.1, 0)], [0] * 6 + [1] * 4), _analysis([X1], [0] * 10)]
    tr = continuation.follow(an, [0, 1], odd=False, match_tol=0.2)["tracks"]
    assert tr[0]["optimum"] == [0, 0] and tr[1]["dies_at"] == 1.0 and tr[1]["merges_into"] == 0


def test_tipping_rows_sum_to_one_and_empty_rows_stay_zero():
    rng = np.random.default_rng(0)
    la, lb = rng.integers(-3, 4, 500), rng.integers(-2, 5, 500)
    O = continuation.overlap(la, lb, 4, 5)
    assert O.shape == (4, 6) and O.sum() == np.sum(la >= 0)
    np.testing.assert_allclose(continuation.tipping(O).sum(axis=1), 1.0)
    np.testing.assert_array_equal(continuation.tipping(np.zeros((2, 3))), 0.0)
    with pytest.raises(ValueError, match="same inits"):
        continuation.overlap(la, lb[:-1], 4, 5)


def test_configs_reach_every_kind_of_field_and_refuse_bad_ones():
    base = BasinsConfig()
    assert [c.tau for c in continuation.configs(base, "tau", [0.5, 2])] == [0.5, 2.0]
    assert continuation.configs(base, "ortho_eps", [0.3])[0].data == DataSpec(ortho_eps=0.3)
    assert continuation.configs(base, "max_steps", [10])[0].dynamics.max_steps == 10
    assert continuation.configs(base, "q", [0.3])[0].data.q == (0.3,)
    with pytest.raises(ValueError, match="'nonsense' is unknown"):
        continuation.configs(base, "nonsense", [1])
    with pytest.raises(ValueError, match="seed cannot be continued"):
        continuation.configs(base, "seed", [1, 2])
    with pytest.raises(ValueError, match="tau=-1 must be > 0"):
        continuation.configs(base, "tau", [1, -1])
    with pytest.raises(ValueError, match="max_steps=2.5 must be an integer"):
        continuation.configs(base, "max_steps", [2.5])


@pytest.mark.slow  # 6 s; fast: the power case of test_values_in_one_program_give_the_tracks_of_value_by_value
def test_real_run_of_two_equal_values_is_the_identity():
    base = BasinsConfig(data=DataSpec(d=4, m=4), n_init=500, tile=128, chunk_size=512)
    rec = continuation.run(base, "ortho_eps", [0.2, 0.2])
    k = rec["runs"][0]["n_optima"]
    assert k >= 2 and rec["runs"][1]["n_optima"] == k
    P = rec["steps"][0]["tipping"]
    np.testing.assert_array_equal(P, np.eye(k, k + 1))
    assert all(t["born_at"] is None and t["dies_at"] is None and None not in t["optimum"] for t in rec["tracks"])
    header, rows = continuation.track_rows(rec)
    assert len(rows) == 2 * k and len(header) == len(rows[0])
    assert len(continuation.tipping_rows(rec)[1]) == k


def test_compact_keeps_the_nonzero_overlaps_and_the_table_hides_small_tracks():
    out = {"param": "p", "values": [0.0, 1.0], "runs": [{"n_optima": 3, "status_counts": {"converged": 100}},
                                                          {"n_optima": 3, "status_counts": {"converged": 98}}],
           **_synthetic()}
    steps = continuation.compact(out)["steps"]
    assert sorted(steps[0]["overlap"]) == [[0, 0, 40], [1, -1, 2], [1, 0, 18], [2, 1, 25], [2, 2, 15]]
    assert steps[0]["successor"] == [0, -1, 1] and steps[0]["successor_distance"][1] is None
    text = continuation.table(out, min_fraction=0.3)
    assert "2 tracks with basin fraction < 0.3" in text and "0.400 stable" in text
    assert "key: a track" in text and "lost: the share" in text


def test_figure_draws_energy_or_overlap_and_refuses_a_missing_overlap():
    from ccdyn.one_layer import figures

    rec = {"param": "p", "values": [0.0, 1.0], **_synthetic()}
    for y in ("energy", "overlap"):
        fig = figures.continuation_figure(rec, min_fraction=0.3, y=y)
        assert len(fig.axes) == 2 and "2 tracks with basin fraction < 0.3" in fig.axes[0].get_title()
        figures.plt.close(fig)
    rec["tracks"][0]["overlap"][0] = None
    with pytest.raises(ValueError, match="planted patterns"):
        figures.continuation_figure(rec, y="overlap")


def test_inert_names_the_flag_under_which_a_param_has_no_effect():
    from ccdyn.data.registry import DataSpec
    from ccdyn.one_layer.basins import BasinsConfig
    from ccdyn.one_layer.engine import Dynamics

    base = BasinsConfig()  # uniform alpha, relu, latent summation, auto (power iteration, then the flow)
    assert "--alpha=uniform" in continuation.inert(base, "tau")
    assert continuation.inert(dataclasses.replace(base, alpha="gaussian"), "tau") is None
    assert "--act=relu" in continuation.inert(base, "leaky_slope")
    assert continuation.inert(dataclasses.replace(base, act="leaky_relu"), "leaky_slope") is None
    assert "--data=latent_summation" in continuation.inert(base, "std")
    assert continuation.inert(base, "ortho_eps") is None and continuation.inert(base, "q") is None
    circle = dataclasses.replace(base, data=DataSpec(data="circle", d=2))
    assert "--data=circle" in continuation.inert(circle, "ortho_eps") and continuation.inert(circle, "data_seed")
    assert "--aug=none" in continuation.inert(base, "aug_range")
    assert continuation.inert(base, "step_size") is None and continuation.inert(base, "shift") is None
    power = dataclasses.replace(base, dynamics=Dynamics(method="power"))
    assert "--method=power" in continuation.inert(power, "step_size") and continuation.inert(power, "shift") is None
    linear = dataclasses.replace(base, act="linear")  # auto is power iteration there: no step size, no flow_rtol
    assert "--method=auto --act=linear" in continuation.inert(linear, "step_size")
    assert continuation.inert(linear, "flow_rtol") and continuation.inert(linear, "shift") is None
    flow = dataclasses.replace(base, dynamics=Dynamics(method="flow"))
    assert continuation.inert(flow, "step_size") is None and "--method=flow" in continuation.inert(flow, "shift")
    assert continuation.inert(base, "cluster_tol") is None and continuation.inert(base, "tol") is None
    assert set(continuation._READ) <= set(continuation.PARAMS)  # every rule is about a parameter that exists


def _same_records(a, b):
    assert [r["n_optima"] for r in a["runs"]] == [r["n_optima"] for r in b["runs"]]
    for ra, rb in zip(a["runs"], b["runs"]):
        assert ra["status_counts"] == rb["status_counts"]
        assert [r["count"] for r in ra["optima"]] == [r["count"] for r in rb["optima"]]
        np.testing.assert_array_equal([r["w"] for r in ra["optima"]], [r["w"] for r in rb["optima"]])
    assert a["tracks"] == b["tracks"]
    for sa, sb in zip(a["steps"], b["steps"]):
        np.testing.assert_array_equal(sa["overlap"], sb["overlap"])
        np.testing.assert_array_equal(sa["tipping_ci"], sb["tipping_ci"])


@pytest.mark.parametrize("method", ["power", pytest.param("flow", marks=pytest.mark.slow)])  # flow (ReLU): minutes
def test_values_in_one_program_give_the_tracks_of_value_by_value(method):
    """ortho_eps changes only the dataset's arrays: the batched run (one program, the values a batch axis)
    and the value-by-value run give identical tracks, optima, counts and tipping intervals; with
    chunks smaller than n_init, and for the sliding flow too (slow; tests/one_layer/test_runner.py
    compares the engines alone, fast)."""
    big = method == "flow"
    base = BasinsConfig(data=DataSpec(d=4, m=4), n_init=160 if big else 80, tile=32 if big else 16,
                        chunk_size=96 if big else 48,
                        act="relu" if big else "quadratic",  # quadratic: no kink refinement to compile
                        dynamics=dataclasses.replace(BasinsConfig().dynamics, method=method, max_steps=400))
    values = [0.0, 0.3, 0.6] if big else [0.0, 0.3]
    one = continuation.run(base, "ortho_eps", values)
    seq = continuation.run(base, "ortho_eps", values, batch=False)
    assert one["batched"] and one["sequential_reason"] is None
    assert not seq["batched"] and seq["sequential_reason"] == "batch=False"
    _same_records(one, seq)
    assert one["runs"][0]["n_optima"] > 1  # several basins to follow
    if big:  # quadratic h: the top eigenvector alone once ortho_eps > 0 lifts the patterns' tie, so all tip at once
        assert any(s["tipping"][a, b] not in (0.0, 1.0) for s in one["steps"] for a, b in np.ndindex(s["tipping"].shape))
    text = continuation.table(one)
    assert "one compiled program for every value" in text and "right at once with probability >= 95%" in text


def test_parameters_that_change_shapes_or_the_program_run_value_by_value():
    from ccdyn.data.registry import build_dataset
    base = BasinsConfig(data=DataSpec(d=5, m=5, n_samples=40), n_init=8, tile=8, chunk_size=8)
    sets = lambda p, vs: [build_dataset(c.data) for c in continuation.configs(base, p, vs)]
    assert continuation.sequential_reason(base, "n_samples", sets("n_samples", [40, 50])) == (
        "--param=n_samples changes the dataset's shapes")
    assert continuation.sequential_reason(base, "ortho_eps", sets("ortho_eps", [0.0, 0.2])) is None
    assert "not the data's" in continuation.sequential_reason(base, "tau", sets("tau", [1, 2]))
    assert "not the data's" in continuation.sequential_reason(base, "step_size", sets("step_size", [1, 2]))


def test_tipping_csv_and_json_carry_the_simultaneous_intervals():
    out = {"param": "p", "values": [0.0, 1.0], **_synthetic()}
    from ccdyn import stats
    ci = stats.tipping_intervals([out["steps"][0]["overlap"]])[0]
    out["steps"][0]["tipping_ci"] = ci
    header, rows = continuation.tipping_rows(out)
    assert header[-3:] == ("ci_lo", "ci_hi", "zero_share_hi")
    for r in rows:
        assert r[8] <= r[6] <= r[9]  # the share inside its interval
    step = continuation.compact(out)["steps"][0]
    assert len(step["tipping_ci"]) == len(step["overlap"]) and len(step["tipping_ci_zero_hi"]) == 3
    # row 0 (40 inits, all to optimum 0): its zero entries share one upper end, that of count 0 of 40
    np.testing.assert_allclose(step["tipping_ci_zero_hi"][0], ci[0, 1, 1])
    assert 0 < step["tipping_ci_zero_hi"][0] < 0.2


def test_a_value_where_no_init_converges_ends_every_track_there():
    an = [_analysis([X0, Y0, Z0], L0), {"optima": np.zeros((0, 3)), "labels": np.full(L0.size, -4), "rows": []}]
    rec = continuation.follow(an, [0.0, 1.0], odd=False, match_tol=0.2)
    assert [t["dies_at"] for t in rec["tracks"]] == [1.0] * 3
    assert [t["lost_to_not_converged"] for t in rec["tracks"]] == [1.0] * 3
    np.testing.assert_array_equal(rec["steps"][0]["tipping"], [[1.0]] * 3)
