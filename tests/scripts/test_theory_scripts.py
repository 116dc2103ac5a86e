"""scripts/irregularity.py (Thm. 3) and scripts/roughness.py (Thm. 1-2, Cor. 2): one tiny end-to-end
run each; the studies themselves are tested in tests/one_layer/studies/."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]


def _run(script, *args, cwd):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def test_irregularity_script_writes_the_thm3_record(tmp_path):
    r = _run("irregularity.py", "--d=4", "--m=4", "--ortho_eps=0.05", "--angles_deg=0", "--n_patterns=2",
             "--gammas=0.1,0.2,0.4", "--n_samples=16", "--n_steps=40", "--output_dir=t3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "t3" / "thm3.json").read_text())
    assert out["verdict"].startswith("Thm. 3 holds: 2/2 certified") and out["verdict"] in r.stdout
    assert out["command"].startswith("python scripts/irregularity.py --d=4") and "versions" in out
    assert out["config"]["gammas"] == [0.1, 0.2, 0.4] and "tables" not in out
    assert len(list(csv.DictReader((tmp_path / "t3" / "starts.csv").open()))) == 2
    assert "Verdict: Thm. 3 holds" in (tmp_path / "t3" / "summary.md").read_text()


def test_irregularity_bad_flags():
    with inprocess.script("irregularity") as script:
        for flag, message in [("--gammas=0.5,1.2", "--gammas must be a comma-separated list of numbers in (0, 1)"),
                              ("--angles_deg=0,90", "--angles_deg must be a comma-separated list of numbers in [0, 90)"),
                              ("--n_patterns=11", "--n_patterns must be <= --m")]:
            assert message in (inprocess.flag_error(script, flag) or "")


@pytest.mark.slow  # 5 s; fast: tests/one_layer/studies/test_roughness_runs.py
def test_roughness_script_on_a_committed_basins_run(tmp_path):
    run = ROOT / "results" / "theory" / "roughness" / "latent_exact"
    r = _run("roughness.py", f"--runs={run}", "--n_radii=2", "--min_fraction=0.1", "--compare_taus=1",
             "--n_random=2", "--output_dir=rough", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((tmp_path / "rough" / "optima.csv").open()))
    assert len(rows) == 6 and all(row["thm1_gap_gt_rho"] == "True" for row in rows)
    out = json.loads((tmp_path / "rough" / "roughness.json").read_text())
    assert out["command"].startswith("python scripts/roughness.py") and "versions" in out and "tables" not in out
    assert [c["alpha"] for c in out["compare"]] == ["uniform", "gaussian"]
    assert (tmp_path / "rough" / "compare.csv").is_file() and "## Same points" in (tmp_path / "rough" / "roughness.md").read_text()
    assert (tmp_path / "rough" / "rho_vs_gap.png").stat().st_size > 5_000


def test_roughness_missing_run_and_bad_flags(tmp_path):
    with inprocess.script("roughness") as script:
        e = inprocess.main_exit(script, f"--runs={tmp_path / 'missing'}", f"--output_dir={tmp_path / 'y'}")
        assert e.startswith("error: --runs:") and "missing/summary.json is not a file" in e
        assert not (tmp_path / "y").exists()
        assert "--compare_taus must be a comma-separated list of numbers > 0" in (
            inprocess.flag_error(script, "--runs=a", "--output_dir=b", "--compare_taus=1,-2") or "")
        assert "--r_min must be < --r_max" in (inprocess.flag_error(script, "--runs=a", "--output_dir=b", "--r_min=0.5") or "")
