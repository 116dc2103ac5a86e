"""Matplotlib figures (returned, never written here: see :func:`ccdyn.io.save_figure`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["landscape_figure"]

_STYLES = {"linear": ":", "relu": "-", "leaky_relu": "--", "quadratic": "-."}


def landscape_figure(theta, energies: dict, maxima: dict, data_theta, title: str = ""):
    """Fig. 8: E_alpha(theta) per activation, each scaled to max 1, with its local maxima marked.

    Args:
      theta: grid (radians).
      energies: activation name -> E on the grid.
      maxima: activation name -> (theta_max, energy_max, at_kink) arrays.
      data_theta: angles (radians) of the data points, drawn as vertical dotted lines.
    """
    fig, ax = plt.subplots(figsize=(9, 4.2))
    for x in np.asarray(data_theta):
        ax.axvline(x / np.pi, color="0.6", ls=":", lw=1)
    for name, e in energies.items():
        scale = np.max(np.abs(e)) or 1.0
        (line,) = ax.plot(np.asarray(theta) / np.pi, e / scale, _STYLES.get(name, "-"), lw=1.6,
                          label=f"{name} ({len(maxima[name][0])} maxima)")
        t, em, kink = maxima[name]
        ax.plot(t[~kink] / np.pi, em[~kink] / scale, "o", color=line.get_color(), ms=5)
        ax.plot(t[kink] / np.pi, em[kink] / scale, "^", color=line.get_color(), ms=6, mfc="none")
    ax.set_xlabel(r"$\theta / \pi$,  $w = (\cos\theta, \sin\theta)$")
    ax.set_ylabel(r"$E_\alpha(w)$ / max")
    ax.set_xlim(-1, 1)
    ax.set_title(title or r"Local maxima of $E_\alpha$ on the circle (o smooth, $\triangle$ on a kink)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
