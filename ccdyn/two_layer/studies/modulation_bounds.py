"""The record behind ``results/theory/modulation_bounds`` (``scripts/modulation_bounds.py``): core Eq. 151 and
Eq. 156-157 against exact routes (:mod:`ccdyn.two_layer.modulation_exact`). A frozen :class:`BoundsConfig` in,
a plain dict of numbers out (no I/O).

- Eq. 151 on a log grid of x = b / y0 at several y0: the printed derivative against float64 autodiff of
  Eq. 150 (``jax.grad``), and its sign.
- Eq. 156-157 on ``draws`` modulation vectors eps ~ U[-s, s]^d per (d, s): the exact P[E_l] of every
  component (piecewise Gauss-Legendre, exact for the piecewise polynomial integrand) against the bounds,
  with the violations split by the regime where the printed bound can exceed what is possible: Eq. 156
  with a top gap > 1 (P <= 1/2 always), Eq. 157 with a gap > 2 (the printed base 1 - gap/2 turns negative).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.two_layer import modulation_exact as me

__all__ = ["BoundsConfig", "run"]


@dataclasses.dataclass(frozen=True)
class BoundsConfig:
    x_decades: tuple[float, float] = (-6.0, 6.0)
    x_points: int = 241
    y0s: tuple = (0.01, 1.0, 10.0)
    ds: tuple = (2, 3, 5, 8)
    scales: tuple = (0.25, 0.5, 1.0, 2.0)
    draws: int = 200
    seed: int = 0
    tol: float = 1e-12  # a bound is violated when it misses the exact probability by more than this


def _eq151(c: BoundsConfig) -> dict:
    x = np.logspace(*c.x_decades, c.x_points)
    grad = jax.vmap(jax.grad(lambda b, y0: jnp.log1p(b / y0) / b), in_axes=(0, None))
    rel, top = [], []
    for y0 in c.y0s:
        b = x * y0
        printed = me.dt_db_eq151(b, y0)
        auto = np.asarray(grad(jnp.asarray(b, jnp.float64), y0))
        rel.append(float(np.max(np.abs(printed / auto - 1.0))))
        top.append(float(np.max(printed)))
    return {"x_range": list(c.x_decades), "points": c.x_points * len(c.y0s), "max_rel_diff_autodiff": max(rel),
            "max_value": max(top), "rel_diff_per_y0": dict(zip(map(str, c.y0s), rel))}


def _cell(d: int, s: float, rng, c: BoundsConfig) -> dict:
    n156 = {"small": 0, "large": 0}
    v156 = {"small": 0, "large": 0}
    n157 = {"small": 0, "large": 0}
    v157 = {"small": 0, "large": 0}
    slack156, slack157, worst = [], [], {"eq156": 0.0, "eq157": 0.0}
    corrected = {"eq156": 0, "eq157": 0}  # violations of min(gap, 1)/2 and max(0, bound)
    p_at_157_violation = 0.0
    for _ in range(c.draws):
        eps = rng.uniform(-s, s, d)
        order = np.argsort(-eps)
        p = np.array([me.p_win(eps, l) for l in range(d)])
        e = eps[order]
        regime = "small" if e[0] - e[1] <= 1 else "large"
        miss = me.eq156_bound(eps) - p[order[0]]
        n156[regime] += 1
        v156[regime] += bool(miss > c.tol)
        worst["eq156"] = max(worst["eq156"], float(miss))
        corrected["eq156"] += bool(min(e[0] - e[1], 1.0) / 2 - p[order[0]] > c.tol)
        if regime == "small":
            slack156.append(-float(miss))
        for r in range(2, d + 1):
            regime = "small" if e[0] - e[r - 1] <= 2 else "large"
            miss = p[order[r - 1]] - me.eq157_bound(eps, r)
            n157[regime] += 1
            v157[regime] += bool(miss > c.tol)
            worst["eq157"] = max(worst["eq157"], float(miss))
            corrected["eq157"] += bool(p[order[r - 1]] - max(me.eq157_bound(eps, r), 0.0) > c.tol)
            if miss > c.tol:
                p_at_157_violation = max(p_at_157_violation, float(p[order[r - 1]]))
            if regime == "small":
                slack157.append(-float(miss))
    return {"d": d, "scale": s, "eq156_draws": n156, "eq156_violations": v156, "eq157_cases": n157,
            "eq157_violations": v157, "eq156_min_slack_gap_le_1": min(slack156, default=None),
            "eq157_min_slack_gaps_le_2": min(slack157, default=None), "worst_miss": worst,
            "corrected_violations": corrected, "max_p_at_eq157_violation": p_at_157_violation}


def run(c: BoundsConfig = BoundsConfig()) -> dict:
    """Eq. 151 on the grid and one row per (d, scale) for Eq. 156-157."""
    rng = np.random.default_rng(c.seed)
    rows = [_cell(d, s, rng, c) for d in c.ds for s in c.scales]
    return {"config": dataclasses.asdict(c), "eq151": _eq151(c), "rows": rows}
