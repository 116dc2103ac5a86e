"""Pairwise importance alpha (Sec. 2), always under ``stop_gradient`` (Eq. 2).

- uniform: alpha_ij = 1, the quadratic CL loss.
- gaussian: alpha_ij = exp(-||g(x0[i]) - g(x0[j])||^2 / 2 tau) (Lemma 1), computed from the
  *un-augmented* samples x0; for one node g = h(w^T x0) (Cor. 2).
- infonce: alpha_ij = exp(-d_ij^2 / tau) / sum_{j' != i} exp(-d_ij'^2 / tau) with
  d_ij^2 = ||f[i] - f[j]||^2 / 2 (Eq. 1 with epsilon = 0); the diagonal is 0.

:class:`Pairwise` is the hashable choice of alpha that population-level code takes (uniform or
gaussian: both are symmetric kernels, Def. 1). InfoNCE is a batch quantity (it normalizes over the
batch) and is only offered as :func:`infonce` on a batch of features.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["Pairwise", "get_pairwise", "uniform", "gaussian", "infonce", "sq_dists", "degenerate_tau", "KINDS"]

KINDS = ("uniform", "gaussian")


def _check_tau(tau) -> None:
    if isinstance(tau, (int, float)) and not (math.isfinite(tau) and tau > 0):
        raise ValueError(f"temperature tau={tau} must be a finite number > 0")


def _as_matrix(g):
    return g[:, None] if g.ndim == 1 else g


def sq_dists(g):
    """||g_i - g_j||^2 for rows of g (n,) or (n, k), without an n x n x k intermediate."""
    g = _as_matrix(g)
    sq = jnp.sum(g * g, axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * g @ g.T
    return jnp.maximum(d2, 0.0)


def uniform(n: int, dtype=jnp.float32):
    """alpha_ij = 1 (quadratic loss), shape (n, n)."""
    return jnp.ones((n, n), dtype)


def gaussian(g, tau: float, stop_gradient: bool = True):
    """Gaussian alpha of Lemma 1 from features g (n,) or (n, k) of un-augmented samples; (n, n).

    ``stop_gradient=False`` is only for linearizing the *dynamics* around a fixed point (the flow
    feels alpha(w) change with w even though its update direction does not differentiate alpha).
    """
    _check_tau(tau)
    if g.ndim == 1:  # exact for 1-D features (Cor. 2): no cancellation in the difference.
        d2 = (g[:, None] - g[None, :]) ** 2
    else:
        d2 = sq_dists(g)
    alpha = jnp.exp(-d2 / (2.0 * tau))
    return jax.lax.stop_gradient(alpha) if stop_gradient else alpha


def infonce(f, tau: float):
    """InfoNCE alpha (Eq. 1, epsilon = 0) from view-1 features f (N, k); rows sum to 1, diagonal 0."""
    _check_tau(tau)
    n = f.shape[0]
    logits = -0.5 * sq_dists(f) / tau
    logits = jnp.where(jnp.eye(n, dtype=bool), -jnp.inf, logits)
    return jax.lax.stop_gradient(jax.nn.softmax(logits, axis=1))


def degenerate_tau(g, dtype) -> tuple:
    """(tau_min, delta): below ``tau_min`` the Gaussian alpha of Lemma 1 is 0 or 1 in ``dtype`` at most
    of the nodes whose 1-D features are the rows of ``g`` (k, n) (g = h(w^T x0) at k probe w, Cor. 2).

    At one node, a pair of distinct features contributes exp(-delta_ij^2 / 2 tau) delta_ij^2 to the
    energy; it underflows below ``dtype``'s smallest normal number (``tiny``) once delta_ij^2 / 2 tau >
    ln(1 / tiny) (708 in float64, 87 in float32). When that holds for the node's closest distinct pair
    (delta, the smallest non-zero |g_i - g_j| of the features rounded to ``dtype``) it holds for all:
    alpha is 1 on equal features and 0 elsewhere, the energy and A(w) w are 0 (or rounding noise) and
    every start looks stationary. Returns
    the median over the rows of delta^2 / (2 ln(1 / tiny)) and the median delta (rows with all features
    equal are left out; (0, 0) if all are)."""
    g = np.sort(np.asarray(g).astype(np.dtype(dtype)).astype(np.float64), axis=-1).reshape(-1, np.shape(g)[-1])
    gaps = np.diff(g, axis=1)
    gaps = np.where(gaps > 0, gaps, np.inf).min(axis=1)
    gaps = gaps[np.isfinite(gaps)]
    if gaps.size == 0:
        return 0.0, 0.0
    delta = float(np.median(gaps))
    return delta ** 2 / (2.0 * -np.log(np.finfo(np.dtype(dtype)).tiny)), delta


@dataclasses.dataclass(frozen=True)
class Pairwise:
    """Choice of a symmetric kernel alpha for population-level code (hashable, jit-static).

    Attributes:
      kind: ``uniform`` or ``gaussian``.
      tau: temperature of the Gaussian kernel (ignored for uniform).
      feature_range: ``None``, or an upper bound on max_i g_i - min_i g_i over every node the kernel will
        see (:func:`ccdyn.one_layer.gaussian_kernel.feature_range`); with it the one-layer dynamics apply
        the Gaussian kernel through Lemma 1's features, truncated below the dtype's unit roundoff, in
        O(n K) instead of O(n^2) (:func:`ccdyn.one_layer.dynamics.laplacian_rows`).
    """

    kind: str = "uniform"
    tau: float = 1.0
    feature_range: float | None = None

    def matrix(self, g, stop_gradient: bool = True):
        """alpha for one node from its un-augmented outputs g = h(w^T x0) (n,) (Cor. 2)."""
        if self.kind == "uniform":
            return uniform(g.shape[0], g.dtype)
        return gaussian(g, self.tau, stop_gradient)


def get_pairwise(kind: str = "uniform", tau: float = 1.0) -> Pairwise:
    """Validated :class:`Pairwise`; ``ValueError`` names ``kind`` or ``tau`` and the allowed range."""
    if isinstance(kind, Pairwise):
        return kind
    if kind not in KINDS:
        raise ValueError(
            f"pairwise alpha kind={kind!r} is unknown; allowed for populations: {', '.join(KINDS)}"
            " (infonce is a batch loss: use ccdyn.pairwise.infonce on a batch)"
        )
    tau = float(tau)
    _check_tau(tau)
    return Pairwise(kind, tau)
