"""The README's library call (``basins.run_job``) and ``scripts/basins.py`` write the same files and give
the same labels for the same seed (issue #24, "Library reproducibility"; docs/reproducibility.md).

The script turns ``jax_enable_x64`` on for its float64 certificates; a user's notebook usually leaves it
off. Before the random draws were made in float32 whatever the mode, the same seed gave other inits
and other basin counts in the two. Here the library call runs with x64 off in its own process (x64 is
a process-wide switch; the test process has it on) and the script in another, on the same tiny run.
Slow: each process compiles the basins engine (the draws themselves are compared fast, in
tests/test_reproducibility_x64.py).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ccdyn import rundir

ROOT = Path(__file__).resolve().parents[2]
N_INIT = 300

_LIBRARY = r"""
import json, sys
import jax
assert not jax.config.jax_enable_x64
import numpy as np
from ccdyn.data.registry import DataSpec
from ccdyn.one_layer import basins
job = basins.run_job(basins.BasinsConfig(data=DataSpec(d=6, m=6), act="relu", n_init=int(sys.argv[1]), seed=3),
                     sys.argv[2])
table = basins.table(job["summary"])
print(json.dumps({"labels": np.asarray(job["analysis"]["labels"]).tolist(),
                  "status": np.asarray(job["result"]["status"]).tolist(),
                  "counts": [r["count"] for r in job["analysis"]["rows"]], "path": str(job["path"]),
                  "table_lines": len(table.splitlines())}))
"""


def _relabelled(labels: np.ndarray) -> np.ndarray:
    """Labels with the optima renumbered by first appearance (statuses < 0 kept)."""
    first = {}
    for lab in labels[labels >= 0]:
        first.setdefault(int(lab), len(first))
    return np.array([first[int(v)] if v >= 0 else int(v) for v in labels])


@pytest.mark.slow
def test_library_call_without_x64_writes_the_scripts_files_and_labels(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"} | {"PYTHONPATH": str(ROOT)}
    lib_dir = tmp_path / "library"
    lib = subprocess.run([sys.executable, "-c", _LIBRARY, str(N_INIT), str(lib_dir)], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=600)
    assert lib.returncode == 0, lib.stderr[-2000:]
    got = json.loads(lib.stdout.strip().splitlines()[-1])
    assert got["path"] == str(lib_dir) and got["table_lines"] > 10
    out = tmp_path / "run"
    script = subprocess.run([sys.executable, "scripts/basins.py", "--d=6", "--m=6", "--act=relu", f"--n_init={N_INIT}",
                             "--seed=3", f"--output_dir={out}"], capture_output=True, text=True, cwd=ROOT, env=env,
                            timeout=600)
    assert script.returncode == 0, script.stderr[-2000:]
    # the same files: summary.json, optima.npz, basins.png, chunks/, the manifest and config.json
    files = lambda d: sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.name != rundir.LOCK)  # noqa: E731
    assert files(lib_dir) == files(out) and {"summary.json", "optima.npz", "basins.png"} <= set(files(out))
    for d in (lib_dir, out):
        assert json.loads((d / "ccdyn-run.json").read_text())["state"] == "complete"
    saved = np.load(out / "optima.npz")
    summary = json.loads((out / "summary.json").read_text())
    lib_saved = np.load(lib_dir / "optima.npz")
    lib_summary = json.loads((lib_dir / "summary.json").read_text())
    assert sorted(lib_saved.files) == sorted(saved.files)
    for key in ("status", "labels", "steps"):
        np.testing.assert_array_equal(lib_saved[key], saved[key], err_msg=key)
    assert lib_summary.keys() == summary.keys() and lib_summary["config"] == summary["config"]
    assert lib_summary["command"].startswith("ccdyn.one_layer.basins.run_job") and summary["command"].startswith(
        "python scripts/basins.py")
    np.testing.assert_array_equal(np.asarray(got["status"]), saved["status"])  # every init ends the same way
    lib_labels, script_labels = np.asarray(got["labels"]), saved["labels"]
    # the same partition of the inits into optima (the optima's numbering is compared too: by basin size)
    np.testing.assert_array_equal(_relabelled(lib_labels), _relabelled(script_labels))
    np.testing.assert_array_equal(lib_labels, script_labels)
    assert got["counts"] == [o["count"] for o in summary["optima"]] == [o["count"] for o in lib_summary["optima"]]
    assert len(got["counts"]) >= 6  # the run is not degenerate: every planted pattern has a basin
