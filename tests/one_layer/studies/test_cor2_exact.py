"""ccdyn.one_layer.studies.cor2_exact and its ledger record: a small run, its closed forms and verdict."""

import pytest

from ccdyn.one_layer import claims
from ccdyn.one_layer.studies import cor2_exact

CFG = cor2_exact.Cor2ExactConfig(taus=(0.2,), n_random_w=0, n_samples=10000)


def test_small_run_and_its_verdict():
    lines = []
    rec = cor2_exact.run(CFG, log=lines.append)
    assert len(lines) == 3 and lines[0].startswith("  u0: done")
    rows = rec["rows"]
    assert [(r["w"], r["alpha"], r["tau"]) for r in rows[:3]] == [("u0", "uniform", None), ("u0", "gaussian", 0.2),
                                                                   ("u1", "uniform", None)]
    for r in rows:
        assert r["ratio_exact"] == pytest.approx(r["E_phi0_h"] / r["E_h"])
        assert r["r_gaussian"] == pytest.approx(r["z0"] * r["r_uniform"])
        if r["alpha"] == "uniform":
            assert r["z0"] == 1.0 and r["ratio_sampled"] == 1.0
    assert len(rec["tables"]["rows"]) == len(rows) and all(len(t) == len(cor2_exact.COLUMNS) for t in rec["tables"]["rows"])
    (c,) = claims.cor2_exact_claims(rec, tol=0.1, tol_vector=0.2)
    assert c["id"] == "core-cor2-exact" and c["check"] == "closed form"
    assert c["parts"]["rho_gaussian < rho_uniform at every w and tau"]
    assert c["parts"]["rho_gaussian / rho_uniform <= z0 at every w and tau"]
    assert c["numbers"]["max_ratio_rel_diff_resolved"] < 0.1 and c["verdict"] == "holds"
    # the exact factor is far below z0 at small tau: Cor. 2's z0 is a ratio of bounds
    assert c["numbers"]["ratio_exact_over_z0"]["u0 tau=0.2"] < 0.3
    assert "| u0 | uniform |" in cor2_exact.markdown(rec)


def test_a_failing_part_is_reported():
    rec = {"rows": [{"w": "a", "alpha": "uniform", "tau": None, "rho_exact": 1.0, "ratio_exact": 1.0, "z0": 1.0,
                     "ratio_sampled": 1.0, "rel_err_vector": 0.0},
                    {"w": "a", "alpha": "gaussian", "tau": 0.5, "rho_exact": 0.5, "ratio_exact": 0.5, "z0": 0.4,
                     "ratio_sampled": 0.7, "rel_err_vector": 0.3}]}
    (c,) = claims.cor2_exact_claims(rec)
    assert c["verdict"] == "partly" and not c["parts"]["rho_gaussian / rho_uniform <= z0 at every w and tau"]


def test_bad_config():
    with pytest.raises(ValueError, match="radii"):
        cor2_exact.run(cor2_exact.Cor2ExactConfig(radii=(0.01, 0.02)))
    with pytest.raises(ValueError, match="taus"):
        cor2_exact.run(cor2_exact.Cor2ExactConfig(taus=(0.0,)))
