"""Core Sec. 4 (after Lemma 4): the top layer's stationary points, S = V^T V rank 1 with s the maximal eigenvector.

Lemma 4 gives V' = V C with C = C_alpha[f_1] (Eq. 12). Without a norm constraint this flow has no stationary
point unless V C = 0, so ccdyn reads "stationary" on the Frobenius sphere ||V||_F = 1 (docs/independent_checks.md):

    V' = V C - tr(V C V^T) V,    exact solution V(t) = V0 e^{C t} / ||V0 e^{C t}||_F.

V is stationary iff V C = lambda V, i.e. every row of V lies in one eigenspace of C. With simple eigenvalues
that is V = v s_i^T for an eigenvector s_i, so S = s_i s_i^T is rank 1 at *every* stationary point; s_i is
the maximal eigenvector only at the stable one (a perturbation toward s_j grows at rate lambda_j - lambda_i).

Pure numpy, float64.
"""

from __future__ import annotations

import numpy as np

__all__ = ["velocity", "exact_flow", "rk4_flow", "stationary_residual", "unstable_rate"]


def velocity(V, C):
    """V C - tr(V C V^T) V: Lemma 4's V' projected onto the tangent space of ||V||_F = 1."""
    return V @ C - np.trace(V @ C @ V.T) * V


def exact_flow(V0, C, t):
    """The exact solution from V0 (||V0||_F = 1) at time t: V0 e^{C t} normalized (eigendecomposition of C)."""
    lam, Q = np.linalg.eigh(C)
    V = V0 @ Q @ np.diag(np.exp((lam - lam.max()) * t)) @ Q.T  # shifted: the normalization removes e^{lam_max t}
    return V / np.linalg.norm(V)


def rk4_flow(V0, C, t_end: float, n_steps: int):
    """Classical RK4 on :func:`velocity` (an independent route to :func:`exact_flow`)."""
    V, h = np.array(V0, float), t_end / n_steps
    for _ in range(n_steps):
        k1 = velocity(V, C)
        k2 = velocity(V + h / 2 * k1, C)
        k3 = velocity(V + h / 2 * k2, C)
        k4 = velocity(V + h * k3, C)
        V = V + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return V


def stationary_residual(V, C):
    """||velocity(V, C)||_F."""
    return float(np.linalg.norm(velocity(V, C)))


def unstable_rate(V, C, eps: float = 1e-7, t: float = 1.0):
    """Growth rate of a small perturbation of a stationary V toward the top eigenvector s_max, from the exact
    flow: log(|V(t) s_max| / |V(0) s_max|) / t (the linearization predicts lambda_max - lambda_i)."""
    top = np.linalg.eigh(C)[1][:, -1]
    row = int(np.argmax(np.linalg.norm(V, axis=1)))
    V1 = np.array(V, float)
    V1[row] += eps * top
    V1 /= np.linalg.norm(V1)
    return float(np.log(np.linalg.norm(exact_flow(V1, C, t) @ top) / np.linalg.norm(V1 @ top)) / t)
