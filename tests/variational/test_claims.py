"""ccdyn.variational.claims on the committed results/simclr_var JSON: every verdict the studies wrote
comes out again from the numbers beside it (moving the verdicts out of the studies changed none), and
the ledger holds one record per verdict with unique ids. Lemma A.2's verdict counts signs that are
resolved (value beyond its rounding bound), not values beyond a fixed cut."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from ccdyn import io
from ccdyn.variational import claims
from ccdyn.variational import sphere_configs as sc

RESULTS = Path(__file__).resolve().parents[2] / "results" / "simclr_var"


@pytest.fixture(scope="module")
def records():
    return tuple(io.read_json(RESULTS / p) for p in ("sphere/sphere.json", "kernel/kernel.json", "kernel/clusters.json"))


@pytest.mark.parametrize("key, fn", [("prop21", claims.prop21_verdict), ("fig3", claims.fig3_verdict),
                                     ("thm32", claims.thm32_verdict), ("propA1", claims.propA1_verdict),
                                     ("lemmaA2", claims.lemmaA2_verdict)])
def test_sphere_verdicts_again(records, key, fn):
    sphere = records[0]
    assert io.as_json(fn(sphere[key])) == sphere[key]["verdict"]


def test_kernel_and_cluster_verdicts_again(records):
    _, kernel, clusters = records
    assert io.as_json(claims.kernel_verdicts(kernel)) == kernel["verdicts"]
    c = clusters["config"]
    cfg = SimpleNamespace(dims=tuple(c["dims"]), at=tuple(c["at"]), share=c["share"])
    again = claims.cluster_verdicts(cfg, clusters["summaries"], clusters["grid"])
    assert io.as_json(again) == clusters["verdicts"]


def test_ledger(records):
    led = claims.ledger(*records)
    n = 5 + len(records[1]["verdicts"]) + len(records[2]["verdicts"])
    assert len(led) == n == len({r["id"] for r in led})
    assert [r["verdict"] for r in led[:5]] == ["partly", "holds", "holds", "partly", "holds"]
    assert {r["check"] for r in led[5:11]} == {"autodiff", "sampled estimate", "simulation against a closed form",
                                                "closed form"}
    assert claims.ledger(sphere=records[0])[0]["id"] == "simclr-prop-2.1"


def test_lemmaA2_verdict_counts_resolved_signs_not_a_fixed_cut(key):
    """Three evenly spaced points at tau = 0.01 (in the lemma's region, interactions e^{-150}) and 0.5
    (outside it). The second variations and the Riemannian eigenvalue at 0.01 are positive but far below
    any fixed cut such as 1e-12, and resolved: the cell is tested, resolved and stable."""
    rows = [sc.lemma_check(3, t, key, n_dirs=256) for t in (0.01, 0.5)]
    r0 = rows[0]
    assert 0 < r0["min_second_variation_admitted"] < 1e-40 and 0 < r0["min_riemannian_eig"] < 1e-40
    v = claims.lemmaA2_verdict({"rows": rows})
    n = v["numbers"]
    assert v["holds"] and v["parts"] == {"every tested cell resolved": True,
                                         "no admitted direction resolved negative": True}
    assert (n["cells_tested"], n["cells_tested_resolved"], n["stable_cells"], n["stable_cells_inside_lemma_region"],
            n["unresolved_eig_cells"], n["cells_in_region_without_admitted_direction"]) == (1, 1, 2, 1, 0, 0)
    assert n["admitted_directions"] == r0["n_admitted"] > 0 and n["admitted_directions_resolved_negative"] == 0
    assert n["worst_admitted"] == r0["min_second_variation_admitted"]
    assert 0 < n["worst_admitted_err"] < 1e-6 * n["worst_admitted"]
    # a direction resolved negative, or a cell whose signs are not resolved, fails its part
    neg = claims.lemmaA2_verdict({"rows": [{**r0, "n_admitted_resolved_negative": 1}, rows[1]]})
    assert neg["parts"] == {"every tested cell resolved": True, "no admitted direction resolved negative": False}
    noise = claims.lemmaA2_verdict({"rows": [{**r0, "admitted_resolved": False, "riemannian_eig_resolved": False}]})
    assert not noise["parts"]["every tested cell resolved"]
    assert (noise["numbers"]["stable_cells"], noise["numbers"]["unresolved_eig_cells"]) == (0, 1)
    # nothing tested: nothing earned
    assert claims.lemmaA2_verdict({"rows": [rows[1]]})["holds"] is False


def test_cluster_claims_beyond_the_runs_horizon_are_not_established(records):
    """A run of 20 iterations says nothing about iterations 200 and 1000: those claims are "not
    established" with the reason (the nearest recorded iteration would otherwise stand in for them);
    the claims the run reaches keep their verdicts."""
    from ccdyn import verdicts

    clusters = records[2]
    c = clusters["config"]
    cfg = SimpleNamespace(dims=tuple(c["dims"]), at=tuple(c["at"]), share=c["share"])
    full = claims.cluster_verdicts(cfg, clusters["summaries"], clusters["grid"])
    n200 = sum("~200" in v["claim"] for v in full)
    assert n200 == 8
    for steps, n_out in ((20, 0), (500, n200)):  # 500 reaches the ~200 claims, not the ~1000 ones
        short = {k: {**s, "config": {**s["config"], "steps": steps}} for k, s in clusters["summaries"].items()}
        again = claims.cluster_verdicts(cfg, short, clusters["grid"])
        assert [v["claim"] for v in again] == [v["claim"] for v in full]
        for v, w in zip(again, full):
            late = "~1000" in v["claim"] or ("~200" in v["claim"] and steps < 200)
            if late:
                assert v["holds"] is None and v["parts"] == {} and verdicts.verdict_word(v) == "not established"
                assert v["reason"].startswith(f"beyond the run's horizon: it stops at iteration {steps}")
                assert verdicts.claim_record("x", "SimCLR-var", "Fig. 5", "s", v, v["numbers"], "visual")["verdict"] \
                    == "not established"
            else:
                assert v == w
        assert sum("~200" in v["claim"] and v["holds"] is not None for v in again) == n_out


def test_cluster_claims_without_finite_seeds_are_not_established(records):
    """Every seed non-finite (e.g. a tiny --tau): a score has no mean or interval (None); the claims that
    compare them are "not established" with the reason, never a TypeError on None < float."""
    clusters = records[2]
    c = clusters["config"]
    cfg = SimpleNamespace(dims=tuple(c["dims"]), at=tuple(c["at"]), share=c["share"])
    none = {"mean": None, "ci": None, "n": 0}
    dead = {k: {**s, "at": {t: {**row, "ratio": none} for t, row in s["at"].items()}}
            for k, s in clusters["summaries"].items()}
    grid = [{**g, "cluster_x1_silhouette_end": none} for g in clusters["grid"]]
    again = claims.cluster_verdicts(cfg, dead, grid)
    open_ = [v for v in again if "~1000" in v["claim"] or v["claim"].startswith("Remark 4.4")]
    assert len(open_) == 9 and all(v["holds"] is None and v["reason"].startswith("too few finite seeds")
                                   for v in open_)
