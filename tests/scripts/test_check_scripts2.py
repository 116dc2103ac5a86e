"""scripts/thm42_moving.py and modulation_bounds.py: one tiny end-to-end run each (slow: their studies are
tested in tests/variational/test_invariance.py and tests/two_layer/test_modulation_exact.py) and their flag
errors."""

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


@pytest.mark.slow  # the study is tested in tests/two_layer/test_modulation_exact.py; this is the wiring
def test_modulation_bounds_script(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "modulation_bounds.py"), "--ds=2,3", "--scales=2",
                        "--draws=20", "--x_points=11", "--output_dir=mb"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "mb" / "modulation_bounds.json").read_text())
    assert [c["id"] for c in out["claims"]] == ["core-eq151", "core-eq156-157"] and len(out["rows"]) == 2


def test_modulation_bounds_bad_flags():
    with inprocess.script("modulation_bounds") as script:
        assert "--ds" in (inprocess.flag_error(script, "--ds=1") or "")
        assert "--scales" in (inprocess.flag_error(script, "--scales=0") or "")


@pytest.mark.slow  # the study is tested in tests/two_layer/test_lemma5_exact.py; this is the wiring
def test_lemma5_general_script(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "lemma5_general.py"), "--shapes=3x2x2x2x2",
                        "--draws=1", "--output_dir=l5"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "l5" / "lemma5_general.json").read_text())
    assert out["claims"][0]["id"] == "core-lemma5-general" and out["claims"][0]["verdict"] == "holds"


def test_lemma5_general_bad_flags():
    with inprocess.script("lemma5_general") as script:
        assert "--shapes must be" in (inprocess.flag_error(script, "--shapes=1x2x3x4x5") or "")
        assert "--shapes must be" in (inprocess.flag_error(script, "--shapes=2x9x1x1x4") or "")


@pytest.mark.slow  # the study is tested in tests/two_layer/test_top_layer.py; this is the wiring
def test_top_layer_script(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "top_layer.py"), "--draws=1", "--output_dir=tl"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "tl" / "top_layer.json").read_text())
    assert out["claims"][0]["id"] == "core-sec4-rank1-s" and len(out["rows"]) == 1


def test_top_layer_bad_flags():
    with inprocess.script("top_layer") as script:
        assert "--n_points must exceed --hidden" in (inprocess.flag_error(script, "--n_points=4") or "")
        assert "--t_end must be > 0" in (inprocess.flag_error(script, "--t_end=0") or "")
