"""Geometry of the unit sphere S^{d-1}, where the 1-layer weight lives (Sec. 3: ||w|| = 1).

One copy of each helper: the tangent projection P_w^perp of Eq. 7, an orthonormal tangent basis,
normalization back onto the sphere (the retraction of the Euler step and of power iteration, Eq. PI),
and points at a given angle from w along tangent directions (probes for certificates, roughness and
starts near a pattern). Functions act on the last axis and accept numpy or JAX arrays: a numpy input
gives a numpy output, so host-side float64 code stays on the host.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

__all__ = ["normalize", "tangent", "tangent_basis", "at_angle", "random_tangents"]


def _xp(a):
    return np if isinstance(a, np.ndarray) else jnp


def normalize(v, fallback=None):
    """v / ||v|| along the last axis. With ``fallback`` (same shape as v), rows of norm 0 return the
    fallback row instead of NaN (e.g. the previous iterate when A(w) w = 0)."""
    xp = _xp(v)
    norm = xp.linalg.norm(v, axis=-1, keepdims=True)
    if fallback is None:
        return v / norm
    return xp.where(norm > 0, v / xp.where(norm > 0, norm, 1), fallback)


def tangent(w, u):
    """P_w^perp u = u - (w^T u) w for unit w, along the last axis (the projection of Eq. 7)."""
    xp = _xp(w)
    return u - xp.sum(u * w, axis=-1, keepdims=True) * w


def tangent_basis(w):
    """Orthonormal basis Q (d, d-1) of the tangent space {v : v^T w = 0} of the sphere at unit w."""
    w = jnp.asarray(w)
    d = w.shape[0]
    _, vecs = jnp.linalg.eigh(jnp.eye(d, dtype=w.dtype) - jnp.outer(w, w))
    return vecs[:, 1:]  # eigenvalue 0 (direction w) comes first


def at_angle(w, dirs, radius):
    """Points cos(r) w + sin(r) u on the sphere at angle r (radians, scalar or per row) from unit w
    (d,) along unit tangent directions u, the rows of ``dirs`` (k, d)."""
    xp = _xp(dirs)
    r = xp.asarray(radius)
    r = r[:, None] if r.ndim == 1 else r
    return xp.cos(r) * w[None] + xp.sin(r) * dirs


def random_tangents(w, n: int, rng) -> np.ndarray:
    """n uniformly random unit tangent directions at unit w (d,), drawn with a numpy Generator."""
    w = np.asarray(w, np.float64)
    dirs = rng.standard_normal((n, w.shape[0]))
    dirs -= np.outer(dirs @ w, w)
    return dirs / np.linalg.norm(dirs, axis=1, keepdims=True)
