"""scripts/landscape.py (Fig. 8): one tiny end-to-end run on a user's file; the study is tested in
tests/one_layer/studies/test_landscape_fig8.py."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # 4 s; fast: tests/one_layer/studies/test_landscape_fig8.py
def test_landscape_script_on_a_user_file(tmp_path):
    np.savez(tmp_path / "pts.npz", x=np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]))
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "landscape.py"), "--data_path=pts.npz",
                        "--output_dir=land", "--n_grid=1024", "--acts=linear"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "linear" in r.stdout and "maxima" in r.stdout and "key: maxima" in r.stdout
    s = json.loads((tmp_path / "land" / "landscape.json").read_text())
    assert s["command"].startswith("python scripts/landscape.py --data_path=pts.npz") and "versions" in s
    assert list(s) == ["command", "versions", "devices", "num_processes", "config", "activations", "wall_s"]
    assert s["config"]["data_path"] == "pts.npz" and len(s["config"]["angles_over_pi"]) == 3
    assert s["activations"]["linear"]["n_local_maxima"] == 2
    assert (tmp_path / "land" / "fig8.png").stat().st_size > 10_000


def test_bad_flags_and_inputs(tmp_path):
    np.savez(tmp_path / "d3.npz", x=np.ones((4, 3)))
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "landscape.json").write_text("{}")
    with inprocess.script("landscape") as script:
        assert "--acts must be a comma-separated list from linear" in (inprocess.flag_error(script, "--acts=relu,swish") or "")
        assert "--angles must be a comma-separated list of at least 2 numbers" in (
            inprocess.flag_error(script, "--angles=0,abc") or "")
        e = inprocess.main_exit(script, f"--data_path={tmp_path / 'd3.npz'}", f"--output_dir={tmp_path / 'o'}")
        assert e.startswith("error: --data_path must hold 2-D points") and not (tmp_path / "o").exists()
        e = inprocess.main_exit(script, "--n_grid=64", f"--output_dir={tmp_path / 'full'}")
        assert "--overwrite" in e
