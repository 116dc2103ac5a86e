"""scripts/mnist.py end to end on MNIST-format files that the test writes (28x28, gzipped IDX): the
command a user with the real MNIST files runs, at a toy size (slow: about 20 s on 2 idle cores)."""

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ccdyn.data import mnist

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_mnist_script_on_idx_files(tmp_path):
    rng = np.random.default_rng(0)
    images = (rng.random((40, 28, 28)) < 0.2).astype(np.uint8) * 255
    folder = tmp_path / "mnist"
    folder.mkdir()
    for name, a in zip(mnist.MNIST_FILES["train"], (images, rng.integers(0, 10, 40).astype(np.uint8))):
        (folder / f"{name}.gz").write_bytes(gzip.compress(mnist.encode_idx(a)))
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "mnist.py"), f"--mnist_dir={folder}", "--steps=12",
                        "--block=6", "--n_seeds=2", "--batch_size=4", "--n_filters=3", "--output_dir=out"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["side"] == 14 and summary["n_images"] == 40 and "MNIST train split" in summary["data"]
    assert [c["claim"][:12] for c in summary["claims"]] == ["augmentation", "augmentation", "the same amo"]
    assert len(summary["final"]["aug"]["hf"]) == 2 and all(summary["finite"]["aug"])
    with open(out / "scores.csv") as f:
        assert len(list(csv.DictReader(f))) == 4
    w = np.load(out / "filters.npz")["W_aug"]
    assert w.shape == (2, 4, 3, 196)
    for name in ("filters_aug.png", "filters_no_aug.png", "scores.png"):
        assert (out / name).stat().st_size > 5_000
    assert "high-freq. fraction" in r.stdout and "step 12/12" in r.stderr
