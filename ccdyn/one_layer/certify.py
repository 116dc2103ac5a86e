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

:func:`assess` is the one place that decides whether an optimum is stable: by the flow's Jacobian
at a smooth fixed point (alpha moving with w), by probes at a fixed point on a kink of E.
Local roughness rho lives in :mod:`ccdyn.one_layer.roughness`, irregularity omega in
:mod:`ccdyn.one_layer.irregularity`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import sphere
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics
from ccdyn.pairwise import Pairwise

__all__ = ["Certificate", "certify", "riemannian_hessian", "default_tol", "flow_stability", "probe_local_max",
           "assess"]


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


_field_jacobian = jax.jit(dynamics.field_jacobian, static_argnums=(1, 3))


def flow_stability(ds: Dataset, act: Activation, w, pairwise: Pairwise) -> float:
    """Largest real part of the eigenvalues of the flow's Jacobian at w
    (:func:`ccdyn.one_layer.dynamics.field_jacobian`, alpha's dependence on w included); negative means a
    linearly stable fixed point (an attractor of Eq. 7). Host-side (non-symmetric eigenvalues)."""
    w = jnp.asarray(w) / jnp.linalg.norm(w)
    jac = np.asarray(_field_jacobian(ds, act, w, pairwise))
    return float(np.max(np.linalg.eigvals(jac).real))


def riemannian_hessian(ds: Dataset, act: Activation, w, pairwise: Pairwise):
    """Riemannian Hessian of E_alpha at unit w on the sphere, alpha fixed at w; (d-1, d-1)."""
    alpha = dynamics.node_alpha(ds, act, pairwise, w)
    e = lambda v: dynamics.energy_given_alpha(ds, act, v, alpha)
    g = jax.grad(e)(w)
    h = jax.hessian(e)(w)
    q = sphere.tangent_basis(w)
    return q.T @ h @ q - jnp.dot(w, g) * jnp.eye(q.shape[1], dtype=w.dtype)


def certify(ds: Dataset, act: Activation, w, pairwise: Pairwise, tol: float | None = None):
    """Certificate of a candidate fixed point w (d,) (normalized inside). vmap it for many w."""
    dynamics.check_w(ds, w, 1)
    tol = default_tol(w.dtype) if tol is None else float(tol)
    return _certify(ds, act, w, pairwise, tol)


@functools.partial(jax.jit, static_argnames=("act", "pairwise", "tol"))
def _certify(ds: Dataset, act: Activation, w, pairwise: Pairwise, tol: float):
    w = w / jnp.linalg.norm(w)
    a = dynamics.a_matrix(ds, act, w, pairwise)
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
        alignment=alignment, energy=dynamics.energy(ds, act, w[None], pairwise)[0],
        hessian_max=hess_max, is_lme=is_lme, is_stable=critical & (hess_max < -tol * hess_scale),
    )


def probe_local_max(ds: Dataset, act: Activation, pw: Pairwise, w, radius: float = 1e-5,
                    n_random: int = 32, key=None):
    """True when E(w) exceeds E at every probe point cos(r) w + sin(r) v, for v = +-each tangent basis
    vector and ``n_random`` random tangent directions (alpha evaluated at each probe point).

    This checks maxima that sit on a kink of E, where the Hessian certificate does not apply.
    """
    key = jax.random.PRNGKey(0) if key is None else key
    q = sphere.tangent_basis(w)
    rand = jax.random.normal(key, (n_random, q.shape[1]), w.dtype) @ q.T
    dirs = jnp.concatenate([q.T, -q.T, sphere.normalize(rand)])
    probes = sphere.at_angle(w, dirs, radius)
    e0 = dynamics.energy(ds, act, w[None], pw)[0]
    e = dynamics.energy(ds, act, probes, pw)
    return bool(jnp.all(e < e0))


def assess(ds64: Dataset, act: Activation, pw: Pairwise, w, *, smooth_tol: float = 1e-8) -> dict:
    """The one stability decision for a refined fixed point w (float64), with its certificate.

    ``stable`` is linear stability of the flow (Eq. 7) at a smooth fixed point (every eigenvalue of
    :func:`ccdyn.one_layer.dynamics.field_jacobian` has a negative real part; for uniform alpha this is
    the Hessian certificate), or, for a fixed point on a kink of E (residual above ``smooth_tol``
    relative to lambda_1), :func:`probe_local_max`. ``strict_max_fixed_alpha`` is the Hessian
    certificate of :func:`certify` (alpha held at its value at w).
    """
    wj = jnp.asarray(w, ds64.x.dtype)
    cert = jax.device_get(certify(ds64, act, wj, pw))
    scale = max(abs(float(cert.lam1)), 1e-300)
    smooth = bool(cert.residual <= smooth_tol * scale)
    flow_max = flow_stability(ds64, act, wj, pw)
    stable = flow_max < -default_tol(ds64.x.dtype) * scale if smooth else probe_local_max(ds64, act, pw, wj)
    return {"energy": float(cert.energy), "eigengap": float(cert.gap), "lam1": float(cert.lam1),
            "residual": float(cert.residual), "smooth": smooth, "stable": bool(stable), "is_lme": bool(cert.is_lme),
            "hessian_max": float(cert.hessian_max), "strict_max_fixed_alpha": bool(cert.is_stable),
            "flow_jacobian_max_real": flow_max}
