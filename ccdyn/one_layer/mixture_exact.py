"""Closed forms of the ReLU roughness on an isotropic Gaussian mixture (Thm. 2, Cor. 2), and a
sampled finite difference of the same quantity that uses nothing but Eq. 3's pairwise sum.

Population p_D = sum_c pi_c N(mu_c, s^2 I), one ReLU node, alpha frozen at w* (the kernel of Def. 1 is
alpha's at w*, as in the proof of Thm. 2 and Eq. 96). Along v = cos(e) w* + sin(e) u (u a unit tangent)
the indicator x 1(v^T x >= 0) changes only on the wedge between the planes; differentiating Eq. 3
(C_alpha = 1/2 sum_ij p_i p_j alpha_ij (g_i - g_j)(s_i - s_j)^T with g = x~^v, s = g^T w*) gives, since
w*^T x = 0 on the plane and alpha(x, y) = exp(-h(w*^T y)^2 / 2 tau) there,

    d/de (A(v) - A(w*)) w* |_{e=0} = - E_p[phi0 h(w*^T x)] M u,   M = int_{w*^T x = 0} x x^T p_D dS,

phi0 = exp(-h^2 / 2 tau) (1 for uniform alpha). So the local roughness of Sec. 3.2 at alpha frozen is
rho(w*) = E_p[phi0 h] lambda_max(M), and rho_g / rho_u = E[phi0 h] / E[h] exactly (derivation in
docs/independent_checks.md#cor-2). Every expectation here is a one-dimensional Gaussian integral in closed
form; :func:`frozen_alpha_difference` measures the same first-order change on a sample by the exact
pairwise sum restricted to the points whose gate flips (no kernel expansion, no closed form).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["relu_moments", "plane_second_moment", "plane_density_max", "mixture_density", "frozen_roughness",
           "frozen_alpha_difference", "sample_mixture"]


def _norm_pdf(z):
    return np.exp(-0.5 * np.asarray(z, np.float64) ** 2) / math.sqrt(2.0 * math.pi)


def _norm_cdf(z):
    from scipy.special import ndtr  # noqa: PLC0415 (scipy is a JAX dependency)
    return ndtr(np.asarray(z, np.float64))


def _check(means, std, weights):
    means = np.asarray(means, np.float64)
    if means.ndim != 2 or not np.all(np.isfinite(means)):
        raise ValueError(f"means must be a finite (C, d) matrix, got shape {means.shape}")
    if not (std > 0 and math.isfinite(std)):
        raise ValueError(f"std={std} must be a finite number > 0")
    c = means.shape[0]
    w = np.full(c, 1.0 / c) if weights is None else np.asarray(weights, np.float64)
    if w.shape != (c,) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {c} non-negative numbers summing to 1")
    return means, float(std), w


def _unit(w):
    w = np.asarray(w, np.float64)
    return w / np.linalg.norm(w)


def relu_moments(means, std, w, tau=None, weights=None) -> dict:
    """E_p[h], z0 = E_p[phi0] (Eq. 100) and E_p[phi0 h] for h = ReLU(w^T x), phi0 = exp(-h^2 / 2 tau)
    (``tau=None``: uniform alpha, phi0 = 1), in closed form per component t = w^T x ~ N(a, s^2):
    exp(-t^2/2tau) N(t; a, s^2) = k N(t; a', s'^2) with s'^2 = (1/s^2 + 1/tau)^-1, a' = a s'^2 / s^2,
    k = (s'/s) exp(-a^2 / 2(s^2 + tau)), and E[t 1(t>0)] = a Phi(a/s) + s phi(a/s)."""
    means, s, pi = _check(means, std, weights)
    a = means @ _unit(w)
    e_h = a * _norm_cdf(a / s) + s * _norm_pdf(a / s)
    if tau is None:
        return {"E_h": float(pi @ e_h), "z0": 1.0, "E_phi0_h": float(pi @ e_h)}
    if not (tau > 0 and math.isfinite(tau)):
        raise ValueError(f"tau={tau} must be a finite number > 0")
    s2p = 1.0 / (1.0 / s ** 2 + 1.0 / tau)
    sp = math.sqrt(s2p)
    ap = a * s2p / s ** 2
    k = sp / s * np.exp(-a ** 2 / (2.0 * (s ** 2 + tau)))
    z0 = _norm_cdf(-a / s) + k * _norm_cdf(ap / sp)
    e_phi_h = k * (ap * _norm_cdf(ap / sp) + sp * _norm_pdf(ap / sp))
    return {"E_h": float(pi @ e_h), "z0": float(pi @ z0), "E_phi0_h": float(pi @ e_phi_h)}


def plane_second_moment(means, std, w, weights=None) -> np.ndarray:
    """M = int_{w^T x = 0} x x^T p_D(x) dS (d, d): per component the density of w^T x at 0 times
    E[x x^T | w^T x = 0] = m m^T + s^2 (I - w w^T), m = the mean projected on the plane."""
    means, s, pi = _check(means, std, weights)
    w = _unit(w)
    d = w.size
    p_perp = np.eye(d) - np.outer(w, w)
    a = means @ w
    dens = pi * _norm_pdf(a / s) / s
    m = means - np.outer(a, w)
    return np.einsum("c,ci,cj->ij", dens, m, m) + dens.sum() * s ** 2 * p_perp


def mixture_density(means, std, x, weights=None) -> np.ndarray:
    """p_D at the rows of x (n, d)."""
    means, s, pi = _check(means, std, weights)
    x = np.atleast_2d(np.asarray(x, np.float64))
    d2 = np.sum((x[:, None, :] - means[None]) ** 2, axis=2)
    return (np.exp(-d2 / (2 * s ** 2)) @ pi) / (2 * math.pi * s ** 2) ** (means.shape[1] / 2)


def plane_density_max(means, std, w, weights=None, n_iter: int = 500) -> tuple:
    """max of p_D on the plane w^T x = 0 (r(w, alpha_u) of Eq. 95) and where: on the plane p_D is a
    mixture of (d-1)-dimensional Gaussians of one width at the projected means; the fixed-point
    (mean-shift) iteration y <- sum_c r_c(y) m_c, r_c the posterior, ascends it monotonically, and
    it is started from every projected mean. Returns (max, argmax)."""
    means, s, pi = _check(means, std, weights)
    w = _unit(w)
    m = means - np.outer(means @ w, w)
    best, where = -1.0, None
    for y in m:
        for _ in range(n_iter):
            r = pi * np.exp(-np.sum((m - y) ** 2, axis=1) / (2 * s ** 2))
            if r.sum() == 0:
                break
            y_new = (r / r.sum()) @ m
            if np.linalg.norm(y_new - y) < 1e-15:
                break
            y = y_new
        val = float(mixture_density(means, s, y[None], pi)[0])
        if val > best:
            best, where = val, y
    return best, where


def frozen_roughness(means, std, w, tau=None, weights=None) -> dict:
    """rho(w) with alpha frozen at w (uniform for ``tau=None``): E_p[phi0 h] lambda_max(M) (module
    docstring), the top tangent direction of M, and the moments of :func:`relu_moments`."""
    mom = relu_moments(means, std, w, tau, weights)
    m = plane_second_moment(means, std, w, weights)
    lam, vec = np.linalg.eigh(m)
    return {**mom, "lam_max_M": float(lam[-1]), "u_top": vec[:, -1], "rho": mom["E_phi0_h"] * float(lam[-1]),
            "M": m}


def sample_mixture(means, std, n: int, rng, weights=None) -> np.ndarray:
    """n float64 draws of the mixture (numpy generator ``rng``)."""
    means, s, pi = _check(means, std, weights)
    comp = rng.choice(means.shape[0], size=n, p=pi)
    return means[comp] + s * rng.standard_normal((n, means.shape[1]))


def frozen_alpha_difference(x, w_star, v, tau=None, chunk: int = 64) -> np.ndarray:
    """(A(v) - A(w*)) w* on the sample x (n, d), p = 1/n, ReLU, alpha frozen at w*: Gaussian
    alpha_ij = exp(-(h_i - h_j)^2 / 2 tau) of h = ReLU(x w*) (``tau=None``: uniform), by Eq. 3's
    pairwise sum C_alpha[g, s] = 1/2 sum_ij p_i p_j alpha_ij (g_i - g_j)(s_i - s_j), g = x 1(x v >= 0),
    s = g w*. Only pairs with a point whose gate flips change; the sum over them is exact:
    sum_{i in D} p_i sum_j c_j alpha_ij p_j [new_ij - old_ij], c_j = 1/2 on D (each D x D pair once)."""
    x = np.asarray(x, np.float64)
    n = x.shape[0]
    w_star, v = _unit(w_star), _unit(v)
    t = x @ w_star
    b_old, b_new = t >= 0, x @ v >= 0
    flip = np.flatnonzero(b_old != b_new)
    h = np.maximum(t, 0.0)
    g_old, g_new = x * b_old[:, None], x * b_new[:, None]
    s_old, s_new = t * b_old, t * b_new
    c = np.ones(n)
    c[flip] = 0.5
    p = 1.0 / n
    out = np.zeros(x.shape[1])
    for lo in range(0, flip.size, chunk):
        i = flip[lo: lo + chunk]
        alpha = np.ones((i.size, n)) if tau is None else np.exp(-(h[i][:, None] - h[None]) ** 2 / (2.0 * tau))
        k = alpha * (c * p)[None]  # (|i|, n)
        for g, s, sign in ((g_new, s_new, 1.0), (g_old, s_old, -1.0)):
            a_sum, s_sum, g_sum, gs_sum = k.sum(1), k @ s, k @ g, k @ (g * s[:, None])
            rows = (g[i] * (s[i] * a_sum)[:, None] - g[i] * s_sum[:, None] - s[i][:, None] * g_sum + gs_sum)
            out += sign * p * rows.sum(0)
    return out
