"""Certificates for candidate fixed points w* of the 1-layer flow (Sec. 3.2, Def. 3, Thm. 1).

A :class:`Certificate` states, for a unit vector w*:

- ``residual`` = ||P_w^perp A(w*) w*|| (zero at a critical point of Eq. 7);
- ``lam1``, ``lam2``, ``gap`` = lambda_1 - lambda_2 of A(w*) and ``rayleigh`` = w*^T A(w*) w*;
- ``alignment`` = |w*^T phi_1(w*)|;
- ``is_lme`` (Def. 3): w* is an eigenvector (small residual) whose eigenvalue is the distinct
  largest one (alignment ~ 1 and gap > 0);
- ``hessian_max``: the largest eigenvalue of the Riemannian Hessian of E_alpha on the unit sphere at
  w*, from autodiff through E with alpha held fixed at its value at w* (Eq. 2),
  Hess = Q^T (grad^2 E - (w*^T grad E) I) Q for an orthonormal basis Q of the tangent space;
- ``is_stable``: critical (small residual) and ``hessian_max < 0``: a strict local maximum of E.

Tolerances are relative to the scale lambda_1 (or |grad^2 E| for the Hessian), so one set works in
float32 (loose) and float64 (tight). Certify in float64 (``--x64``) when the numbers matter.
For ReLU the autodiff Hessian is exact wherever no support point lies on the hyperplane
w*^T x = 0 (then A is locally constant and E = w^T A w / 2 there).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import one_layer
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.pairwise import Pairwise

__all__ = ["Certificate", "certify", "riemannian_hessian", "tangent_basis", "default_tol",
           "flow_stability"]


class Certificate(NamedTuple):
    residual: jax.Array
    lam1: jax.Array
    lam2: jax.Array
    gap: jax.Array
    rayleigh: jax.Array
    alignment: jax.Array
    energy: jax.Array
    hessian_max: jax.Array
    is_lme: jax.Array
    is_stable: jax.Array


def default_tol(dtype) -> float:
    """Relative tolerance used by :func:`certify`: 1e-7 in float64, 1e-3 in float32."""
    return 1e-7 if jnp.dtype(dtype) == jnp.float64 else 1e-3


tangent_basis = one_layer.tangent_basis
_field_jacobian = jax.jit(one_layer.field_jacobian, static_argnums=(1, 3))


def flow_stability(ds: Dataset, act: Activation, w, pairwise: Pairwise) -> float:
    """Largest real part of the eigenvalues of the flow's Jacobian at w
    (:func:`ccdyn.one_layer.field_jacobian`, alpha's dependence on w included); negative means a
    linearly stable fixed point (an attractor of Eq. 7). Host-side (non-symmetric eigenvalues)."""
    w = jnp.asarray(w) / jnp.linalg.norm(w)
    jac = np.asarray(_field_jacobian(ds, act, w, pairwise))
    return float(np.max(np.linalg.eigvals(jac).real))


def riemannian_hessian(ds: Dataset, act: Activation, w, pairwise: Pairwise):
    """Riemannian Hessian of E_alpha at unit w on the sphere, alpha fixed at w; (d-1, d-1)."""
    alpha = one_layer.node_alpha(ds, act, pairwise, w)
    e = lambda v: one_layer.energy_given_alpha(ds, act, v, alpha)
    g = jax.grad(e)(w)
    h = jax.hessian(e)(w)
    q = tangent_basis(w)
    return q.T @ h @ q - jnp.dot(w, g) * jnp.eye(q.shape[1], dtype=w.dtype)


def certify(ds: Dataset, act: Activation, w, pairwise: Pairwise, tol: float | None = None):
    """Certificate of a candidate fixed point w (d,) (normalized inside). vmap it for many w."""
    one_layer._check_w(ds, w, 1)
    tol = default_tol(w.dtype) if tol is None else float(tol)
    return _certify(ds, act, w, pairwise, tol)


@functools.partial(jax.jit, static_argnames=("act", "pairwise", "tol"))
def _certify(ds: Dataset, act: Activation, w, pairwise: Pairwise, tol: float):
    w = w / jnp.linalg.norm(w)
    a = one_layer.a_matrix(ds, act, w, pairwise)
    evals, evecs = jnp.linalg.eigh(a)
    lam1, lam2 = evals[-1], evals[-2]
    scale = jnp.maximum(jnp.max(jnp.abs(evals)), jnp.finfo(w.dtype).tiny)
    aw = a @ w
    residual = jnp.linalg.norm(aw - jnp.dot(w, aw) * w)
    alignment = jnp.abs(jnp.dot(w, evecs[:, -1]))
    gap = lam1 - lam2
    critical = residual <= tol * scale
    is_lme = critical & (gap > tol * scale) & (alignment >= 1.0 - tol) & (lam1 > tol * scale)
    hess = riemannian_hessian(ds, act, w, pairwise)
    hess_max = jnp.linalg.eigvalsh(hess)[-1]
    hess_scale = jnp.maximum(jnp.max(jnp.abs(hess)), scale)
    return Certificate(
        residual=residual, lam1=lam1, lam2=lam2, gap=gap, rayleigh=jnp.dot(w, aw),
        alignment=alignment, energy=one_layer.energy(ds, act, w[None], pairwise)[0],
        hessian_max=hess_max, is_lme=is_lme, is_stable=critical & (hess_max < -tol * hess_scale),
    )
