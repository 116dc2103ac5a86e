"""scripts/landscape.py end to end (Fig. 8): outputs, a user's file, bad flags."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path, *args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "landscape.py"), *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_landscape_script_writes_json_and_png(tmp_path):
    out = tmp_path / "land"
    r = _run(tmp_path, f"--output_dir={out}", "--n_grid=4096", "--acts=relu,linear")
    assert r.returncode == 0, r.stderr
    assert "relu" in r.stdout and "maxima" in r.stdout
    summary = json.loads((out / "landscape.json").read_text())
    assert summary["activations"]["linear"]["n_local_maxima"] == 2
    assert summary["activations"]["relu"]["n_local_maxima"] >= 8
    assert len(summary["activations"]["relu"]["maxima_theta"]) == summary["activations"]["relu"]["n_local_maxima"]
    assert (out / "fig8.png").stat().st_size > 10_000
    again = _run(tmp_path, f"--output_dir={out}", "--n_grid=4096", "--acts=relu")
    assert again.returncode != 0 and "--overwrite" in again.stderr


def test_landscape_script_user_file_and_bad_flags(tmp_path):
    np.savez(tmp_path / "pts.npz", x=np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]))
    r = _run(tmp_path, "--data_path=pts.npz", "--output_dir=o", "--n_grid=1024", "--acts=relu")
    assert r.returncode == 0, r.stderr
    bad = _run(tmp_path, "--acts=relu,swish", "--output_dir=o2")
    assert bad.returncode != 0 and "--acts must be a non-empty list from" in bad.stderr
    bad = _run(tmp_path, "--angles=0,abc", "--output_dir=o3")
    assert bad.returncode != 0 and "--angles must be a comma-separated list" in bad.stderr
    np.savez(tmp_path / "d3.npz", x=np.ones((4, 3)))
    bad = _run(tmp_path, "--data_path=d3.npz", "--output_dir=o4")
    assert bad.returncode != 0 and "--data_path must hold 2-D points" in bad.stderr
