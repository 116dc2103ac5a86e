"""Generative data models (Sec. 3.1, App. B.1, App. E.1) as :class:`~ccdyn.data.Dataset` values.

- :func:`latent_categorical` (Eq. 8): x = u_y with y categorical.
- :func:`latent_summation` (Eq. 9): x = U y with independent standardized Bernoulli y_m; the
  population is enumerated exactly (2^M support points) for M <= 16 and sampled beyond.
- :func:`near_orthogonal_basis`: unit-norm U with ||U^T U - I||_2 = eps exactly (Fig. 1, Thm. 3).
- :func:`circle`: points on the unit circle (Fig. 8; the paper's nine angles by default).
- :func:`gaussian_mixture`: samples of an isotropic Gaussian mixture (a continuous model).
- :func:`gaussian_noise_views`: attaches additive-noise augmented views to any dataset.
"""

from __future__ import annotations

import itertools
import math

import jax
import numpy as np

from ccdyn.data.dataset import Dataset, make_dataset

__all__ = [
    "PAPER_ANGLES", "MAX_EXACT_M", "near_orthogonal_basis", "latent_categorical",
    "latent_summation", "circle", "gaussian_mixture", "gaussian_noise_views",
]

# Fig. 8 / App. E.1: data angles in units of pi.
PAPER_ANGLES = (-4 / 5, -1 / 2, -2 / 5, -1 / 6, 0.0, 1 / 5, 2 / 5, 3 / 5, 4 / 5)
MAX_EXACT_M = 16
Q_LME_THRESHOLD = (3.0 - math.sqrt(5.0)) / 2.0  # Eq. 9: u_m is an LME iff q_m below this.


def _positive_int(name: str, value, lo: int = 1, hi: int | None = None) -> int:
    if int(value) != value or value < lo or (hi is not None and value > hi):
        rng = f"[{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise ValueError(f"{name}={value} must be an integer {rng}")
    return int(value)


def near_orthogonal_basis(key, d: int, m: int, eps: float = 0.0) -> np.ndarray:
    """Unit-norm columns u_1..u_m in R^d with ||U^T U - I||_2 = eps (exactly, up to rounding).

    U = Q G^{1/2} with Q a random d x m orthonormal matrix and G = I + S, S a random symmetric
    zero-diagonal matrix scaled to spectral norm eps, so U^T U = G has unit diagonal.

    Args:
      key: PRNG key.
      d, m: dimension and number of patterns, 1 <= m <= d.
      eps: spectral distance from orthonormality, in [0, 1).
    """
    d = _positive_int("d", d)
    m = _positive_int("m", m, 1, d)
    if not (0.0 <= eps < 1.0):
        raise ValueError(f"ortho_eps={eps} must lie in [0, 1)")
    kq, ks = jax.random.split(key)
    q, _ = np.linalg.qr(np.asarray(jax.random.normal(kq, (d, m)), np.float64))
    if eps == 0.0 or m == 1:
        return q
    s = np.asarray(jax.random.normal(ks, (m, m)), np.float64)
    s = s + s.T
    np.fill_diagonal(s, 0.0)
    s *= eps / np.linalg.norm(s, 2)
    evals, evecs = np.linalg.eigh(np.eye(m) + s)
    return q @ (evecs * np.sqrt(evals)) @ evecs.T


def _basis(basis) -> np.ndarray:
    u = np.asarray(basis, np.float64)
    if u.ndim != 2 or u.shape[1] > u.shape[0] or not np.all(np.isfinite(u)):
        raise ValueError(f"basis must be a finite (d, M) matrix with M <= d, got shape {u.shape}")
    return u


def latent_categorical(basis, probs=None) -> Dataset:
    """Eq. 8: x = u_y with P[y = m] = probs[m]; the patterns are the columns u_m of ``basis``."""
    u = _basis(basis)
    return make_dataset(u.T, probs, patterns=u.T)


def _q_vector(q, m: int) -> np.ndarray:
    qv = np.broadcast_to(np.asarray(q, np.float64), (m,)).copy() if np.ndim(q) == 0 else np.asarray(q, np.float64)
    if qv.shape != (m,):
        raise ValueError(f"q must be a scalar or have one entry per pattern ({m}), got shape {qv.shape}")
    if not np.all((qv > 0) & (qv < 1)):
        raise ValueError(f"q={qv.tolist()} must lie in (0, 1)")
    return qv


def latent_summation(basis, q, *, key=None, n_samples: int | None = None) -> Dataset:
    """Eq. 9: x = U y, y_m = sqrt((1-q_m)/q_m) w.p. q_m else -sqrt(q_m/(1-q_m)), independent.

    Args:
      basis: U (d, M), columns u_m (the planted patterns).
      q: scalar or (M,) probabilities of the positive value, each in (0, 1).
      key, n_samples: when given (required for M > 16), draw ``n_samples`` samples with p = 1/n
        instead of enumerating the 2^M support points exactly.
    """
    u = _basis(basis)
    m = u.shape[1]
    qv = _q_vector(q, m)
    y_plus, y_minus = np.sqrt((1 - qv) / qv), -np.sqrt(qv / (1 - qv))
    if n_samples is None:
        if m > MAX_EXACT_M:
            raise ValueError(
                f"latent summation with M={m} > {MAX_EXACT_M} cannot be enumerated exactly; "
                "pass key and n_samples to sample it"
            )
        signs = np.array(list(itertools.product((1, 0), repeat=m)), dtype=bool)  # (2^M, M)
        y = np.where(signs, y_plus, y_minus)
        p = np.prod(np.where(signs, qv, 1 - qv), axis=1)
        p = p / p.sum()
    else:
        if key is None:
            raise ValueError("sampling the latent summation model needs a PRNG key")
        n_samples = _positive_int("n_samples", n_samples, 2)
        signs = np.asarray(jax.random.uniform(key, (n_samples, m))) < qv
        y = np.where(signs, y_plus, y_minus)
        p = None
    return make_dataset(y @ u.T, p, patterns=u.T)


def circle(angles=PAPER_ANGLES, probs=None) -> Dataset:
    """Points (cos pi a, sin pi a) on the unit circle for angles a in units of pi (Fig. 8)."""
    a = np.asarray(angles, np.float64) * np.pi
    if a.ndim != 1 or a.size < 2 or not np.all(np.isfinite(a)):
        raise ValueError(f"angles must be a list of at least 2 finite numbers, got {angles!r}")
    x = np.stack([np.cos(a), np.sin(a)], axis=1)
    return make_dataset(x, probs, patterns=x)


def gaussian_mixture(key, means, std: float, n_samples: int, weights=None) -> Dataset:
    """n_samples draws of sum_c weights_c N(means_c, std^2 I) with p = 1/n; patterns = means."""
    means = np.asarray(means, np.float64)
    if means.ndim != 2 or not np.all(np.isfinite(means)):
        raise ValueError(f"means must be a finite (C, d) matrix, got shape {means.shape}")
    if not (std >= 0 and math.isfinite(std)):
        raise ValueError(f"std={std} must be a finite number >= 0")
    n_samples = _positive_int("n_samples", n_samples, 2)
    c = means.shape[0]
    w = np.full((c,), 1.0 / c) if weights is None else np.asarray(weights, np.float64)
    if w.shape != (c,) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
        raise ValueError(f"weights must be {c} non-negative numbers summing to 1, got {weights!r}")
    kc, kn = jax.random.split(key)
    comp = np.asarray(jax.random.choice(kc, c, (n_samples,), p=w))
    noise = np.asarray(jax.random.normal(kn, (n_samples, means.shape[1])), np.float64)
    return make_dataset(means[comp] + std * noise, None, patterns=means)


def gaussian_noise_views(ds: Dataset, key, n_views: int, std: float) -> Dataset:
    """The same population with ``n_views`` equally likely views x0 + std * N(0, I) per point."""
    n_views = _positive_int("n_views", n_views, 1)
    if not (std >= 0 and math.isfinite(std)):
        raise ValueError(f"std={std} must be a finite number >= 0")
    x = np.asarray(ds.x, np.float64)
    noise = np.asarray(jax.random.normal(key, (x.shape[0], n_views, x.shape[1])), np.float64)
    return make_dataset(x, ds.p, x[:, None, :] + std * noise, None, ds.patterns, dtype=ds.x.dtype)
