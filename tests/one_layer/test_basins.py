"""Basins: clustering against the dense-grid landscape, one optimum per pattern, PCA for linear,
dead runs excluded, cluster / merge, and the pipeline entry ``basins.run``."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import activations, data, pairwise
from ccdyn.one_layer import basins, engine, landscape
from ccdyn.data.registry import DataSpec, build_dataset

UNIFORM = pairwise.get_pairwise("uniform")


def _run(ds, act, dyn, n_init=1500, chunk=1000, tile=256, dtype=jnp.float64, seed=0):
    runner = engine.ChunkRunner(ds, act, UNIFORM, dyn, tile=tile)
    return engine.collect(runner, jax.random.PRNGKey(seed), n_init, chunk, dtype)


@pytest.mark.parametrize("name,method", [pytest.param("relu", "flow", marks=pytest.mark.slow),  # 7 s; test_flow's arcs
                                         ("quadratic", "flow"), ("linear", "power")])
def test_circle_optima_are_the_dense_grid_maxima(name, method):
    """The optima found from random inits are exactly the local maxima of the Fig. 8 landscape."""
    ds = data.circle()
    act = activations.get_activation(name)
    dyn, n_init = engine.Dynamics(method=method), 500
    # one tile holds every init: the re-packed chunks keep its shape (one compile of the block, not two)
    an = basins.analyze(ds, act, UNIFORM, dyn, _run(ds, act, dyn, n_init=n_init, tile=512), cluster_tol=1e-2)
    grid = landscape.local_maxima(ds, act, UNIFORM, n_grid=1 << 14)[2].theta
    found = np.sort([np.arctan2(r["w"][1], r["w"][0]) for r in an["rows"]])
    if act.sign_symmetric:  # w and -w are one optimum (odd or even h): compare the grid maxima modulo pi
        grid = np.unique(np.round(np.mod(grid, np.pi), 6))
        found = np.sort(np.mod(found, np.pi))
    assert found.size == grid.size, (found / np.pi, grid / np.pi)
    np.testing.assert_allclose(found, np.sort(grid), atol=1e-6)
    assert all(r["stable"] for r in an["rows"])
    assert an["status_counts"]["converged"] + an["status_counts"]["not_converged"] == n_init
    assert an["status_counts"]["not_converged"] <= 3


@pytest.mark.slow  # about 15 s, most of it compiling the sliding flow for this data; the flat-kink certificate is also in test_kinks
def test_latent_categorical_one_optimum_per_pattern():
    ds = build_dataset(DataSpec(data="latent_categorical", d=8, m=6, ortho_eps=0.0))
    act = activations.get_activation("relu")
    dyn = engine.Dynamics(method="flow")
    an = basins.analyze(ds, act, UNIFORM, dyn, _run(ds, act, dyn, n_init=600, chunk=600), cluster_tol=1e-2)
    assert sorted(r["pattern"] for r in an["rows"]) == list(range(6))
    assert all(r["stable"] and r["is_lme"] and r["overlap"] > 1 - 1e-9 for r in an["rows"])
    # Inits with every pattern on the inactive side of the ReLU have A(w) w = 0: reported as dead.
    assert an["status_counts"]["dead"] > 0
    assert np.all(an["labels"][an["labels"] >= 0] < 6)
    assert sum(r["count"] for r in an["rows"]) == an["status_counts"]["converged"]


def test_headline_relu_finds_every_pattern_linear_only_pca():
    ds = build_dataset(DataSpec(d=6, m=6))
    out = {}
    for name in ("relu", "linear"):
        act = activations.get_activation(name)
        dyn = engine.Dynamics(method="power")
        out[name] = basins.analyze(ds, act, UNIFORM, dyn, _run(ds, act, dyn, n_init=600, chunk=600, tile=600),  # one tile
                                   cluster_tol=1e-2)
    relu = out["relu"]["rows"]
    assert sorted(r["pattern"] for r in relu) == list(range(6))
    assert all(r["stable"] and r["overlap"] > 0.99 for r in relu)
    lin = out["linear"]["rows"]
    assert len(lin) == 1 and lin[0]["fraction"] == 1.0
    phi1 = np.linalg.eigh(np.cov(np.asarray(ds.x).T, aweights=np.asarray(ds.p), bias=True))[1][:, -1]
    assert abs(np.dot(lin[0]["w"], phi1)) > 1 - 1e-9


def test_cluster_and_merge():
    rng = np.random.default_rng(0)
    c = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    pts = np.repeat(c, [5, 3], axis=0) + 1e-4 * rng.normal(size=(8, 3))
    pts = pts / np.linalg.norm(pts, axis=1, keepdims=True)
    labels, centers = basins.cluster(pts[::-1], 1e-2)
    assert labels.tolist() == [1, 1, 1, 0, 0, 0, 0, 0]  # largest cluster first
    np.testing.assert_allclose(centers, c, atol=1e-3)
    labels, centers = basins.cluster(np.concatenate([c, -c]), 1e-2, odd=True)
    assert labels.tolist() == [0, 1, 0, 1] and centers.shape == (2, 3)
    optima, counts, mapping = basins.merge_duplicates(np.array([c[0], c[1], c[0] + 1e-5]), np.array([2, 4, 3]),
                                                       1e-2, odd=False)
    assert counts.tolist() == [5, 4] and mapping.tolist() == [0, 1, 0]


def test_sized_fills_only_what_is_not_given():
    """``sized`` keeps a given tile / chunk size and applies the rule (parallel.SIZING_RULE) to the rest;
    the summary's sizing record says which."""
    from ccdyn import parallel
    cfg = basins.BasinsConfig(n_init=100)
    auto = basins.sized(cfg, (1024, 1, 10), tile=None, chunk_size=None)
    assert auto.tile == parallel.default_tile(8.0 * 1024 * 4, 0, 100)  # CPU: 512 whatever the sizes
    assert auto.chunk_size == parallel.default_chunk(auto.tile)
    given = basins.sized(cfg, (1024, 1, 10), tile=64, chunk_size=None)
    assert (given.tile, given.chunk_size) == (64, parallel.default_chunk(64))
    rec = basins.sizing(given, ["chunk_size"])
    assert rec["auto"] == ["chunk_size"] and rec["rule"] == parallel.SIZING_RULE and rec["n_devices"] >= 1


# ---- stopping rules, incremental clustering, the summary's statistics (docs/statistics.md) ----------------------

def _noisy_points(rng, n, centers, scale):
    pts = centers[rng.integers(0, len(centers), n)] + scale * rng.normal(size=(n, centers.shape[1]))
    return pts / np.linalg.norm(pts, axis=1, keepdims=True)


@pytest.mark.parametrize("odd", [False, True])
def test_incremental_clusters_equal_the_greedy_clustering_of_all_rows(odd):
    """Chunk by chunk, the partition (and the counts) equal ``cluster`` on every row at once, whatever the
    chunk sizes; the noise puts many rows near the threshold, and odd data mixes w and -w."""
    rng = np.random.default_rng(1)
    centers = _noisy_points(rng, 12, np.eye(5), 0.3)
    W = _noisy_points(rng, 3000, centers, 0.004)
    if odd:
        W = W * rng.choice([-1.0, 1.0], size=(W.shape[0], 1))
    labels, _ = basins.cluster(W, 1e-2, odd)
    for sizes in ([3000], [1, 7, 500, 2492], [250] * 12):
        inc = basins.IncrementalClusters(1e-2, odd, 5)
        got = np.concatenate([inc.add(part) for part in np.split(W, np.cumsum(sizes)[:-1])])
        pairs = set(zip(labels.tolist(), got.tolist()))  # one partition: a bijection between the labels
        assert len(pairs) == len(set(labels.tolist())) == len(set(got.tolist())) == inc.seeds.shape[0]
        np.testing.assert_array_equal(np.sort(inc.counts), np.sort(np.bincount(labels)))
        assert inc.counts.sum() == W.shape[0]
    assert len(pairs) > 12  # the noise splits some centers: the test sees threshold cases


def _converged(W):
    return {"w": W, "status": np.full(W.shape[0], engine.Status.CONVERGED, np.int8)}


def test_target_miss_stops_at_the_first_chunk_end_with_inits_for_miss_and_clusters_each_row_once():
    from ccdyn import stats
    W = np.repeat(np.eye(3), 2000, axis=0)[np.random.default_rng(0).permutation(6000)]
    cfg = basins.BasinsConfig(n_init=6000, chunk_size=300, target_miss=0.01)
    n0 = stats.inits_for_miss(0.01)
    assert n0 == 757
    plan = basins.stop_plan(cfg)
    assert plan["first_checkpoint"] == 900 and plan["checkpoints"] == 1 and not plan["data_dependent"]
    assert plan["interval_confidence"] == 0.95 and plan["claimed_miss"] <= 0.01
    rule = basins.stop_rule(cfg)
    assert [rule(_converged(W[:n])) for n in (300, 600, 900)] == [False, False, True]
    assert rule.clusters is None  # without --target_halfwidth nothing needs the counts
    # with the half-width: the intervals are checked at the 18 chunk ends >= 757 at level 1 - 0.05 / 18
    cfg = dataclasses.replace(cfg, target_halfwidth=0.05)
    plan = basins.stop_plan(cfg)
    assert plan["checkpoints"] == 18 and plan["data_dependent"]
    np.testing.assert_allclose(plan["interval_confidence"], 1 - 0.05 / 18, rtol=1e-15)
    rule = basins.stop_rule(cfg)
    stops = [rule(_converged(W[:n])) for n in range(300, 6001, 300)]
    first = next(n for n in range(900, 6001, 300)  # the rule's answer from the counts of every row at once
                 if np.max(np.diff(stats.simultaneous_intervals(np.bincount(basins.cluster(W[:n], 1e-2)[0]), n,
                                                                plan["interval_confidence"]), axis=-1)) / 2 <= 0.05)
    assert stops.index(True) == first // 300 - 1 and 900 < first < 6000
    assert rule.seen == 6000 and rule.clusters.counts.sum() == 6000  # every row clustered once
    # --target_unseen keeps its rule (unseen-mass bound and Wilson half-widths), now incremental
    unseen = basins.stop_rule(basins.BasinsConfig(n_init=6000, chunk_size=300, target_unseen=0.2))
    assert [unseen(_converged(W[:n])) for n in range(300, 1201, 300)] == [
        basins.precise_enough(_converged(W[:n]), 0.2, 1e-2, odd=False) for n in range(300, 1201, 300)]


def test_a_run_stopped_by_target_miss_is_the_prefix_of_the_full_run():
    cfg = basins.BasinsConfig(data=DataSpec(d=6, m=6), n_init=640, chunk_size=128, tile=64, target_miss=0.03)
    ds = build_dataset(cfg.data, jnp.float32)
    runner = engine.ChunkRunner(ds, cfg.activation, UNIFORM, cfg.dynamics, tile=64)
    full = engine.collect(runner, jax.random.PRNGKey(0), 640, 128, jnp.float32)
    part = engine.collect(runner, jax.random.PRNGKey(0), 640, 128, jnp.float32, stop=basins.stop_rule(cfg))
    from ccdyn import stats
    assert part["status"].size == 256 >= stats.inits_for_miss(0.03) > 128  # 190 inits, rounded up to a chunk
    for k in full:
        np.testing.assert_array_equal(part[k], full[k][:256])


def _summary(counts, n, config, rest=engine.Status.NOT_CONVERGED, planted=True):
    """The summary of a run whose converged inits fall in optima of ``counts``, the other ``n - sum`` in ``rest``
    (``planted``: the data has planted patterns)."""
    rows = [{"optimum": j, "fraction": c / n, "ci95": [0.0, 1.0], "count": c, "energy": 0.3, "eigengap": 0.4,
             "residual": 1e-16, "kink_rank": 0, "certificate": "smooth", "stable": True, "smooth": True, "is_lme": True,
             "pattern": j if planted else None, "overlap": 0.99 if planted else None} for j, c in enumerate(counts)]
    status = np.r_[np.ones(sum(counts)), np.full(n - sum(counts), int(rest))].astype(np.int8)
    an = {"rows": rows, "status_counts": engine.status_counts(status), "n_clusters": len(rows), "planted": planted}
    result = {"status": status, "steps": np.ones(n)}
    record = {"command": "python scripts/basins.py", "versions": {}, "devices": [], "num_processes": 1}
    return basins.summary(an, result, config=config, record=record, timings_s={"run": 1.0, "analyze": 1.0})


def test_summary_reports_the_miss_bound_simultaneous_intervals_and_chao1_in_words():
    from ccdyn import stats
    counts, n = [5000, 3000, 1500, 400, 60, 2, 2, 1, 1, 1], 10000
    s = _summary(counts, n, dataclasses.asdict(basins.BasinsConfig(n_init=n)))
    st = s["statistics"]
    assert st["miss_bound"] == stats.miss_bound(n) and st["interval_method"] == "mass_weighted"
    assert st["interval_confidence"] == 0.95 and "stop" not in st and "intervals" not in st
    ci = np.array([r["ci_simultaneous"] for r in s["optima"]])
    np.testing.assert_array_equal(ci, stats.simultaneous_intervals(counts, n))
    wilson = stats.wilson_interval(counts, n)
    assert np.all(ci[:, 0] <= wilson[:, 0]) and np.all(ci[:, 1] >= wilson[:, 1])  # joint intervals are wider
    assert st["richness"]["f1"] == 3 and st["richness"]["f2"] == 2 and st["richness"]["chao1"] > 10
    text = basins.table(s)
    assert "no optimum with a basin >= 0.1% of inits was missed (95%)" in text and "Good-Turing" not in text
    assert "about 1.0 beyond the 10 found, each with a basin < 0.1%" in text  # (9999/10000) 3 * 2 / (2 * 3)
    assert "95% CI (all)" in text and "key: optimum" in text and "upper bound" not in text
    assert s["unseen_mass"]["singletons"] == 3  # the total-mass bound stays in the JSON
    # 9967 of the 10000 inits converged: the claims say so, and the table ends with one warning naming the flag
    assert st["converged"] == 9967 and st["claims"] and st["converged_share"] == 0.9967
    assert "both cover the 9967 of 10000 inits (99.67%) that converged: the 33 others (0.33%) reached no optimum" in text
    assert text.splitlines()[-1] == ("warning: 33 of 10000 inits (0.33%) ended without converging (33 not converged: "
                                     "still moving after --max_steps steps: raise --max_steps)")
    assert sum(line.startswith("warning") for line in text.splitlines()) == 1


@pytest.mark.parametrize("converged, claims", [(500, False), (8999, False), (9000, True), (10000, True)])
def test_statistics_make_no_claim_where_few_inits_converged(converged, claims):
    """Power iteration circling the kinks of generic data (issue: 0 of 10000 converged, yet "no optimum with a
    basin >= 0.1% was missed" and "none beyond the 0 found"): below the documented share
    (stats.MIN_CONVERGED_SHARE = 90%) the table says that no claim is made about missed optima or their
    number, and why; at or above it the claims stand and say the share they cover. Either way the table
    ends with one warning line naming --method=flow."""
    from ccdyn import stats
    n = 10000
    counts = [converged - converged // 3, converged // 3]
    power = basins.BasinsConfig(n_init=n, dynamics=engine.Dynamics(method="power"))  # the method
    s = _summary(counts, n, dataclasses.asdict(power), rest=engine.Status.CIRCLING_KINK)
    st, text = s["statistics"], basins.table(s)
    lines = text.splitlines()
    assert stats.MIN_CONVERGED_SHARE == 0.9 and st["claims"] is claims and st["converged"] == converged
    no_claim = (f"no claim about missed optima or their number: only {converged} of {n} inits "
                f"({100 * converged / n:g}%) converged, below the 90% these statistics need (docs/statistics.md "
                "section 7)")
    assert (no_claim in text) is not claims
    assert ("was missed" in text) is claims and ("Chao1" in text) is claims and ("beyond the" in text) is claims
    (row,) = basins.comparison_rows([("run", s)])
    cells = [row[basins.COMPARISON_COLUMNS.index(c)] for c in ("miss_bound", "chao1", "chao1_low", "chao1_high")]
    assert (cells == ["no claim"] * 4) is not claims
    if converged < n:
        assert lines[-1] == (f"warning: {n - converged} of {n} inits ({100 * (n - converged) / n:g}%) ended without "
                             f"converging ({n - converged} circling a kink: power iteration has no fixed point on a "
                             "ReLU kink: use --method=auto (power iteration, the sliding flow for the inits that "
                             "circle) or --method=flow)")
        assert sum(line.startswith("warning") for line in lines) == 1
    else:
        assert not any(line.startswith("warning") for line in lines)


def test_the_closing_warning_names_every_flag_largest_count_first():
    s = {"n_init": 1000, "n_circling_kink": 20, "n_overflow": 3, "n_not_converged": 50, "n_dead": 7}
    (line,) = basins.warning_line(s)
    assert line.startswith("warning: 73 of 1000 inits (7.3%) ended without converging (50 not converged: ")
    assert line.index("--max_steps") < line.index("--method=flow") < line.index("--x64")
    assert "dead" not in line  # a flat region: no flag changes it
    assert basins.warning_line({"n_init": 5, "n_converged": 5, "n_dead": 1}) == []


def test_a_run_without_optima_reads_back_and_tabulates():
    """No init converged (a short run): Chao1's upper end is infinite, "inf" in summary.json; the run's table
    and the comparison table of basins_table.py both take the summary as it reads back."""
    from ccdyn import io
    s = io.as_json(_summary([], 64, dataclasses.asdict(basins.BasinsConfig(n_init=64))))
    assert s["optima"] == [] and s["statistics"]["richness"]["high"] == "inf"
    text = basins.table(s)
    assert "no claim about missed optima or their number: only 0 of 64 inits (0%) converged" in text
    assert "Chao1" not in text and text.splitlines()[-1].startswith("warning: 64 of 64 inits (100%) ended without")
    (row,) = basins.comparison_rows([("none", s)])
    assert row[basins.COMPARISON_COLUMNS.index("chao1_high")] == "no claim"
    # the record keeps Chao1 (its upper end infinite) for a reader that wants it
    s["statistics"]["claims"] = True
    assert "number of optima, estimated (Chao1, from the 0 optima found once and 0 twice): 0.0, 95% interval " \
           "[0.0, inf]" in basins.table(s)
    (row,) = basins.comparison_rows([("none", s)])
    assert row[basins.COMPARISON_COLUMNS.index("chao1_high")] == float("inf")


def test_data_without_planted_patterns_reports_no_mass_on_them():
    """A user's file without ``patterns``: summary.json records no basin mass on planted patterns (null, not
    0.0, which would say that no basin is on them), and the table and the comparison table say so."""
    config = dataclasses.asdict(basins.BasinsConfig(n_init=100))
    s = _summary([60, 40], 100, config, planted=False)
    assert s["basin_mass_on_patterns"] is None
    text = basins.table(s)
    assert "no planted patterns in the data" in text and "basin mass on planted patterns" not in text
    (row,) = basins.comparison_rows([("file", s)])
    assert row[basins.COMPARISON_COLUMNS.index("mass_on_patterns")] == "-"
    planted = _summary([60, 40], 100, config)
    assert planted["basin_mass_on_patterns"] == 1.0
    assert "basin mass on planted patterns (stable, cos >= 0.9): 1.0000" in basins.table(planted)


def test_summary_of_a_run_stopped_by_the_half_width_claims_the_first_checkpoint_and_splits_alpha():
    from ccdyn import stats
    cfg = basins.BasinsConfig(n_init=100000, chunk_size=1000, target_miss=0.01, target_halfwidth=0.02)
    s = _summary([2500, 2500, 1000], 6000, dataclasses.asdict(cfg))
    st = s["statistics"]
    assert st["stop"]["checkpoints"] == 100 and st["stop"]["first_checkpoint"] == 1000
    assert st["interval_confidence"] == pytest.approx(1 - 0.05 / 100, rel=1e-14)
    assert st["miss_bound"] == stats.miss_bound(1000) <= 0.01  # not miss_bound(6000): n was chosen by the data
    np.testing.assert_array_equal([r["ci_simultaneous"] for r in s["optima"]],
                                  stats.simultaneous_intervals([2500, 2500, 1000], 6000, 1 - 0.05 / 100))
    assert st["stop"]["miss_met"] and st["stop"]["halfwidth_met"] == (st["max_halfwidth"] <= 0.02)
    text = basins.table(s)
    assert "99.95% CI (all)" in text and "intervals at 99.95% each of 100 checkpoints (95% together)" in text
    assert "met after 6000 of at most 100000 inits" in text or "not met in 6000 inits" in text


@pytest.mark.slow  # about a minute; the numbers are in docs/statistics.md section 5
def test_intervals_of_a_run_stopped_by_the_half_width_cover_at_95_percent():
    """Optional stopping: inits drawn chunk by chunk from known basins (5 large, 30 rare), the run stopped
    by --target_miss / --target_halfwidth; at the stop every interval holds its basin's mass together in
    >= 95% of the runs with the alpha split over the checkpoints. The same intervals at 95% without the
    split (the level of a fixed n) are shown for comparison."""
    from ccdyn import stats
    rng = np.random.default_rng(5)
    k = 35
    p = np.r_[np.full(5, 0.19), np.full(k - 5, 0.05 / (k - 5))]
    cfg = basins.BasinsConfig(n_init=6000, chunk_size=200, target_miss=0.02, target_halfwidth=0.03)
    reps, ok, naive_ok, stops = 300, 0, 0, []
    for _ in range(reps):
        labels = rng.choice(k, size=cfg.n_init, p=p)
        rule = basins.stop_rule(cfg)
        for n in range(cfg.chunk_size, cfg.n_init + 1, cfg.chunk_size):
            if rule(_converged(np.eye(k)[labels[:n]])) or n == cfg.n_init:
                break
        stops.append(n)
        counts = np.bincount(labels[:n], minlength=k)
        for level, acc in ((basins.stop_plan(cfg)["interval_confidence"], "ok"), (0.95, "naive")):
            ci = stats.simultaneous_intervals(counts, n, level)
            inside = bool(np.all((ci[:, 0] <= p) & (p <= ci[:, 1])))
            ok, naive_ok = (ok + inside, naive_ok) if acc == "ok" else (ok, naive_ok + inside)
    print(f"stopped runs: coverage {ok / reps:.3f} (alpha split), {naive_ok / reps:.3f} (95% as if n were fixed); "
          f"stops at {np.min(stops)}-{np.max(stops)} inits, median {np.median(stops):g}")
    assert ok / reps >= 0.95 - 2 * np.sqrt(0.05 * 0.95 / reps)
    assert len(set(stops)) > 1  # the stop depends on the counts


def test_uncertified_rows_are_named_not_claimed():
    """Endpoint clusters that no test certified get one line with their count, inits and reasons."""
    rows = [{"certificate": "smooth", "count": 90}, {"certificate": "kink-kkt", "count": 7},
            {"certificate": "none", "count": 2, "certificate_note": "refinement: active set cycles (a view ...)"},
            {"certificate": "none", "count": 1, "certificate_note": None}]
    (line,) = basins.uncertified_lines(rows)
    assert line.startswith("not certified: 2 more of the table's 4 rows (holding 3 inits)")
    assert "not counted as optima" in line
    assert "refinement: active set cycles" in line and "no reason recorded" in line and "a view" not in line
    assert basins.uncertified_lines(rows[:2]) == [] and basins.uncertified_lines([{"count": 3}]) == []


@pytest.mark.slow  # 10 s on a loaded machine: compiles and times the Gaussian field; the warning's words are fast below
def test_the_cost_of_a_gaussian_alpha_is_measured_before_the_run():
    """Gaussian alpha builds its kernel per init and evaluation (here through K Taylor features): on 200 points
    one evaluation costs more than a uniform alpha's, measured, and the time at --max_steps follows from it (3 evaluations per flow step)."""
    from ccdyn.data.registry import DataSpec
    spec = DataSpec(data="gaussian_mixture", d=8, m=8, n_samples=200, std=0.3)
    ds = build_dataset(spec, jnp.float64)
    gauss = basins.BasinsConfig(data=spec, alpha="gaussian", tau=1.0, n_init=1000)
    assert basins.cost_estimate(dataclasses.replace(gauss, alpha="uniform"), ds) is None
    est = basins.cost_estimate(gauss, ds)
    assert est["n"] == 200 and est["evals_per_step"] == 1 and est["ratio"] > 1.5  # O(n K) against O(n d)
    assert est["taylor_order"] is not None and 4 * est["taylor_order"] <= 200
    assert est["max_s"] == pytest.approx(1000 * 2000 * est["seconds_per_eval"] / jax.device_count())
    flow = basins.cost_estimate(dataclasses.replace(gauss, dynamics=engine.Dynamics(method="flow")), ds)
    assert flow["evals_per_step"] == 3
    assert flow["max_s"] == pytest.approx(1000 * 2000 * 3 * flow["seconds_per_eval"] / jax.device_count())


def test_a_gaussian_alpha_run_is_announced_with_its_cost_before_it_starts():
    """The warning gives the time at --max_steps and names --n_init and --alpha; a field as cheap as a uniform
    alpha's, or a short run, gets none."""
    gauss = basins.BasinsConfig(alpha="gaussian", tau=1.0, n_init=1000)
    est = {"seconds_per_eval": 3e-3, "uniform_seconds_per_eval": 3.5e-5, "ratio": 85.0, "evals_per_step": 1,
           "max_s": 6000.0, "n": 200}
    line = basins.cost_warning(gauss, None, est)
    assert line == ("warning: --alpha=gaussian costs O(n^2) per init step on these 200 points, 85x a uniform alpha "
                    "(measured): --n_init=1000 may take up to 1 h 40 min (every init to --max_steps=2000; inits that "
                    "converge sooner cost less); lower --n_init (or the points, --n_samples) or use --alpha=uniform")
    fast = basins.cost_warning(gauss, None, {**est, "taylor_order": 29})  # the kernel through Lemma 1's features
    assert fast.startswith("warning: --alpha=gaussian costs O(n K) (K = 29 terms, Lemma 1) per init step on these 200")
    assert basins.cost_warning(gauss, None, {**est, "max_s": 30.0}) is None  # short anyway
    assert basins.cost_warning(gauss, None, {**est, "ratio": 2.0}) is None  # as dear as a uniform alpha
    assert basins.cost_warning(dataclasses.replace(gauss, alpha="uniform"), None) is None  # nothing to measure


def test_run_job_refuses_a_directory_it_does_not_own_before_computing(tmp_path):
    """The library call opens its run directory as the script does: a directory holding other files is
    refused at once (nothing computed, nothing written), naming it."""
    from ccdyn import rundir
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(rundir.RunDirError, match="not a ccdyn run"):
        basins.run_job(basins.BasinsConfig(n_init=8), tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert basins.open_options(resume=True) == {"script": "scripts/basins.py", "outputs": basins.OUTPUTS,
                                                "overwrite": False, "resume": True, "ignore": ("chunk_size",)}


def test_auto_sends_centers_on_a_kink_straight_to_the_kink_refinement(monkeypatch):
    """The refinement's routing (``basins.analysis.refine``) with ReLU: power iteration refines the power and auto
    runs' centers when every one lies more than ON_KINK from each view's hyperplane; an auto center closer than
    that (the sliding flow's endpoint on a kink) goes to the kink refinement without power iteration, which
    would circle it for all its steps. Routing only: both refinements are stubbed."""
    from ccdyn.one_layer.basins import analysis
    ds = data.circle()
    x = np.asarray(ds.views()[0]).reshape(-1, 2)
    on = np.array([-x[0, 1], x[0, 0]]) / np.linalg.norm(x[0])  # orthogonal to view 0: on its kink
    dist = analysis._kink_distance(ds, np.stack([on, [1.0, 0.0]]))
    brute = [min(abs(w @ xi) / np.linalg.norm(xi) for xi in x if np.linalg.norm(xi) > 0) for w in (on, [1.0, 0.0])]
    np.testing.assert_allclose(dist, brute, atol=1e-15)
    off = np.array([[np.cos(0.3), np.sin(0.3)]])
    assert analysis._kink_distance(ds, off)[0] > analysis.ON_KINK
    calls = []
    smooth = lambda ds, act, pw, dyn, W: calls.append("power") or {  # noqa: E731
        "w": np.asarray(W), "status": np.full(len(W), engine.Status.CONVERGED), "steps": np.ones(len(W), int),
        "residual": np.zeros(len(W))}
    kink = lambda ds, act, pw, W: calls.append("kink") or {  # noqa: E731
        "w": np.asarray(W), "status": np.full(len(W), analysis.kinks.RefineStatus.CONVERGED)}
    monkeypatch.setattr(analysis.engine, "converge", smooth)
    monkeypatch.setattr(analysis.kinks, "refine", kink)
    monkeypatch.setattr(analysis, "_clear_of_kinks", lambda ds, out, margin: True)
    relu = activations.get_activation("relu")
    for method, centers, route in [("auto", off, ["power"]), ("auto", np.stack([off[0], on]), ["kink"]),
                                   ("power", np.stack([off[0], on]), ["power"])]:
        calls.clear()
        out = analysis.refine(ds, relu, UNIFORM, engine.Dynamics(method=method), centers)
        assert calls == route, (method, calls)
        assert (out["kink"] is None) == (route == ["power"])
