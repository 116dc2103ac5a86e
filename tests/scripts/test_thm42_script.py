"""scripts/thm42_moving.py: one tiny end-to-end run (slow: the study is tested in
tests/variational/test_invariance.py) and its flag errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # the study tests cover the numbers; this is the wiring end to end
def test_thm42_moving_script(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "thm42_moving.py"), "--n=4", "--D=6", "--M=4",
                        "--steps=3", "--output_dir=t42"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "t42" / "thm42_moving.json").read_text())
    (c,) = out["claims"]
    assert c["id"] == "simclr-thm-4.2-moving-t" and c["verdict"] == "partly" and c["result"] == "t42"
    assert out["command"].startswith("python scripts/thm42_moving.py --n=4")


def test_thm42_moving_bad_flags():
    with inprocess.script("thm42_moving") as script:
        assert "--D must exceed --n" in (inprocess.flag_error(script, "--D=4") or "")
        assert "--lr must be > 0" in (inprocess.flag_error(script, "--lr=0") or "")
