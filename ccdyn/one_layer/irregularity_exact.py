"""Thm. 3 (Def. 4, Eq. 10-11) decided exactly on the activation regions of a ReLU-type population.

For a piecewise-linear activation (ReLU, LeakyReLU) and an exact discrete population, A(w) depends on
w only through the sign pattern of w^T x_i over the support points (views included): it is constant on
each activation region and jumps across the hyperplanes x_i^T w = 0. So on a cap
B = {w : w^T w(0) >= cos theta} (theta < pi/2) exactly one of two things holds:

- no hyperplane meets B (every support point has |x_i^T w(0)| / ||x_i|| > sin theta): A is constant on
  B, so its Lipschitz constant L and the eigenvector constant kappa (Lemma 9) are exactly 0, omega = mu
  (Eq. 10), and mu = (1 + c) / (2 c^2) (1 - gap / lambda_1)^2 decreases in c = |w^T phi_1|, whose
  smallest value on B is cos(min(theta_0 + theta, pi/2)) with theta_0 the angle between w(0) and
  +-phi_1: sup_B omega is that closed form;
- some hyperplane meets B: A jumps inside B (the jump is returned), no finite L exists, and Eq. 11
  cannot hold for that gamma.

This replaces the sampled L, kappa and sup omega of :func:`ccdyn.one_layer.irregularity.theorem3_check`
by exact values: where the sampled check certifies, the cap must lie in one region.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ccdyn.one_layer import irregularity

__all__ = ["cap_crossings", "sup_omega_exact", "certify_exact"]


def cap_crossings(x, w0, theta: float) -> np.ndarray:
    """Indices of the rows of x (n, d) whose hyperplane x_i^T w = 0 meets the cap of angular radius
    ``theta`` around the unit w0: |x_i^T w0| <= sin(theta) ||x_i|| (every nonzero row when theta >= pi/2)."""
    x = np.asarray(x, np.float64)
    w0 = np.asarray(w0, np.float64) / np.linalg.norm(w0)
    norm = np.linalg.norm(x, axis=1)
    nonzero = norm > 0
    if theta >= math.pi / 2:
        return np.flatnonzero(nonzero)
    return np.flatnonzero(nonzero & (np.abs(x @ w0) <= math.sin(theta) * norm))


def sup_omega_exact(a, w0, theta: float) -> dict:
    """sup of omega = mu over the cap of angular radius ``theta`` around w0 for a constant matrix a (d, d)
    (L = kappa = 0): mu at c_min = cos(min(theta_0 + theta, pi/2)); infinite when c_min = 0 or the top
    eigenvalue is not distinct. Also lambda_1, the gap, lambda_d and c(w0)."""
    a = np.asarray(a, np.float64)
    lam, phi = np.linalg.eigh(a)
    lam1, gap = float(lam[-1]), float(lam[-1] - lam[-2])
    w0 = np.asarray(w0, np.float64) / np.linalg.norm(w0)
    c0 = abs(float(w0 @ phi[:, -1]))
    theta0 = math.acos(min(c0, 1.0))
    c_min = 0.0 if theta0 + theta >= math.pi / 2 else math.cos(theta0 + theta)
    if c_min == 0.0 or gap <= 0 or lam1 <= 0:
        sup = math.inf
    else:
        sup = float(irregularity.irregularity(c_min, gap, lam1, 0.0, 0.0)[2])
    return {"sup_omega": sup, "c_min": c_min, "lam1": lam1, "gap": gap, "lam_d": float(lam[0]), "c0": c0}


def certify_exact(a_fn, x, w0, gammas) -> dict:
    """Eq. 11 decided exactly at the start w0 for each gamma (ascending) until one holds.

    Args:
      a_fn: unit w (d,) -> A(w) (d, d) of the population (numpy or JAX).
      x: (n, d) support points whose signs w^T x_i gate A (views included).
      gammas: candidate gammas in (0, 1).

    Returns ``{"c0", "gammas": [{"gamma", "threshold", "cap_deg", "crossings", "jump" (spectral norm of
    A(w+) - A(w-), w+- 1e-9 to each side of the crossing plane nearest w0; else 0), "sup_omega" (inf
    when a plane crosses), "L", "kappa", "holds"}], "gamma_certified"}``.
    """
    w0 = np.asarray(w0, np.float64) / np.linalg.norm(w0)
    a0 = np.asarray(a_fn(w0), np.float64)
    c0 = sup_omega_exact(a0, w0, 0.0)["c0"]
    rows = []
    for gamma in sorted(float(g) for g in gammas):
        if not 0 < gamma < 1:
            raise ValueError(f"gamma={gamma} must lie in (0, 1)")
        thr = irregularity.cap_threshold(c0, gamma)
        theta = math.acos(max(min(thr, 1.0), -1.0))
        cross = cap_crossings(x, w0, theta)
        row: dict[str, Any] = {"gamma": gamma, "threshold": thr, "cap_deg": math.degrees(theta),
                               "crossings": int(cross.size)}
        if cross.size:
            xi = np.asarray(x, np.float64)[cross]
            k = int(np.argmin(np.abs(xi @ w0) / np.linalg.norm(xi, axis=1)))  # the nearest plane
            n = xi[k] / np.linalg.norm(xi[k])
            foot = w0 - (n @ w0) * n  # the point of that plane nearest w0 (inside the cap)
            sides = [(foot + s * 1e-9 * n) / np.linalg.norm(foot + s * 1e-9 * n) for s in (1.0, -1.0)]
            jump = float(np.linalg.norm(np.asarray(a_fn(sides[0]), np.float64)
                                        - np.asarray(a_fn(sides[1]), np.float64), 2))
            row.update({"jump": jump, "sup_omega": math.inf, "L": math.inf, "kappa": None, "holds": False})
        else:
            ex = sup_omega_exact(a0, w0, theta)
            row.update({"jump": 0.0, "sup_omega": ex["sup_omega"], "L": 0.0, "kappa": 0.0,
                        "holds": bool(ex["sup_omega"] <= gamma)})
        rows.append(row)
        if row["holds"]:
            break
    certified = next((r["gamma"] for r in rows if r["holds"]), None)
    return {"c0": c0, "gammas": rows, "gamma_certified": certified}
