"""scripts/cor2_exact.py, thm3_exact.py, kernel_lemmas.py and ddn_thm5.py: one tiny end-to-end run each (the
first three marked slow: their studies are tested in tests/one_layer/studies/) and their flag errors."""

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


@pytest.mark.slow  # the study tests cover the numbers; this is the wiring end to end
def test_cor2_exact_script(tmp_path):
    r = _run("cor2_exact.py", "--taus=0.5", "--n_random_w=0", "--n_samples=4000", "--output_dir=c2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "c2" / "cor2_exact.json").read_text())
    assert out["command"].startswith("python scripts/cor2_exact.py --taus=0.5") and "tables" not in out
    (c,) = out["claims"]
    assert c["id"] == "core-cor2-exact" and c["result"] == "c2" and f"core-cor2-exact: {c['verdict']}" in r.stdout
    assert c["parts"]["rho_gaussian / rho_uniform <= z0 at every w and tau"]
    assert "core-cor2-exact" in (tmp_path / "c2" / "cor2_exact.md").read_text()


@pytest.mark.slow  # the study tests cover the numbers; this is the wiring end to end
def test_thm3_exact_script(tmp_path):
    r = _run("thm3_exact.py", "--d=4", "--m=4", "--ortho_eps=0.05", "--angles_deg=0", "--n_patterns=2",
             "--gammas=0.1,0.2,0.4", "--n_samples=16", "--n_steps=40", "--output_dir=t3", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "t3" / "thm3_exact.json").read_text())
    assert out["claims"][0]["verdict"] == "holds" and out["claims"][0]["numbers"]["certified_exact"] == 2
    assert (tmp_path / "t3" / "starts.csv").read_text().count("\n") == 3


def test_ddn_thm5_script(tmp_path):
    r = _run("ddn_thm5.py", "--output_dir=t5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "t5" / "thm5_remark.json").read_text())
    assert out["claims"][0]["verdict"] == "partly" and "ddn-thm5-remark: partly" in r.stdout


def test_bad_flags():
    with inprocess.script("cor2_exact") as script:
        for flag, message in [("--radii=0.01,0.02", "--radii needs >= 2 values in decreasing order"),
                              ("--std=0", "--std must be > 0"), ("--m=4", "--m must be <= --d")]:
            assert message in (inprocess.flag_error(script, flag) or "")
    with inprocess.script("thm3_exact") as script:
        assert "--gammas must be" in (inprocess.flag_error(script, "--gammas=0.5,1.2") or "")
        assert "--act" in (inprocess.flag_error(script, "--act=quadratic") or "")
    with inprocess.script("ddn_thm5") as script:
        assert "--gamma must lie in [0, 1)" in (inprocess.flag_error(script, "--gamma=1") or "")


@pytest.mark.slow  # the study tests cover the numbers; this is the wiring end to end
def test_kernel_lemmas_script(tmp_path):
    r = _run("kernel_lemmas.py", "--taus=2", "--degrees=10,40", "--batch_sizes=32,512", "--n_batches=4",
             "--output_dir=kl", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "kl" / "kernel_lemmas.json").read_text())
    assert [c["id"] for c in out["claims"]] == ["core-lemma1", "core-lemma2-kernel"]


def test_kernel_lemmas_bad_flags():
    with inprocess.script("kernel_lemmas") as script:
        assert "--degrees must be" in (inprocess.flag_error(script, "--degrees=10,100") or "")
