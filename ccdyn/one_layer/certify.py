"""Certificates for candidate fixed points w* of the 1-layer flow (Sec. 3.2, Def. 3, Thm. 1).

A :class:`Certificate` states, for a unit vector w*:

- ``residual`` = ||P_w^perp u(w*)|| for the flow's own field u (zero at a critical point of Eq. 7): u =
  A(w*) w* for a homogeneous h (Lemma 3; p grad E), and u = grad E_{sg(alpha)}(w*) =
  C_alpha[x h'(w*^T x), h(w*^T x)] for any other h (tanh, gelu, a user's softplus), where A(w) w is not the
  gradient; ``field_norm`` = ||u(w*)|| and ``stationarity`` = residual / field_norm, the relative
  Riemannian gradient ||P^perp grad E|| / ||grad E|| (invariant to the factor p);
- ``lam1``, ``lam2``, ``gap`` = lambda_1 - lambda_2 of A(w*) and ``rayleigh`` = w*^T A(w*) w*;
- ``alignment`` = |w*^T phi_1(w*)|;
- ``is_lme`` (Def. 3): w* is an eigenvector of A(w*) (small ||P^perp A(w*) w*||) whose eigenvalue is the
  distinct largest one (alignment ~ 1 and gap > 0); a statement about A(w*), which for a non-homogeneous h
  says nothing about stationarity;
- ``hessian_max``: the largest eigenvalue of the Riemannian Hessian of E_alpha on the unit sphere at
  w*, from autodiff through E with alpha held fixed at its value at w* (Eq. 2),
  Hess = Q^T (grad^2 E - (w*^T grad E) I) Q for an orthonormal basis Q of the tangent space;
- ``is_stable``: critical (small residual) and ``hessian_max < 0``: a strict local maximum of E.

Tolerances are relative to the scale lambda_1 (homogeneous h: ||A(w*) w*|| is about lambda_1 there), to
||grad E|| (any other h), or to |grad^2 E| for the Hessian, so one set works in
float32 (loose) and float64 (tight). Certify in float64 (``--x64``) when the numbers matter.
For ReLU the autodiff Hessian is exact wherever no support point lies on the hyperplane
w*^T x = 0 (then A is locally constant and E = w^T A w / 2 there).

:func:`assess_many` (and :func:`assess` for one point) is the one place that decides whether an optimum is
stable, and names the test that did (``certificate``): the flow's Jacobian at a smooth fixed point
(alpha moving with w), or for a ReLU optimum on kinks the exact kink certificate of
:mod:`ccdyn.one_layer.kinks` (Jacobian on the active intersection + KKT multipliers). A probe
(:func:`probe_local_max`) never decides it.
Local roughness rho lives in :mod:`ccdyn.one_layer.roughness`, irregularity omega in
:mod:`ccdyn.one_layer.irregularity`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import compiling, sphere
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics, kinks
from ccdyn.pairwise import Pairwise

__all__ = ["Certificate", "certify", "riemannian_hessian", "default_tol", "flow_stability", "probe_local_max",
           "CERTIFICATES", "assess_many", "assess"]


class Certificate(NamedTuple):
    residual: jax.Array  # ||P^perp u(w)||, u the flow's field (A(w) w for homogeneous h, else grad E)
    lam1: jax.Array
    lam2: jax.Array
    gap: jax.Array
    rayleigh: jax.Array
    alignment: jax.Array
    energy: jax.Array
    hessian_max: jax.Array
    is_lme: jax.Array
    is_stable: jax.Array
    field_norm: jax.Array  # ||u(w)||
    stationarity: jax.Array  # residual / field_norm: the relative Riemannian gradient of E


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
    eigen_residual = jnp.linalg.norm(aw - jnp.dot(w, aw) * w)  # Def. 3: w an eigenvector of A(w)
    alignment = jnp.abs(jnp.dot(w, evecs[:, -1]))
    gap = lam1 - lam2
    is_lme = (eigen_residual <= tol * scale) & (gap > tol * scale) & (alignment >= 1.0 - tol) & (lam1 > tol * scale)
    tiny = jnp.finfo(w.dtype).tiny
    if act.homogeneous:  # the field is A(w) w = p grad E (Lemma 3)
        u, residual, critical = aw, eigen_residual, eigen_residual <= tol * scale
    else:  # the field is grad E_{sg(alpha)} = C_alpha[x h'(w^T x), h(w^T x)], not A(w) w
        u = dynamics.ascent(ds, act, w[None], pairwise)[0]
        residual = jnp.linalg.norm(u - jnp.dot(w, u) * w)
        critical = residual <= tol * jnp.maximum(jnp.linalg.norm(u), tiny)
    field_norm = jnp.linalg.norm(u)
    hess = riemannian_hessian(ds, act, w, pairwise)
    hess_max = jnp.linalg.eigvalsh(hess)[-1]
    hess_scale = jnp.maximum(jnp.max(jnp.abs(hess)), scale)
    return Certificate(
        residual=residual, lam1=lam1, lam2=lam2, gap=gap, rayleigh=jnp.dot(w, aw),
        alignment=alignment, energy=dynamics.energy(ds, act, w[None], pairwise)[0],
        hessian_max=hess_max, is_lme=is_lme, is_stable=critical & (hess_max < -tol * hess_scale),
        field_norm=field_norm, stationarity=residual / jnp.maximum(field_norm, tiny),
    )


def probe_local_max(ds: Dataset, act: Activation, pw: Pairwise, w, radius: float = 1e-5,
                    n_random: int = 32, key=None):
    """True when E(w) exceeds E at every probe point cos(r) w + sin(r) v, for v = +-each tangent basis
    vector and ``n_random`` random tangent directions (alpha evaluated at each probe point).

    A diagnostic only (it can miss a direction along which E rises): stability is decided by
    :func:`assess_many`.
    """
    key = jax.random.PRNGKey(0) if key is None else key
    q = sphere.tangent_basis(w)
    rand = jax.random.normal(key, (n_random, q.shape[1]), w.dtype) @ q.T
    dirs = jnp.concatenate([q.T, -q.T, sphere.normalize(rand)])
    probes = sphere.at_angle(w, dirs, radius)
    e0 = dynamics.energy(ds, act, w[None], pw)[0]
    e = dynamics.energy(ds, act, probes, pw)
    return bool(jnp.all(e < e0))


CERTIFICATES = ("smooth", "kink-kkt", "none")


@compiling.jit(compiling.OLDER_EMITTER, static_argnames=("act", "pairwise"))
def _certify_many(ds: Dataset, act: Activation, W, pairwise: Pairwise):
    """The certificate and the flow Jacobian's largest real eigenvalue part of every row of W, one row at a time
    (``lax.map``): its four float64 decompositions per row, batched over the rows, were independent LAPACK calls
    that jaxlib splits over XLA's CPU pool, and two of them at once hung a run's analysis (DEVELOPERS.md,
    "Batched LAPACK calls"); one matrix at a time, as the kink certificate's, they have not hung in any run."""

    def one(w):
        jac = dynamics.field_jacobian(ds, act, w / jnp.linalg.norm(w), pairwise)
        return _certify(ds, act, w, pairwise, default_tol(w.dtype)), jnp.max(jnp.linalg.eigvals(jac).real)

    return jax.lax.map(one, W)


def _kink_note(k: dict, i: int, refine_status: int, msk) -> str:
    """Why a refined kink optimum is not certified ('' when it is)."""
    if refine_status != kinks.RefineStatus.CONVERGED:
        return f"refinement: {kinks.RefineStatus(int(refine_status)).text}"
    if not k["full_rank"][i]:
        return "dependent active views"
    if not k["closure"][i] or k["stray"][i]:
        return "a view outside the active set lies on its hyperplane" if k["stray"][i] else "outside its region"
    if k["stationarity"][i] > KINK_STATIONARITY_TOL:
        return "not stationary on the active intersection"
    if not k["smooth_ok"][i]:
        return "flow Jacobian on the active intersection not negative"
    if not k["kkt_ok"][i]:
        lam, c = np.asarray(k["multipliers"][i])[msk], np.asarray(k["gate_coefficients"][i])[msk]
        if np.any((lam < 0) | (lam > 1)):
            return "a multiplier outside [0, 1]: E rises off a kink"
        if np.any(c >= 0):
            return "a kink repels or is flat (gate coefficient c_i >= 0)"
        return "a multiplier at 0 or 1 within tolerance"
    return ""


KINK_STATIONARITY_TOL = 1e-9


def assess_many(ds64: Dataset, act: Activation, pw: Pairwise, W, *, kink_ref: dict | None = None,
                smooth_tol: float = 1e-8) -> list:
    """The one stability decision for refined fixed points W (k, d), float64, one dict per row.

    ``certificate`` names the test that established ``stable``:

    - ``"smooth"``: no view on a kink (``kink_rank`` 0) and the flow's Jacobian (Eq. 7, alpha moving
      with w) has eigenvalues with negative real parts: a linearly stable fixed point (for uniform
      alpha, the Riemannian Hessian test of a strict local maximum of E);
    - ``"kink-kkt"``: w sits on ``kink_rank`` >= 1 ReLU hyperplanes; the flow's Jacobian restricted to
      their intersection with the tangent space is negative and every multiplier is strictly inside
      (0, 1) with a negative gate coefficient, so E decreases to first order along every direction
      that leaves a hyperplane (:mod:`ccdyn.one_layer.kinks`);
    - ``"none"``: not certified (``certificate_note`` says why); ``stable`` is then False. No probe
      decides stability.

    ``stationarity`` is the measure the certificate itself tested (``stationarity_measure`` names it):
    ``"gradient"``, the relative Riemannian gradient ||P^perp u|| / ||u|| of the flow's field u (A(w) w for a
    homogeneous h, grad E otherwise; the smooth test needs it <= ``smooth_tol``, relative to lambda_1 for a
    homogeneous h), or ``"kkt"`` on kinks, the KKT residual on the active intersection with the multipliers'
    fit, relative to lambda_1 (:func:`ccdyn.one_layer.kinks.kink_certificate`; needs <= 1e-9).
    ``residual`` stays ||P^perp u|| itself (on kinks: of A(w) with h'(0) = 0 on the active views, which
    is not the sliding field and is not 0 at a kink maximum).

    Args:
      kink_ref: :func:`ccdyn.one_layer.kinks.refine`'s output for W (required for an activation with
        kinks); without it (smooth activations) only the smooth test applies.
    """
    W = jnp.asarray(W, ds64.x.dtype)
    cert, flow_max = jax.device_get(_certify_many(ds64, act, W, pw))
    kc = None
    if kink_ref is not None:
        kc = jax.device_get(kinks.kink_certificate(ds64, act, pw, kink_ref))
        status, iterations = np.asarray(kink_ref["status"]), kink_ref["iterations"]
    tol = default_tol(ds64.x.dtype)
    rows = []
    for i in range(W.shape[0]):
        scale = max(abs(float(cert.lam1[i])), 1e-300)
        if act.homogeneous:
            smooth = bool(cert.residual[i] <= smooth_tol * scale)
        else:  # relative to ||grad E||: A(w)'s lambda_1 is not the field's scale
            smooth = bool(cert.stationarity[i] <= smooth_tol)
        row = {"energy": float(cert.energy[i]), "eigengap": float(cert.gap[i]), "lam1": float(cert.lam1[i]),
               "residual": float(cert.residual[i]), "stationarity": float(cert.stationarity[i]),
               "stationarity_measure": "gradient", "smooth": smooth, "is_lme": bool(cert.is_lme[i]),
               "hessian_max": float(cert.hessian_max[i]), "strict_max_fixed_alpha": bool(cert.is_stable[i]),
               "flow_jacobian_max_real": float(flow_max[i]), "kink_rank": 0}
        if kc is None:
            ok = smooth and flow_max[i] < -tol * scale
            note = "" if ok else ("not a critical point" if not smooth else "flow Jacobian not negative")
            certificate = "smooth" if ok else "none"
        else:
            rank = int(kc["kink_rank"][i])
            # Def. 3 quantities from A(w) with h'(0) = 0 on the active views (not their rounding noise)
            scale = max(abs(float(kc["lam1_0"][i])), 1e-300)
            res0, gap0 = float(kc["residual0"][i]), float(kc["gap0"][i])
            row.update(residual=res0, eigengap=gap0, lam1=float(kc["lam1_0"][i]), smooth=res0 <= smooth_tol * scale,
                       is_lme=bool(res0 <= tol * scale and gap0 > tol * scale and kc["alignment0"][i] >= 1 - tol
                                   and kc["lam1_0"][i] > tol * scale))
            msk = np.asarray(kc["active"][i])
            note = _kink_note(kc, i, status[i], msk)
            certificate = "none" if note else ("kink-kkt" if rank else "smooth")
            jv = float(kc["jacobian_v_max"][i])
            row.update(kink_rank=rank, active_views=np.flatnonzero(msk).tolist(),
                       multipliers=kc["multipliers"][i][msk].tolist(),
                       gate_coefficients=kc["gate_coefficients"][i][msk].tolist(),
                       one_sided_max=float(kc["one_sided_max"][i]) if rank else None,
                       jacobian_v_max=jv if np.isfinite(jv) else None,
                       stationarity=float(kc["stationarity"][i]), stationarity_measure="kkt" if rank else "gradient",
                       flat_kinks=int(kc["flat_kinks"][i]),
                       refine_iterations=int(iterations[i]))
        row.update(stable=certificate != "none", certificate=certificate, certificate_note=note)
        rows.append(row)
    return rows


def assess(ds64: Dataset, act: Activation, pw: Pairwise, w, *, smooth_tol: float = 1e-8) -> dict:
    """:func:`assess_many` for one fixed point w (d,); an activation with kinks is refined first
    (:func:`ccdyn.one_layer.kinks.refine`) and certified at the refined point, reported as ``w``."""
    W = jnp.asarray(w, ds64.x.dtype)[None]
    ref = kinks.refine(ds64, act, pw, W) if kinks.has_kinks(act) else None
    if ref is not None:
        W = ref["w"]
    row = assess_many(ds64, act, pw, W, kink_ref=ref, smooth_tol=smooth_tol)[0]
    return {**row, "w": np.asarray(W[0]).tolist()}
