"""The 2-layer theory (Sec. 4-5, App. D-E): K receptive fields, M filters each, a linear top layer.

- :mod:`~ccdyn.two_layer.network`: Net, TrainConfig, BatchNorm variants, losses, Lemma 4 / 6, ``train``;
  its public names are re-exported here (``two_layer.train`` etc.).
- :mod:`~ccdyn.two_layer.claims`: the Sec. 5 claims as numeric checks on result rows, the App. E.3 verdicts,
  ledger records.
- :mod:`~ccdyn.two_layer.metrics`: matching scores chi_+ / chi_- (Eq. 16, 180, 181).
- :mod:`~ccdyn.two_layer.modulation`: global modulation (Lemma 5, Thm. 5-6, Cor. 3, Fig. 7, Eq. 155).
- :mod:`ccdyn.two_layer.studies` (``token_grid``, ``modulation``, ``mnist``) and :mod:`~ccdyn.two_layer.figures`: import
  them directly.
"""

from ccdyn.two_layer import network  # noqa: I001  (first: the other modules import it)
from ccdyn.two_layer import claims, metrics, modulation
from ccdyn.two_layer.network import (
    BN_VARIANTS, LOSSES, Net, TrainConfig, TrainState, batch_norm, energy, hidden, init_params, init_state,
    lemma4_velocity, loss, make_optimizer, outputs, train,
)
from ccdyn.two_layer.network import FIRST_LAYERS, ON_NONFINITE, QUADRATIC_FORMS, init_states

__all__ = [
    "network", "claims", "metrics", "modulation",
    "BN_VARIANTS", "LOSSES", "Net", "TrainConfig", "TrainState", "batch_norm", "energy", "hidden", "init_params",
    "init_state", "lemma4_velocity", "loss", "make_optimizer", "outputs", "train",
    "FIRST_LAYERS", "ON_NONFINITE", "QUADRATIC_FORMS", "init_states",
]
