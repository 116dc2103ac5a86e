"""The numbers of Thm. 5's remark (DDN App. C.4, Eq. 113-130, 165): the polarity threshold of Eq. 130,
the Mills-ratio quantity R_hat (Eq. 115-121) with the exact Mills ratio or its Eq. 124 bounds, the
width |N_mu| of Eq. 128, and the exact probability that Eq. 122-123 bound from below.

y = [y+, y-] is a standard bivariate Gaussian with precision M_y = [[1, g], [g, 1]] / (1 - g^2)
(Eq. 113), i.e. correlation -g, and the event is y >= y0 = [sqrt(c), 0]. Eq. 114-115 (Steck's bound)
give P >= (1/2pi) |Sigma|^-1/2 exp(-y0^T M_y y0 / 2) (1 - g^2) R_hat with y0^T M_y y0 = c / (1 - g^2);
Eq. 123 writes exp(-c/2) instead (the text says y0^T M_y y0 = c), and Eq. 128 inherits it.
:func:`event_probability` computes P by a one-dimensional quadrature of the conditional normal.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["polarity_threshold", "mills_ratio", "mills_bounds", "r_hat", "width_eq128", "event_probability",
           "width_exact"]


def polarity_threshold(c: float, sigma_l: float = 0.0, mean_s2: float = 1.0) -> float:
    """Smallest rho with the bracket of Eq. 130 >= 0: mean s_k^2 ((c + 6)/6 rho^2 - 1) >= sigma_l^2."""
    return math.sqrt(6.0 / (c + 6.0) * (1.0 + sigma_l ** 2 / mean_s2))


def mills_ratio(y):
    """r(y) = int_0^inf exp(-y t - t^2/2) dt (Eq. 116) = sqrt(pi/2) erfcx(y / sqrt 2), stable for large y."""
    from scipy.special import erfcx  # noqa: PLC0415
    return np.sqrt(np.pi / 2.0) * erfcx(np.asarray(y, np.float64) / np.sqrt(2.0))


def mills_bounds(y):
    """(lower, upper) bounds of r(y) for y > 0 (Eq. 124)."""
    y = np.asarray(y, np.float64)
    return 2.0 / (np.sqrt(y * y + 4.0) + y), 4.0 / (np.sqrt(y * y + 8.0) + 3.0 * y)


def r_hat(c: float, g: float, r=mills_ratio) -> float:
    """R_hat(c, g) of Eq. 121 with kappa_1 = sqrt(c / (1 - g^2)), kappa_2 = g kappa_1 (Eq. 118-119) and
    e(y) = 1/r(y) - y (Eq. 117), for a Mills-ratio function ``r`` (exact, or one of the Eq. 124 bounds)."""
    if not (c > 0 and 0 <= g < 1):
        raise ValueError(f"need c > 0 and 0 <= gamma < 1, got c={c}, gamma={g}")
    k1 = math.sqrt(c / (1.0 - g * g))
    k2 = g * k1
    e = lambda y: 1.0 / float(r(y)) - y
    return max(float(r(k1)) * float(r(k2 + g * e(k1))), float(r(k2)) * float(r(k1 + g * e(k2))))


def width_eq128(c: float, g: float, log_inv_eta: float = 1.0, r=mills_ratio, corrected: bool = False) -> float:
    """The right side of Eq. 128, 2 pi e^{c/2} ln(1/eta) / (sqrt(1 - g^2) R_hat); ``corrected``: with
    e^{c / 2(1 - g^2)}, the exponent y0^T M_y y0 / 2 of Eq. 114."""
    expo = c / (2.0 * (1.0 - g * g)) if corrected else c / 2.0
    return 2.0 * math.pi * math.exp(expo) * log_inv_eta / (math.sqrt(1.0 - g * g) * r_hat(c, g, r))


def event_probability(c: float, g: float, n: int = 20001) -> float:
    """P(y+ >= sqrt c, y- >= 0) for correlation -g: int_{sqrt c}^inf phi(t) Phi(-g t / sqrt(1 - g^2)) dt
    (y- | y+ = t ~ N(-g t, 1 - g^2)), by Simpson's rule on [sqrt c, sqrt c + 12]."""
    from scipy.special import ndtr  # noqa: PLC0415
    t = np.linspace(math.sqrt(c), math.sqrt(c) + 12.0, n)
    f = np.exp(-0.5 * t * t) / math.sqrt(2 * math.pi) * ndtr(-g * t / math.sqrt(1.0 - g * g))
    h = t[1] - t[0]
    return float(h / 3.0 * (f[0] + f[-1] + 4.0 * f[1:-1:2].sum() + 2.0 * f[2:-1:2].sum()))


def width_exact(c: float, g: float, log_inv_eta: float = 1.0) -> float:
    """Smallest |N_mu| with 1 - (1 - P)^|N_mu| >= 1 - eta for the exact P: ln(1/eta) / -ln(1 - P)."""
    return log_inv_eta / -math.log1p(-event_probability(c, g))
