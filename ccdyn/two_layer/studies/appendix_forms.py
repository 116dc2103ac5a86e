"""The record behind ``results/theory/appendix_forms`` (``scripts/appendix_forms.py``, core part): printed
closed forms of the core paper's appendix that had no check, each against a route that does not use it.

- **Eq. 143** (Thm. 5's modulation coefficient delta_k) and the alternative printed after it,
  delta_k = 1 - p0 p1 b_k^2 / (lambda - d_k): both against delta_k read off the dynamics, w_k' =
  sum_k' s_k s_k' C[x~_k, x~_k'] w_k' with C the covariance of the *enumerated* joint population and s the
  top eigenvector of V[f_1] from ``numpy.linalg.eigh`` (no Bunch-Nielsen-Sorensen formula): the part of w_k'
  beyond s_k^2 V[x~_k] w_k is delta_k Delta_k Delta_k^T w_k.
- **Lemma 5, C = 2** (Eq. 120's second term is p0 p1 Delta Delta^T) and **Eq. 138** (V[f_1] = D + p0 p1 b b^T):
  against the enumerated covariance.
- **App. D, d_k^bn** = sigma_k^-2 d_k -> 1 / (1 + p0 p1 (w_k^T Delta_k / sqrt d_k)^2), sigma_k^2 = V[f_k] by
  enumeration; and "becomes more uniform": the spread of d_k^bn over RFs of very different input scales
  against that of d_k.
- **Eq. 155's "P[E_l] >= eps_l / 2" for eps_l > 0** and "P[E_l] <= (1/d)(1 + eps_l/2)^d" for eps_l < 0:
  P[E_l] by quadrature of Eq. 154 (the integral, not Eq. 155's closed form) and by Monte Carlo of
  Eq. 152's event with Y ~ U[-1, 1]^d.

The population: binary z (p0, p1), K receptive fields, x_k | z independent across k (Assumption 2), each
from n atoms in R^d with class-conditional probabilities; ReLU gating x~_k = x_k 1[w_k^T x_k > 0] at fixed
filters w_k; RF k's inputs scaled by ``scales[k]``. A frozen :class:`AppendixFormsConfig` in, a plain dict
out (no I/O).
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

__all__ = ["AppendixFormsConfig", "run", "population", "enumerate_joint", "delta_forms", "eq155_probability"]


@dataclasses.dataclass(frozen=True)
class AppendixFormsConfig:
    K: int = 3  # receptive fields
    d: int = 3  # input dimension per RF
    n: int = 4  # atoms per RF
    draws: int = 6  # random populations (and filters)
    scales: tuple = (1.0, 3.0, 10.0)  # input scale per RF (App. D: BN removes it)
    eps: tuple = (-0.8, -0.5, -0.2, 0.1, 0.3, 0.5, 0.8, 1.0, 1.2, 1.5, 2.0)  # Eq. 155 modulation factors
    dims: tuple = (2, 5, 20)  # Eq. 155 dimensions d
    n_mc: int = 200_000  # Monte Carlo draws per (eps, d)
    seed: int = 0


def population(rng, c: AppendixFormsConfig):
    """(p (2,), X (K, n, d) atoms, P (2, K, n) class-conditional atom probabilities, W (K, d) filters)."""
    p1 = rng.uniform(0.2, 0.8)
    X = rng.normal(size=(c.K, c.n, c.d)) * np.asarray(c.scales[:c.K])[:, None, None]
    P = rng.dirichlet(np.ones(c.n), size=(2, c.K))
    while True:  # every RF's filter passes at least two atoms (else f_k is constant and d_k = 0)
        W = rng.normal(size=(c.K, c.d))
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        if np.all((np.einsum("knd,kd->kn", X, W) > 0).sum(axis=1) >= 2):
            return np.array([1 - p1, p1]), X, P, W


def enumerate_joint(p, X, P, W):
    """Every joint atom (z, i_1..i_K): probabilities (N,), z (N,), gated inputs x~ (N, K, d)."""
    K, n, _ = X.shape
    probs, zs, xt = [], [], []
    gate = (np.einsum("knd,kd->kn", X, W) > 0)[..., None] * X  # x~_k for each atom of RF k
    for z in (0, 1):
        for idx in itertools.product(range(n), repeat=K):
            probs.append(p[z] * np.prod([P[z, k, i] for k, i in enumerate(idx)]))
            zs.append(z)
            xt.append(np.stack([gate[k, i] for k, i in enumerate(idx)]))
    return np.array(probs), np.array(zs), np.array(xt)


def _cov(prob, a, b):
    ma, mb = prob @ a, prob @ b
    return np.einsum("n,ni,nj->ij", prob, a - ma, b - mb)


def delta_forms(p, X, P, W) -> dict:
    """Eq. 143, its printed alternative and the corrected alternative against delta_k from the enumerated
    dynamics; Eq. 138 and Lemma 5 (C = 2) against the enumerated covariances; App. D's d_k^bn."""
    prob, z, xt = enumerate_joint(p, X, P, W)
    K, d = W.shape
    flat = xt.reshape(len(prob), K * d)
    V = _cov(prob, flat, flat)                                           # V[x~], enumerated
    f = np.einsum("nkd,kd->nk", xt, W)                                   # f_k = w_k^T x~_k (= ReLU(w_k^T x_k))
    Vf = _cov(prob, f, f)
    cond = [prob * (z == c) / prob[z == c].sum() for c in (0, 1)]
    delta = (cond[0] - cond[1]) @ flat                                   # Delta = E[x~|z=0] - E[x~|z=1]
    L = sum(p[c] * _cov(cond[c], flat, flat) for c in (0, 1))          # E_z V[x~ | z]
    blockdiag = np.zeros_like(L)
    for k in range(K):
        sk = slice(k * d, (k + 1) * d)
        blockdiag[sk, sk] = L[sk, sk]
    lemma5 = np.abs(V - blockdiag - p[0] * p[1] * np.outer(delta, delta)).max() / np.abs(V).max()
    dk = np.array([W[k] @ L[k * d:(k + 1) * d, k * d:(k + 1) * d] @ W[k] for k in range(K)])
    Dk = delta.reshape(K, d)
    b = np.einsum("kd,kd->k", W, Dk)
    eq138 = np.abs(Vf - np.diag(dk) - p[0] * p[1] * np.outer(b, b)).max() / np.abs(Vf).max()
    lam_all, vecs = np.linalg.eigh(Vf)
    lam, s = lam_all[-1], vecs[:, -1]
    # the dynamics: w_k' = sum_k' s_k s_k' C[x~_k, x~_k'] w_k' (uniform alpha: the covariance), minus s_k^2 V[x~_k] w_k
    coefs, parallel = [], []
    for k in range(K):
        sk = slice(k * d, (k + 1) * d)
        wdot = sum(s[k] * s[j] * V[sk, j * d:(j + 1) * d] @ W[j] for j in range(K))
        rest = wdot - s[k] ** 2 * V[sk, sk] @ W[k]
        coef = rest @ Dk[k] / (Dk[k] @ Dk[k])
        parallel.append(float(np.linalg.norm(rest - coef * Dk[k]) / max(np.linalg.norm(rest), 1e-300)))
        coefs.append(coef / b[k])                                       # rest = delta_k Delta_k (Delta_k^T w_k)
    true = np.array(coefs)
    Z2 = np.sum((b / (dk - lam)) ** 2)
    eq143 = np.array([p[0] * p[1] / (Z2 * (lam - dk[k])) * sum(b[j] ** 2 / (lam - dk[j]) for j in range(K) if j != k)
                      for k in range(K)])
    printed = 1 - p[0] * p[1] * b ** 2 / (lam - dk)
    corrected = printed / (Z2 * (lam - dk))
    sigma2 = np.diag(Vf)
    dbn = dk / sigma2
    closed_bn = 1 / (1 + p[0] * p[1] * (b / np.sqrt(dk)) ** 2)
    return {"lemma5_c2_rel_diff": float(lemma5), "eq138_rel_diff": float(eq138), "lambda": float(lam),
            "max_d": float(dk.max()), "delta_true": true.tolist(), "delta_eq143": eq143.tolist(),
            "delta_printed_alternative": printed.tolist(), "delta_corrected_alternative": corrected.tolist(),
            "rest_off_delta_direction": max(parallel), "d": dk.tolist(), "d_bn_enumerated": dbn.tolist(),
            "d_bn_closed_form": closed_bn.tolist()}


def eq155_probability(eps: float, d: int, n_mc: int, rng) -> dict:
    """P[E_l] = P[Y_l > 0, Y_l + eps >= max_{l' != l} Y_l'] for Y ~ U[-1, 1]^d: Eq. 154's integral
    int_0^1 F^{d-1}(y + eps) dF(y) by Gauss-Legendre quadrature (F the U[-1, 1] CDF, clipped), Monte Carlo
    of the event, and Eq. 155 as printed."""
    nodes, weights = np.polynomial.legendre.leggauss(100)
    quad = 0.0
    kink = min(max(1.0 - eps, 0.0), 1.0)                                # F(y + eps) reaches 1 at y = 1 - eps
    for lo, hi in ((0.0, kink), (kink, 1.0)):                           # dF = dy / 2 on [0, 1]; smooth pieces
        if hi > lo:
            y = lo + (hi - lo) * 0.5 * (nodes + 1.0)
            F = np.clip((y + eps + 1.0) / 2.0, 0.0, 1.0)
            quad += float(0.5 * (hi - lo) * 0.5 * np.sum(weights * F ** (d - 1)))
    Y = rng.uniform(-1.0, 1.0, size=(n_mc, d))
    hit = (Y[:, 0] > 0) & (Y[:, 0] + eps >= Y[:, 1:].max(axis=1))
    mc = float(hit.mean())
    if eps > 1:
        printed = 0.5
    elif eps >= 0:
        printed = (1 - ((1 + eps) / 2) ** d) / d + eps / 2
    else:
        printed = ((1 + eps / 2) ** d - ((1 + eps) / 2) ** d) / d
    return {"eps": eps, "d": d, "quadrature": quad, "monte_carlo": mc, "mc_se": float(np.sqrt(mc * (1 - mc) / n_mc)),
            "eq155": printed}


def run(c: AppendixFormsConfig = AppendixFormsConfig()) -> dict:
    rng = np.random.default_rng(c.seed)
    pops = [delta_forms(*population(rng, c)) for _ in range(c.draws)]
    eq155 = [eq155_probability(e, d, c.n_mc, rng) for e in c.eps for d in c.dims]
    return {"config": dataclasses.asdict(c), "populations": pops, "eq155": eq155}
