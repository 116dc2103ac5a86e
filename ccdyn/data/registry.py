"""Build a dataset from a flat, hashable specification (what the scripts' data flags fill in)."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from ccdyn.data import models
from ccdyn.data.dataset import Dataset, make_dataset

__all__ = ["DataSpec", "DATA_MODELS", "AUGMENTATIONS", "build_dataset"]

DATA_MODELS = ("latent_summation", "latent_categorical", "circle", "gaussian_mixture", "file")
AUGMENTATIONS = ("none", "noise")


@dataclasses.dataclass(frozen=True)
class DataSpec:
    """Data model and its parameters; field names are the scripts' flag names.

    Defaults are the basins default: latent summation, d = M = 10, q = 0.2, ||U^T U - I||_2 = 0.1,
    exact population (2^10 points), no augmentation.
    """

    data: str = "latent_summation"
    d: int = 10
    m: int = 10
    q: tuple = (0.2,)
    ortho_eps: float = 0.1
    probs: tuple | None = None
    angles: tuple = models.PAPER_ANGLES
    std: float = 0.3
    n_samples: int | None = None
    data_path: str | None = None
    data_seed: int = 0
    aug: str = "none"
    aug_views: int = 8
    aug_std: float = 0.1


def build_dataset(spec: DataSpec, dtype=None) -> Dataset:
    """The dataset described by ``spec`` (``ValueError`` names the flag at fault)."""
    if spec.data not in DATA_MODELS:
        raise ValueError(f"--data={spec.data!r} is unknown; allowed: {', '.join(DATA_MODELS)}")
    if spec.aug not in AUGMENTATIONS:
        raise ValueError(f"--aug={spec.aug!r} is unknown; allowed: {', '.join(AUGMENTATIONS)}")
    key = jax.random.PRNGKey(spec.data_seed)
    k_basis, k_sample, k_aug = jax.random.split(key, 3)
    q = spec.q[0] if len(spec.q) == 1 else spec.q
    if spec.data == "latent_summation":
        u = models.near_orthogonal_basis(k_basis, spec.d, spec.m, spec.ortho_eps)
        sampled = spec.n_samples is not None or spec.m > models.MAX_EXACT_M
        n = spec.n_samples or 20000
        ds = models.latent_summation(u, q, key=k_sample if sampled else None,
                                     n_samples=n if sampled else None)
    elif spec.data == "latent_categorical":
        u = models.near_orthogonal_basis(k_basis, spec.d, spec.m, spec.ortho_eps)
        ds = models.latent_categorical(u, spec.probs)
    elif spec.data == "circle":
        ds = models.circle(spec.angles, spec.probs)
    elif spec.data == "gaussian_mixture":
        u = models.near_orthogonal_basis(k_basis, spec.d, spec.m, spec.ortho_eps)
        ds = models.gaussian_mixture(k_sample, 2.0 * u.T, spec.std, spec.n_samples or 2000, spec.probs)
    else:
        if not spec.data_path:
            raise ValueError("--data=file needs --data_path")
        from ccdyn import io  # io imports ccdyn.data: import it only when a file is read

        ds = io.load_dataset(spec.data_path)
    if spec.aug == "noise":
        ds = models.gaussian_noise_views(ds, k_aug, spec.aug_views, spec.aug_std)
    return make_dataset(np.asarray(ds.x), ds.p, ds.x_aug, ds.p_aug, ds.patterns, dtype=dtype)
