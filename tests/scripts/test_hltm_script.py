"""scripts/hltm.py, ddn_operator.py and ddn_figures.py: bad flags end with one error line (in process), and one
tiny run each end to end (slow: each compiles its training or autodiff programs); hltm.py also over two
processes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--depths=3", "--widths=2", "--deltas_lower=0.8", "--n_seeds=2", "--epochs=2", "--samples_per_epoch=256",
        "--batch_size=64", "--n_eval=64", "--eval_every=1"]


def test_bad_flags_are_one_line_errors(tmp_path):
    with inprocess.script("hltm") as m:
        assert "--widths must be a comma-separated list of integers >= 1" in inprocess.flag_error(m, "--widths=0")
        assert "--readings must be" in inprocess.flag_error(m, "--readings=mine")
        assert "--deltas_lower" in inprocess.flag_error(m, "--deltas_lower=1.5")
        assert "samples_per_epoch" in inprocess.flag_error(m, "--batch_size=64", "--samples_per_epoch=32")
        (tmp_path / "x").mkdir()
        (tmp_path / "x" / "f").write_text("not a run")
        assert inprocess.main_exit(m, f"--output_dir={tmp_path / 'x'}").startswith("error: output_dir")
    with inprocess.script("ddn_operator") as m:
        assert "--sizes" in inprocess.flag_error(m, "--sizes=3")
    with inprocess.script("ddn_figures") as m:
        assert inprocess.main_exit(m, f"--run_dirs={tmp_path}").startswith("error: --run_dirs")


@pytest.mark.slow
def test_hltm_script_tiny_grid_and_resume(tmp_path):
    def run(*a, base=TINY):
        return subprocess.run([sys.executable, str(ROOT / "scripts" / "hltm.py"), *base, "--output_dir=out", *a],
                              capture_output=True, text=True, cwd=tmp_path, timeout=600,
                              env={"PYTHONPATH": str(ROOT), "PATH": ""})

    r = run()
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(res["rows"]) == 3 and res["timing"]["seed_steps"] == 2 * 2 * 4
    assert "epoch 2/2" in r.stderr and "seed-steps/s" in r.stdout
    r2 = run("--resume")
    assert r2.returncode == 0 and "kept from an earlier run" in r2.stderr
    r3 = run("--resume", "--epochs=3", base=[f for f in TINY if f != "--epochs=2"])  # each flag once
    assert r3.returncode == 2 and r3.stderr.strip().splitlines()[-1].startswith("error: --resume")
    assert "another configuration: epochs: 2 -> 3" in r3.stderr


@pytest.mark.slow
def test_hltm_two_processes_match_one(tmp_path):
    """The settings spread over 2 processes on localhost (scripts/hltm.py shares ccdyn.grid.run with
    scripts/two_layer.py): process 0 alone writes, and every per-setting record but its wall time equals
    a 1-process run's."""
    import os
    import socket
    args = TINY[:2] + ["--deltas_lower=0.7,0.9"] + TINY[3:]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(ROOT))
    one = subprocess.run([sys.executable, str(ROOT / "scripts" / "hltm.py"), *args, "--output_dir=one"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600, env=env)
    assert one.returncode == 0, one.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, str(ROOT / "scripts" / "hltm.py"), *args, f"--output_dir=p{i}",
                               f"--coordinator_address=127.0.0.1:{port}", "--num_processes=2", f"--process_id={i}"],
                              cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
    assert not (tmp_path / "p1").exists()
    names = sorted(f.name for f in (tmp_path / "one" / "runs").glob("*.json"))
    assert len(names) == 2 and names == sorted(f.name for f in (tmp_path / "p0" / "runs").glob("*.json"))
    for name in names:
        one_rec, p0_rec = ({k: v for k, v in json.loads((tmp_path / d / "runs" / name).read_text()).items()
                            if k != "wall_s"} for d in ("one", "p0"))
        assert one_rec == p0_rec, name
    rows = [json.loads((tmp_path / d / "results.json").read_text()) for d in ("one", "p0")]
    assert rows[0]["rows"] == rows[1]["rows"] and rows[1]["num_processes"] == 2


def test_progress_has_a_line_at_every_scored_epoch(monkeypatch, capsys):
    from ccdyn.deep.studies import hltm_grid

    def fake_run_setting(s, config, on_epoch=None):  # the epochs of a run, without training
        for epoch in range(1, config.epochs + 1):
            on_epoch(epoch, 0.5)
        return {"finite": [True, True]}

    monkeypatch.setattr(hltm_grid, "run_setting", fake_run_setting)
    setting = type("Setting", (), {"tag": "tiny"})()
    with inprocess.script("hltm") as m:
        for eval_every, epochs in ((1, list(range(1, 8))), (3, [1, 3, 6, 7])):
            m._train(hltm_grid.GridConfig(epochs=7, eval_every=eval_every), setting, 0, 1)
            lines = capsys.readouterr().err.splitlines()
            assert [int(line.split("epoch ")[1].split("/")[0]) for line in lines] == epochs, (eval_every, lines)


def test_a_seed_that_went_non_finite_is_named_with_the_flags_to_change(monkeypatch, capsys):
    from ccdyn.deep.studies import hltm_grid

    monkeypatch.setattr(hltm_grid, "run_setting", lambda s, config, on_epoch=None: {"finite": [True, False, True]})
    with inprocess.script("hltm") as m:
        m._train(hltm_grid.GridConfig(epochs=1), type("Setting", (), {"tag": "tiny"})(), 0, 1)
    lines = [line for line in capsys.readouterr().err.splitlines() if "WARNING" in line]
    assert lines == ["WARNING tiny seed 1 went non-finite (left out of the means); lower --lr or raise --tau"]
