"""scripts/basins.py end to end: outputs, device / process / chunk invariance, resume after kill -9,
overwrite protection and bad input."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = str(ROOT / "scripts" / "basins.py")
SMALL = ["--d=6", "--m=6", "--n_init=2000", "--tile=128"]


def _env(devices=1):
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    return env


def _run(cwd, *args, devices=1, timeout=300):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, cwd=cwd,
                          env=_env(devices), timeout=timeout)


def _load(out):
    summary = json.loads((out / "summary.json").read_text())
    with np.load(out / "optima.npz") as f:
        return summary, {k: f[k] for k in f.files}


def _same(a, b):
    (sa, na), (sb, nb) = a, b
    np.testing.assert_array_equal(na["labels"], nb["labels"])
    np.testing.assert_array_equal(na["optima"], nb["optima"])
    assert [r["count"] for r in sa["optima"]] == [r["count"] for r in sb["optima"]]
    assert [r["fraction"] for r in sa["optima"]] == [r["fraction"] for r in sb["optima"]]


def test_outputs_and_invariance_to_chunks_and_devices(tmp_path):
    r = _run(tmp_path, *SMALL, "--chunk_size=2000", "--output_dir=one")
    assert r.returncode == 0, r.stderr
    assert "optimum" in r.stdout and "basin mass on planted patterns" in r.stdout
    one = _load(tmp_path / "one")
    s = one[0]
    for key in ("n_init", "n_converged", "n_nonfinite", "config", "versions", "devices", "timings_s"):
        assert key in s
    for key in ("fraction", "ci95", "count", "energy", "eigengap", "residual", "stable", "is_lme", "pattern", "overlap"):
        assert key in s["optima"][0]
    assert s["n_optima"] == 6 and s["n_stable_optima"] == 6
    assert sorted(r["pattern"] for r in s["optima"]) == list(range(6))
    assert (tmp_path / "one" / "basins.png").stat().st_size > 5000
    assert one[1]["labels"].shape == (2000,)

    r = _run(tmp_path, *SMALL, "--chunk_size=300", "--output_dir=four", devices=4)
    assert r.returncode == 0, r.stderr
    four = _load(tmp_path / "four")
    assert len(four[0]["devices"]) == 4
    _same(one, four)

    again = _run(tmp_path, *SMALL, "--chunk_size=2000", "--output_dir=one")
    assert again.returncode != 0 and "pass --overwrite to replace it or --resume" in again.stderr

    table = subprocess.run([sys.executable, str(ROOT / "scripts" / "basins_table.py"), "--runs=one,four",
                            "--output_prefix=cmp"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert table.returncode == 0, table.stderr
    lines = (tmp_path / "cmp.csv").read_text().splitlines()
    assert lines[0].startswith("run,act,alpha") and lines[1].split(",")[7:11] == ["6", "6", "6", "0"]
    assert (tmp_path / "cmp.md").read_text().startswith("| run | act |")


@pytest.mark.slow
def test_resume_after_kill_equals_uninterrupted(tmp_path):
    args = [*SMALL, "--n_init=6000", "--chunk_size=500", "--method=flow"]
    full = _run(tmp_path, *args, "--output_dir=full")
    assert full.returncode == 0, full.stderr
    proc = subprocess.Popen([sys.executable, SCRIPT, *args, "--output_dir=cut"], cwd=tmp_path,
                            env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    chunks = tmp_path / "cut" / "chunks"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(chunks.glob("chunk_*.npz"))) < 3 and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list(chunks.glob("chunk_*.npz")))
    assert 0 < done < 12, done  # really interrupted mid-run
    assert not (tmp_path / "cut" / "summary.json").exists()
    resumed = _run(tmp_path, *args, "--output_dir=cut", "--resume")
    assert resumed.returncode == 0, resumed.stderr
    _same(_load(tmp_path / "full"), _load(tmp_path / "cut"))
    changed = _run(tmp_path, *args, "--seed=1", "--output_dir=cut", "--resume")
    assert changed.returncode != 0 and "different configuration" in changed.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_on_localhost_match_one(tmp_path):
    args = [*SMALL, "--chunk_size=250"]
    single = _run(tmp_path, *args, "--output_dir=single")
    assert single.returncode == 0, single.stderr
    port = _free_port()
    procs = [subprocess.Popen([sys.executable, SCRIPT, *args, "--output_dir=multi",
                               f"--coordinator_address=127.0.0.1:{port}", "--num_processes=2",
                               f"--process_id={i}"], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    assert "optimum" in outs[0][0]
    multi = _load(tmp_path / "multi")
    assert multi[0]["num_processes"] == 2
    _same(_load(tmp_path / "single"), multi)


@pytest.mark.parametrize("flag,message", [
    ("--tol=5", "--tol must lie in (0, 0.1)"),
    ("--act=softplus", "--act"),
    ("--q=0.2,1.5", "--q must be numbers in (0, 1)"),
    ("--n_init=0", "--n_init"),
    ("--m=12", "--m must be <= --d"),
    ("--method=power --act=tanh", "--method=power needs a homogeneous --act"),
    ("--process_id=3", "--process_id must lie in [0, --num_processes - 1]"),
])
def test_bad_flags_exit_nonzero_naming_the_flag(tmp_path, flag, message):
    r = _run(tmp_path, *flag.split(), "--output_dir=o")
    assert r.returncode != 0
    assert message in r.stderr, r.stderr[-1500:]


def test_nan_data_file_is_rejected(tmp_path):
    x = np.eye(4)
    x[2, 1] = np.nan
    np.savez(tmp_path / "bad.npz", x=x)
    r = _run(tmp_path, "--data=file", "--data_path=bad.npz", "--output_dir=o")
    assert r.returncode != 0 and "x has 1 non-finite entries (NaN or inf)" in r.stderr
    assert not (tmp_path / "o" / "summary.json").exists()
