"""scripts/basins.py and scripts/basins_table.py: one end-to-end run each (device and chunk
invariance against the library run), resume after kill -9, a concurrent run refused, and several
processes (slow), bad flags and bad input in-process (more in test_bad_inputs.py)."""

import dataclasses
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

from ccdyn.data.registry import DataSpec
from ccdyn.one_layer import basins
from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = str(ROOT / "scripts" / "basins.py")
BASE = ["--d=6", "--m=6", "--tile=128"]
SMALL = [*BASE, "--n_init=2000"]


def _env(devices=1):
    env = dict(os.environ)
    env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
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
    assert sorted(na) == sorted(nb) == ["labels", "optima", "status", "steps"]
    for k in na:  # bit for bit: the optima, and every init's label, status and step count
        np.testing.assert_array_equal(na[k], nb[k], err_msg=k)
    assert [r["count"] for r in sa["optima"]] == [r["count"] for r in sb["optima"]]
    assert [r["fraction"] for r in sa["optima"]] == [r["fraction"] for r in sb["optima"]]


@pytest.mark.slow  # 13 s; tests/test_parallel.py checks forced devices fast, the multi-process tests below are slow too
def test_script_on_four_devices_matches_the_library_run(tmp_path):
    """The smoke test: the script on 4 devices with small chunks writes what one in-process
    ``basins.run`` on 1 device in one chunk computes (same tile)."""
    r = _run(tmp_path, *SMALL, "--chunk_size=300", "--output_dir=four", devices=4)
    assert r.returncode == 0, r.stderr
    assert "optimum" in r.stdout and "basin mass on planted patterns" in r.stdout
    s, npz = _load(tmp_path / "four")
    for key in ("n_init", "n_converged", "n_nonfinite", "config", "command", "versions", "devices", "timings_s"):
        assert key in s
    assert s["state"] == "complete" and 0 < s["unseen_mass"]["upper"] < 0.2
    assert s["unseen_mass"]["singletons"] == sum(r["count"] == 1 for r in s["optima"])  # kink optima seen once
    for key in ("fraction", "ci95", "count", "energy", "eigengap", "residual", "stable", "is_lme", "pattern", "overlap"):
        assert key in s["optima"][0]
    assert len(s["devices"]) == 4 and s["command"].startswith("python scripts/basins.py --d=6")
    assert s["sizing"]["auto"] == [] and s["sizing"]["n_devices"] == 4 and "chunk_size 300 on 4 x cpu" in r.stdout
    # auto (the default): the 6 smooth pattern optima hold almost every init, the others are certified kink maxima
    smooth = [r for r in s["optima"] if r["certificate"] == "smooth"]
    assert len(smooth) == 6 and sorted(r["pattern"] for r in smooth) == list(range(6))
    assert sum(r["count"] for r in smooth) >= 0.95 * 2000 and s["n_stable_optima"] == s["n_optima"]
    assert all(r["certificate"] == "kink-kkt" for r in s["optima"] if r["certificate"] != "smooth")
    assert (tmp_path / "four" / "basins.png").stat().st_size > 5000
    assert npz["labels"].shape == (2000,)
    cfg = basins.BasinsConfig.from_dict(s["config"])
    assert cfg == basins.BasinsConfig(data=DataSpec(d=6, m=6), n_init=2000, tile=128, chunk_size=300)
    one = basins.run(dataclasses.replace(cfg, chunk_size=2000))
    an = one["analysis"]
    np.testing.assert_array_equal(npz["labels"], an["labels"])
    np.testing.assert_array_equal(npz["optima"], an["optima"])
    assert [r["count"] for r in s["optima"]] == [r["count"] for r in an["rows"]]


def test_basins_table_script_on_committed_runs(tmp_path):
    runs = ",".join(str(ROOT / "results" / "basins" / a) for a in ("relu", "linear"))
    table = subprocess.run([sys.executable, str(ROOT / "scripts" / "basins_table.py"), f"--runs={runs}",
                            "--output_prefix=cmp"], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert table.returncode == 0, table.stderr
    lines = (tmp_path / "cmp.csv").read_text().splitlines()
    assert lines[0].startswith("run,act,alpha") and lines[1].split(",")[:2] == ["relu", "relu"]
    # relu under auto: the counts its summary.json records (eleventh round: 65 optima, 56 stable: the 10 smooth pattern
    # optima and 46 on kinks), read from the summary's own fields; linear: one optimum
    rec = json.loads((ROOT / "results" / "basins" / "relu" / "summary.json").read_text())
    want = [str(rec[k]) for k in ("n_optima", "n_stable_optima", "n_certified_smooth", "n_certified_kink")]
    assert lines[1].split(",")[7:11] == want and want[2] == "10" and lines[2].split(",")[7] == "1"
    assert (tmp_path / "cmp.md").read_text().startswith("| run | act |")
    assert "relu" in table.stdout


@pytest.mark.slow
def test_resume_after_kill_and_a_concurrent_run_equal_uninterrupted(tmp_path):
    args = [*BASE, "--n_init=6000", "--chunk_size=500", "--method=flow"]  # each flag once (a repeat is refused)
    full = _run(tmp_path, *args, "--output_dir=full")
    assert full.returncode == 0, full.stderr
    # Two runs started into one directory: the second is refused at once, the first completes.
    first = subprocess.Popen([sys.executable, SCRIPT, *args, "--output_dir=busy"], cwd=tmp_path, env=_env(),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (tmp_path / "busy" / "ccdyn-run.json").exists():
        time.sleep(0.05)
    second = _run(tmp_path, *args, "--output_dir=busy", "--overwrite")
    assert first.poll() is None, "the first run ended before the second was refused: make it longer"
    assert second.returncode == 2 and "a ccdyn run is in progress there" in second.stderr, second.stderr
    assert first.wait(timeout=300) == 0, first.stderr.read()
    _same(_load(tmp_path / "full"), _load(tmp_path / "busy"))
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
    assert changed.returncode == 2 and "another configuration: seed: 0 -> 1" in changed.stderr


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _processes(tmp_path, args, dirs, port, *, devices=2):
    """Processes 0..len(dirs)-1 of one run on localhost (each with its own --output_dir), started."""
    return [subprocess.Popen([sys.executable, SCRIPT, *args, f"--output_dir={d}", f"--coordinator_address=127.0.0.1:{port}",
                              f"--num_processes={len(dirs)}", f"--process_id={i}"], cwd=tmp_path,
                             env=dict(_env(devices), JAX_PLATFORMS="cpu"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for i, d in enumerate(dirs)]


@pytest.mark.slow
def test_two_processes_with_their_own_directories_match_one_and_resume_after_a_kill(tmp_path):
    """2 processes x 2 forced devices on one global mesh, each given its own --output_dir: process 0
    alone writes, and labels are bit-identical to 1 process x 1 device. Then process 1 is killed
    mid-run, the job is stopped and restarted with --resume: the same summary. --target_unseen stops
    both at the chunk where one process stops. Processes started with different flags refuse to start."""
    args = [*BASE, "--n_init=6000", "--chunk_size=500"]
    single = _run(tmp_path, *args, "--output_dir=single")
    assert single.returncode == 0, single.stderr
    procs = _processes(tmp_path, args, ["p0", "p1"], _free_port())
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    assert "optimum" in outs[0][0] and "process 1: all chunks done" in outs[1][1]
    assert not (tmp_path / "p1").exists()  # nothing shared, nothing written by process 1
    multi = _load(tmp_path / "p0")
    assert multi[0]["num_processes"] == 2 and len(multi[0]["devices"]) == 4
    _same(_load(tmp_path / "single"), multi)
    # kill process 1 once process 0 has written its first chunk; stop process 0; restart both
    procs = _processes(tmp_path, args, ["k0", "k1"], _free_port())
    chunks = tmp_path / "k0" / "chunks"
    deadline = time.time() + 120
    while time.time() < deadline and not list(chunks.glob("chunk_*.npz")) and procs[0].poll() is None:
        time.sleep(0.05)
    procs[1].send_signal(signal.SIGKILL)
    try:
        procs[0].communicate(timeout=10)  # it fails when it next needs process 1 ...
    except subprocess.TimeoutExpired:
        procs[0].send_signal(signal.SIGKILL)  # ... or waits for it: the whole job is stopped
        procs[0].communicate()
    done = len(list(chunks.glob("chunk_*.npz")))
    assert 0 < done < 12 and not (tmp_path / "k0" / "summary.json").exists(), done
    procs = _processes(tmp_path, [*args, "--resume"], ["k0", "k1"], _free_port())
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    assert f"resume: {done} chunk files" in outs[0][1]
    _same(_load(tmp_path / "single"), _load(tmp_path / "k0"))
    # --target_unseen: process 0 decides after each chunk and tells process 1; the same first inits
    args = [a for a in args if not a.startswith("--n_init=")]
    stop = ["--target_unseen=0.2", "--n_init=3000"]
    alone = _run(tmp_path, *args, *stop, "--output_dir=alone")
    assert alone.returncode == 0, alone.stderr
    procs = _processes(tmp_path, [*args, *stop], ["t0", "t1"], _free_port())
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    assert "--target_unseen=0.2: met after 1000 of at most 3000 inits" in outs[0][0]
    _same(_load(tmp_path / "alone"), _load(tmp_path / "t0"))
    # processes started with different flags refuse to start, and process 0 leaves no run behind
    procs = [subprocess.Popen([sys.executable, SCRIPT, *args, f"--seed={i}", f"--output_dir=x{i}",
                               f"--coordinator_address=127.0.0.1:{port}", "--num_processes=2", f"--process_id={i}"],
                              cwd=tmp_path, env=dict(_env(2), JAX_PLATFORMS="cpu"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i, port in zip(range(2), [_free_port()] * 2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [2, 2]
    assert all("error: the processes were started with different configurations" in o[1] for o in outs)
    assert not (tmp_path / "x0").exists()


@pytest.mark.parametrize("flag,message", [
    ("--tol=5", "--tol must lie in (0, 0.1)"),
    ("--act=softplus", "--act"),
    ("--q=0.2,1.5", "--q must be a comma-separated list of numbers in (0, 1)"),
    ("--angles=0,x", "--angles must be a comma-separated list of at least 2 numbers (units of pi)"),
    ("--n_init=0", "--n_init"),
    ("--m=12", "--m must be <= --d"),
    ("--method=power --act=tanh", "--method=power needs a homogeneous --act"),
    ("--process_id=3", "--process_id must lie in [0, --num_processes - 1]"),
    ("--resume --overwrite", "--resume and --overwrite exclude each other"),
])
def test_bad_flags_name_the_flag(flag, message):
    with inprocess.script("basins") as script:
        assert message in (inprocess.flag_error(script, *flag.split(), "--output_dir=o") or "")


def test_bad_data_file_and_existing_output_dir_end_with_one_error_line(tmp_path):
    x = np.eye(4)
    x[2, 1] = np.nan
    np.savez(tmp_path / "bad.npz", x=x)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "summary.json").write_text("{}")
    with inprocess.script("basins") as script:
        e = inprocess.main_exit(script, "--data=file", f"--data_path={tmp_path / 'bad.npz'}",
                                f"--output_dir={tmp_path / 'o'}")
        assert e.startswith("error:") and "x has 1 non-finite entries (NaN or inf)" in e
        assert not (tmp_path / "o").exists()
        e = inprocess.main_exit(script, "--d=4", "--m=4", f"--output_dir={tmp_path / 'full'}")
        assert "pass --overwrite to replace it or --resume" in e


@pytest.mark.slow  # about a minute: compiles the engine and the kink refinement
def test_power_iteration_on_a_gaussian_mixture_file_claims_nothing_beyond_the_converged_share(tmp_path):
    """A user's data file (8-cluster Gaussian mixture, d = 8): with ReLU every maximum sits on a kink and power
    iteration circles it, so (almost) no init converges. The table makes no claim about missed optima or their
    number, says why, and ends with one warning line naming --method=flow; summary.json records the share."""
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(8, 8))
    centers /= np.linalg.norm(centers, axis=1, keepdims=True)
    x = centers[rng.integers(0, 8, 400)] + 0.3 * rng.normal(size=(400, 8))
    np.savez(tmp_path / "mixture.npz", x=x)
    out = tmp_path / "run"
    run = _run(tmp_path, "--data=file", "--data_path=mixture.npz", "--act=relu", "--method=power", "--n_init=256",
               "--tile=64", "--max_steps=300", f"--output_dir={out}", timeout=900)  # power: the default before auto
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    st = summary["statistics"]
    assert not st["claims"] and st["converged_share"] < 0.9
    assert summary["basin_mass_on_patterns"] is None  # the file has no planted patterns
    lines = run.stdout.splitlines()
    (no_claim,) = [line for line in lines if line.startswith("no claim about missed optima or their number")]
    assert f"only {st['converged']} of 256 inits" in no_claim and "below the 90%" in no_claim
    assert not any("was missed" in line or "Chao1" in line for line in lines)
    table_end = lines.index(next(line for line in lines if line.startswith("wrote "))) - 1
    warning = lines[table_end - 1] if not lines[table_end].strip() else lines[table_end]
    assert warning.startswith("warning: ") and warning.endswith("or --method=flow)") and "--method=auto" in warning and "circling a kink" in warning
    assert sum(line.startswith("warning") for line in lines) == 1
    assert "ETA" in run.stderr  # the progress line's time left
