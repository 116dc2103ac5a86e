"""ccdyn.one_layer.studies.saddles on the paper's nine circle points (Fig. 8): every pair of the 9 maxima,
the barrier matrix against the exact 2-D minimax (over the two arcs between two maxima, the higher of the
lowest arc minima), neighbours joined directly, the others through the saddles of their neighbours."""

import dataclasses

import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.data import models
from ccdyn.data.registry import DataSpec
from ccdyn.one_layer import basins, engine, exact2d
from ccdyn.one_layer.studies import saddles as study
from ccdyn.stats import wilson_interval
from tests.one_layer.test_saddles import RELU, UNIFORM, arc_minima


def _summary():
    """A basins summary of the 9 exact maxima (what scripts/basins.py writes, reduced to what the study reads)."""
    ds = models.circle().astype(jnp.float64)
    ex = exact2d.circle_basins(exact2d.circle_energy(ds, RELU, UNIFORM, 1 << 16))
    cfg = basins.BasinsConfig(data=DataSpec(data="circle"), dynamics=engine.Dynamics(method="euler_halving"))
    counts = np.round(ex["fraction"] * 1000).astype(int)
    ci = wilson_interval(counts, 1000)
    rows = [{"w": [float(np.cos(t)), float(np.sin(t))], "energy": float(e), "fraction": float(f), "ci95": ci[k].tolist(),
             "stable": True, "pattern": None, "overlap": None}
            for k, (t, e, f) in enumerate(zip(ex["theta"], ex["energy"], ex["fraction"]))]
    return {"config": dataclasses.asdict(cfg), "optima": rows, "command": "python scripts/basins.py --data=circle"}, ds


@pytest.mark.slow  # about 1 min on 2 busy cores
def test_barrier_matrix_is_the_exact_2d_minimax():
    summary, ds = _summary()
    rec = study.run(study.SaddlesConfig(n_steps=600, n_images=13, pairs="all"), summary)
    n = len(summary["optima"])
    assert rec["n_pairs"] == n * (n - 1) // 2 and len(rec["barrier_matrix"]) == n
    arcs = arc_minima(ds, RELU, UNIFORM)  # arc k runs from maximum k to maximum k + 1 (by angle)
    assert len(arcs) == n
    lows = np.array([a[3] for a in arcs])
    b = np.array(rec["barrier_matrix"])
    for i in range(n):
        for j in range(i + 1, n):
            one, two = lows[i:j].min(), np.concatenate([lows[j:], lows[:i]]).min()
            assert abs(b[i, j] - max(one, two)) <= 1e-8, (i, j, b[i, j], max(one, two))
    kinds = {tuple(p["pair"]): p["kind"] for p in rec["searches"]}
    for k in range(n):
        assert kinds[tuple(sorted((k, (k + 1) % n)))] == "direct"
    assert all(p["certified"] for p in rec["searches"])
    assert n - 1 <= rec["n_distinct_saddles"] <= n  # at most one saddle per arc, enough to join all
    assert len(rec["merges"]) == n - 1
    lines = study.table(rec).splitlines()
    assert len(study.pair_rows(rec)[0]) == len(rec["pairs"]) and max(map(len, lines)) <= study.TABLE_WIDTH
    assert sum(line.startswith(("0-", "1-", "2-", "3-", "4-", "5-", "6-", "7-")) for line in lines) == len(rec["pairs"])


@pytest.mark.slow  # 10 s; fast: the verdicts and config checks
def test_touching_pairs_on_the_circle_are_the_neighbours():
    """On the circle each basin is an arc between two minima of E(theta): the basins that touch are the
    neighbouring maxima. The probes find every neighbouring pair, and a non-neighbouring pair only
    across a basin narrower than the perturbation (a flip that jumps over it)."""
    summary, ds = _summary()
    cfg = basins.BasinsConfig.from_dict(summary["config"])
    opt = np.array([r["w"] for r in summary["optima"]])
    # the error-controlled flow: its basins are the arcs (a fixed step can jump over a basin)
    t = study.touching(ds, cfg.activation, cfg.pairwise, engine.Dynamics(method="flow"), opt, n_probe=2000,
                       angle=0.1, match_tol=1e-2, seed=0)
    n = len(opt)
    frac = np.array([r["fraction"] for r in summary["optima"]])  # basin width / 2 pi, in angle order
    c = t["counts"]
    np.testing.assert_array_equal(c, c.T)
    for i in range(n):
        assert c[i, (i + 1) % n] > 0, (i, c[i])
    for i in range(n):
        for j in range(i + 2, n if i else n - 1):  # not neighbours
            if c[i, j]:
                between = min(frac[i + 1:j].sum(), np.concatenate([frac[j + 1:], frac[:i]]).sum())
                assert between * 2 * np.pi < 0.1, (i, j, between)
    kept = [(i, j) for i in range(n) for j in range(i + 1, n) if c[i, j]]
    assert study.components(n, kept) == 1
    # ends that stop short of every optimum (inits next to a minimum of E leave it slowly): a few percent
    assert t["n_unmatched"] <= 0.05 * 2 * t["n_probe"], t["n_unmatched"]


def test_table_fits_120_columns_with_a_key_and_numbered_notes():
    """The printed pair table: at most study.TABLE_WIDTH (120) wide whatever the notes, a key line for its
    columns and symbols, the notes of the searches not certified numbered under it, full notes in the
    record; a pair joined by two saddles says so and shows the higher (lowest barrier); a search that found
    another pair's saddle names that pair and shows no barrier of its own (never a negative one)."""
    long_note = "refinement: no active set gives a stationary point in its region's closure " * 2
    opt = [{"energy": 0.3 + 0.01 * k, "pattern": k if k < 2 else None} for k in range(3)]
    gc, b1 = {"kind": "great circle"}, {"kind": "boundary", "region": 1}
    sr = lambda pair, seed, e, cert, note, reach, kind, sid: {  # noqa: E731
        "pair": pair, "seed": seed, "energy": e, "certified": cert, "note": note, "reaches": reach, "kind": kind,
        **({"saddle_id": sid} if sid is not None else {})}
    searches = [sr([0, 1], gc, 0.25, True, "", [1, 0], "direct", 0),
                sr([0, 1], b1, 0.20, True, "", [0, 1], "direct", 1),
                sr([0, 2], gc, 0.31, True, "", [1, 2], "joins another pair", 2),  # above E_0: no barrier of 0-2
                sr([0, 2], b1, 0.2, False, long_note, [-1, 2], "an end reaches no known optimum", None),
                sr([1, 2], gc, 0.21, False, "index 2 (...)", [1, 1], "both ends reach the same optimum", None)]
    saddles_ = [{"id": 0, "ends": [0, 1], "energy": 0.25, "found_by": [0], "kink_rank": 3, "index": 1},
                {"id": 1, "ends": [0, 1], "energy": 0.20, "found_by": [1], "kink_rank": 0, "index": 1},
                {"id": 2, "ends": [1, 2], "energy": 0.305, "found_by": [2], "kink_rank": 1, "index": 1}]
    pairs = [{"pair": [0, 1], "searches": [0, 1], "n_regions": 3, "n_seeded": 1, "saddles": [0, 1]},
             {"pair": [0, 2], "searches": [2, 3], "n_regions": 1, "n_seeded": 1, "saddles": []},
             {"pair": [1, 2], "searches": [4], "n_regions": 0, "n_seeded": 0, "saddles": [2]}]
    rec = {"optima": opt, "searches": searches, "saddles": saddles_, "pairs": pairs, "n_pairs": 3, "n_searches": 5,
           "n_certified": 3, "n_direct": 2, "n_distinct_saddles": 3, "n_pairs_several": 1,
           "timings_s": {"total": 1.0}, "per_pair_s": 0.33,
           "touching": {"n_flips": 5, "n_probe": 100, "angle": 0.1, "components": 1, "n_regions": 4, "n_seeds": 2},
           "all_pairs_check": {"n_pairs_all": 3, "n_lower": 0, "max_abs_diff": 0.0, "total_s_all": 2.0}}
    text = study.table(rec)
    lines = text.splitlines()
    assert max(map(len, lines)) <= study.TABLE_WIDTH == 120
    assert any(line.startswith("key: ") for line in lines)
    assert "(1) refinement: no active set" in text and "(2) index 2" in text
    rows, notes = study.pair_rows(rec)
    assert notes == [long_note, "index 2 (...)"] and len(rows) == 3
    r01, r02, r12 = rows
    assert r01[:5] == ["0-1", "u0-u1", "g+1b/3", 2, "0.250000"] and r01[9] == "g"  # several: the highest shown
    assert r02[3] == 0 and r02[4] == "-" and "g other 1-2" in r02[10] and "b1 no (1)" in r02[10]
    assert r12[2] == "g" and r12[10] == "g no (2)" and r12[9] == "0-2 g"  # joined by another pair's search
    for r in rows:
        assert r[5] == "-" or (float(r[5]) > 0 and float(r[6]) > 0), r


def test_compare_names_a_missed_lower_barrier():
    b_all = np.array([[1.0, 0.5, 0.4], [0.5, 1.0, 0.4], [0.4, 0.4, 1.0]])
    assert study.compare(b_all, b_all)["n_lower"] == 0
    b_t = b_all.copy()
    b_t[0, 1] = b_t[1, 0] = 0.4  # the touching pairs join 0 and 1 only through 2
    b_t[0, 2] = b_t[2, 0] = np.nan
    c = study.compare(b_t, b_all)
    assert c["n_lower"] == 2 and c["lower_pairs"] == [[0, 1], [0, 2]] and c["n_joined_only_by_all"] == 1
    assert abs(c["max_abs_diff"] - 0.1) < 1e-15


def test_config_checks():
    with pytest.raises(ValueError, match="n_images"):
        study.SaddlesConfig(n_images=2)
    with pytest.raises(ValueError, match="pairs"):
        study.SaddlesConfig(pairs="some")
    with pytest.raises(ValueError, match="two"):
        summary, _ = _summary()
        study.run(study.SaddlesConfig(min_fraction=0.9), summary)


def _along(values, mats):
    """An along.json-shaped record: per value the barrier matrix (diagonal: the optima's energies)."""
    per = []
    for v, b in zip(values, mats):
        b = np.array(b, float)
        k = len(b)
        e = np.diag(b)
        iu = np.triu_indices(k, 1)
        h = (np.minimum(e[:, None], e[None]) - b)[iu]
        h = h[np.isfinite(h)]
        per.append({"value": v, "n_optima": k, "n_pairs": k * (k - 1) // 2, "n_certified": len(h), "n_joined": len(h),
                    "barrier_min": float(h.min()), "barrier_median": float(np.median(h)),
                    "barrier_matrix": [[None if not np.isfinite(x) else float(x) for x in row] for row in b]})
    return {"param": "x", "values": values, "per_value": per, "command": "python scripts/saddles.py --continuation=c"}


def _m(energies, saddle):
    b = np.full((len(energies), len(energies)), saddle, float)
    np.fill_diagonal(b, energies)
    return b


def test_barrier_verdicts_from_along_records():
    """The two barrier records judge the numbers they are given: falling barriers hold, rising ones do not;
    more and relatively deeper optima at the smallest tau hold, a merge (NaN) or fewer optima do not."""
    from ccdyn.one_layer import claims
    good = _along([0.0, 0.1, 0.2], [_m([1.0, 1.0], 0.5), _m([1.0, 1.0], 0.6), _m([1.0, 1.0], 0.7)])
    r = claims.barrier_ortho_claims(good, m=2)[0]
    assert r["verdict"] == "holds" and r["id"] == "ccdyn-barriers-ortho-eps"
    assert r["command"] == "python scripts/saddles.py --continuation=c"
    bad = _along([0.0, 0.1], [_m([1.0, 1.0], 0.7), _m([1.0, 1.0], 0.5)])
    assert claims.barrier_ortho_claims(bad, m=2)[0]["verdict"] == "partly"
    # tau: 3 optima at tau = 1 (relative depth 0.5), 2 at tau = 8 (0.2)
    tau = _along([8.0, 1.0], [_m([1.0, 1.0], 0.8), _m([0.1, 0.1, 0.1], 0.05)])
    assert claims.barrier_tau_claims(tau)[0]["verdict"] == "holds"
    shallow = _along([8.0, 1.0], [_m([1.0, 1.0], 0.5), _m([0.1, 0.1, 0.1], 0.09)])
    r = claims.barrier_tau_claims(shallow)[0]
    assert r["verdict"] == "partly" and not r["parts"][next(k for k in r["parts"] if k.startswith("deeper"))]
    apart = _m([0.1, 0.1, 0.1], 0.05)
    apart[0, 1:] = apart[1:, 0] = np.nan  # optimum 0 joined to no other
    assert not claims.barrier_tau_claims(_along([8.0, 1.0], [_m([1.0, 1.0], 0.8), apart]))[0]["parts"][
        "every value: all optima joined by certified saddles"]
    none = np.full((3, 3), np.nan)
    np.fill_diagonal(none, 0.1)  # no certified saddle at the smallest tau: no depth to judge
    per = _along([8.0], [_m([1.0, 1.0], 0.8)])
    per["per_value"].append({"value": 1.0, "n_optima": 3, "barrier_matrix": none.tolist()})
    r = claims.barrier_tau_claims(per)[0]
    assert r["verdict"] == "not established" and r["note"].startswith("no certified saddle")
