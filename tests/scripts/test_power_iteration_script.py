"""scripts/power_iteration.py (Fig. 1 right): one tiny end-to-end run; the study is tested in
tests/one_layer/studies/test_fig1.py."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # 4 s; fast: tests/one_layer/studies/test_fig1.py
def test_fig1_script(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "power_iteration.py"), "--d=4", "--m=4",
                        "--ortho_eps=0,0.1", "--n_steps=30", "--output_dir=fig1"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "min cos(w*, u_m)" in r.stdout and "converged" in r.stdout and "key: ortho_eps" in r.stdout
    s = json.loads((tmp_path / "fig1" / "power_iteration.json").read_text())
    assert s["command"].startswith("python scripts/power_iteration.py --d=4") and "versions" in s
    assert sorted(s["ortho_eps"]) == ["0.0", "0.1"] and s["config"]["dtype"] == "float64"
    assert np.asarray(s["ortho_eps"]["0.1"]["moves"]).shape == (4, 30)
    assert (tmp_path / "fig1" / "fig1_right.png").stat().st_size > 10_000


def test_bad_flags():
    with inprocess.script("power_iteration") as script:
        assert "--ortho_eps must be a comma-separated list of numbers in [0, 1)" in (
            inprocess.flag_error(script, "--ortho_eps=0.1,1.5") or "")
        assert "--m must be <= --d and <= 16" in (inprocess.flag_error(script, "--m=12") or "")
