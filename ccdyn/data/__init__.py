"""Data models as exact (or sampled) populations: see :mod:`ccdyn.data.dataset` and
:mod:`ccdyn.data.models`. A user's ``.npz`` file is read by :func:`ccdyn.io.load_dataset`."""

from ccdyn.data.dataset import Dataset, make_dataset, sample_batch
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
    "Dataset", "make_dataset", "sample_batch", "MAX_EXACT_M", "PAPER_ANGLES", "Q_LME_THRESHOLD",
    "circle", "gaussian_mixture", "gaussian_noise_views", "latent_categorical",
    "latent_summation", "near_orthogonal_basis", "rotation_matrices", "rotation_views", "shift_amounts",
    "shift_views", "zero_mean_basis",
]
