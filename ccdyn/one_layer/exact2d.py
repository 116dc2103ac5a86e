"""Exact flow basins on 2-D data, to check the engine's basin fractions (Sec. 3.3; docs/flow.md).

On the circle w = (cos theta, sin theta) the flow (Eq. 7) is 1-D: theta' = dE/dtheta (times the degree
p for a homogeneous activation). Every init flows uphill to the maximum of E between the two local
minima of E(theta) around it, so the exact basin of a maximum is the arc between its neighbouring
minima, and its fraction (for inits uniform on the circle) is the arc length / 2 pi. A flat arc of
minima (for ReLU: no data point on the active side, A(w) w = 0) belongs to no maximum.

E is evaluated on a uniform grid of ``n_grid`` angles (float64), so the
fractions are exact to about 2 / n_grid; minima are the grid points not above either neighbour, and
runs of them (flat arcs) count as one minimum set.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ccdyn.one_layer import landscape

__all__ = ["circle_energy", "circle_basins", "basin_of", "compare"]


def circle_energy(ds64, act, pw, n_grid: int, batch: int = 1 << 16) -> np.ndarray:
    """E(theta_k) at theta_k = 2 pi k / n_grid, k = 0 .. n_grid - 1 (float64;
    :func:`ccdyn.one_layer.landscape.energy_on_circle` in batches)."""
    if ds64.dim != 2:
        raise ValueError(f"exact circle basins need 2-D data; the data has dimension {ds64.dim}")
    theta = 2 * np.pi * np.arange(n_grid) / n_grid
    return np.concatenate([np.asarray(landscape.energy_on_circle(ds64, act, pw, jnp.asarray(theta[i:i + batch])))
                           for i in range(0, n_grid, batch)])


def circle_basins(energy: np.ndarray) -> dict:
    """The maxima of a periodic E sampled on a uniform grid (``energy``, n_grid values over 2 pi) and their
    exact basins.

    Returns:
      {"theta": angle of each maximum (radians, in [0, 2 pi)), "fraction": its basin (arc between the
      neighbouring minimum sets / 2 pi), "energy": E there, "arc": the basin's ends (start, end) counter-
      clockwise (radians), "flat": the fraction of flat minimum arcs
      (no maximum's basin)}; maxima ordered by angle. No maximum (E constant): empty arrays, flat 1.
    """
    e = np.asarray(energy, np.float64)
    n = e.size
    is_min = (e <= np.roll(e, 1)) & (e <= np.roll(e, -1))
    if is_min.all():
        return {"theta": np.zeros(0), "fraction": np.zeros(0), "energy": np.zeros(0), "arc": np.zeros((0, 2)),
                "flat": 1.0}
    shift = int(np.flatnonzero(~is_min)[0])  # start the scan outside any run of minima
    m = np.roll(is_min, -shift)
    starts = np.flatnonzero(m & ~np.roll(m, 1))  # first index of each run of minima
    ends = np.flatnonzero(m & ~np.roll(m, -1))  # last index of each run
    thetas, fractions, energies, arcs = [], [], [], []
    for k in range(starts.size):  # the arc from the end of run k to the start of run k + 1
        lo, hi = ends[k], starts[(k + 1) % starts.size] + (n if k + 1 == starts.size else 0)
        idx = (np.arange(lo, hi + 1) + shift) % n
        top = idx[int(np.argmax(e[idx]))]
        thetas.append(2 * np.pi * top / n)
        fractions.append((hi - lo) / n)
        energies.append(e[top])
        arcs.append((2 * np.pi * ((lo + shift) % n) / n, 2 * np.pi * ((hi + shift) % n) / n))
    order = np.argsort(thetas)
    return {"theta": np.asarray(thetas)[order], "fraction": np.asarray(fractions)[order],
            "energy": np.asarray(energies)[order], "arc": np.asarray(arcs).reshape(-1, 2)[order],
            "flat": float(np.sum(ends - starts) / n)}


def basin_of(exact: dict, theta) -> np.ndarray:
    """Index of the exact maximum whose basin holds each angle (-1: a flat arc of minima)."""
    theta = np.asarray(theta, np.float64) % (2 * np.pi)
    lo, hi = exact["arc"][:, 0], exact["arc"][:, 1]
    inside = ((theta[:, None] - lo[None]) % (2 * np.pi)) < ((hi - lo) % (2 * np.pi))[None]
    return np.where(inside.any(axis=1), np.argmax(inside, axis=1), -1)


def compare(exact: dict, optima, counts, n_init: int, *, min_fraction: float = 0.005, floor: float = 0.01,
            n_sigma: float = 4.0, match_angle: float = 0.02) -> list:
    """One row per exact maximum: the engine's optimum at that angle (``optima`` (k, 2) unit vectors with
    ``counts`` inits each, within ``match_angle`` radians), its fraction, and whether it passes: every
    maximum with exact basin >= ``min_fraction`` is found and |fraction - exact| <= max(floor, n_sigma
    sigma), sigma = sqrt(f (1 - f) / n_init) of the exact f."""
    optima, counts = np.asarray(optima, np.float64).reshape(-1, 2), np.asarray(counts)
    angles = np.arctan2(optima[:, 1], optima[:, 0]) % (2 * np.pi)
    rows = []
    for theta, f in zip(exact["theta"], exact["fraction"]):
        gap = np.abs((angles - theta + np.pi) % (2 * np.pi) - np.pi)
        hit = np.flatnonzero(gap <= match_angle)
        found = float(np.sum(counts[hit])) / n_init
        bound = max(floor, n_sigma * np.sqrt(f * (1 - f) / n_init))
        rows.append({"theta": float(theta), "exact": float(f), "fraction": found, "found": bool(hit.size),
                     "bound": bound, "required": bool(f >= min_fraction),
                     "ok": bool(f < min_fraction or (hit.size > 0 and abs(found - f) <= bound))})
    return rows
