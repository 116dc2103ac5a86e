"""scripts/augmentation.py: one subprocess run of a tiny study end to end; bad flags in process, with
the --aug data flags (App. B.5) of scripts/basins.py and scripts/landscape.py."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]


def _run(cwd, *args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "augmentation.py"), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=600)


@pytest.mark.slow
def test_augmentation_script_end_to_end(tmp_path):
    r = _run(tmp_path, "--output_dir=aug", "--ranges=0,1", "--acts=relu", "--views_per_circle=16", "--min_views=4",
             "--ripple_views=4,8", "--n_grid=256", "--n_init=64", "--max_steps=50", "--tile=64", "--shift_d=4",
             "--shift_m=2", "--shift_n_init=200", "--shift_ranges=0,2")
    assert r.returncode == 0, r.stderr[-3000:]
    out = tmp_path / "aug"
    s = json.loads((out / "augmentation.json").read_text())
    assert s["command"].startswith("python scripts/augmentation.py --output_dir=aug")
    assert list(s)[:2] == ["command", "config"] and set(s["timings_s"]) == {"rotation", "shift", "total"}
    assert "rotation verdict: App. B.5 HOLDS" in s["verdicts"]["rotation"]
    assert "shift verdict: App. B.5 HOLDS for Z_4" in s["verdicts"]["shift"]
    rows = s["rotation"]["per_act"]["relu"]["rows"]
    assert rows[0]["grid"]["n_prominent"] >= 8 and rows[1]["grid"]["n_prominent"] == 0
    assert rows[0]["basins"]["n_peaks_reached"] >= 1 and rows[1]["basins"]["peak_mass"] == 0
    assert "none: 0/3 orbits complete" in s["verdicts"]["shift"]
    z4 = s["shift"]["settings"][1]
    assert z4["n_complete"] == z4["n_orbits"] >= 1 and z4["max_relative_spread"] < 1e-12
    assert "--data_path=aug/shift_data.npz" in z4["basins_command"]
    for name in ("augmentation.md", "rotation.csv", "shift.csv", "rotation.png", "shift.png", "shift_data.npz"):
        assert (out / name).stat().st_size > 0
    assert s["verdicts"]["shift"] in (out / "augmentation.md").read_text() and s["verdicts"]["rotation"] in r.stdout


def test_bad_flags_end_the_script_in_one_line_naming_the_flag(tmp_path):
    with inprocess.script("augmentation") as script:
        for flag, message in [("--ranges=0,1.5", "error: --ranges must be numbers or fractions in [0, 1]"),
                              ("--basin_acts=gelu", "error: --basin_acts must be a subset of --acts")]:
            assert message in inprocess.main_exit(script, flag, f"--output_dir={tmp_path / 'o'}")
        assert "--ripple_views must be a comma-separated list of at least 2 integers >= 2" in \
            inprocess.flag_error(script, "--ripple_views=8,a")  # a flag error now, before main
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name,flag,message", [
    ("basins", "--aug=shift --aug_range=0.5", "--aug_range must be an integer >= 1 for --aug=shift"),
    ("basins", "--aug=rotation --aug_range=1.5", "--aug_range must lie in (0, 1] for --aug=rotation"),
    ("landscape", "--aug=rotation --aug_range=0", "--aug_range must lie in (0, 1]"),
])
def test_aug_flags_of_basins_and_landscape(name, flag, message):
    with inprocess.script(name) as script:
        assert message in (inprocess.flag_error(script, *flag.split(), "--output_dir=o") or "")


def test_rotation_of_the_basins_default_data_names_its_dimension(tmp_path):
    with inprocess.script("basins") as script:
        e = inprocess.main_exit(script, "--aug=rotation", "--aug_range=0.5", f"--output_dir={tmp_path / 'o'}")
    assert "--aug=rotation needs 2-D data; this data has d=10" in e and not (tmp_path / "o").exists()
