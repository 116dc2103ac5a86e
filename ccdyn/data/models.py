"""Generative data models (Sec. 3.1, App. B.1, App. E.1) as :class:`~ccdyn.data.Dataset` values.

- :func:`latent_categorical` (Eq. 8): x = u_y with y categorical.
- :func:`latent_summation` (Eq. 9): x = U y with independent standardized Bernoulli y_m; the
  population is enumerated exactly (2^M support points) for M <= 16 and sampled beyond.
- :func:`near_orthogonal_basis`: unit-norm U with ||U^T U - I||_2 = eps exactly (Fig. 1, Thm. 3).
- :func:`zero_mean_basis`: the same, inside the zero-mean signals (patterns with no constant part).
- :func:`circle`: points on the unit circle (Fig. 8; the paper's nine angles by default).
- :func:`gaussian_mixture`: samples of an isotropic Gaussian mixture (a continuous model).
- :func:`gaussian_noise_views`: attaches additive-noise augmented views to any dataset.
- :func:`rotation_views`, :func:`shift_views`: group augmentations x = R(t) x0 (App. B.5, Eq. 106):
  rotations of 2-D data and cyclic shifts of a d-dimensional signal.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.data.dataset import Dataset, make_dataset

__all__ = [
    "PAPER_ANGLES", "MAX_EXACT_M", "near_orthogonal_basis", "zero_mean_basis", "latent_categorical",
    "latent_summation", "circle", "gaussian_mixture", "gaussian_noise_views", "rotation_matrices",
    "rotation_views", "shift_amounts", "shift_views",
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
    q, _ = np.linalg.qr(np.asarray(jax.random.normal(kq, (d, m), jnp.float32), np.float64))
    if eps == 0.0 or m == 1:
        return q
    s = np.asarray(jax.random.normal(ks, (m, m), jnp.float32), np.float64)
    s = s + s.T
    np.fill_diagonal(s, 0.0)
    s *= eps / np.linalg.norm(s, 2)
    evals, evecs = np.linalg.eigh(np.eye(m) + s)
    return q @ (evecs * np.sqrt(evals)) @ evecs.T


def zero_mean_basis(key, d: int, m: int, eps: float = 0.0) -> np.ndarray:
    """:func:`near_orthogonal_basis` inside the zero-mean subspace {x : sum_i x_i = 0} of R^d.

    Columns are unit-norm, sum to zero and satisfy ||U^T U - I||_2 = eps. Used as 1-D signal patterns
    for the cyclic-shift augmentation (App. B.5): the constant signal is the one direction every shift
    fixes, and removing it keeps the shift-invariant optimum w = 1/sqrt(d) out of the way.

    Args:
      key: PRNG key.
      d, m: signal length and number of patterns, 1 <= m <= d - 1.
      eps: spectral distance from orthonormality, in [0, 1).
    """
    d = _positive_int("d", d, 2)
    m = _positive_int("m", m, 1, d - 1)
    q, _ = np.linalg.qr(np.eye(d) - 1.0 / d)  # columns 0..d-2 span the zero-mean signals
    return q[:, : d - 1] @ near_orthogonal_basis(key, d - 1, m, eps)


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
        signs = np.asarray(jax.random.uniform(key, (n_samples, m), jnp.float32)) < qv
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
    comp = np.asarray(jax.random.choice(kc, c, (n_samples,), p=jnp.asarray(w, jnp.float32)))
    noise = np.asarray(jax.random.normal(kn, (n_samples, means.shape[1]), jnp.float32), np.float64)
    return make_dataset(means[comp] + std * noise, None, patterns=means)


def gaussian_noise_views(ds: Dataset, key, n_views: int, std: float) -> Dataset:
    """The same population with ``n_views`` equally likely views x0 + std * N(0, I) per point."""
    n_views = _positive_int("n_views", n_views, 1)
    if not (std >= 0 and math.isfinite(std)):
        raise ValueError(f"std={std} must be a finite number >= 0")
    x = np.asarray(ds.x, np.float64)
    noise = np.asarray(jax.random.normal(key, (x.shape[0], n_views, x.shape[1]), jnp.float32), np.float64)
    return make_dataset(x, ds.p, x[:, None, :] + std * noise, None, ds.patterns, dtype=ds.x.dtype)


def _group_views(ds: Dataset, transforms: np.ndarray) -> Dataset:
    """Applies each of the G matrices ``transforms`` (G, d, d) to every view of every point (x0 itself
    when ``ds`` has no views), each with probability 1/G: (n, V, d) views become (n, V G, d)."""
    xv, pv = (np.asarray(a, np.float64) for a in ds.views())
    n, v, d = xv.shape
    x_aug = np.einsum("gde,nve->nvgd", transforms, xv).reshape(n, v * transforms.shape[0], d)
    p_aug = np.repeat(pv / transforms.shape[0], transforms.shape[0], axis=1)
    return make_dataset(np.asarray(ds.x, np.float64), ds.p, x_aug, p_aug, ds.patterns, dtype=ds.x.dtype)


def rotation_matrices(max_angle: float, n_views: int) -> np.ndarray:
    """R(t_k) (n_views, 2, 2) at the midpoints t_k of a uniform grid of n_views cells over
    [-max_angle pi, max_angle pi]: the midpoint rule for t ~ Uniform (Eq. 106).

    With max_angle = 1 the angles are spaced 2 pi / n_views around the whole circle, so the set
    {R(t_k)} is a coset of the cyclic group C_{n_views} and the augmented energy is exactly invariant
    under w -> R(2 pi / n_views) w (Eq. 107-108 for a discrete group); as n_views grows it tends to
    the rotation group SO(2), under which E is constant on the circle.
    """
    if not (0.0 < max_angle <= 1.0):
        raise ValueError(f"max_angle={max_angle} must lie in (0, 1] (half-range of the rotation angle in "
                         "units of pi)")
    n_views = _positive_int("n_views", n_views, 1)
    t = max_angle * np.pi * ((2.0 * np.arange(n_views) + 1.0) / n_views - 1.0)
    c, s = np.cos(t), np.sin(t)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


def rotation_views(ds: Dataset, max_angle: float, n_views: int) -> Dataset:
    """App. B.5 (Eq. 106): views x = R(t) x0 of 2-D data, t ~ Uniform[-max_angle pi, max_angle pi],
    represented exactly by the n_views equally likely quadrature angles of :func:`rotation_matrices`.

    Args:
      ds: a 2-D dataset; if it already has views, each of them is rotated (the views compose).
      max_angle: half-range of t in units of pi, in (0, 1]; 1 is the whole circle (C_{n_views}).
      n_views: number of quadrature angles, >= 1.
    """
    if ds.dim != 2:
        raise ValueError(f"rotation views need 2-D data (the data dimension d must be 2), got d={ds.dim}")
    return _group_views(ds, rotation_matrices(max_angle, n_views))


def shift_amounts(d: int, max_shift: int) -> np.ndarray:
    """The distinct cyclic shifts s mod d for s in {-max_shift, ..., max_shift}, sorted; of two shifts
    equal mod d the one of smaller magnitude (then the negative one) represents them.

    When 2 max_shift + 1 >= d these are all d shifts, each once: the cyclic group Z_d.
    """
    d = _positive_int("d", d)
    max_shift = _positive_int("max_shift", max_shift, 1)
    reps: dict[int, int] = {}
    for s in sorted(range(-max_shift, max_shift + 1), key=lambda s: (abs(s), s)):
        reps.setdefault(s % d, s)
    return np.asarray(sorted(reps.values()), np.int64)


def shift_views(ds: Dataset, max_shift: int) -> Dataset:
    """App. B.5 with a discrete group: views x = S^s x0, the cyclic shift (np.roll) of a d-dimensional
    signal by s, for every distinct s in {-max_shift, ..., max_shift} (mod d), equally likely.

    With 2 max_shift + 1 >= d the views are the whole orbit of x0 under Z_d, so the view-averaged
    output b(w|x0) (Eq. 105) and the energy satisfy E_alpha(S w) = E_alpha(w) (Eq. 107-108): the
    optima come in orbits of equal energy. A smaller max_shift is not a group and gives no invariance.

    Args:
      ds: dataset of signals (n, d); existing views are shifted too (the views compose).
      max_shift: largest shift magnitude, an integer >= 1.
    """
    d = ds.dim
    shifts = shift_amounts(d, max_shift)
    mats = np.stack([np.roll(np.eye(d), s, axis=0) for s in shifts])  # (S^s x)[i] = x[i - s]
    return _group_views(ds, mats)
