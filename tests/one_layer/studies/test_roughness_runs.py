"""ccdyn.one_layer.studies.roughness_runs on a committed exact-population basins run (latent summation, d = 6):
A(w) is constant near every optimum, so rho = 0 exactly and Thm. 1 reduces to the LME test."""

from pathlib import Path

import numpy as np

from ccdyn.one_layer import basins
from ccdyn.one_layer.studies import roughness_runs

RUN = Path(__file__).resolve().parents[3] / "results" / "theory" / "roughness" / "latent_exact"


def test_every_optimum_of_an_exact_run_and_the_same_points_under_gaussian_alpha():
    cfg = roughness_runs.RoughnessConfig(n_radii=3, min_fraction=0.1, n_random=4, compare_taus=(1.0,))
    lines = []
    rec = roughness_runs.run(cfg, [("latent_exact", basins.read_summary(RUN))], log=lines.append)
    assert len(lines) == 3 and lines[0].startswith("  latent_exact: 6 optima measured")
    np.testing.assert_allclose(rec["radii"], np.geomspace(0.2, 1e-4, 3))
    assert rec["config"]["compare_taus"] == (1.0,) and rec["min_crossings"] == 50
    run = rec["runs"]["latent_exact"]
    assert run["alpha"] == "uniform" and run["tau"] is None and len(run["optima"]) == 6  # one per pattern
    for m in run["optima"]:
        assert m["rho"] == 0.0 and m["crossings"] == 0 and m["cos"] > 0.99 and m["gap"] > 0.4
        assert m["thm1"] and m["fd_stable"] and m["engine_stable"]
        assert m["r_uniform"] is None and m["thm2_bound"] is None  # a discrete population has no density (Thm. 2)
        assert len(m["profile"]["rho_at"]) == 3
    t = rec["tables"]
    assert len(t["optima"]) == 6 and all(len(r) == len(roughness_runs.OPTIMA_COLUMNS) for r in t["optima"])
    assert t["runs"][0][:8] == ["latent_exact", "uniform", "-", 6, 6, 6, 6, 0]
    assert [c["alpha"] for c in rec["compare"]] == ["uniform", "gaussian"] and len(t["compare"]) == 2
    assert rec["compare"][0]["median_z0"] == 1.0 and 0 < rec["compare"][1]["median_z0"] < 1
    md = roughness_runs.markdown(rec)
    assert md.startswith("## Per run") and "## Same points, different alpha (optima of latent_exact)" in md
    assert "median_rho_ratio_to_uniform" in roughness_runs.table(rec)
