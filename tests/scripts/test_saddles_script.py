"""scripts/saddles.py: one tiny end-to-end run on a basins run of the paper's circle points, and the bad
flags and inputs (the study is tested in tests/one_layer/studies/test_saddles.py)."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # two scripts started: about 2 min on 2 busy cores
def test_saddles_script_on_a_basins_run(tmp_path):
    run = lambda *a: subprocess.run([sys.executable, *a], capture_output=True, text=True, cwd=tmp_path,  # noqa: E731
                                    timeout=600)
    r = run(str(ROOT / "scripts" / "basins.py"), "--data=circle", "--method=euler_halving", "--n_init=300",
            "--output_dir=b")
    assert r.returncode == 0, r.stderr
    r = run(str(ROOT / "scripts" / "saddles.py"), "--run=b", "--n_steps=200", "--n_images=9", "--min_fraction=0.05",
            "--output_dir=s")
    assert r.returncode == 0, r.stderr
    assert "certified index-1 saddles" in r.stdout
    s = json.loads((tmp_path / "s" / "saddles.json").read_text())
    assert s["command"].startswith("python scripts/saddles.py --run=b") and s["n_pairs"] == len(s["pairs"]) >= 1
    k = len(s["optima"])
    rows = list(csv.reader((tmp_path / "s" / "barriers.csv").open()))
    assert len(rows) == k + 1 and len(rows[0]) == k + 1
    for name in ("disconnectivity.png", "paths.png"):
        assert (tmp_path / "s" / name).stat().st_size > 10_000


def test_bad_flags_and_inputs(tmp_path):
    (tmp_path / "notarun").mkdir()
    with inprocess.script("saddles") as script:
        assert "--step must lie in (0, 1]" in (inprocess.flag_error(script, "--run=x", "--step=2") or "")
        assert "--probe_angle" in (inprocess.flag_error(script, "--run=x", "--probe_angle=0") or "")
        assert "--touch_angle must lie in (0, 0.5)" in (inprocess.flag_error(script, "--run=x", "--touch_angle=1") or "")
        assert "--pairs" in (inprocess.flag_error(script, "--run=x", "--pairs=near") or "")
        for name in ("n_images", "n_steps", "touch_inits", "max_pairs"):  # sizes refused before any work
            e = inprocess.flag_error(script, "--run=x", f"--{name}=1000000000000") or ""
            assert e.startswith(f"flag --{name}=") and "not an integer in the range" in e and "\n" not in e, e
        assert "exactly one of --run and --continuation" in (
            inprocess.flag_error(script, "--run=x", "--continuation=y") or "")
        assert "exactly one of --run and --continuation" in (inprocess.flag_error(script) or "")
        e = inprocess.main_exit(script, f"--continuation={tmp_path / 'notarun'}", f"--output_dir={tmp_path / 'o'}")
        assert e.startswith("error: --continuation:") and not (tmp_path / "o").exists()
        e = inprocess.main_exit(script, f"--run={tmp_path / 'missing'}", f"--output_dir={tmp_path / 'o'}")
        assert e.startswith("error: --run:") and "is not a file" in e and not (tmp_path / "o").exists()
        (tmp_path / "notarun" / "summary.json").write_text("[1]")
        e = inprocess.main_exit(script, f"--run={tmp_path / 'notarun'}", f"--output_dir={tmp_path / 'o'}")
        assert e.startswith("error: --run:") and not (tmp_path / "o").exists()
