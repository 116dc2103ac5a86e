"""Core App. C.3 (proof of Thm. 6): Eq. 151 and the general-case basin bounds Eq. 156-157, against exact routes.

- Eq. 150-151: t*(b, y0) = ln(1 + b/y0) / b and the printed derivative dt*/db = [x/(1+x) - ln(1+x)] / b^2,
  x = b/y0 (:func:`t_star`, :func:`dt_db_eq151`; log1p throughout, so small x loses nothing to cancellation).
- Eq. 152 with every component modulated: P[E_l] = P[Y_l >= 0, Y_l + eps_l >= max_{l' != l} Y_l' + eps_l'] for
  i.i.d. Y ~ U[-1, 1]. Conditioned on Y_l = y the others are independent, so
  P[E_l] = (1/2) int_0^1 prod_{l' != l} F(y + eps_l - eps_l') dy with F(x) = clip((x + 1)/2, 0, 1). The
  integrand is a polynomial of degree d - 1 between the breakpoints y = eps_l' - eps_l +- 1, so Gauss-Legendre
  with d nodes on each piece is exact (:func:`p_win`).
- Eq. 156: P[E_c(1)] >= (eps_c(1) - eps_c(2)) / 2; Eq. 157: P[E_c(r)] <= min_{r' < r} (1/(r'+1))
  (1 - (eps_c(r') - eps_c(r))/2)^{r'+1} (:func:`eq156_bound`, :func:`eq157_bound`, eps in any order).

Pure numpy, float64.
"""

from __future__ import annotations

import numpy as np

__all__ = ["t_star", "dt_db_eq151", "p_win", "eq156_bound", "eq157_bound"]


def t_star(b, y0):
    """Eq. 150: the blow-up time of y' = (y + b) y from y0 > 0, ln(1 + b/y0) / b (b -> 0: 1/y0)."""
    b, y0 = np.asarray(b, float), np.asarray(y0, float)
    x = b / y0
    return np.where(b == 0, 1.0 / y0, np.log1p(x) / np.where(b == 0, 1.0, b))


def dt_db_eq151(b, y0):
    """Eq. 151 as printed: (1/b^2) [x/(1+x) - ln(1+x)], x = b/y0."""
    b, y0 = np.asarray(b, float), np.asarray(y0, float)
    x = b / y0
    return (x / (1.0 + x) - np.log1p(x)) / b ** 2


def p_win(eps, l: int) -> float:
    """Exact P[E_l] of Eq. 152 with modulation factors ``eps`` (d,), Y_l' i.i.d. U[-1, 1]."""
    eps = np.asarray(eps, float)
    d = eps.size
    shifts = eps[l] - np.delete(eps, l)  # y + shift is the argument of F for each other component
    cuts = np.concatenate([[0.0, 1.0], -shifts - 1.0, -shifts + 1.0])
    cuts = np.unique(np.clip(cuts, 0.0, 1.0))
    nodes, weights = np.polynomial.legendre.leggauss(max(d, 1))
    total = 0.0
    for a, c in zip(cuts[:-1], cuts[1:]):
        y = (a + c) / 2 + (c - a) / 2 * nodes
        F = np.clip((y[:, None] + shifts[None, :] + 1.0) / 2.0, 0.0, 1.0)
        total += (c - a) / 2 * np.sum(weights * np.prod(F, axis=1))
    return 0.5 * total


def eq156_bound(eps) -> float:
    """Eq. 156's lower bound for the top component: (eps_c(1) - eps_c(2)) / 2."""
    e = np.sort(np.asarray(eps, float))[::-1]
    return (e[0] - e[1]) / 2.0


def eq157_bound(eps, r: int) -> float:
    """Eq. 157's upper bound for the component of rank r (1-based, r >= 2) as printed."""
    e = np.sort(np.asarray(eps, float))[::-1]
    return min((1.0 - (e[rp - 1] - e[r - 1]) / 2.0) ** (rp + 1) / (rp + 1) for rp in range(1, r))
