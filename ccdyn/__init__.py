"""ccdyn: a JAX simulator of the training dynamics of contrastive learning.

Core maths: :mod:`~ccdyn.activations`, :mod:`~ccdyn.pairwise`, :mod:`~ccdyn.covariance`,
:mod:`~ccdyn.sphere`, :mod:`~ccdyn.stats`; data: :mod:`ccdyn.data`; the theory by paper part:
:mod:`ccdyn.one_layer` (Sec. 3), :mod:`ccdyn.two_layer` (Sec. 4-5), :mod:`ccdyn.deep` (Dual Deep
Networks), :mod:`ccdyn.variational` (SimCLR variational analysis), each with its ``studies/``,
``claims.py`` and ``figures.py`` (docs/layout.md); verdict records: :mod:`~ccdyn.verdicts`; scale-out:
:mod:`~ccdyn.parallel`; outputs: :mod:`~ccdyn.io`, :mod:`~ccdyn.report`, :mod:`~ccdyn.plotting` (figure
style); the scripts' shared flags and run record:
:mod:`~ccdyn.cli`. The readings ccdyn takes of the papers are in the repository's ``docs/``.
"""

from ccdyn import activations, covariance, data, one_layer, pairwise, parallel, sphere, stats, two_layer
from ccdyn.activations import Activation, get_activation
from ccdyn.data import Dataset, make_dataset
from ccdyn.pairwise import Pairwise, get_pairwise

__version__ = "0.1.0"

__all__ = [
    "activations", "covariance", "data", "one_layer", "pairwise", "parallel", "sphere", "stats", "two_layer",
    "Activation", "get_activation", "Dataset", "make_dataset", "Pairwise", "get_pairwise",
]
