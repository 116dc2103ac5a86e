"""SIGINT and SIGTERM (and kill -9) at several moments of basins.py, two_layer.py and hltm.py (slow): one
``error: interrupted (SIG...)`` line, exit status 130 / 143, never a crash; the run marked ``failed``
(or removed if it had written nothing), and ``--resume`` completes it to the same results as an
uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPTS = {  # script: (flags of a run of a few units, its unit files, files compared after --resume)
    "basins": (["--d=4", "--m=4", "--n_init=3000", "--tile=64", "--chunk_size=250", "--method=flow"],
               "chunks/chunk_*.npz", ("summary.json", "optima.npz")),
    "two_layer": (["--n_positions=3", "--n_tokens=6", "--n_generators=6", "--n_fixed=2", "--d_out=8", "--batch_size=16",
                   "--steps=30", "--block=10", "--n_seeds=2", "--lr=0.05", "--acts=relu,linear", "--betas=1,2,3",
                   "--Ps=2"], "runs/*.json", ("results.csv",)),
    "hltm": (["--depths=2,3", "--widths=2,3", "--deltas_lower=0.8", "--n_seeds=2", "--epochs=2",
              "--samples_per_epoch=256", "--batch_size=64", "--n_eval=64", "--eval_every=1"], "runs/*.json", ("results.csv",)),
}
MOMENTS = ("opened", "compile", "mid")  # the run directory just made, while the first unit compiles, after it


def _start(script, cwd, out, *extra):
    return subprocess.Popen([sys.executable, str(ROOT / "scripts" / f"{script}.py"), *SCRIPTS[script][0],
                             f"--output_dir={out}", *extra], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def _wait_for(proc, cond, timeout=240):
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None and not cond():
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before the signal: make it longer"


def _content(path: Path):
    if path.suffix == ".npz":
        with np.load(path) as f:
            return {k: f[k].tolist() for k in f.files}
    if path.suffix == ".json":
        d = json.loads(path.read_text())
        return {k: v for k, v in d.items() if k not in ("timings_s", "wall_s", "init_steps_per_s", "command")}
    rows = [line.split(",") for line in path.read_text().splitlines()]  # a CSV: without its timing column
    keep = [i for i, h in enumerate(rows[0]) if h != "wall_s"]
    return [[r[i] for i in keep] for r in rows]


@pytest.mark.slow
@pytest.mark.parametrize("script", list(SCRIPTS))
def test_signals_at_three_moments_resume_to_the_same_results(tmp_path, script):
    full = _start(script, tmp_path, "full")
    assert full.wait(timeout=600) == 0, full.stderr.read()
    units = SCRIPTS[script][1]
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        for moment in MOMENTS:
            out = tmp_path / f"{sig.name}_{moment}"
            proc = _start(script, tmp_path, out.name)
            if moment in ("opened", "compile"):
                _wait_for(proc, lambda: (out / "config.json").exists())
                time.sleep(1.0 if moment == "compile" else 0)
            else:
                _wait_for(proc, lambda: any(out.glob(units)))
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=300)
            label = f"{script} {sig.name} {moment}: rc {proc.returncode}\n{err}"
            assert "Fatal Python error" not in err and "Traceback" not in err, label
            if sig == signal.SIGKILL:
                assert proc.returncode == -9, label
            else:
                assert proc.returncode == 128 + sig, label
                lines = [e for e in err.splitlines() if e.startswith("error")]
                assert lines == [f"error: interrupted ({sig.name})"], label
                if out.exists():
                    assert json.loads((out / "ccdyn-run.json").read_text())["state"] == "failed", label
                    assert any(out.glob(units)), label  # only a run that wrote an output stays
            if moment == "mid":
                assert out.exists() and not (out / SCRIPTS[script][2][0]).exists(), label
            resumed = _start(script, tmp_path, out.name, "--resume")
            assert resumed.wait(timeout=600) == 0, label + resumed.stderr.read()
            for name in SCRIPTS[script][2]:
                assert _content(out / name) == _content(tmp_path / "full" / name), (label, name)
