"""Core Lemma 5 (App. C.2, Eq. 120-133) beyond C = 2, M = 1: the closed form of V[x~] against exact enumeration.

Assumption 2 with a categorical z in {0, .., C-1} (P[z = c] = p_c) and K receptive fields whose inputs are
independent given z; RF k's input given z = c is a discrete distribution on n points. Each RF has M filters
w_km and the gated input x~_km = x_k relu'(w_km^T x_k) (Eq. 122); x~ stacks all (k, m), length K M d.

- :func:`closed_form`: Eq. 120, V[x~] = diag_k[L_k] + sum_c p_c (1 - p_c)^2 Delta(c) Delta(c)^T, from the
  per-RF conditional moments only (L_k = E_z V[x~_k | z], Delta(c) = E[x~ | z = c] - E[x~ | z != c]).
- :func:`enumerated`: the covariance of x~ over the C n^K points of the joint population with their
  probabilities p_c prod_k P[x_k | z = c] (no use of the decomposition).

Pure numpy, float64.
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["population", "gated", "closed_form", "enumerated"]


def population(rng, C: int, K: int, d: int, n: int):
    """(p (C,), X (C, K, n, d), P (C, K, n)): class probabilities, conditional supports and their weights."""
    p = rng.dirichlet(np.ones(C))
    X = rng.normal(size=(C, K, n, d)) + rng.normal(size=(C, K, 1, d))  # class-dependent means
    P = rng.dirichlet(np.ones(n), size=(C, K))
    return p, X, P


def gated(x, W):
    """x~_k for inputs x (..., d) and the RF's filters W (M, d): (..., M d), x relu'(w_m^T x) per m."""
    g = (np.einsum("...d,md->...m", x, W) > 0).astype(x.dtype)
    return (g[..., :, None] * x[..., None, :]).reshape(*x.shape[:-1], -1)


def closed_form(p, X, P, W):
    """Eq. 120 from the per-RF conditional moments. W: (K, M, d). Returns (V (KMd, KMd), between (KMd, KMd))."""
    C, K = P.shape[:2]
    G = np.stack([np.stack([gated(X[c, k], W[k]) for k in range(K)]) for c in range(C)])  # (C, K, n, Md)
    mean = np.einsum("ckn,cknj->ckj", P, G)  # E[x~_k | z = c]
    second = np.einsum("ckn,ckni,cknj->ckij", P, G, G)
    cond_var = second - np.einsum("cki,ckj->ckij", mean, mean)
    L = np.einsum("c,ckij->kij", p, cond_var)
    q = mean.reshape(C, -1)  # E[x~ | z = c], stacked over k
    between = np.zeros((q.shape[1], q.shape[1]))
    for c in range(C):
        others = np.delete(np.arange(C), c)
        q_not = p[others] @ q[others] / (1.0 - p[c])
        delta = q[c] - q_not
        between += p[c] * (1.0 - p[c]) ** 2 * np.outer(delta, delta)
    Md = L.shape[1]
    V = between.copy()
    for k in range(K):
        V[k * Md:(k + 1) * Md, k * Md:(k + 1) * Md] += L[k]
    return V, between


def enumerated(p, X, P, W):
    """The covariance of x~ over the whole joint population (C n^K points), by enumeration."""
    C, K, n = P.shape
    feats, probs = [], []
    for c in range(C):
        for idx in itertools.product(range(n), repeat=K):
            feats.append(np.concatenate([gated(X[c, k, i], W[k]) for k, i in enumerate(idx)]))
            probs.append(p[c] * np.prod([P[c, k, i] for k, i in enumerate(idx)]))
    F, w = np.array(feats), np.array(probs)
    mu = w @ F
    return (F - mu).T @ ((F - mu) * w[:, None])
