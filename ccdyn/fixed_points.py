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

Beyond the certificate:

- local roughness rho(w) (Sec. 3.2) from tangent perturbations at shrinking radii, with the
  data-crossing resolution that a sampled ReLU population needs, and the finite-difference flow
  Jacobian (:func:`roughness`, :func:`roughness_profile`); the Thm. 2 / Cor. 2 ingredients
  z0(alpha_g), max of p_D on the plane and the Thm. 2 bound;
- irregularity omega = mu + nu (Def. 4, Eq. 10) with L and kappa estimated on samples of the ball
  B_gamma, and the Thm. 3 / Lemma 11 check along a power-iteration trajectory
  (:func:`theorem3_check`).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import one_layer
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.pairwise import Pairwise

__all__ = ["Certificate", "certify", "riemannian_hessian", "tangent_basis", "default_tol",
           "flow_stability", "Roughness", "roughness_profile", "roughness", "gaussian_z0",
           "plane_density_max", "theorem2_bound", "irregularity", "lipschitz_and_kappa", "cap_threshold",
           "sample_cap", "power_trajectory", "theorem3_check", "spectra"]


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


# --- Local roughness rho (Sec. 3.2, Thm. 1-2, Cor. 2) ---------------------------------------------


class Roughness(NamedTuple):
    """Finite-difference profile of the local roughness rho(w) (Sec. 3.2) over shrinking radii.

    rho(w) is the smallest rho with ||(A(v) - A(w)) w|| <= rho ||v - w|| + O(||v - w||^2). At radius
    eps the probes are v = cos(eps) w + sin(eps) u for unit tangent u: +-each tangent basis vector,
    +-the top right-singular direction of the central-difference Jacobian u -> dA[u] w, and random
    tangent directions; ``rho_at[r]`` is the largest ratio ||(A(v) - A(w)) w|| / ||v - w|| over them.

    Attributes:
      rho: the estimate, ``rho_at`` at the smallest resolved radius (NaN if none is resolved).
      radii: (r,) radii eps in radians, decreasing.
      rho_at: (r,) the probe maximum at each radius.
      crossings: (r,) median over the basis probes of the number of support points (views included)
        whose side of the hyperplane w^T x = 0 differs between w and v; -1 for a smooth activation.
      resolved: (r,) ``crossings >= min_crossings`` (always true for a smooth activation): radii at
        which a ReLU-type A(w) of a sampled population is not piecewise constant.
      jacobian_max: (r,) largest real part of the eigenvalues of the finite-difference flow Jacobian
        Q^T (A(w) + dA[.] w) Q - lambda I at each radius (alpha moving with w): negative means the
        fixed point is stable at that resolution.
    """

    rho: float
    radii: np.ndarray
    rho_at: np.ndarray
    crossings: np.ndarray
    resolved: np.ndarray
    jacobian_max: np.ndarray


def _probe_points(w, q, radius, extra):
    """Probes cos(eps) w + sin(eps) u for u in +-Q (first 2(d-1) rows) and the rows of ``extra``."""
    dirs = np.concatenate([q.T, -q.T, extra]) if extra is not None else np.concatenate([q.T, -q.T])
    return np.cos(radius) * w[None] + np.sin(radius) * dirs


def roughness_profile(a_fn, w, radii, *, n_random: int = 16, seed: int = 0, x=None,
                      min_crossings: int = 20, batched=None) -> Roughness:
    """Local roughness rho(w) of a matrix field A on the sphere, by tangent perturbations (Sec. 3.2).

    Args:
      a_fn: unit w (d,) -> A(w) (d, d), traceable by JAX (it is vmapped over the probes).
      w: the point (d,), normalized inside.
      radii: perturbation radii in radians (> 0); sorted decreasing.
      n_random: random tangent probe directions per radius.
      x: optional (N, d) inputs whose sign changes w^T x -> v^T x are counted (the ReLU gate of a
        sampled population); ``None`` for a smooth field (every radius counts as resolved).
      min_crossings: the median crossing count at which a radius counts as resolved (0: every
        radius, for an exact discrete population whose A(w) is the population's own).
      batched: optional ``jax.jit(jax.vmap(a_fn))`` (or equivalent) reused across calls.

    The estimate converges to the operator norm of the tangent derivative u -> dA[u] w as the radius
    shrinks for a differentiable A. For a sampled population with a ReLU gate, A is piecewise
    constant below the spacing of the data near the hyperplane, so only radii with many crossings
    estimate the population's rho (``resolved``).
    """
    w = np.asarray(w, np.float64)
    w = w / np.linalg.norm(w)
    radii = np.sort(np.asarray(radii, np.float64))[::-1]
    if radii.size == 0 or not np.all(radii > 0) or radii[0] >= np.pi / 2:
        raise ValueError(f"radii={radii.tolist()} must be non-empty and lie in (0, pi/2)")
    d = w.shape[0]
    q = np.asarray(tangent_basis(jnp.asarray(w)))
    rng = np.random.default_rng(seed)
    batched = jax.jit(jax.vmap(a_fn)) if batched is None else batched
    a0 = np.asarray(batched(jnp.asarray(w)[None]))[0]
    aw0 = a0 @ w
    lam = float(w @ aw0)
    rho_at, crossings, jac_max = [], [], []
    for eps in radii:
        basis_pts = _probe_points(w, q, eps, None)
        diff = np.asarray(batched(jnp.asarray(basis_pts))) @ w - aw0[None]  # (2(d-1), d)
        jac = (diff[: d - 1] - diff[d - 1:]).T / (2.0 * np.sin(eps))  # (d, d-1): u -> dA[u] w
        _, _, vt = np.linalg.svd(jac)
        top = q @ vt[0]
        rand = rng.standard_normal((n_random, d - 1)) @ q.T
        rand /= np.linalg.norm(rand, axis=1, keepdims=True)
        extra = np.concatenate([top[None], -top[None], rand])
        extra_pts = _probe_points(w, q, eps, extra)[2 * (d - 1):]
        diff_extra = np.asarray(batched(jnp.asarray(extra_pts))) @ w - aw0[None]
        ratios = np.linalg.norm(np.concatenate([diff, diff_extra]), axis=1) / (2.0 * np.sin(eps / 2.0))
        rho_at.append(float(np.max(ratios)))
        flow_jac = q.T @ a0 @ q + q.T @ jac - lam * np.eye(d - 1)
        jac_max.append(float(np.max(np.linalg.eigvals(flow_jac).real)))
        if x is None:
            crossings.append(-1)
        else:
            side = np.asarray(x) @ w > 0
            flips = (np.asarray(x) @ basis_pts.T > 0) != side[:, None]
            crossings.append(int(np.median(np.sum(flips, axis=0))))
    crossings = np.asarray(crossings)
    resolved = np.ones(radii.shape, bool) if x is None else crossings >= min_crossings
    rho_at = np.asarray(rho_at)
    rho = float(rho_at[np.flatnonzero(resolved)[-1]]) if resolved.any() else float("nan")
    return Roughness(rho, radii, rho_at, crossings, resolved, np.asarray(jac_max))


def roughness(ds: Dataset, act: Activation, w, pairwise: Pairwise, radii, **kwargs) -> Roughness:
    """rho(w) of A(w) = C_alpha[x~^w] (Lemma 3) of a dataset, alpha evaluated at each probe (Cor. 2).

    For an activation with a kink (ReLU, LeakyReLU) the views of the support points are passed as
    the crossing inputs (see :func:`roughness_profile`); for a smooth one every radius counts.
    """
    one_layer._check_w(ds, jnp.asarray(w), 1)
    xv, _ = ds.views()
    x = None if act.smooth else np.asarray(xv).reshape(-1, ds.dim)
    return roughness_profile(lambda v: one_layer.a_matrix(ds, act, v, pairwise), w, radii, x=x,
                             batched=functools.partial(one_layer.a_matrices, ds, act, pairwise=pairwise), **kwargs)


def gaussian_z0(ds: Dataset, act: Activation, w, tau: float) -> float:
    """z_0(alpha_g) = E_x[exp(-h(w^T x)^2 / 2 tau)] of Cor. 2 (Eq. 100), over the support x0."""
    f = act.h(ds.x @ (jnp.asarray(w) / jnp.linalg.norm(w)))
    return float(jnp.sum(ds.p * jnp.exp(-(f * f) / (2.0 * tau))))


def plane_density_max(ds: Dataset, w, k: int | None = None, n_candidates: int = 256) -> float:
    """max over the hyperplane w^T x = 0 of a k-nearest-neighbour estimate of p_D (Thm. 2, Eq. 95).

    r(w, alpha_u) = max_{w^T x = 0} p_D(x) (Eq. 95) for a continuous model sampled by ``ds``: at the
    projections onto the plane of the ``n_candidates`` samples closest to it, p_D(y) is estimated
    as k/n over the volume of the smallest ball around y holding probability k/n (k = sqrt(n) by
    default; relative noise ~ 1/sqrt(k)), and the largest estimate is returned.
    """
    x = np.asarray(ds.x, np.float64)
    p = np.asarray(ds.p, np.float64)
    n, d = x.shape
    k = max(10, int(round(math.sqrt(n)))) if k is None else int(k)
    w = np.asarray(w, np.float64) / np.linalg.norm(w)
    near = x[np.argsort(np.abs(x @ w))[: min(n_candidates, n)]]
    cand = near - np.outer(near @ w, w)
    dist = np.sqrt(np.maximum(np.sum(cand ** 2, 1)[:, None] + np.sum(x ** 2, 1)[None] - 2.0 * cand @ x.T, 0))
    order = np.argsort(dist, axis=1)
    mass = np.cumsum(p[order], axis=1)
    idx = np.argmax(mass >= k / n - 1e-12, axis=1)
    radius = np.take_along_axis(dist, order, axis=1)[np.arange(cand.shape[0]), idx]
    unit_ball = np.pi ** (d / 2.0) / math.gamma(d / 2.0 + 1.0)
    return float(np.max(mass[np.arange(cand.shape[0]), idx] / (unit_ball * radius ** d)))


def theorem2_bound(ds: Dataset, r: float) -> float:
    """C0^3 vol(C0) r / pi of Thm. 2 (Eq. 93) with C0 = max ||x|| over the support."""
    c0 = float(np.max(np.linalg.norm(np.asarray(ds.x), axis=1)))
    d = ds.dim
    vol = np.pi ** (d / 2.0) / math.gamma(d / 2.0 + 1.0) * c0 ** d
    return c0 ** 3 * vol * r / np.pi


# --- Irregularity omega and power iteration near an approximate eigenvector (Sec. 3.3, Thm. 3) ----


def irregularity(c, gap, lam1, lipschitz, kappa):
    """(mu, nu, omega) of Def. 4 / Eq. 10 (Lemma 7, Eq. 182; Lemma 10, Eq. 193), elementwise.

    mu = (1 + c) / (2 c^2) (1 - gap/lam1)^2, nu = 2 kappa L^2 (1 + mu c) + 2 L / gap sqrt(mu (1 + mu c)),
    omega = mu + nu; c = |w^T phi_1(w)| (the sign of phi_1 is free, B.4).
    """
    c, gap, lam1 = (np.asarray(v, np.float64) for v in (c, gap, lam1))
    mu = 0.5 * (1.0 + c) / c ** 2 * (1.0 - gap / lam1) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        drift = np.where(lipschitz > 0, 2.0 * lipschitz / gap * np.sqrt(mu * (1.0 + mu * c)), 0.0)
    nu = 2.0 * kappa * lipschitz ** 2 * (1.0 + mu * c) + drift
    return mu, nu, mu + nu


def spectra(a_fn, W, batched=None):
    """For every row w of W (k, d): A(w) (k, d, d), its eigenvalues in decreasing order (k, d), the
    eigenvectors as columns (k, d, d) and c(w) = |w^T phi_1(w)| (Sec. 3.3; the sign of phi_1 is free).

    ``batched``, if given, is ``jax.jit(jax.vmap(a_fn))`` built once by the caller (no recompiles).
    """
    batched = jax.jit(jax.vmap(a_fn)) if batched is None else batched
    a = np.asarray(batched(jnp.asarray(W)))
    lam, phi = np.linalg.eigh(a)
    lam, phi = lam[:, ::-1], phi[:, :, ::-1]
    c = np.abs(np.einsum("kd,kd->k", np.asarray(W), phi[:, :, 0]))
    return a, lam, phi, c


def lipschitz_and_kappa(a, lam, phi, W, min_change: float = 1e-12):
    """Estimates of L (||A(w) - A(w')||_2 <= L ||w - w'||) and kappa (Lemma 9, Eq. 191) over all
    ordered pairs of the points W (k, d), from their matrices a, eigenvalues lam (descending) and
    eigenvectors phi (from :func:`spectra`): the largest ratios seen; pairs with
    ||A(w) - A(w')||_2 <= min_change * ||A(w)||_2 are skipped for kappa (no change to expand)."""
    W = np.asarray(W, np.float64)
    k = W.shape[0]
    i, j = np.where(~np.eye(k, dtype=bool))
    delta = a[j] - a[i]
    norm_da = np.abs(np.linalg.eigvalsh(delta)).max(axis=1)
    dist = np.linalg.norm(W[j] - W[i], axis=1)
    lipschitz = float(np.max(np.where(dist > 0, norm_da / np.where(dist > 0, dist, 1), 0.0)))
    # first-order eigenvector change: sum_{m>1} phi_m (phi_m^T dA phi_1) / (lam_1 - lam_m)
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero gap makes kappa undefined there
        rest, inv_gap = phi[i][:, :, 1:], 1.0 / (lam[i][:, :1] - lam[i][:, 1:])
        coef = np.einsum("pdm,pde,pe->pm", rest, delta, phi[i][:, :, 0]) * inv_gap
        first = np.einsum("pdm,pm->pd", rest, coef)
        new = phi[j][:, :, 0] * np.sign(np.einsum("pd,pd->p", phi[j][:, :, 0], phi[i][:, :, 0]))[:, None]
        resid = np.linalg.norm(new - phi[i][:, :, 0] - first, axis=1)
    ok = (norm_da > min_change * np.abs(lam[i][:, 0])) & np.isfinite(resid)
    kappa = float(np.max(resid[ok] / norm_da[ok] ** 2)) if ok.any() else 0.0
    return lipschitz, kappa


def cap_threshold(c0: float, gamma: float) -> float:
    """B_gamma = {w : w^T w(0) >= (c0 - c_gamma) / (1 - c_gamma)}, c_gamma = 2 sqrt(gamma)/(1 + gamma)
    (Thm. 3, Eq. 103-104); returns the threshold on w^T w(0)."""
    c_gamma = 2.0 * math.sqrt(gamma) / (1.0 + gamma)
    return (c0 - c_gamma) / (1.0 - c_gamma)


def sample_cap(w0, threshold: float, n: int, rng) -> np.ndarray:
    """n unit vectors with w^T w0 >= threshold: w0 itself, a quarter on the boundary, the rest at
    angles theta_max u^(1/(d-1)) (u uniform) in random tangent directions."""
    w0 = np.asarray(w0, np.float64)
    d = w0.shape[0]
    theta_max = math.acos(max(min(threshold, 1.0), -1.0))
    dirs = rng.standard_normal((n - 1, d))
    dirs -= np.outer(dirs @ w0, w0)
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    theta = theta_max * rng.uniform(size=n - 1) ** (1.0 / max(d - 1, 1))
    theta[: (n - 1) // 4] = theta_max
    pts = np.cos(theta)[:, None] * w0[None] + np.sin(theta)[:, None] * dirs
    return np.concatenate([w0[None], pts])


def power_trajectory(a_fn, w0, n_steps: int, batched=None) -> np.ndarray:
    """w(0..n_steps) of Eq. PI, w <- A(w) w / ||A(w) w||, for a matrix field a_fn; (n_steps + 1, d).

    ``batched`` (k, d) -> (k, d, d), if given, replaces ``jax.vmap(a_fn)``; pass the same object
    for every start (e.g. ``functools.partial(one_layer.a_matrices, ds, act)``) and the trajectory
    compiles once. For many starts on a dataset, ``one_layer.power_iteration`` is the GEMM route.
    """
    w0 = jnp.asarray(w0) / jnp.linalg.norm(w0)
    ws = _trajectory(jax.vmap(a_fn) if batched is None else batched, w0, int(n_steps))
    return np.concatenate([np.asarray(w0)[None], np.asarray(ws)])


@functools.partial(jax.jit, static_argnames=("batched", "n_steps"))
def _trajectory(batched, w0, n_steps: int):
    def body(w, _):
        v = batched(w[None])[0] @ w
        v = v / jnp.linalg.norm(v)
        return v, v

    return jax.lax.scan(body, w0, None, length=n_steps)[1]


def theorem3_check(a_fn, w0, gammas, *, n_samples: int = 128, n_steps: int = 200, seed: int = 0,
                   conv_tol: float = 1e-10, batched=None) -> dict:
    """Thm. 3 made measurable at a start w(0): for each gamma, sup omega over (samples of) B_gamma,
    with L and kappa estimated on the same samples; the smallest gamma with sup omega <= gamma
    (Eq. 11) certifies the start. Then power iteration from w(0) is run and its claims are checked
    (Lemma 11): w(t) stays in B_gamma, c_t increases, 1 - c_t <= gamma^t (1 - c_0), w(t) converges.

    Returns a dict with c0, per-gamma rows (gamma, threshold, sup_omega, sup_mu, L, kappa,
    min_lam_d, holds), the certified gamma (or None), and the trajectory checks. ``batched``: as in
    :func:`power_trajectory` (reuse it across starts to compile once).
    """
    rng = np.random.default_rng(seed)
    w0 = np.asarray(w0, np.float64) / np.linalg.norm(w0)
    batched = jax.jit(jax.vmap(a_fn)) if batched is None else batched
    _, lam0, _, c0 = spectra(a_fn, w0[None], batched)
    c0 = float(c0[0])
    gammas = sorted(float(g) for g in gammas)
    if not gammas or not all(0 < g < 1 for g in gammas):
        raise ValueError(f"gammas={gammas} must be non-empty and lie in (0, 1)")
    rows = []
    for gamma in gammas:
        thr = cap_threshold(c0, gamma)
        pts = sample_cap(w0, thr, n_samples, rng)
        a, lam, phi, c = spectra(a_fn, pts, batched)
        lip, kappa = lipschitz_and_kappa(a, lam, phi, pts)
        mu, nu, omega = irregularity(c, lam[:, 0] - lam[:, 1], lam[:, 0], lip, kappa)
        rows.append({"gamma": gamma, "threshold": thr, "cap_angle_deg": math.degrees(math.acos(max(min(thr, 1), -1))),
                     "sup_omega": float(np.max(omega)), "sup_mu": float(np.max(mu)), "L": lip, "kappa": kappa,
                     "min_lam_d": float(np.min(lam[:, -1])), "holds": bool(np.max(omega) <= gamma)})
        if rows[-1]["holds"]:  # the smallest certifying gamma is what Thm. 3 needs
            break
    certified = next((r for r in rows if r["holds"]), None)
    traj = power_trajectory(a_fn, w0, n_steps, batched)
    _, lam_t, _, c_t = spectra(a_fn, traj, batched)
    moves = np.linalg.norm(np.diff(traj, axis=0), axis=1)
    out = {"c0": c0, "lam1_0": float(lam0[0, 0]), "gap_0": float(lam0[0, 0] - lam0[0, 1]), "gammas": rows,
           "gamma_certified": None if certified is None else certified["gamma"],
           "converged": bool(moves[-1] <= conv_tol), "final_move": float(moves[-1]),
           "steps_to_tol": int(np.argmax(moves <= conv_tol)) + 1 if np.any(moves <= conv_tol) else None,
           "min_overlap_with_start": float(np.min(traj @ w0)), "w_final": traj[-1].tolist(),
           "c_final": float(c_t[-1])}
    if certified is not None:
        g, thr = certified["gamma"], certified["threshold"]
        t = np.arange(c_t.size)
        out.update({"stays_in_ball": bool(np.all(traj @ w0 >= thr - 1e-12)),
                    "c_monotone": bool(np.all(np.diff(c_t) >= -1e-12)),
                    "rate_holds": bool(np.all(1.0 - c_t <= g ** t * (1.0 - c0) + 1e-12))})
    return out
