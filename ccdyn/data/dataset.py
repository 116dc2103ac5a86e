"""The :class:`Dataset` pytree: a discrete population with optional augmented views.

A dataset is the support x_i (un-augmented samples x0, shape (n, d)) of a distribution with
probabilities p_i. A continuous model is represented by n samples with p_i = 1/n. Optionally each
support point carries V augmented views ``x_aug[i, v]`` with probabilities ``p_aug[i, v]`` (rows sum
to 1), and the dataset may carry planted patterns (rows, e.g. the u_m of Eq. 8-9) used to name the
optima that a run finds.

Build datasets with :func:`make_dataset`, which validates eagerly and raises ``ValueError`` naming
the argument at fault.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import pytree

__all__ = ["Dataset", "make_dataset", "sample_batch"]

PROB_ATOL = 1e-6


@pytree.dataclass(frozen=True)
class Dataset:
    """Population pytree (see module docstring). Construct with :func:`make_dataset`."""

    x: chex.Array  # (n, d) support points x0
    p: chex.Array  # (n,) probabilities
    x_aug: chex.Array | None = None  # (n, V, d) augmented views, or None
    p_aug: chex.Array | None = None  # (n, V) view probabilities, rows sum to 1
    patterns: chex.Array | None = None  # (m, d) planted patterns, or None

    @property
    def n(self) -> int:
        return self.x.shape[0]

    @property
    def dim(self) -> int:
        return self.x.shape[1]

    def astype(self, dtype) -> Dataset:
        """The same population with every array in ``dtype`` (e.g. a float32 run of a float64 dataset)."""
        return make_dataset(np.asarray(self.x), self.p, self.x_aug, self.p_aug, self.patterns, dtype=dtype)

    def views(self):
        """(x_views (n, V, d), p_views (n, V)); without augmentation V = 1 and x_views = x."""
        if self.x_aug is None:
            return self.x[:, None, :], jnp.ones((self.n, 1), self.x.dtype)
        return self.x_aug, self.p_aug


def _finite_array(name: str, value, ndim: int) -> np.ndarray:
    arr = np.asarray(value)
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{name} has {bad} non-finite entries (NaN or inf); all must be finite")
    return arr


def _probabilities(name: str, value, shape) -> np.ndarray:
    arr = _finite_array(name, value, len(shape))
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} has shape {arr.shape}; expected {tuple(shape)}")
    if np.any(arr < 0):
        raise ValueError(f"{name} has negative entries (min {arr.min():.3g}); must be >= 0")
    sums = arr.sum(axis=-1)
    if not np.allclose(sums, 1.0, atol=PROB_ATOL * max(1, arr.shape[-1]) ** 0.5, rtol=0):
        worst = float(np.max(np.abs(sums - 1.0)))
        raise ValueError(f"{name} must sum to 1 (along its last axis); off by up to {worst:.3g}")
    return arr


def make_dataset(x, p=None, x_aug=None, p_aug=None, patterns=None, dtype=None) -> Dataset:
    """Validates and builds a :class:`Dataset`.

    Args:
      x: support points / samples, (n, d), finite.
      p: probabilities (n,), >= 0, summing to 1; ``None`` means uniform 1/n.
      x_aug: optional augmented views (n, V, d), finite.
      p_aug: view probabilities (n, V), rows summing to 1; ``None`` with x_aug means uniform 1/V.
      patterns: optional planted patterns (m, d).
      dtype: float dtype of the arrays; default float64 when x64 is enabled, else float32.

    Raises:
      ValueError: naming the argument (x, p, x_aug, p_aug, patterns) and what is allowed.
    """
    if dtype is None:
        dtype = jnp.float64 if jax.config.read("jax_enable_x64") else jnp.float32
    x = _finite_array("x", x, 2)
    n, d = x.shape
    p = np.full((n,), 1.0 / n) if p is None else _probabilities("p", p, (n,))
    if x_aug is None and p_aug is not None:
        raise ValueError("p_aug was given without x_aug")
    if x_aug is not None:
        x_aug = _finite_array("x_aug", x_aug, 3)
        if x_aug.shape[0] != n or x_aug.shape[2] != d:
            raise ValueError(f"x_aug has shape {x_aug.shape}; expected ({n}, V, {d}) to match x")
        v = x_aug.shape[1]
        p_aug = np.full((n, v), 1.0 / v) if p_aug is None else _probabilities("p_aug", p_aug, (n, v))
        x_aug, p_aug = jnp.asarray(x_aug, dtype), jnp.asarray(p_aug, dtype)
    if patterns is not None:
        patterns = _finite_array("patterns", patterns, 2)
        if patterns.shape[1] != d:
            raise ValueError(f"patterns has shape {patterns.shape}; expected (m, {d}) to match x")
        patterns = jnp.asarray(patterns, dtype)
    return Dataset(
        x=jnp.asarray(x, dtype), p=jnp.asarray(p, dtype), x_aug=x_aug, p_aug=p_aug,
        patterns=patterns,
    )


def sample_batch(ds: Dataset, key, n: int):
    """Draws a batch of n samples x0 ~ p and two independent views of each (Sec. 2).

    Returns:
      (x0, x1, x2), each (n, d): the un-augmented samples and their two views. Without
      augmentation x1 = x2 = x0.
    """
    if int(n) < 2:
        raise ValueError(f"batch size n={n} must be >= 2")
    k_idx, k1, k2 = jax.random.split(key, 3)
    p = None if ds.p is None else jnp.asarray(ds.p, jnp.float32)  # float32: x64-independent
    idx = jax.random.choice(k_idx, ds.n, (n,), p=p)
    x0 = ds.x[idx]
    if ds.x_aug is None:
        return x0, x0, x0
    assert ds.p_aug is not None  # make_dataset gives views their probabilities
    logits = jnp.log(ds.p_aug[idx]).astype(jnp.float32)
    v1 = jax.random.categorical(k1, logits, axis=-1)
    v2 = jax.random.categorical(k2, logits, axis=-1)
    return x0, ds.x_aug[idx, v1], ds.x_aug[idx, v2]
