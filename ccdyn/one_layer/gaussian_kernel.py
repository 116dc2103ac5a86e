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

import dataclasses
import itertools
import math

import numpy as np

__all__ = [
    "multi_indices", "gaussian_features", "variance_sum", "taylor_order", "feature_range", "bounded",
    "taylor_laplacian_rows",
]


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


# --- the engine's fast Gaussian Laplacian: Lemma 1's features of a 1-D node, centred, in JAX -------------
#
# For one node the features are scalars g_i = h(w^T x0_i) (Cor. 2). Centre them, a_i = (g_i - c) / sqrt(tau)
# with c the midpoint of the node's range, so |a_i| <= A = (max g - min g) / (2 sqrt(tau)). Then
# (g_i - g_j)^2 / 2 tau = a_i^2/2 + a_j^2/2 - a_i a_j and
#
#     alpha_ij = sum_m phi_m(a_i) phi_m(a_j),   phi_m(a) = e^{-a^2/2} a^m / sqrt(m!)   (the 1-D case above).
#
# Truncated at m < K the error of every entry is e^{-(a_i^2+a_j^2)/2} sum_{m>=K} (a_i a_j)^m / m!, at most
# x^K / K! with x = |a_i a_j| <= A^2 (since a_i^2/2 + a_j^2/2 >= |a_i a_j| and the tail is at most
# x^K e^x / K!). Every feature is at most 1 in size and sum_m phi_m(a)^2 = 1, so the rank-K product has no
# cancellation; each feature is rounded to about eps times its exponent's size, m log m (docs/flow.md).
# The Laplacian L s = p o (alpha (p) o s - alpha (p o s)) then costs
# O(n K) per node instead of O(n^2) exponentials.

TAYLOR_SHARE = 4  # the features serve when 4 K <= n: four (n, K) contractions against the dense (n, n) kernel
TAYLOR_MAX = 256  # the largest order tried (beyond it the node's range is too wide for one centre)


def taylor_order(x_bound: float, eps: float) -> int | None:
    """The smallest K with x^K / K! <= eps (x = ``x_bound`` >= 0: the bound on A^2 over the nodes), or
    ``None`` when more than :data:`TAYLOR_MAX` terms would be needed."""
    if not (x_bound >= 0 and math.isfinite(x_bound)):
        return None
    log_x = math.log(x_bound) if x_bound > 0 else -math.inf
    for k in range(1, TAYLOR_MAX + 1):
        if k * log_x - math.lgamma(k + 1) <= math.log(eps):
            return k
    return None


def feature_range(xs, act) -> float:
    """An upper bound on max_i g_i - min_i g_i, g = h(w^T x0) (Cor. 2), over every unit w (d,) and every
    support set x0 (n, d) in ``xs``: the range of h on [-X, X], X = max ||x0_i|| (times 1 + 1e-6),
    from h on a grid of 8193 points plus its largest step between neighbours (h continuous). Computed in
    float64 whatever the x64 mode, so that K, and every run's numbers, do not depend on it."""
    import jax  # noqa: PLC0415 -- the numpy half of this module needs no JAX

    big = max(float(np.sqrt(np.max(np.sum(np.asarray(x, np.float64) ** 2, axis=1)))) for x in xs)
    z = np.linspace(-1.0, 1.0, 8193) * big * (1.0 + 1e-6)
    with jax.enable_x64(True):
        hz = np.asarray(act.h(z), np.float64)
    step = np.max(np.abs(np.diff(hz))) if hz.size > 1 else 0.0
    return float(np.max(hz) - np.min(hz) + step)


def bounded(pw, xs, act):
    """``pw`` with its ``feature_range`` set from the support sets ``xs`` and the activation (Gaussian
    alpha; uniform alpha is returned as it is): the dynamics then use the features where they pay."""
    if pw.kind != "gaussian":
        return pw
    return dataclasses.replace(pw, feature_range=feature_range(xs, act))


def taylor_laplacian_rows(g, s, p, tau: float, order: int):
    """(L_alpha(w_k) s_k)_k with the Gaussian alpha (Lemma 1, Cor. 2) of the node outputs g (k, n) applied
    through its first ``order`` centred features: s (k, n), p (n,); O(k n order) time and memory.

    The features are held order-first, (order, k, n), so every contraction is a sum over the last axis,
    and built in one broadcast, phi_m(a) = sign(a)^m exp(m log|a| - a^2/2 - log(m!)/2): the recurrence
    phi_m = phi_{m-1} a / sqrt(m) rounds less (m eps against eps m log m) but compiles 4x slower (29
    chained products per call site) and runs slower as a cumulative product; in float32 the field is within
    5e-6 of the float64 dense one (tests/one_layer/test_gaussian_kernel.py)."""
    import jax.numpy as jnp  # noqa: PLC0415 -- the numpy half of this module needs no JAX

    c = 0.5 * (jnp.max(g, axis=1, keepdims=True) + jnp.min(g, axis=1, keepdims=True))
    a = (g - c) * (1.0 / math.sqrt(tau))
    m = np.arange(order)[:, None, None]
    half_log_fact = np.array([0.5 * math.lgamma(k + 1) for k in range(order)])[:, None, None]
    log_a = jnp.log(jnp.abs(a))
    magnitude = jnp.exp(jnp.where(m > 0, m * log_a, 0.0) - 0.5 * a * a - half_log_fact.astype(g.dtype))
    phi = jnp.where((m % 2 == 1) & (a < 0), -magnitude, magnitude)  # (order, k, n)
    z1 = jnp.sum(phi * p, axis=2)  # sum_j p_j phi_m(a_j), (order, k)
    zs = jnp.sum(phi * (p * s), axis=2)
    return p * (jnp.sum(phi * z1[..., None], axis=0) * s - jnp.sum(phi * zs[..., None], axis=0))
