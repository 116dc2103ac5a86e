"""scripts/saddles.py: one tiny end-to-end run on a basins run of the paper's circle points, and the bad
flags and inputs (the study is tested in tests/one_layer/studies/test_saddles.py)."""

import csv
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
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
    assert s["command"].startswith("python scripts/saddles.py --run=b") and len(s["pairs"]) >= s["n_pairs"] >= 1
    assert s["n_searches"] == len(s["searches"]) >= s["n_pairs"]
    k = len(s["optima"])
    rows = list(csv.reader((tmp_path / "s" / "barriers.csv").open()))
    assert len(rows) == k + 1 and len(rows[0]) == k + 1
    for name in ("disconnectivity.png", "paths.png"):
        assert (tmp_path / "s" / name).stat().st_size > 10_000


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(devices):
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}".strip()
    return dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")


@pytest.mark.slow  # a basins run, one saddles run and two processes: about 3 min on 2 busy cores
def test_two_processes_match_one(tmp_path):
    """2 processes x 2 forced CPU devices on one global mesh (jax.distributed on localhost), each with its
    own --output_dir: process 0 alone writes, and the saddles, energies, certificates and barrier matrix
    are those of 1 process x 1 device (to 1e-12: the pair and saddle axes are split over the 4 devices)."""
    script = str(ROOT / "scripts" / "saddles.py")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "basins.py"), "--data=circle", "--method=euler_halving",
                        "--n_init=300", "--output_dir=b"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    # --max_seeds=0: one search per device (4 pairs, 4 devices). With more rows than devices the sharded
    # refinement of 2 processes hangs (seen with the seeds' 8 searches and with --pairs=all on the code
    # before them: the string finishes, the refinement never does); an open issue
    args = ["--run=b", "--n_steps=200", "--n_images=9", "--min_fraction=0.05", "--touch_inits=300", "--max_seeds=0"]
    r = subprocess.run([sys.executable, script, *args, "--output_dir=single"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=600, env=_env(1))
    assert r.returncode == 0, r.stderr
    port = _free_port()
    procs = [subprocess.Popen([sys.executable, script, *args, f"--output_dir=p{i}", f"--coordinator_address=127.0.0.1:{port}",
                               "--num_processes=2", f"--process_id={i}"], cwd=tmp_path, env=_env(2),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    try:
        outs = [p.communicate(timeout=600) for p in procs]
    finally:  # a hang must not leave the two processes running
        for p in procs:
            p.kill()
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    assert "certified index-1 saddles" in outs[0][0] and "certified" not in outs[1][0] and not (tmp_path / "p1").exists()
    one, two = (json.loads((tmp_path / d / "saddles.json").read_text()) for d in ("single", "p0"))
    assert two["num_processes"] == 2 and len(two["devices"]) == 4 and one["num_processes"] == 1
    assert [p["pair"] for p in one["searches"]] == [p["pair"] for p in two["searches"]] and one["n_pairs"] >= 2
    for a, b in zip(one["searches"], two["searches"]):
        np.testing.assert_allclose(b["saddle"], a["saddle"], atol=1e-12)
        np.testing.assert_allclose(b["energy"], a["energy"], atol=1e-14)
        assert (a["certified"], a["note"], a["reaches"], a["kind"]) == (b["certified"], b["note"], b["reaches"], b["kind"])
    np.testing.assert_allclose(np.array(two["barrier_matrix"], float), np.array(one["barrier_matrix"], float),
                               atol=1e-14)
    assert two["touching"]["counts"] == one["touching"]["counts"]


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
        # a summary.json that reads as JSON but cannot be searched: one line naming the file and the row
        good = {"w": [1.0] + [0.0] * 9, "energy": 0.3, "fraction": 0.5, "ci95": [0.4, 0.6], "stable": True}
        cfg = {"data": {"data": "latent_summation"}, "dynamics": {}}
        for optima, config, want in (([good, {**good, "w": [1.0, 0.0]}], cfg, "optimum 1: w is not 10 finite"),
                                     ([good, {k: v for k, v in good.items() if k != "w"}], cfg, "optimum 1: no w"),
                                     ([good, good], {"data": {"data": "nope"}}, "its config is not a basins config")):
            (tmp_path / "notarun" / "summary.json").write_text(json.dumps({"config": config, "optima": optima}))
            e = inprocess.main_exit(script, f"--run={tmp_path / 'notarun'}", f"--output_dir={tmp_path / 'o'}")
            assert e.startswith(f"error: --run: {tmp_path / 'notarun'}/summary.json: {want}"), e
            assert not (tmp_path / "o").exists()


def test_never_writes_into_the_run_it_reads(tmp_path):
    """An empty --output_dir goes beside the input run (its path + '-saddles'), never into it (a basins run
    with a folder of another script inside can neither be resumed nor overwritten); an --output_dir inside
    the input run, or the run itself, is refused with one line before any output exists."""
    b = tmp_path / "b"
    b.mkdir()
    (b / "summary.json").write_text(json.dumps({"config": {}, "optima": [{"fraction": 0.5}, {"fraction": 0.5}]}))
    (tmp_path / "c").mkdir()
    before = sorted(p.name for p in b.iterdir())
    with inprocess.script("saddles") as script:
        assert script._out_dir("", str(b), "--run") == f"{b}-saddles"
        assert script._out_dir(None, f"{b}/", "--run") == f"{b}-saddles"
        assert script._out_dir(str(tmp_path / "elsewhere"), str(b), "--run") == str(tmp_path / "elsewhere")
        for out in (b / "saddles", b, b / "x" / "y"):
            e = inprocess.main_exit(script, f"--run={b}", f"--output_dir={out}")
            assert e.startswith("error: --output_dir:") and "lies inside the run" in e, e
        e = inprocess.main_exit(script, f"--continuation={tmp_path / 'c'}", f"--output_dir={tmp_path / 'c' / 's'}")
        assert e.startswith("error: --output_dir:") and "--continuation" in e, e
    assert sorted(p.name for p in b.iterdir()) == before and not (tmp_path / "c" / "s").exists()
