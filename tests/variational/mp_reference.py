"""A reference for derivatives of Eq. 4 independent of ccdyn's formulas and of float64: central finite
differences of the loss evaluated in 200-digit arithmetic (mpmath) at the stored float64 points."""

import mpmath
import numpy as np


def eq4_grad_hessian_mp(z, p, tau, dps=200, step=1e-30):
    """(grad (n, d), hess (n d, n d)) of Eq. 4 (Psi = log1p, Gaussian eta) at the float64 points z, as float64."""
    z, p = np.asarray(z, float), np.asarray(p, float)
    n, d = z.shape
    with mpmath.workdps(dps):
        x0 = [mpmath.mpf(float(v)) for v in z.reshape(-1)]
        pm, t, h = [mpmath.mpf(float(v)) for v in p], mpmath.mpf(float(tau)), mpmath.mpf(step)

        def loss(x):
            pts = [x[i * d:(i + 1) * d] for i in range(n)]
            out = mpmath.mpf(0)
            for i in range(n):
                sq = [sum((a - b) ** 2 for a, b in zip(pts[i], pts[j])) for j in range(n)]
                g = sum(pm[j] * mpmath.exp(-sq[j] / (2 * t)) for j in range(n))
                out += pm[i] * mpmath.log1p(g)
            return out

        def at(**moves):
            x = list(x0)
            for k, s in moves.items():
                x[int(k[1:])] += s * h
            return loss(x)

        m = n * d
        f0 = loss(x0)
        grad = [(at(**{f"k{a}": 1}) - at(**{f"k{a}": -1})) / (2 * h) for a in range(m)]
        hess = np.zeros((m, m))
        for a in range(m):
            hess[a, a] = float((at(**{f"k{a}": 1}) - 2 * f0 + at(**{f"k{a}": -1})) / h ** 2)
            for b in range(a + 1, m):
                v = (at(**{f"k{a}": 1, f"k{b}": 1}) - at(**{f"k{a}": 1, f"k{b}": -1})
                     - at(**{f"k{a}": -1, f"k{b}": 1}) + at(**{f"k{a}": -1, f"k{b}": -1})) / (4 * h ** 2)
                hess[a, b] = hess[b, a] = float(v)
        return np.array([float(v) for v in grad]).reshape(n, d), hess
