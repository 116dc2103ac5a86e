"""The figure style shared by every part: the Agg backend (figures are returned, never shown) and the
line style of each activation. The figures themselves live in the parts' ``figures.py``
(``ccdyn.one_layer.figures``, ...) and are written by :func:`ccdyn.io.save_figure`."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "ACTIVATION_STYLES"]

ACTIVATION_STYLES = {"linear": ":", "relu": "-", "leaky_relu": "--", "quadratic": "-."}
