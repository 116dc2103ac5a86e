"""Lemma 1 (Gaussian alpha has kernel structure, Def. 1) and the variance-sum form of Lemma 2 (Eq. 4),
made explicit with a truncated feature map.

For g bounded below, shift it to g~ = g - min g >= 0 (distances do not change) and write
exp(-||g~_i - g~_j||^2 / 2 tau) = e^{-|g~_i|^2/2tau} e^{-|g~_j|^2/2tau} e^{g~_i . g~_j / tau}; the last
factor's Taylor series over multi-indices a gives the non-negative features

    phi_a(x) = e^{-|g~(x)|^2 / 2 tau} prod_k g~_k(x)^{a_k} / sqrt(tau^{|a|} a!),

so alpha = sum_a phi_a phi_a^T (Def. 1). Then Eq. 4 / Cor. 1: C_alpha[f] = sum_a z_a^2 V_{p~_a}[fbar], with
z_a = E_p[phi_a], p~_a = p phi_a / z_a (Def. 2) and fbar the augmentation mean of f at each support point;
written without dividing, z_a^2 V_{p~_a}[f] = z_a E_p[phi_a f f^T] - E_p[phi_a f] E_p[phi_a f]^T.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["multi_indices", "gaussian_features", "variance_sum"]


def multi_indices(k: int, degree: int) -> np.ndarray:
    """Every a in N^k with |a| <= degree, (n_features, k), by increasing |a|."""
    if k < 1 or degree < 0:
        raise ValueError(f"need k >= 1 and degree >= 0, got k={k}, degree={degree}")
    out = [a for s in range(degree + 1) for a in itertools.product(range(s + 1), repeat=k) if sum(a) == s]
    return np.asarray(out, np.int64).reshape(-1, k)


def gaussian_features(g, tau: float, degree: int) -> np.ndarray:
    """phi_a of the Gaussian alpha exp(-||g_i - g_j||^2 / 2 tau) for |a| <= degree; g (n,) or (n, k).
    Returns (n, n_features) >= 0; phi phi^T -> alpha as the degree grows."""
    if not (tau > 0 and math.isfinite(tau)):
        raise ValueError(f"tau={tau} must be a finite number > 0")
    g = np.asarray(g, np.float64)
    g = g[:, None] if g.ndim == 1 else g
    gs = g - g.min(axis=0, keepdims=True)
    idx = multi_indices(g.shape[1], degree)
    log_norm = 0.5 * (idx.sum(1) * math.log(tau) + np.array([sum(math.lgamma(int(v) + 1) for v in a) for a in idx]))
    logs = np.log(np.where(gs > 0, gs, 1.0))
    logs = np.where(gs > 0, logs, -1e300)  # 0^a = 0 for a > 0 and 0^0 = 1 (0 * -1e300 = 0)
    terms = (idx[None] * logs[:, None, :]).sum(2)  # (n, F)
    return np.exp(terms - log_norm[None] - 0.5 * np.sum(gs * gs, axis=1, keepdims=True) / tau)


def variance_sum(fbar, p, phi) -> np.ndarray:
    """sum_a z_a^2 V_{p~_a}[fbar] (Eq. 4) for features fbar (n, k), probabilities p (n,), phi (n, F)."""
    fbar, p, phi = (np.asarray(v, np.float64) for v in (fbar, p, phi))
    fbar = fbar[:, None] if fbar.ndim == 1 else fbar
    z = p @ phi  # (F,)
    first = np.einsum("f,n,nf,nk,nl->kl", z, p, phi, fbar, fbar)
    m = np.einsum("n,nf,nk->fk", p, phi, fbar)  # E_p[phi_a fbar]
    return first - m.T @ m
