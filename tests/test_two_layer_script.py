"""scripts/two_layer.py and scripts/two_layer_table.py end to end on a tiny token model."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--n_positions=3", "--n_tokens=6", "--n_generators=6", "--n_fixed=2", "--d_out=8", "--batch_size=16",
         "--steps=30", "--block=10", "--n_seeds=2", "--lr=0.05"]


def run(args, cwd, script="two_layer.py"):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_grid_outputs_figures_and_table(tmp_path):
    args = SMALL + ["--acts=relu,linear", "--betas=2", "--Ps=2", "--bn=mean_only", "--save_weights",
                    "--output_dir=out"]
    r = run(args, tmp_path)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    res = json.loads((out / "results.json").read_text())
    assert len(res["rows"]) == 2
    for row in res["rows"]:
        assert row["M"] == 4 and row["n_seeds"] == 2 and row["chi_plus"]["n"] == 2
        assert -1 <= row["chi_minus"]["mean"] <= row["chi_plus"]["mean"] + 1 <= 2
        assert row["chi_plus_init"]["n"] == 2 and row["chi_plus_init"]["mean"] != row["chi_plus"]["mean"]
    with open(out / "results.csv") as f:
        assert len(list(csv.DictReader(f))) == 2
    assert (out / "chi_infonce_zeta1.png").stat().st_size > 10_000
    assert (out / "weights.png").stat().st_size > 10_000
    per_run = json.loads((out / "runs" / "infonce-relu-bn_mean_only-zeta1-P2-beta2.json").read_text())
    assert np.asarray(per_run["chi_plus_rf"]).shape == (2, 3) and np.asarray(per_run["loss"]).shape == (3, 2)
    assert len(per_run["turn_deg"]) == 2 and min(per_run["turn_deg"]) > 1.0  # lr 0.05: the filters turn
    assert "relu" in r.stdout and "χ̄₊" in r.stdout

    # An existing directory is refused without --resume / --overwrite.
    again = run(args, tmp_path)
    assert again.returncode != 0 and "pass --overwrite to replace it or --resume" in again.stderr + again.stdout

    t = run(["--run=out"], tmp_path, "two_layer_table.py")
    assert t.returncode == 0, t.stderr
    assert "μ bp, σ² no bp: ours" in t.stdout and "| 2 | 2 |" in t.stdout
    assert t.stdout.count("±") == 1  # one variant of ours; the paper has no P = 2 cells
    assert (out / "table1.md").exists() and (out / "table1.csv").exists()


@pytest.mark.slow
def test_resume_keeps_finished_settings_and_seeds_reproduce(tmp_path):
    args = SMALL + ["--acts=relu", "--betas=1,2", "--Ps=2", "--bn=mean_only", "--output_dir=out"]
    r = run(args, tmp_path)
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "out" / "results.json").read_text())
    more = run(args[:-1] + ["--betas=1,2,3", "--output_dir=out", "--resume"], tmp_path)
    assert more.returncode == 0, more.stderr
    assert more.stdout.count("kept from an earlier run") == 2
    res2 = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(res2["rows"]) == 3
    assert [row["chi_plus"] for row in res2["rows"][:2]] == [row["chi_plus"] for row in res["rows"]]
    # The same seed gives the same numbers in a fresh directory.
    fresh = run(SMALL + ["--acts=relu", "--betas=2", "--Ps=2", "--bn=mean_only", "--output_dir=fresh"], tmp_path)
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
def test_bad_flags_exit_nonzero_naming_the_flag(tmp_path, flag, message):
    r = run(SMALL + [flag, "--output_dir=x"], tmp_path)
    assert r.returncode != 0 and message in r.stderr
