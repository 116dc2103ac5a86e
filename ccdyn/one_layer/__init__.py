"""The 1-layer theory (Sec. 3): one node f = h(w^T x) on the unit sphere.

- :mod:`~ccdyn.one_layer.dynamics`: A(w) w, energy, field Jacobian, one flow / power step (Eq. 6-7, PI);
  its public names are re-exported here (``one_layer.power_iteration`` etc.).
- :mod:`~ccdyn.one_layer.engine`: :class:`~ccdyn.one_layer.engine.Status`, compiled blocks, ChunkRunner, collect.
- :mod:`~ccdyn.one_layer.basins`: cluster, refine, analyze; ``summary.json`` (write, read, table).
- :mod:`~ccdyn.one_layer.certify`: Def. 3 certificates and the one stability decision.
- :mod:`~ccdyn.one_layer.roughness`: rho (Sec. 3.2), Thm. 1-2, Cor. 2 ingredients.
- :mod:`~ccdyn.one_layer.irregularity`: omega (Def. 4), B_gamma, the Thm. 3 check.
- :mod:`~ccdyn.one_layer.landscape`: E on the circle (2-D data), maxima, prominence.
- :mod:`~ccdyn.one_layer.symmetry`: optima under cyclic shifts (App. B.5).
- :mod:`ccdyn.one_layer.studies` (config in, record out), :mod:`~ccdyn.one_layer.claims` (verdicts, ledger
  records), :mod:`~ccdyn.one_layer.figures`: import them directly.
"""

from ccdyn.one_layer import dynamics  # noqa: I001  (first: the other modules import it)
from ccdyn.one_layer import basins, certify, engine, irregularity, landscape, roughness, symmetry
from ccdyn.one_layer.dynamics import (
    UNIFORM, a_matrices, a_matrix, ascent, energy, energy_given_alpha, field_jacobian, flow, flow_step,
    gated_input, min_eigenvalue, node_alpha, power_iteration, power_step,
)

__all__ = [
    "dynamics", "engine", "basins", "certify", "roughness", "irregularity", "landscape", "symmetry",
    "UNIFORM", "a_matrices", "a_matrix", "ascent", "energy", "energy_given_alpha", "field_jacobian", "flow",
    "flow_step", "gated_input", "min_eigenvalue", "node_alpha", "power_iteration", "power_step",
]
