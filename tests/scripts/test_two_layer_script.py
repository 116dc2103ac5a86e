"""scripts/two_layer.py, two_layer_table.py and two_layer_claims.py end to end: one tiny run each (the
grid, the resume plan, the tables and the claims are tested in process in tests/two_layer/test_grid.py)."""

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results" / "two_layer"
SMALL = ["--n_positions=3", "--n_tokens=6", "--n_generators=6", "--n_fixed=2", "--d_out=8", "--batch_size=16",
         "--steps=30", "--block=10", "--n_seeds=2", "--lr=0.05"]


def run(args, cwd, script):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.mark.slow  # 6 s; fast: tests/two_layer/studies/test_token_grid.py and the script's bad-input cases
def test_two_layer_grid_outputs_figures_and_weights(tmp_path):
    r = run(SMALL + ["--betas=2", "--Ps=2", "--bn=mean_only", "--save_weights", "--output_dir=out"], tmp_path,
            "two_layer.py")  # one setting: each setting compiles its own training step
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    res = json.loads((out / "results.json").read_text())
    assert "python scripts/two_layer.py --n_positions=3" in res["command"] and res["versions"]["jax"]
    assert res["config"]["n_seeds"] == 2 and len(res["rows"]) == 1
    for row in res["rows"]:
        assert row["M"] == 4 and row["n_seeds"] == 2 and row["chi_plus"]["n"] == 2
        assert -1 <= row["chi_minus"]["mean"] <= row["chi_plus"]["mean"] + 1 <= 2
    with open(out / "results.csv") as f:
        assert len(list(csv.DictReader(f))) == 1
    assert (out / "chi_infonce_zeta1.png").stat().st_size > 10_000
    assert (out / "weights.png").stat().st_size > 10_000 and (out / "weights.npz").exists()
    per_run = json.loads((out / "runs" / "infonce-relu-bn_mean_only-zeta1-P2-beta2.json").read_text())
    assert np.asarray(per_run["chi_plus_rf"]).shape == (2, 3) and np.asarray(per_run["loss"]).shape == (3, 2)
    assert len(per_run["turn_deg"]) == 2 and min(per_run["turn_deg"]) > 1.0  # lr 0.05: the filters turn
    assert "relu" in r.stdout and "χ̄₊" in r.stdout and "key: loss" in r.stdout and "step 30/30" in r.stderr
    assert json.loads((out / "ccdyn-run.json").read_text())["state"] == "complete" and res["state"] == "complete"
    assert per_run["fingerprint"] == json.loads((out / "ccdyn-run.json").read_text())["fingerprint"]
    args = SMALL + ["--betas=2", "--Ps=2", "--bn=mean_only", f"--output_dir={out}", "--resume"]
    with inprocess.script("two_layer") as script:  # the resume contract, in this process
        code, errors = inprocess.start_exit(script, *[a for a in args if a != "--lr=0.05"], "--lr=0.1")
        assert code == 2 and "another configuration: train.lr: 0.05 -> 0.1" in errors[0], errors
        tag = out / "runs" / "infonce-relu-bn_mean_only-zeta1-P2-beta2.json"
        tag.write_text(json.dumps({**per_run, "fingerprint": "0" * 20}))  # as if copied from another run
        code, errors = inprocess.start_exit(script, *args)
        assert code == 2 and "P2-beta2.json belongs to another run" in errors[0], errors


def test_two_layer_table_on_the_committed_table1(tmp_path):
    (tmp_path / "t").mkdir()
    shutil.copy(RESULTS / "table1" / "results.json", tmp_path / "t")
    r = run(["--run=t"], tmp_path, "two_layer_table.py")
    assert r.returncode == 0, r.stderr
    table, key = r.stdout.split("\nkey: ")  # the table (in blocks of at most 120 characters), then its key
    assert "μ bp, σ² no bp: ours" in table and table.count("±") == 16 * 8 and "χ̄₊" in key
    assert max(len(line) for line in r.stdout.splitlines()) <= 120
    assert (tmp_path / "t" / "table1.md").read_text() == (RESULTS / "table1" / "table1.md").read_text()
    assert (tmp_path / "t" / "table1.csv").read_text() == (RESULTS / "table1" / "table1.csv").read_text()


def test_two_layer_claims_on_two_committed_grids(tmp_path):
    for grid in ("fig4_infonce", "table1"):
        (tmp_path / "g" / grid).mkdir(parents=True)
        shutil.copy(RESULTS / grid / "results.json", tmp_path / "g" / grid)
    r = run(["--root=g"], tmp_path, "two_layer_claims.py")
    assert r.returncode == 0, r.stderr
    out = json.loads((tmp_path / "g" / "claims.json").read_text())
    assert "python scripts/two_layer_claims.py --root=g" == out["command"] and out["margin"] == 0.05
    assert [c["grid"] for c in out["checks"]][-1] == "fig11 (zeta=10)" and "table1 (zeta=10)" in r.stdout
    assert "### fig4_infonce" in (tmp_path / "g" / "summary.md").read_text()
    assert "Verdict per grid and claim" in (tmp_path / "g" / "claims.md").read_text()


@pytest.mark.slow
def test_resume_keeps_finished_settings_and_seeds_reproduce(tmp_path):
    args = SMALL + ["--acts=relu", "--betas=1,2", "--Ps=2", "--bn=mean_only", "--output_dir=out"]
    r = run(args, tmp_path, "two_layer.py")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    more = run([a for a in args if a != "--betas=1,2"] + ["--betas=1,2,3", "--resume"], tmp_path, "two_layer.py")
    assert more.returncode == 0, more.stderr
    assert (more.stdout + more.stderr).count("kept from an earlier run") == 2
    res2 = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(res2["rows"]) == 3
    assert [row["chi_plus"] for row in res2["rows"][:2]] == [row["chi_plus"] for row in res["rows"]]
    # The same seed gives the same numbers in a fresh directory.
    fresh = run(SMALL + ["--acts=relu", "--betas=2", "--Ps=2", "--bn=mean_only", "--output_dir=fresh"], tmp_path,
                "two_layer.py")
    assert fresh.returncode == 0, fresh.stderr
    row = json.loads((tmp_path / "fresh" / "results.json").read_text())["rows"][0]
    assert row["chi_plus"] == res["rows"][1]["chi_plus"]


@pytest.mark.parametrize("flag, message", [
    ("--Ps=7", "--Ps must be a comma-separated list of integers in [1, --n_tokens]"),
    ("--betas=0", "--betas must be a comma-separated list of integers >= 1"),
    ("--bn=batch", "--bn must be a comma-separated list from none, vanilla, mean_only, var_only, none_backprop"),
    ("--losses=triplet", "--losses must be a comma-separated list from infonce, quadratic"),
    ("--batch_size=1", "--batch_size must be >= 2"),
    ("--zeta=0", "--zeta must be a comma-separated list of numbers > 0"),
])
def test_bad_flags_name_the_flag(flag, message):
    with inprocess.script("two_layer") as script:
        assert message in (inprocess.flag_error(script, *SMALL, flag, "--output_dir=x") or "")


def _without_wall(rec):
    return {k: v for k, v in rec.items() if k != "wall_s"}


@pytest.mark.slow
def test_two_processes_with_their_own_directories_match_one(tmp_path):
    """The settings of a grid spread over 2 processes on localhost, each with its own --output_dir:
    process 0 alone writes, and every per-setting record and result row equals a 1-process run; a
    --resume by the 2 processes keeps the finished settings."""
    import os
    import socket
    args = SMALL + ["--acts=relu", "--betas=1,2", "--Ps=2", "--bn=mean_only"]
    one = run(args + ["--output_dir=one"], tmp_path, "two_layer.py")
    assert one.returncode == 0, one.stderr

    def two(extra):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        procs = [subprocess.Popen([sys.executable, str(ROOT / "scripts" / "two_layer.py"), *extra, f"--output_dir=p{i}",
                                   f"--coordinator_address=127.0.0.1:{port}", "--num_processes=2", f"--process_id={i}"],
                                  cwd=tmp_path, env=dict(os.environ, JAX_PLATFORMS="cpu"), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for i in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        assert [p.returncode for p in procs] == [0, 0], [o[1][-2000:] for o in outs]
        assert not (tmp_path / "p1").exists()
        return outs

    two(args)
    for f in sorted((tmp_path / "one" / "runs").glob("*.json")):
        assert _without_wall(json.loads(f.read_text())) == _without_wall(json.loads((tmp_path / "p0" / "runs" / f.name)
                                                                                     .read_text())), f.name
    rows = [json.loads((tmp_path / d / "results.json").read_text())["rows"] for d in ("one", "p0")]
    assert [_without_wall(r) for r in rows[0]] == [_without_wall(r) for r in rows[1]]
    outs = two(args[:-3] + ["--betas=1,2,3", "--Ps=2", "--bn=mean_only", "--resume"])
    assert outs[0][1].count("kept from an earlier run") == 2
    assert len(json.loads((tmp_path / "p0" / "results.json").read_text())["rows"]) == 3
