"""Data models as exact (or sampled) populations: see :mod:`ccdyn.data.dataset` and
:mod:`ccdyn.data.models`; flags -> dataset in :mod:`ccdyn.data.registry`; the token generators of the
2-layer experiments in :mod:`ccdyn.data.tokens`; a user's ``.npz`` file in :mod:`ccdyn.data.files`."""

from ccdyn.data.dataset import Dataset, make_dataset, sample_batch
from ccdyn.data.files import load_dataset, save_dataset
from ccdyn.data.models import (
    MAX_EXACT_M,
    PAPER_ANGLES,
    Q_LME_THRESHOLD,
    circle,
    gaussian_mixture,
    gaussian_noise_views,
    latent_categorical,
    latent_summation,
    near_orthogonal_basis,
    rotation_matrices,
    rotation_views,
    shift_amounts,
    shift_views,
    zero_mean_basis,
)

__all__ = [
    "Dataset", "make_dataset", "sample_batch", "load_dataset", "save_dataset", "MAX_EXACT_M", "PAPER_ANGLES",
    "Q_LME_THRESHOLD", "circle", "gaussian_mixture", "gaussian_noise_views", "latent_categorical",
    "latent_summation", "near_orthogonal_basis", "rotation_matrices", "rotation_views", "shift_amounts",
    "shift_views", "zero_mean_basis",
]
