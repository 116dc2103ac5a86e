"""Contrastive covariance C_alpha and energy E_alpha (Eq. 3 and Sec. 2).

Batch form (Eq. 3, diagonal excluded as in the proof of Lemma 2), for view-1 features a[i], b[i] and
view-2 features a[i'], b[i'] of N samples:

    C_alpha[a, b] = 1/(2N^2) sum_{i != j} alpha_ij [ (a[i]-a[j])(b[i]-b[j])^T
                                                   - (a[i]-a[i'])(b[i]-b[i'])^T ].

With r_i = sum_{j != i} alpha_ij and c_j = sum_{i != j} alpha_ij it expands to GEMMs only:

    2N^2 C = a^T diag(r + c) b - a^T alpha b - a^T alpha^T b - (a - a')^T diag(r) (b - b'),

so no N x N x dim x dim tensor is ever formed.

Exact-population form for a discrete distribution with support x_i and probabilities p_i and a
symmetric kernel alpha (Def. 1):

    C_alpha[a, b] = 1/2 sum_{i,j} p_i p_j alpha_ij (a_i - a_j)(b_i - b_j)^T
                  = a^T diag(K 1) b - a^T K b,      K = diag(p) alpha diag(p),

which for uniform alpha is the p-weighted covariance. With augmentation, a_i and b_i are the
feature means over the views of support point i (Lemma 2, Cor. 1): the within-sample term then
cancels exactly (see :func:`ccdyn.one_layer`).

The energy is E_alpha = 1/2 tr C_alpha[f, f].
"""

from __future__ import annotations

import jax.numpy as jnp

__all__ = ["batch_cov", "batch_energy", "population_cov", "laplacian_apply"]


def _as_matrix(a):
    return a[:, None] if a.ndim == 1 else a


def _check_alpha(alpha, n: int) -> None:
    if alpha.shape != (n, n):
        raise ValueError(f"alpha has shape {alpha.shape}; expected ({n}, {n}) for {n} samples")


def batch_cov(a, b, alpha, a2=None, b2=None):
    """C_alpha[a, b] of a batch (Eq. 3).

    Args:
      a, b: view-1 features, shapes (N,) or (N, k) and (N,) or (N, l).
      alpha: pairwise importance (N, N); its diagonal is ignored.
      a2, b2: view-2 features with the shapes of a, b; ``None`` means no augmentation
        (x[i'] = x[i]) and drops the second term.

    Returns:
      (k, l) matrix.
    """
    a, b = _as_matrix(a), _as_matrix(b)
    n = a.shape[0]
    if b.shape[0] != n:
        raise ValueError(f"a and b must have the same number of samples, got {n} and {b.shape[0]}")
    _check_alpha(alpha, n)
    alpha = alpha * (1.0 - jnp.eye(n, dtype=alpha.dtype))
    r = jnp.sum(alpha, axis=1)
    c = jnp.sum(alpha, axis=0)
    inter = (a * (r + c)[:, None]).T @ b - a.T @ (alpha @ b) - a.T @ (alpha.T @ b)
    if (a2 is None) != (b2 is None):
        raise ValueError("give both view-2 features a2 and b2, or neither")
    if a2 is not None:
        da = a - _as_matrix(a2)
        db = b - _as_matrix(b2)
        inter = inter - (da * r[:, None]).T @ db
    return inter / (2.0 * n * n)


def batch_energy(f, alpha, f2=None):
    """E_alpha = 1/2 tr C_alpha[f] of a batch of features f (N, k) (Sec. 2)."""
    return 0.5 * jnp.trace(batch_cov(f, f, alpha, f2, f2))


def laplacian_apply(b, p, alpha=None):
    """L b with L = diag(K 1) - K, K = diag(p) alpha diag(p); ``alpha=None`` means uniform.

    L is the weighted graph Laplacian of the population: C_alpha[a, b] = a^T L b. For a symmetric
    non-negative alpha it is PSD, so every population C_alpha[g, g] is PSD (Lemma 2). For uniform
    alpha, L b = p * (b - p^T b) and no (n, n) matrix is formed.
    """
    if alpha is None:
        mean = p @ b
        return p.reshape(p.shape + (1,) * (b.ndim - 1)) * (b - mean)
    _check_alpha(alpha, p.shape[0])
    k = p[:, None] * alpha * p[None, :]
    r = jnp.sum(k, axis=1)
    return r.reshape(r.shape + (1,) * (b.ndim - 1)) * b - k @ b


def population_cov(a, b, p, alpha=None):
    """Exact-population C_alpha[a, b] = 1/2 sum_ij p_i p_j alpha_ij (a_i-a_j)(b_i-b_j)^T.

    Args:
      a, b: features of the support points, (n,) or (n, k) and (n,) or (n, l).
      p: probabilities (n,).
      alpha: symmetric kernel (n, n) or ``None`` for uniform (then the weighted covariance).
    """
    a, b = _as_matrix(a), _as_matrix(b)
    return a.T @ laplacian_apply(b, p, alpha)
