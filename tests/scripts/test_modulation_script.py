"""scripts/modulation.py refuses a bad flag with one line naming it (the study itself runs in process in
tests/two_layer/studies/test_modulation_study.py)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bad_scales_fail_naming_the_flag(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "modulation.py"), "--scales=1", "--output_dir=x"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=120)
    (line,) = [x for x in r.stderr.splitlines() if "--scales" in x]
    assert r.returncode != 0 and "--scales must be a comma-separated list of at least 2" in line and "> 0" in line
    assert not (tmp_path / "x").exists()
