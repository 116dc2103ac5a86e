"""Fig. 8 (App. E.1): the energy E_alpha(theta) of one node on 2-D data, w = (cos theta, sin theta),
and its local maxima for several activations.

Always float64: the maxima are counted on a dense grid and refined by golden-section search
(:func:`ccdyn.one_layer.landscape.local_maxima`). The data are the circle points at
``Fig8Config.angles`` or a user's 2-D points (read by the script), optionally with rotation views
(App. B.5). ``scripts/landscape.py`` writes the record as ``landscape.json`` and draws ``fig8.png``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ccdyn import activations, data, pairwise, report
from ccdyn.data.dataset import Dataset
from ccdyn.data.registry import DataSpec, augment
from ccdyn.one_layer import landscape

__all__ = ["Fig8Config", "points", "memory_estimate", "run", "table", "table_key", "TABLE_COLUMNS"]

TABLE_COLUMNS = ("activation", "maxima", "smooth", "on kink", "theta/pi of maxima")


@dataclasses.dataclass(frozen=True)
class Fig8Config:
    """Data angles (units of pi; unused when ``data_path`` names the user's file the points came from),
    activations, the leaky slope, alpha, the rotation augmentation (``aug``: none or rotation, half
    range in units of pi, quadrature views) and the number of grid points over [-pi, pi)."""

    angles: tuple = data.PAPER_ANGLES
    data_path: str | None = None
    acts: tuple = ("linear", "relu", "leaky_relu", "quadratic")
    leaky_slope: float = activations.DEFAULT_LEAKY_SLOPE
    alpha: str = "uniform"
    tau: float = 1.0
    aug: str = "none"
    aug_range: float = 1.0
    aug_views: int = 64
    n_grid: int = 1 << 16


def points(cfg: Fig8Config, ds: Dataset | None = None) -> Dataset:
    """The study's data: ``ds`` (a user's points) or the circle at ``cfg.angles``, with the views of
    ``cfg.aug``. ``ValueError`` when the points are not 2-D, or all coincide without augmentation (then
    every a[i] - a[j] in Eq. 3 is 0: C_alpha = 0 and E_alpha = 0 on the whole circle, no maxima to find)."""
    flag = "--angles" if ds is None else "--data_path"
    ds = data.circle(list(cfg.angles)) if ds is None else ds
    if ds.dim != 2:
        raise ValueError(f"--data_path must hold 2-D points, got x of shape {ds.x.shape}")
    x = np.asarray(ds.x, np.float64)[np.asarray(ds.p) > 0]
    if cfg.aug == "none" and np.max(np.abs(x - x[0])) <= 1e-12 * max(np.max(np.abs(x)), np.finfo(np.float64).tiny):
        angles = flag == "--angles"
        what = f"--angles={','.join(f'{a:g}' for a in cfg.angles)}" if angles else f"--data_path={cfg.data_path}"
        raise ValueError(f"{what}: every point lies at the same place, so C_alpha = 0 and the energy is 0 on the "
                         "whole circle (no maxima); give points at two or more places"
                         f"{' (angles mod 2)' if angles else ''}")
    return augment(ds, DataSpec(aug=cfg.aug, aug_range=cfg.aug_range, aug_views=cfg.aug_views), None)


def memory_estimate(cfg: Fig8Config, n_points: int | None = None) -> tuple:
    """(bytes, flag, formula): a coarse upper estimate of the peak memory: the energy on the grid is
    evaluated at once, about 8 float64 arrays of n_grid x points x views (``n_points``: the data's
    point count, default the number of ``angles``)."""
    n = len(cfg.angles) if n_points is None else n_points
    v = cfg.aug_views if cfg.aug == "rotation" else 1
    flag = "--n_grid" if cfg.n_grid * 1e-3 >= v else "--aug_views"
    return 8.0 * 8 * cfg.n_grid * n * v, flag, f"8 float64 arrays of n_grid {cfg.n_grid} x {n} points x {v} views"


def run(cfg: Fig8Config, ds: Dataset | None = None) -> dict:
    """Local maxima of E_alpha on the circle for every activation of ``cfg``.

    Args:
      ds: the data as :func:`points` returns them; default ``points(cfg)``.

    Returns:
      ``{"config", "activations": {name: n_local_maxima, maxima_theta (radians), maxima_theta_over_pi,
      maxima_energy, maxima_at_kink, maxima_residual, n_smooth_critical}, "curves": {"theta" (grid),
      "energy": {name: E on the grid}, "data_theta"}}`` (``curves`` is what the figure draws).
    """
    ds = points(cfg) if ds is None else ds
    pw = pairwise.get_pairwise(cfg.alpha, cfg.tau)
    per_act, energies, theta = {}, {}, None
    for name in cfg.acts:
        theta, e, m = landscape.local_maxima(ds, activations.get_activation(name, cfg.leaky_slope), pw,
                                             n_grid=cfg.n_grid)
        energies[name] = e
        per_act[name] = {"n_local_maxima": int(m.theta.size), "maxima_theta": m.theta,
                         "maxima_theta_over_pi": m.theta / np.pi, "maxima_energy": m.energy,
                         "maxima_at_kink": m.at_kink, "maxima_residual": m.residual,
                         "n_smooth_critical": int(np.sum(~m.at_kink))}
    data_theta = np.arctan2(np.asarray(ds.x[:, 1]), np.asarray(ds.x[:, 0]))
    aug = cfg.aug != "none"
    config = {"angles_over_pi": data_theta / np.pi, "data_path": cfg.data_path, "alpha": cfg.alpha, "tau": cfg.tau,
              "leaky_slope": cfg.leaky_slope, "n_grid": cfg.n_grid, "dtype": "float64", "aug": cfg.aug,
              "aug_range": cfg.aug_range if aug else None, "aug_views": cfg.aug_views if aug else None}
    return {"config": config, "activations": per_act,
            "curves": {"theta": theta, "energy": energies, "data_theta": data_theta}}


def table(record: dict) -> str:
    """One row per activation: maxima, smooth ones, ones on a kink, and their theta / pi."""
    rows = [[name, a["n_local_maxima"], a["n_smooth_critical"], a["n_local_maxima"] - a["n_smooth_critical"],
             " ".join(f"{t:+.4f}" for t in a["maxima_theta_over_pi"])] for name, a in record["activations"].items()]
    return report.format_table(TABLE_COLUMNS, rows)


def table_key(n_grid: int) -> list:
    """The key of :func:`table`'s columns, for a grid of ``n_grid`` angles."""
    return report.key_lines(
        f"maxima: local maxima of E_alpha(theta) (Eq. 3) over w = (cos theta, sin theta), found on {n_grid} grid "
        "angles and refined; smooth: those off every kink, smooth critical points of the flow; on kink: those on a "
        "kink theta = (angle of a data point or view) +- pi/2, where E is not differentiable (ReLU, LeakyReLU); "
        "theta/pi of maxima: their angles.")
