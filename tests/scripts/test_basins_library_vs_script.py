"""The README's library call and ``scripts/basins.py`` give the same labels for the same seed (issue #24,
"Library reproducibility"; docs/reproducibility.md).

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

ROOT = Path(__file__).resolve().parents[2]
N_INIT = 300

_LIBRARY = r"""
import json, sys
import jax
assert not jax.config.jax_enable_x64
import numpy as np
from ccdyn.data.registry import DataSpec
from ccdyn.one_layer import basins
out = basins.run(basins.BasinsConfig(data=DataSpec(d=6, m=6), act="relu", n_init=int(sys.argv[1]), seed=3))
print(json.dumps({"labels": np.asarray(out["analysis"]["labels"]).tolist(),
                  "status": np.asarray(out["result"]["status"]).tolist(),
                  "counts": [r["count"] for r in out["analysis"]["rows"]]}))
"""


def _relabelled(labels: np.ndarray) -> np.ndarray:
    """Labels with the optima renumbered by first appearance (statuses < 0 kept)."""
    first = {}
    for lab in labels[labels >= 0]:
        first.setdefault(int(lab), len(first))
    return np.array([first[int(v)] if v >= 0 else int(v) for v in labels])


@pytest.mark.slow
def test_library_call_without_x64_gives_the_scripts_labels(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"} | {"PYTHONPATH": str(ROOT)}
    lib = subprocess.run([sys.executable, "-c", _LIBRARY, str(N_INIT)], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=600)
    assert lib.returncode == 0, lib.stderr[-2000:]
    got = json.loads(lib.stdout.strip().splitlines()[-1])
    out = tmp_path / "run"
    script = subprocess.run([sys.executable, "scripts/basins.py", "--d=6", "--m=6", "--act=relu", f"--n_init={N_INIT}",
                             "--seed=3", f"--output_dir={out}"], capture_output=True, text=True, cwd=ROOT, env=env,
                            timeout=600)
    assert script.returncode == 0, script.stderr[-2000:]
    saved = np.load(out / "optima.npz")
    summary = json.loads((out / "summary.json").read_text())
    np.testing.assert_array_equal(np.asarray(got["status"]), saved["status"])  # every init ends the same way
    lib_labels, script_labels = np.asarray(got["labels"]), saved["labels"]
    # the same partition of the inits into optima (the optima's numbering is compared too: by basin size)
    np.testing.assert_array_equal(_relabelled(lib_labels), _relabelled(script_labels))
    np.testing.assert_array_equal(lib_labels, script_labels)
    assert got["counts"] == [o["count"] for o in summary["optima"]]
    assert len(got["counts"]) >= 6  # the run is not degenerate: every planted pattern has a basin
