"""Local roughness rho(w) of the 1-layer field (Sec. 3.2) and the ingredients of Thm. 1-2 / Cor. 2.

rho(w) is the smallest rho with ||(A(v) - A(w)) w|| <= rho ||v - w|| + O(||v - w||^2); Thm. 1 says an
LME w* with lambda_gap(w*) > rho(w*) is a stable fixed point. It is estimated from tangent
perturbations at shrinking radii (:func:`roughness_profile`), with the data-crossing resolution that a
sampled ReLU population needs, alongside the finite-difference flow Jacobian. Thm. 2 / Cor. 2:
z0(alpha_g) (Eq. 100), max of p_D on the plane (Eq. 95) and the bound C0^3 vol(C0) r / pi (Eq. 93).
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import sphere
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics
from ccdyn.pairwise import Pairwise

__all__ = ["Roughness", "roughness_profile", "roughness", "gaussian_z0", "plane_density_max", "theorem2_bound"]


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
    q = np.asarray(sphere.tangent_basis(w))
    rng = np.random.default_rng(seed)
    batched = jax.jit(jax.vmap(a_fn)) if batched is None else batched
    a0 = np.asarray(batched(jnp.asarray(w)[None]))[0]
    aw0 = a0 @ w
    lam = float(w @ aw0)
    rho_at, crossings, jac_max = [], [], []
    for eps in radii:
        basis_pts = sphere.at_angle(w, np.concatenate([q.T, -q.T]), eps)
        diff = np.asarray(batched(jnp.asarray(basis_pts))) @ w - aw0[None]  # (2(d-1), d)
        jac = (diff[: d - 1] - diff[d - 1:]).T / (2.0 * np.sin(eps))  # (d, d-1): u -> dA[u] w
        _, _, vt = np.linalg.svd(jac)
        top = q @ vt[0]
        rand = sphere.normalize(rng.standard_normal((n_random, d - 1)) @ q.T)
        extra = np.concatenate([top[None], -top[None], rand])
        extra_pts = sphere.at_angle(w, extra, eps)
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
    n_crossings = np.asarray(crossings)
    resolved = np.ones(radii.shape, bool) if x is None else n_crossings >= min_crossings
    rho_each = np.asarray(rho_at)
    rho = float(rho_each[np.flatnonzero(resolved)[-1]]) if resolved.any() else float("nan")
    return Roughness(rho, radii, rho_each, n_crossings, resolved, np.asarray(jac_max))


def roughness(ds: Dataset, act: Activation, w, pairwise: Pairwise, radii, **kwargs) -> Roughness:
    """rho(w) of A(w) = C_alpha[x~^w] (Lemma 3) of a dataset, alpha evaluated at each probe (Cor. 2).

    For an activation with a kink (ReLU, LeakyReLU) the views of the support points are passed as
    the crossing inputs (see :func:`roughness_profile`); for a smooth one every radius counts.
    """
    dynamics.check_w(ds, jnp.asarray(w), 1)
    xv, _ = ds.views()
    x = None if act.smooth else np.asarray(xv).reshape(-1, ds.dim)
    return roughness_profile(lambda v: dynamics.a_matrix(ds, act, v, pairwise), w, radii, x=x,
                             batched=functools.partial(dynamics.a_matrices, ds, act, pairwise=pairwise), **kwargs)


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
