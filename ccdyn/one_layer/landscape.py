"""The energy landscape of one node on 2-D data (App. E.1, Fig. 8).

w = (cos theta, sin theta) sweeps the unit circle; E_alpha(theta) is evaluated on a dense grid,
every grid local maximum (a run of equal values counts once) is refined by golden-section search
inside its bracket, and each refined maximum is described by its angle, energy, the residual
||P_w^perp A(w) w|| of the flow (Eq. 7) and whether it sits on a kink of E (a point where
w^T x = 0 for some data point, where ReLU-like energies are not differentiable: such a maximum is a
local maximum of E but not a critical point of the flow).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import sphere
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics
from ccdyn.pairwise import Pairwise

__all__ = ["Maxima", "circle_weights", "energy_on_circle", "local_maxima", "grid_index", "prominence",
           "summit_labels"]

GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


class Maxima(NamedTuple):
    theta: np.ndarray  # (k,) radians in [-pi, pi)
    energy: np.ndarray  # (k,)
    residual: np.ndarray  # (k,) ||P^perp A(w) w||
    at_kink: np.ndarray  # (k,) bool


def circle_weights(theta):
    """Unit vectors (cos theta, sin theta), shape theta.shape + (2,)."""
    return jnp.stack([jnp.cos(theta), jnp.sin(theta)], axis=-1)


@functools.partial(jax.jit, static_argnames=("act", "pairwise"))
def energy_on_circle(ds: Dataset, act: Activation, pairwise: Pairwise, theta):
    """E_alpha(w(theta)) for a 1-D array of angles."""
    return dynamics.energy(ds, act, circle_weights(theta), pairwise)


@functools.partial(jax.jit, static_argnames=("act", "pairwise"))
def _theta_derivatives(ds: Dataset, act: Activation, pairwise: Pairwise, theta):
    """dE/dtheta and d2E/dtheta2 per angle (alpha under stop_gradient, as in the flow)."""
    e = lambda t: dynamics.energy(ds, act, circle_weights(t)[None], pairwise)[0]
    d1 = jax.vmap(jax.grad(e))(theta)
    d2 = jax.vmap(jax.grad(jax.grad(e)))(theta)
    return d1, d2


def _grid_maxima(e: np.ndarray, rtol: float) -> np.ndarray:
    """Indices of strict local maxima of a periodic sequence; plateaus count once (their middle)."""
    n = e.size
    tol = rtol * max(np.max(np.abs(e)), np.finfo(float).tiny)
    diff = np.roll(e, -1) - e  # e[k+1] - e[k]
    sign = np.where(diff > tol, 1, np.where(diff < -tol, -1, 0))
    nz = np.flatnonzero(sign != 0)
    out = []
    for a, b in zip(nz, np.roll(nz, -1)):  # consecutive non-flat steps, around the circle
        if sign[a] > 0 and sign[b] < 0:  # a rise, flat steps, then a fall: points a+1 .. b
            span = (b - a) % n or n
            out.append((a + 1 + (span - 1) // 2) % n)
    return np.unique(np.asarray(out, int))


def local_maxima(ds: Dataset, act: Activation, pairwise: Pairwise, n_grid: int = 1 << 16,
                 refine_iters: int = 80, newton_iters: int = 4, rtol: float = 1e-12,
                 kink_tol: float = 1e-7):
    """Local maxima of E_alpha on the circle (Fig. 8).

    Args:
      ds: 2-D dataset.
      n_grid: grid size over [-pi, pi).
      refine_iters: golden-section iterations per maximum (the bracket shrinks by 0.618 each).
      newton_iters: Newton steps on dE/dtheta that polish the maxima not on a kink.
      rtol: relative tolerance below which two grid energies count as equal.
      kink_tol: angular distance (radians) under which a maximum is said to sit on a kink.

    Returns:
      (theta_grid, energy_grid, Maxima) with numpy arrays; ``ValueError`` when the energy on the grid
      is not finite (the data beyond the dtype's range).
    """
    if ds.dim != 2:
        raise ValueError(f"the landscape needs 2-D data, got dimension {ds.dim}")
    if n_grid < 16:
        raise ValueError(f"n_grid={n_grid} must be >= 16")
    dtype = ds.x.dtype
    theta = jnp.linspace(-np.pi, np.pi, n_grid + 1, dtype=dtype)[:-1]
    e = np.asarray(energy_on_circle(ds, act, pairwise, theta))
    if not np.all(np.isfinite(e)):  # no maxima to find: say so rather than "0 maxima"
        raise ValueError(f"the energy is not finite on {np.sum(~np.isfinite(e))} of the {n_grid} grid angles "
                         f"(the data's largest entry is {float(np.max(np.abs(np.asarray(ds.x)))):.1e}): "
                         f"rescale the data")
    idx = _grid_maxima(e, rtol)
    h = 2.0 * np.pi / n_grid
    lo = jnp.asarray(np.asarray(theta)[idx] - h, dtype)
    hi = jnp.asarray(np.asarray(theta)[idx] + h, dtype)
    f = lambda t: energy_on_circle(ds, act, pairwise, t)
    for _ in range(refine_iters):  # golden-section search, all maxima at once
        a = hi - GOLDEN * (hi - lo)
        b = lo + GOLDEN * (hi - lo)
        left = f(a) >= f(b)
        lo, hi = jnp.where(left, lo, a), jnp.where(left, b, hi)
    t_max = (np.asarray((lo + hi) / 2.0) + np.pi) % (2.0 * np.pi) - np.pi
    xv, _ = ds.views()
    normals = np.arctan2(np.asarray(xv[..., 1]), np.asarray(xv[..., 0])).ravel()
    kinks = np.concatenate([normals + np.pi / 2, normals - np.pi / 2])
    dist = np.abs((t_max[:, None] - kinks[None, :] + np.pi) % (2 * np.pi) - np.pi)
    at_kink = np.min(dist, axis=1) < kink_tol if idx.size else np.zeros((0,), bool)
    # Golden section locates a smooth maximum only to ~sqrt(eps) in theta (E is flat there); polish
    # those with Newton steps on dE/dtheta (the tangential flow field) while E is concave.
    t = jnp.asarray(t_max, dtype)
    for _ in range(newton_iters):
        d1, d2 = _theta_derivatives(ds, act, pairwise, t)
        cand = t - d1 / jnp.where(d2 < 0, d2, -jnp.inf)
        ok = (~jnp.asarray(at_kink)) & (d2 < 0) & (jnp.abs(cand - t) < h)
        t = jnp.where(ok, cand, t)
    t_max = np.asarray(t)
    w = circle_weights(t)
    resid = np.asarray(jnp.linalg.norm(sphere.tangent(w, dynamics.ascent(ds, act, w, pairwise)), axis=1))
    order = np.argsort(t_max)
    maxima = Maxima(t_max[order], np.asarray(f(jnp.asarray(t_max, dtype)))[order], resid[order],
                    at_kink[order])
    return np.asarray(theta), e, maxima


def grid_index(theta_grid, theta) -> np.ndarray:
    """Index of the grid point nearest to each angle theta on a uniform periodic grid over [-pi, pi)."""
    step = 2.0 * np.pi / np.size(theta_grid)
    return np.rint((np.asarray(theta, np.float64) - float(theta_grid[0])) / step).astype(np.int64) % np.size(theta_grid)


def _sides(e: np.ndarray, i: int):
    """The grid values going right and going left from index i (each excludes i, wraps once round)."""
    ring = np.roll(e, -i)[1:]
    return ring, ring[::-1]


def prominence(theta_grid, energy_grid, theta_max, energy_max) -> np.ndarray:
    """Topographic prominence of each maximum of a periodic landscape sampled on a uniform grid.

    For a maximum of height E* at angle theta*, walk the grid from theta* in each direction until a
    point higher than E* (or all the way round); the prominence is E* minus the higher of the two
    lowest points passed. The highest maximum gets E* - min(E). A maximum of prominence P is a strict
    local maximum whose basin under any ascent is walled off by a drop of P: a small P (relative to the
    energy scale) marks a ripple, e.g. the quadrature artifacts of finitely many augmented views.

    Args:
      theta_grid, energy_grid: (n,) uniform grid over [-pi, pi) and E on it (:func:`local_maxima`).
      theta_max, energy_max: (k,) maxima (radians) and their energies.

    Returns:
      (k,) prominences, >= 0.
    """
    e = np.asarray(energy_grid, np.float64)
    out = np.empty(np.size(theta_max))
    for k, (i, top) in enumerate(zip(grid_index(theta_grid, theta_max), np.asarray(energy_max, np.float64))):
        lows = []
        for path in _sides(e, i):
            higher = np.flatnonzero(path > top)
            lows.append(np.min(path[: higher[0] if higher.size else path.size], initial=top))
        out[k] = max(top - max(lows), 0.0)
    return out


def summit_labels(theta_grid, energy_grid, theta_peaks, energy_peaks, drop: float) -> np.ndarray:
    """Labels the summit of each peak on the grid: the connected run of grid points around peak k
    where E >= E_k - drop gets label k; every other point gets -1.

    With ``drop`` at most the peaks' prominence the summits are disjoint. A summit collects the ripple
    maxima around a peak (e.g. of a finite quadrature of augmented views), so an optimum of the
    dynamics can be attributed to the peak it sits on.
    """
    e = np.asarray(energy_grid, np.float64)
    n = e.size
    labels = np.full((n,), -1, np.int64)
    for k, (i, top) in enumerate(zip(grid_index(theta_grid, theta_peaks), np.asarray(energy_peaks, np.float64))):
        labels[i] = k
        for sign, path in zip((1, -1), _sides(e, i)):
            below = np.flatnonzero(path < top - drop)
            run = below[0] if below.size else path.size
            labels[(i + sign * (1 + np.arange(run))) % n] = k
    return labels
