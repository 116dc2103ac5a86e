"""Cor. 2 by a route independent of its formula: the ReLU roughness rho(w) under Gaussian and uniform alpha
in closed form on the Gaussian mixture of ``results/theory/cor2`` (d = 3, clusters at 2 u_m, std 0.3),
beside a sampled finite difference of Eq. 3's pairwise sum.

Cor. 2 states r(w*, alpha_g) = z0(alpha_g) r(w*, alpha_u) (Eq. 97-99) for the quantity r of Thm. 2's
bound rho <= C0^3 vol(C0) r / pi (Eq. 93). What the bound is about, rho itself, has a closed form on a
Gaussian mixture with alpha frozen at w (:mod:`ccdyn.one_layer.mixture_exact`): rho = E[phi0 h]
lambda_max(M), so rho_g / rho_u = E[phi0 h] / E[h], which is <= z0 = E[phi0] (phi0 decreasing in h,
Chebyshev's sum inequality) but not equal to it. The study evaluates, at the pattern directions
u_m / ||u_m|| and at seeded random unit w, for uniform alpha and every tau: z0, E[h], E[phi0 h],
lambda_max(M), the closed-form rho and the direction u_top of its first-order change, the largest
density on the plane (r(w, alpha_u), Eq. 95) and r_g = z0 r_u; and on one common sample the exact
pairwise (A(v) - A(w)) w / ||v - w|| at v = cos(e) w + sin(e) u_top for each radius, Richardson-
extrapolated to e -> 0 from the two smallest radii, and its norm's ratio to uniform alpha's (the
same sample and planes for every alpha, so the sampling noise of M largely cancels in the ratio).
``scripts/cor2_exact.py`` writes the record.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from ccdyn import report
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import mixture_exact

__all__ = ["Cor2ExactConfig", "run", "markdown", "table", "table_key", "COLUMNS"]

COLUMNS = ("w", "alpha", "tau", "z0", "E_h", "E_phi0_h", "ratio_exact", "ratio_sampled", "rho_exact",
           "rho_sampled", "rel_err_vector", "r_uniform", "r_gaussian")


@dataclasses.dataclass(frozen=True)
class Cor2ExactConfig:
    """The mixture (``d``, ``m``, ``ortho_eps``, ``std``, ``data_seed``: the basins data flags), the
    Gaussian taus, ``n_random_w`` seeded random unit w besides the m patterns, the sample size and
    seed of the finite difference, and its radii (radians, decreasing; the last two extrapolate)."""

    d: int = 3
    m: int = 3
    ortho_eps: float = 0.1
    std: float = 0.3
    data_seed: int = 0
    taus: tuple = (8.0, 2.0, 0.5, 0.2, 0.05)
    n_random_w: int = 2
    n_samples: int = 50000
    sample_seed: int = 0
    radii: tuple = (0.02, 0.01)

    def check(self) -> None:
        """``ValueError`` naming the field at fault."""
        if not self.taus or any(not (t > 0) for t in self.taus):
            raise ValueError(f"taus={self.taus} must be non-empty and > 0")
        if len(self.radii) < 2 or any(not (0 < r < 0.5) for r in self.radii) or list(self.radii) != sorted(
                self.radii, reverse=True):
            raise ValueError(f"radii={self.radii} must be >= 2 decreasing values in (0, 0.5)")
        if self.n_samples < 1000:
            raise ValueError(f"n_samples={self.n_samples} must be >= 1000")


def _points(cfg, means) -> list:
    pts = [(f"u{k}", mu / np.linalg.norm(mu)) for k, mu in enumerate(means)]
    rng = np.random.default_rng(cfg.data_seed + 1)
    for k in range(cfg.n_random_w):
        w = rng.standard_normal(cfg.d)
        pts.append((f"random{k}", w / np.linalg.norm(w)))
    return pts


def _sampled(x, w, u, tau, radii) -> tuple:
    """(A(v) - A(w)) w / ||v - w|| per radius, Richardson-extrapolated from the two smallest radii."""
    per = []
    for e in radii:
        v = np.cos(e) * w + np.sin(e) * u
        per.append(mixture_exact.frozen_alpha_difference(x, w, v, tau) / (2.0 * np.sin(e / 2.0)))
    (e1, g1), (e2, g2) = (radii[-2], per[-2]), (radii[-1], per[-1])
    return (e1 * g2 - e2 * g1) / (e1 - e2), per


def run(cfg: Cor2ExactConfig, log=None) -> dict:
    """The closed forms and the sampled finite differences at every point and alpha.

    Returns ``{"config", "means", "rows": [dict of COLUMNS + "profile" (per-radius norms), "w"],
    "tables": {"rows": rows of COLUMNS}}``."""
    cfg.check()
    t0 = time.time()
    log = log or (lambda line: None)
    spec = DataSpec(data="gaussian_mixture", d=cfg.d, m=cfg.m, ortho_eps=cfg.ortho_eps, std=cfg.std,
                    n_samples=2, data_seed=cfg.data_seed)
    means = np.asarray(build_dataset(spec).patterns, np.float64)
    x = mixture_exact.sample_mixture(means, cfg.std, cfg.n_samples, np.random.default_rng(cfg.sample_seed))
    rows, table_rows = [], []
    for name, w in _points(cfg, means):
        r_u, _ = mixture_exact.plane_density_max(means, cfg.std, w)
        base = mixture_exact.frozen_roughness(means, cfg.std, w, None)
        u = base["u_top"] - (base["u_top"] @ w) * w
        u /= np.linalg.norm(u)
        for tau in (None,) + tuple(float(t) for t in cfg.taus):
            fr = base if tau is None else mixture_exact.frozen_roughness(means, cfg.std, w, tau)
            exact_vec = -fr["E_phi0_h"] * fr["M"] @ u
            extrap, per = _sampled(x, w, u, tau, cfg.radii)
            row = {"w": name, "alpha": "uniform" if tau is None else "gaussian", "tau": tau, "z0": fr["z0"],
                   "E_h": fr["E_h"], "E_phi0_h": fr["E_phi0_h"], "ratio_exact": fr["E_phi0_h"] / fr["E_h"],
                   "rho_exact": fr["rho"], "rho_sampled": float(np.linalg.norm(extrap)),
                   "rel_err_vector": float(np.linalg.norm(extrap - exact_vec) / np.linalg.norm(exact_vec)),
                   "r_uniform": r_u, "r_gaussian": fr["z0"] * r_u,
                   "profile": [float(np.linalg.norm(g)) for g in per], "w_vector": w.tolist()}
            if tau is None:  # uniform comes first: the denominator of every ratio at this w
                rho_u_sampled = row["rho_sampled"]
            # NaN when no sample point crossed the ReLU plane between w and v (a small --n_samples, a w far
            # from the data): the sample has no finite difference to compare (the point is not resolved)
            row["ratio_sampled"] = row["rho_sampled"] / rho_u_sampled if rho_u_sampled > 0 else float("nan")
            rows.append(row)
            table_rows.append([row[c] if row[c] is not None and row[c] == row[c] else "-" for c in COLUMNS])
        log(f"  {name}: done ({time.time() - t0:.1f} s)")
    return {"config": dataclasses.asdict(cfg), "means": means.tolist(), "rows": rows,
            "tables": {"rows": table_rows}}


def table_key() -> list:
    """The key of :func:`table`'s columns."""
    return report.key_lines(
        "w: the direction (u_m / ||u_m||: a pattern; random_k: a seeded random unit vector); alpha, tau: uniform, "
        "or Gaussian with that tau (Cor. 2); z0 = E[phi0]; E_h, E_phi0_h: E[h] and E[phi0 h] on the mixture, h "
        "the ReLU output; ratio_exact = E_phi0_h / E_h, the closed-form rho_g / rho_u (<= z0); ratio_sampled: "
        "the same from the sampled finite difference; rho_exact, rho_sampled: the roughness rho(w) in closed "
        "form and by the Richardson-extrapolated finite difference of Eq. 3's pairwise sum; rel_err_vector: "
        "|sampled - exact| / |exact| of the first-order change (A(v) - A(w)) w / |v - w|; r_uniform: r(w, "
        "alpha_u) of Eq. 95, the largest density on the plane; r_gaussian = z0 r_uniform (Cor. 2, Eq. 97-99); "
        "-: does not apply (ratio_sampled: no sample point crossed the ReLU plane near that w, so uniform "
        "alpha's sampled difference is 0; raise --n_samples).")


def table(record: dict) -> str:
    """The rows as a text table."""
    return report.format_table(COLUMNS, record["tables"]["rows"])


def markdown(record: dict) -> str:
    """``cor2_exact.md``: the rows."""
    return report.markdown_table(COLUMNS, record["tables"]["rows"]) + "\n"
