"""The single linear neuron of *Understanding Self-supervised Learning with Dual Deep Networks*, Sec. 5.1
("a single linear neuron performs dimensionality reduction in a subspace preserved by data
augmentation"): with K_1(x) = x and an augmentation that multiplies x by a random Gaussian matrix acting
only in the nuisance subspace, K̄_1(x) = Q^s x and OP = V_x[K̄_1(x)] = Q^s V_x[x] Q^s (Thm. 3).

Reading (the text copy drops the matrix's formula): x'' = A x with A = Q^s + Q^n G Q^n, G with i.i.d.
N(0, 1) entries, Q^s the orthogonal projection on the semantic subspace and Q^n = I - Q^s; so E[A] = Q^s
(docs/readings.md#ddn-sec-51-nuisance). :func:`population` builds an exact finite population whose views
use G and -G in pairs (both have the law of G, so each pair is an unbiased draw and the views' mean is
exactly Q^s x); :func:`mc_statistic` measures how i.i.d. draws approach it.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from ccdyn.deep.operator import Population

__all__ = ["semantic_projector", "population", "closed_form", "mc_statistic"]


def semantic_projector(rng, d: int, d_s: int):
    """Q^s: the orthogonal projection on a random d_s-dimensional subspace of R^d (``rng`` a numpy Generator)."""
    if not 0 < d_s < d:
        raise ValueError(f"need 0 < d_s < d, got d_s={d_s}, d={d}")
    u, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return u[:, :d_s] @ u[:, :d_s].T


def _points(rng, n: int, d: int):
    return rng.normal(size=(n, d)) @ rng.normal(size=(d, d)).T               # non-isotropic data


def _multipliers(rng, qs, shape):
    qn = np.eye(qs.shape[0]) - qs
    return qs + qn @ rng.normal(size=shape + qs.shape) @ qn


def population(seed: int, n: int, d: int, d_s: int, n_pairs: int):
    """(Population, Q^s) in float64: n points x0 (uniform p), each with 2 n_pairs equally likely views
    A x0, the multipliers Q^s + Q^n (+-G) Q^n for n_pairs Gaussian G per point."""
    rng = np.random.default_rng(seed)
    qs = semantic_projector(rng, d, d_s)
    x0 = _points(rng, n, d)
    a = _multipliers(rng, qs, (n, n_pairs))                                        # (n, pairs, d, d)
    a = np.concatenate([a, 2 * qs - a], axis=1)                                    # Q^s + Q^n (-G) Q^n
    views = np.einsum("nvij,nj->nvi", a, x0)
    m = 2 * n_pairs
    pop = Population(x0=jnp.asarray(x0), p=jnp.full((n,), 1.0 / n), views=jnp.asarray(views),
                     pv=jnp.full((n, m), 1.0 / m))
    return pop, jnp.asarray(qs)


def closed_form(pop: Population, qs):
    """Q^s V_x[x] Q^s, V_x the covariance of the population's points under p."""
    c = pop.x0 - pop.p @ pop.x0
    return qs @ (c.T * pop.p) @ c @ qs


def mc_statistic(seed: int, n: int, d: int, d_s: int, m: int):
    """(S, degrees of freedom) for m i.i.d. multipliers per point: S = sum_x m ||K̄_m(x) - Q^s x||^2 /
    ||Q^n x||^2, which is chi^2 with n (d - d_s) degrees of freedom when E[A] = Q^s (the view mean's error
    Q^n Ḡ Q^n x is Gaussian with covariance ||Q^n x||^2 Q^n / m)."""
    rng = np.random.default_rng(seed)
    qs = semantic_projector(rng, d, d_s)
    x0 = _points(rng, n, d)
    kbar = np.einsum("nvij,nj->ni", _multipliers(rng, qs, (n, m)), x0) / m
    qn_x = x0 - x0 @ qs
    s = np.sum(m * np.sum((kbar - x0 @ qs) ** 2, -1) / np.sum(qn_x ** 2, -1))
    return float(s), n * (d - d_s)
