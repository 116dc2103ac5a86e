"""ccdyn: a JAX simulator of the training dynamics of contrastive learning.

Modules: activations, pairwise, covariance, data, one_layer, fixed_points, landscape, io, plotting.
"""

from ccdyn import activations, covariance, data, fixed_points, one_layer, pairwise
from ccdyn.activations import Activation, get_activation
from ccdyn.data import Dataset, make_dataset
from ccdyn.pairwise import Pairwise, get_pairwise

__version__ = "0.1.0"

__all__ = [
    "activations", "covariance", "data", "fixed_points", "one_layer", "pairwise",
    "Activation", "get_activation", "Dataset", "make_dataset", "Pairwise", "get_pairwise",
]
