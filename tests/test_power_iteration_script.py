"""scripts/power_iteration.py (Fig. 1 right): PI from u_m converges to a certified optimum next to u_m."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def test_fig1_script(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "power_iteration.py"), "--d=6", "--m=6",
                        "--ortho_eps=0,0.1", "--n_steps=40", "--output_dir=fig1"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "fig1" / "power_iteration.json").read_text())
    near = s["ortho_eps"]["0.1"]
    assert all(near["stable"]) and all(near["is_lme"])
    assert min(near["overlap_with_start"]) > 0.99
    moves = np.asarray(near["moves"])
    assert moves.shape == (6, 40) and np.all(moves[:, -1] < 1e-12)
    assert (tmp_path / "fig1" / "fig1_right.png").stat().st_size > 10_000
    bad = subprocess.run([sys.executable, str(ROOT / "scripts" / "power_iteration.py"), "--ortho_eps=0.1,1.5",
                          "--output_dir=x"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert bad.returncode != 0 and "--ortho_eps must be a comma-separated list of numbers in [0, 1)" in bad.stderr
