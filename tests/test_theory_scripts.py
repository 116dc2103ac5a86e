"""scripts/irregularity.py (Thm. 3) and scripts/roughness.py (Thm. 1-2, Cor. 2) end to end, tiny."""

import csv
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(script, *args, cwd):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_irregularity_script_certifies_starts_at_patterns(tmp_path):
    r = _run("irregularity.py", "--d=4", "--m=4", "--ortho_eps=0.05", "--angles_deg=0", "--n_patterns=2",
             "--gammas=0.1,0.2,0.4", "--n_samples=16", "--n_steps=40", "--output_dir=t3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "t3" / "thm3.json").read_text())
    assert out["verdict"].startswith("Thm. 3 holds: 2/2 certified")
    assert all(s["stays_in_ball"] and s["converged"] for s in out["starts"])
    assert "python scripts/irregularity.py" in out["command"]
    bad = _run("irregularity.py", "--gammas=0.5,1.2", "--output_dir=x", cwd=tmp_path)
    assert bad.returncode != 0 and "--gammas must be a comma-separated list of numbers in (0, 1)" in bad.stderr


def test_roughness_script_on_a_committed_basins_run(tmp_path):
    """On the committed exact-population run (latent summation, d = 6): A(w) is constant near every
    optimum, so rho = 0 exactly and Thm. 1 reduces to the LME test."""
    run = ROOT / "results" / "theory" / "roughness" / "latent_exact"
    r = _run("roughness.py", f"--runs={run}", "--n_radii=3", "--min_fraction=0.1", "--compare_taus=1",
             "--output_dir=rough", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((tmp_path / "rough" / "optima.csv").open()))
    assert len(rows) == 6  # one per planted pattern
    for row in rows:
        assert float(row["rho"]) == 0.0 and float(row["crossings"]) == 0 and float(row["cos"]) > 0.99
        assert row["thm1_gap_gt_rho"] == "True" and row["fd_stable"] == "True"
        assert row["r_uniform"] == "-"  # a discrete population has no density on the plane (Thm. 2)
    out = json.loads((tmp_path / "rough" / "roughness.json").read_text())
    assert [c["alpha"] for c in out["compare"]] == ["uniform", "gaussian"]
    assert "python scripts/roughness.py" in out["command"]
    assert (tmp_path / "rough" / "rho_vs_gap.png").stat().st_size > 5_000
    bad = _run("roughness.py", "--runs=missing", "--output_dir=y", cwd=tmp_path)
    assert bad.returncode != 0 and "missing/summary.json does not exist" in bad.stderr
