"""Data sets of the kind users bring (``--data=file``), built with fixed seeds (issue 36's test sets).

Each set is a function of nothing (fixed seed, fixed size) returning the arrays of a user's ``.npz`` data
file (:mod:`ccdyn.data.files`: ``x`` (n, d), optional ``p``), plus the activation it is meant for.
:func:`write_sets` writes them as ``<name>.npz`` files that ``scripts/basins.py --data=file --data_path=...``
reads; nothing large is committed: the files are built on the fly.

The first three are the sets the issue reports on (power iteration finds nothing there: every ReLU maximum
sits on a kink); the others were not used to tune anything (``TUNED``):

- ``mixture8``: an 8-cluster isotropic Gaussian mixture in d = 8 (400 points, centers N(0, I), std 0.5);
- ``digits``: sklearn's 8x8 digits (1797 points, d = 64), each pixel standardized (constant pixels: 0);
- ``unit30``: 30 random unit vectors in d = 6;
- ``mixture5``: a 4-cluster mixture in d = 5 with unequal weights and widths (300 points);
- ``cloud3``: 200 points of an anisotropic Gaussian in d = 3;
- ``cloud16``: 300 points of a Student-t (3 degrees of freedom) cloud in d = 16;
- ``patches``: 400 centred, contrast-normalized 4x4 patches (d = 16) of sklearn's sample image "china.jpg"
  (grey);
- ``digit_patches``: 500 4x4 patches (d = 16) of the digits images, centred;
- ``mixture6_leaky``: a 6-cluster mixture in d = 6 (300 points), for leaky ReLU (slope 0.1);
- ``mixture5_d12``: a 5-cluster mixture in d = 12 (300 points, weights 0.4 / 0.25 / 0.15 / 0.12 / 0.08, centers
  2 N(0, I), std 0.7): the set on which auto's unshifted power steps missed a flow basin of 5.8% (docs/flow.md,
  ninth and tenth rounds; the tenth round's design was looked at on it);
- ``cloud9``: 60 points of an anisotropic Gaussian in d = 9 (scales 2 .. 0.3; a new draw, not looked at);
- ``digits017``: sklearn's digits 0, 1 and 7 (539 images), pixels standardized, on their top 16 principal
  directions, each signed so that its largest entry is positive (the ninth round's set, up to those signs).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ccdyn import io
from ccdyn.data.dataset import make_dataset

__all__ = ["SETS", "TUNED", "ACTIVATION", "build", "write_sets", "dataset"]


def _mixture(seed: int, k: int, d: int, n: int, std, weights=None, center_scale: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    centers = center_scale * rng.standard_normal((k, d))
    weights = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, float) / np.sum(weights)
    label = rng.choice(k, size=n, p=weights)
    std = np.broadcast_to(np.asarray(std, float), (k,))
    return {"x": centers[label] + std[label, None] * rng.standard_normal((n, d))}


def mixture8() -> dict:
    return _mixture(0, 8, 8, 400, 0.5)


def digits() -> dict:
    from sklearn.datasets import load_digits  # noqa: PLC0415 -- scikit-learn ships the data

    x = load_digits().data.astype(float)
    sd = x.std(axis=0)
    return {"x": np.where(sd > 0, (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)}


def unit30() -> dict:
    x = np.random.default_rng(1).standard_normal((30, 6))
    return {"x": x / np.linalg.norm(x, axis=1, keepdims=True)}


def mixture5() -> dict:
    return _mixture(2, 4, 5, 300, [0.3, 0.5, 0.8, 0.4], weights=[0.4, 0.3, 0.2, 0.1], center_scale=1.5)


def cloud3() -> dict:
    rng = np.random.default_rng(3)
    return {"x": rng.standard_normal((200, 3)) * np.array([2.0, 1.0, 0.5]) + np.array([0.3, -0.2, 0.1])}


def cloud16() -> dict:
    return {"x": np.random.default_rng(4).standard_t(3, size=(300, 16))}


def _patches(img, n: int, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    r = rng.integers(0, img.shape[0] - size, n)
    c = rng.integers(0, img.shape[1] - size, n)
    p = np.stack([img[i:i + size, j:j + size].ravel() for i, j in zip(r, c)]).astype(float)
    return p - p.mean(axis=1, keepdims=True)


def patches() -> dict:
    from sklearn.datasets import load_sample_image  # noqa: PLC0415

    grey = load_sample_image("china.jpg").astype(float).mean(axis=2) / 255.0
    p = _patches(grey, 400, 4, 5)
    return {"x": p / (np.linalg.norm(p, axis=1, keepdims=True) + 0.05)}  # contrast-normalized, flat ones small


def digit_patches() -> dict:
    from sklearn.datasets import load_digits  # noqa: PLC0415

    imgs = load_digits().images
    rng = np.random.default_rng(6)
    pick = rng.integers(0, imgs.shape[0], 500)
    out = np.concatenate([_patches(imgs[i], 1, 4, 1000 + j) for j, i in enumerate(pick)])
    return {"x": out / 16.0}


def mixture6_leaky() -> dict:
    return _mixture(7, 6, 6, 300, 0.4)


def mixture5_d12() -> dict:
    return _mixture(4242, 5, 12, 300, 0.7, weights=[0.4, 0.25, 0.15, 0.12, 0.08], center_scale=2.0)


def cloud9() -> dict:
    rng = np.random.default_rng(4243)
    return {"x": rng.standard_normal((60, 9)) * np.linspace(2.0, 0.3, 9) + 0.2 * rng.standard_normal(9)}


def digits017() -> dict:
    from sklearn.datasets import load_digits  # noqa: PLC0415

    data = load_digits()
    x = data.data[np.isin(data.target, (0, 1, 7))].astype(float)
    sd = x.std(axis=0)
    x = np.where(sd > 0, (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), 0.0)
    v = np.linalg.svd(x, full_matrices=False)[2][:16]  # the top 16 principal directions
    v *= np.sign(v[np.arange(16), np.argmax(np.abs(v), axis=1)])[:, None]  # each one's largest entry > 0: not LAPACK's
    return {"x": x @ v.T}


SETS = {"mixture8": mixture8, "digits": digits, "unit30": unit30, "mixture5": mixture5, "cloud3": cloud3,
        "cloud16": cloud16, "patches": patches, "digit_patches": digit_patches, "mixture6_leaky": mixture6_leaky,
        "mixture5_d12": mixture5_d12, "cloud9": cloud9, "digits017": digits017}
# the sets (auto's design was looked at on these; its tenth round's crossing shift also on mixture5, cloud3,
# mixture6_leaky and mixture5_d12, docs/flow.md "Tenth round")
TUNED = ("mixture8", "digits", "unit30")
ACTIVATION = {name: ("leaky_relu" if name.endswith("_leaky") else "relu") for name in SETS}


def build(name: str) -> dict:
    """The arrays of set ``name`` (``x``; uniform weights)."""
    if name not in SETS:
        raise ValueError(f"unknown user set {name!r}; known: {', '.join(SETS)}")
    return SETS[name]()


def write_sets(directory, names=None) -> dict:
    """Writes ``<name>.npz`` for each set (default: all) into ``directory``; returns name -> path."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name in (SETS if names is None else names):
        paths[name] = directory / f"{name}.npz"
        io.write_npz(paths[name], **build(name))
    return paths


def dataset(name: str, dtype):
    """Set ``name`` as ``--data=file`` reads it from :func:`write_sets`' file, in ``dtype``: the file's arrays
    (:func:`build`, exact through ``.npz``) through the loader's own :func:`ccdyn.data.make_dataset`, without
    the file."""
    return make_dataset(dtype=dtype, **build(name))
