"""Symmetric point configurations on spheres and what Sec. 3 says about them: Fig. 3 (loss of K evenly
spaced points on S^1), Thm. 3.2 (stationarity on the product of spheres), Prop. A.1 (stationary
maps of Eq. 4 in R^d), the Riemannian Hessian and Lemma A.2's bound.

Equation numbers refer to *Understanding Contrastive Learning through Variational Analysis and Neural
Network Optimization Perspectives*. The loss is Eq. 4 with Psi = log(1 + t), eta(t) = exp(-t/tau)
(:func:`ccdyn.variational.ntxent.eq4_loss`); a configuration is K points z_k with weights p_k. The
choices the paper leaves open (the plateau threshold of Fig. 3, the directions admitted by Lemma A.2)
are described in docs/variational.md.

Derivatives here (gradients, Hessians, Lemma A.2's second variations) go through distances formed by
differences (``dists="diff"``), so entries keep relative accuracy down to tau = 0.01, where they are
1e-83 (the GEMM form of the distances gives absolute errors of 1e-15 there); each Hessian quantity
comes with a rounding-error bound from :func:`ccdyn.variational.ntxent.eq4_grad_hessian` and counts as
*resolved* only where it exceeds that bound. The closed forms :func:`antipodal_grad_hessian` and
:func:`evenly_spaced_angle_hessian` (derived in docs/variational.md) are the references they are tested on.
"""

from __future__ import annotations

import functools
import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.variational import ntxent

__all__ = ["evenly_spaced", "polytope", "POLYTOPES", "fig3_loss", "uniform_loss", "min_sq_distance",
           "plateau_threshold", "linear_fit", "riemannian_grad", "riemannian_hessian", "rotation_modes",
           "min_hessian_eig", "euclidean_grad", "lemma_tau_max", "lemma_sigma", "lemma_check",
           "riemannian_hessian_err", "min_hessian_eig_bound", "antipodal_grad_hessian", "evenly_spaced_angle_hessian",
           "evenly_spaced_hessian_eigs"]

POLYTOPES = ("tetrahedron", "octahedron", "cube", "icosahedron")


def evenly_spaced(K: int, dtype=jnp.float64):
    """K evenly spaced points on S^1, angles 2 pi k / K."""
    t = 2 * jnp.pi * jnp.arange(K, dtype=dtype) / K
    return jnp.stack([jnp.cos(t), jnp.sin(t)], -1)


def polytope(name: str, dtype=jnp.float64):
    """Vertices of a regular polytope on S^2 (symmetric discrete measures of Thm. 3.2 / Remark 3.1)."""
    if name == "tetrahedron":
        v = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], float)
    elif name == "octahedron":
        v = np.concatenate([np.eye(3), -np.eye(3)])
    elif name == "cube":
        v = np.array(list(itertools.product([-1, 1], repeat=3)), float)
    elif name == "icosahedron":
        g = (1 + 5 ** 0.5) / 2
        v = np.array([c for a, b in itertools.product([-1, 1], repeat=2)
                      for c in ([0, a, b * g], [a, b * g, 0], [b * g, 0, a])], float)
    else:
        raise ValueError(f"polytope must be one of {', '.join(POLYTOPES)}, got {name!r}")
    return jnp.asarray(v / np.linalg.norm(v, axis=1, keepdims=True), dtype)


def fig3_loss(K, tau):
    """Eq. 4 at K evenly spaced points on S^1 with weights 1/K, in closed form: by symmetry every point
    has G = (1/K) sum_k exp((cos(2 pi k / K) - 1) / tau), the exponent formed as -2 sin^2(pi k / K) / tau
    (no 1 - cos cancellation). ``K`` an int; ``tau`` a scalar or array."""
    t = 2 * jnp.pi * jnp.arange(K) / K
    tau = jnp.asarray(tau)
    return jnp.log1p(jnp.mean(jnp.exp(-2 * jnp.sin(t / 2)[:, None] ** 2 / tau.reshape(1, -1)), 0)).reshape(tau.shape)


def uniform_loss(tau):
    """Eq. 4 at the uniform distribution on S^1 (the K -> infinity plateau): log(1 + e^{-1/tau} I_0(1/tau))."""
    return jnp.log1p(jax.scipy.special.i0e(1.0 / jnp.asarray(tau)))


def min_sq_distance(K):
    """Minimum squared distance between K evenly spaced points on S^1: 4 sin^2(pi / K) (K >= 2)."""
    return 4 * np.sin(np.pi / np.asarray(K, float)) ** 2


def plateau_threshold(Ks, losses, plateau, rel_tol: float = 1e-3) -> float:
    """The minimum squared distance s* at which the loss reaches its plateau (Fig. 3, middle panel).

    The excess e(K) = (L(K) - L_inf) / L_inf decays smoothly with s = 4 sin^2(pi/K); s* is where log e
    crosses log ``rel_tol``, linearly interpolated in s between the two Ks that bracket it (NaN when
    the grid does not bracket the crossing).
    """
    Ks, losses = np.asarray(Ks), np.asarray(losses, float)
    keep = Ks >= 2
    s, e = min_sq_distance(Ks[keep]), (losses[keep] - plateau) / plateau
    order = np.argsort(s)
    s, e = s[order], np.maximum(e[order], 1e-300)
    above = e > rel_tol
    for i in range(len(s) - 1):
        if not above[i] and above[i + 1]:
            a, b = np.log(e[i]), np.log(e[i + 1])
            return float(s[i] + (np.log(rel_tol) - a) / (b - a) * (s[i + 1] - s[i]))
    return float("nan")


def linear_fit(x, y) -> dict:
    """Least-squares line y = slope x + intercept and its R^2."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    r2 = 1 - np.sum(resid ** 2) / np.sum((y - y.mean()) ** 2)
    return {"slope": float(slope), "intercept": float(intercept), "r2": float(r2)}


@jax.jit
def euclidean_grad(z, p, tau):
    """The L^2(rho) gradient of Eq. 4 in R^d: d L / d z_i divided by p_i (Prop. 3.1's nabla L(f)(x)),
    by autodiff through distances formed by differences."""
    return jax.grad(functools.partial(ntxent.eq4_loss, dists="diff"))(z, p, tau) / p[:, None]


@jax.jit
def riemannian_grad(z, p, tau):
    """The L^2(rho) gradient of Eq. 4 on the product of spheres: (I - z_i z_i^T) dL/dz_i / p_i."""
    g = euclidean_grad(z, p, tau)
    return g - jnp.sum(g * z, -1, keepdims=True) * z


def _tangent_basis(z):
    """(n, d, d-1): an orthonormal basis of each tangent space T_{z_i} S^{d-1} (via QR of [z_i, I])."""
    def one(v):
        q, _ = jnp.linalg.qr(jnp.concatenate([v[:, None], jnp.eye(v.shape[0], dtype=v.dtype)], 1))
        return q[:, 1:v.shape[0]] * jnp.sign(q[:, :1].T @ v)
    return jax.vmap(one)(z)


@jax.jit
def riemannian_hessian(z, p, tau):
    """The Riemannian Hessian of Eq. 4 (as a function of the n points) on (S^{d-1})^n, in the tangent
    bases of :func:`_tangent_basis`: E^T (nabla^2 L) E - diag((z_i . nabla_i L) I_{d-1}). Autodiff through
    distances formed by differences: entries keep relative accuracy at any tau (module docstring)."""
    chex.assert_rank(z, 2)
    n, d = z.shape
    f = lambda flat: ntxent.eq4_loss(flat.reshape(n, d), p, tau, dists="diff")
    h = jax.hessian(f)(z.reshape(-1))
    g = jax.grad(f)(z.reshape(-1)).reshape(n, d)
    e = _tangent_basis(z)  # (n, d, d-1)
    E = jax.scipy.linalg.block_diag(*[e[i] for i in range(n)])  # (n d, n (d-1))
    curv = jnp.repeat(jnp.sum(g * z, -1), d - 1)
    return E.T @ h @ E - jnp.diag(curv), E


@jax.jit
def riemannian_hessian_err(z, p, tau):
    """An entrywise bound on the rounding error of :func:`riemannian_hessian`: |E|^T (H_err + 2 n d eps |H|) |E|
    + diag(|z_i| . g_err_i + d eps |z_i| . |g_i|), with H_err, g_err of :func:`ntxent.eq4_grad_hessian`
    (the Euclidean entries' errors) and the roundings of the projection (a sum of 2 n d products per entry)."""
    n, d = z.shape
    g, g_err, h, h_err = ntxent.eq4_grad_hessian(z, p, tau)
    eps = jnp.finfo(z.dtype).eps
    e = _tangent_basis(z)
    ea = jnp.abs(jax.scipy.linalg.block_diag(*[e[i] for i in range(n)]))
    curv = jnp.sum(jnp.abs(z) * (g_err + d * eps * jnp.abs(g)), -1)
    return ea.T @ (h_err + 2 * n * d * eps * jnp.abs(h)) @ ea + jnp.diag(jnp.repeat(curv, d - 1))


def rotation_modes(z, E):
    """Orthonormal columns spanning the tangent directions z_i -> Omega z_i of the rotations Omega in
    so(d): directions along which Eq. 4 is constant (zero modes of any Hessian)."""
    n, d = z.shape
    cols = []
    for a, b in itertools.combinations(range(d), 2):
        om = jnp.zeros((d, d), z.dtype).at[a, b].set(1.0).at[b, a].set(-1.0)
        cols.append(E.T @ (z @ om.T).reshape(-1))
    q, _ = jnp.linalg.qr(jnp.stack(cols, 1))
    return q  # the generators' fields are independent at the configurations used here (>= 2 distinct points)


def min_hessian_eig(z, p, tau) -> float:
    """The smallest eigenvalue of the Riemannian Hessian on the complement of the rotation modes."""
    return float(_min_hessian_eig(z, p, tau))


def min_hessian_eig_bound(z, p, tau) -> tuple:
    """:func:`min_hessian_eig` and a bound on its rounding error (Weyl): the Frobenius norm of
    :func:`riemannian_hessian_err` plus 4 m eps ||H||_F (projection and eigensolver, m the tangent dimension).
    The eigenvalue's sign is *resolved* when |eig| exceeds the bound."""
    eig, bound = _min_hessian_eig_bound(z, p, tau)
    return float(eig), float(bound)


@jax.jit
def _min_hessian_eig(z, p, tau):
    h, E = riemannian_hessian(z, p, tau)
    r = rotation_modes(z, E)
    q, _ = jnp.linalg.qr(jnp.concatenate([r, jnp.eye(h.shape[0], dtype=h.dtype)], 1))
    c = q[:, r.shape[1]:h.shape[0]]
    return jnp.linalg.eigvalsh(c.T @ h @ c)[0]


@jax.jit
def _min_hessian_eig_bound(z, p, tau):
    h, _ = riemannian_hessian(z, p, tau)
    m = h.shape[0]
    err = jnp.linalg.norm(riemannian_hessian_err(z, p, tau)) + 4 * m * jnp.finfo(h.dtype).eps * jnp.linalg.norm(h)
    return _min_hessian_eig(z, p, tau), err


def lemma_tau_max(K) -> float:
    """Lemma A.2 needs sigma > 3 K^2 tau for a sigma admitted by Eq. 27, and sigma <= ||xi_i - xi_j||^2
    <= 4 on the unit sphere (Cauchy-Schwarz), so it can hold only for tau < 4 / (3 K^2)."""
    return 4.0 / (3.0 * float(K) ** 2)


def lemma_sigma(xi, h):
    """The largest sigma for which direction h satisfies Eq. 27: min over pairs i != j with
    h_i != h_j of <xi_i - xi_j, h_i - h_j>^2 / ||h_i - h_j||^2 (batched over h of shape (..., K, d))."""
    dx = xi[:, None, :] - xi[None, :, :]
    dh = h[..., :, None, :] - h[..., None, :, :]
    num = jnp.sum(dx * dh, -1) ** 2
    den = jnp.sum(dh * dh, -1)
    K = xi.shape[0]
    off = ~jnp.eye(K, dtype=bool) & (den > 1e-24)
    return jnp.min(jnp.where(off, num / jnp.where(off, den, 1.0), jnp.inf), axis=(-2, -1))


def lemma_check(K: int, tau: float, key, n_dirs: int = 4096) -> dict:
    """Lemma A.2 at K evenly spaced points on S^1 (weights 1/K) for one tau.

    Directions h are the lemma's: f + h on the sphere, i.e. h_k = z_k' - z_k for points z_k' on S^1
    (random angles, spread from small to large moves). For each, sigma(h) of Eq. 27 and the second
    variation d^2/de^2 L(f + e h) at e = 0 (the Euclidean Hessian of Eq. 4, as in the proof), divided
    by ||h||^2, with a bound on its rounding error (|h|^T (H_err + 2 n eps |H|) |h| / ||h||^2, H_err from
    :func:`ntxent.eq4_grad_hessian`). Returns the lemma's region (tau < 4/(3K^2)), how many sampled
    directions satisfy its condition (sigma(h) > 3 K^2 tau), how many of those have a second variation
    whose sign is resolved (|value| > bound) and how many are resolved negative, the smallest second
    variation among them with its bound, and the smallest Riemannian Hessian eigenvalue without the
    rotation mode (the true local stability) with its bound. ``admitted_resolved``: some direction is
    admitted and every admitted one is resolved.
    """
    sig, second, err = _lemma_core(K, tau, key, n_dirs)
    ok = sig > 3 * K ** 2 * tau
    z = evenly_spaced(K)
    eig, eig_err = min_hessian_eig_bound(z, jnp.full((K,), 1.0 / K), tau) if K > 1 else (0.0, 0.0)
    i_adm = int(jnp.argmin(jnp.where(ok, second, jnp.inf)))
    i_all = int(jnp.argmin(second))
    resolved = jnp.abs(second) > err
    n_ok = int(ok.sum())
    return {"K": K, "tau": float(tau), "lemma_region": bool(tau < lemma_tau_max(K)),
            "n_admitted": n_ok, "n_dirs": n_dirs, "max_sigma": float(sig.max()),
            "min_second_variation_admitted": float(second[i_adm]) if n_ok else None,
            "min_second_variation_admitted_err": float(err[i_adm]) if n_ok else None,
            "n_admitted_resolved": int((ok & resolved).sum()),
            "n_admitted_resolved_negative": int((ok & resolved & (second < 0)).sum()),
            "admitted_resolved": bool(n_ok > 0 and bool((resolved | ~ok).all())),
            "min_second_variation_all": float(second[i_all]),
            "min_second_variation_all_err": float(err[i_all]),
            "min_riemannian_eig": eig, "min_riemannian_eig_err": eig_err,
            "riemannian_eig_resolved": bool(abs(eig) > eig_err)}


@functools.partial(jax.jit, static_argnames=("K", "n_dirs"))
def _lemma_core(K, tau, key, n_dirs):
    z = evenly_spaced(K)
    p = jnp.full((K,), 1.0 / K)
    f = lambda flat: ntxent.eq4_loss(flat.reshape(K, 2), p, tau, dists="diff")
    hess = jax.hessian(f)(z.reshape(-1))
    h_err = ntxent.eq4_grad_hessian(z, p, tau)[3]
    k1, k2 = jax.random.split(key)
    scale = jnp.exp(jax.random.uniform(k1, (n_dirs, 1), minval=jnp.log(1e-3), maxval=jnp.log(jnp.pi)))
    ang = jnp.arctan2(z[:, 1], z[:, 0])[None] + scale * jax.random.uniform(k2, (n_dirs, K), minval=-1, maxval=1)
    h = jnp.stack([jnp.cos(ang), jnp.sin(ang)], -1) - z[None]
    sig = lemma_sigma(z, h)
    flat = h.reshape(n_dirs, -1)
    norm2 = jnp.sum(flat * flat, 1)
    second = jnp.einsum("ni,ij,nj->n", flat, hess, flat) / norm2
    bound = h_err + 2 * flat.shape[1] * jnp.finfo(z.dtype).eps * jnp.abs(hess)
    err = jnp.einsum("ni,ij,nj->n", jnp.abs(flat), bound, jnp.abs(flat)) / norm2
    return sig, second, err


def antipodal_grad_hessian(tau):
    """Closed form (docs/variational.md): gradient (2, 2) and Euclidean Hessian (4, 4; order z_0x, z_0y,
    z_1x, z_1y) of Eq. 4 at the antipodal pair z_0 = (1, 0), z_1 = (-1, 0), weights 1/2, and the nonzero
    Riemannian Hessian eigenvalue 2 e / (tau (3 + e)), e = exp(-2 / tau). NumPy float64, ``tau`` a scalar."""
    e = np.exp(-2.0 / tau)
    c = 2.0 / (3.0 + e)                                    # Psi'(G), G = (1 + e) / 2
    u = np.array([-e / tau, 0.0, e / tau, 0.0])            # grad G_0 = grad G_1
    m = np.diag([e * (4.0 / tau ** 2 - 1.0 / tau), -e / tau])
    hess = -c ** 2 * np.outer(u, u) + 0.5 * c * np.block([[m, -m], [-m, m]])
    grad = np.array([[-c * e / tau, 0.0], [c * e / tau, 0.0]])
    return grad, hess, c * e / tau


def _angle_kernel(K, tau):
    phi = 2 * np.pi * np.arange(K) / K
    w = np.exp(-2.0 * np.sin(phi / 2) ** 2 / tau)          # exp((cos phi - 1) / tau) without 1 - cos
    w1 = -np.sin(phi) / tau * w
    w2 = (np.sin(phi) ** 2 / tau ** 2 - np.cos(phi) / tau) * w
    c = 1.0 / (1.0 + w.mean())
    return phi, w1, w2, c


def evenly_spaced_angle_hessian(K: int, tau):
    """Closed form (docs/variational.md): the Riemannian Hessian of Eq. 4 at K evenly spaced points on S^1
    (weights 1/K) in the unit tangent vectors t_a = (-sin theta_a, cos theta_a), i.e. d^2 L / d theta_a
    d theta_b (the angles are geodesic coordinates on the torus):

      H_ab = (2 c / K^2) (delta_ab sum_{k != 0} w''(phi_k) - [a != b] w''(theta_a - theta_b))
             - (c^2 / K^3) sum_i w'(theta_i - theta_a) w'(theta_i - theta_b),

    w(phi) = exp(-2 sin^2(phi / 2) / tau), w' = -(sin phi / tau) w, w'' = (sin^2 phi / tau^2 - cos phi / tau) w,
    c = 1 / (1 + (1/K) sum_k w(phi_k)). NumPy float64, (K, K)."""
    phi, w1, w2, c = _angle_kernel(K, tau)
    idx = (np.arange(K)[None, :] - np.arange(K)[:, None]) % K      # index of theta_b - theta_a
    psi1 = np.where(np.eye(K, dtype=bool), w2[1:].sum(), -w2[(-idx) % K])
    W = w1[idx]                                     # W[i, a] = w'(theta_a - theta_i) = -w'(theta_i - theta_a)
    return 2 * c / K ** 2 * psi1 - c ** 2 / K ** 3 * (W.T @ W)


def evenly_spaced_hessian_eigs(K: int, tau):
    """Eigenvalues of :func:`evenly_spaced_angle_hessian` (circulant), Fourier mode m = 0..K-1:
    lambda_m = (2 c / K^2) sum_{k=1}^{K-1} w''(phi_k) (1 - cos m phi_k) - (c^2 / K^3) (sum_k w'(phi_k) sin m phi_k)^2;
    lambda_0 = 0 is the rotation. Formed as sums of positive and of negative parts to show no cancellation
    at small tau; NumPy float64, (K,)."""
    phi, w1, w2, c = _angle_kernel(K, tau)
    m = np.arange(K)[:, None]
    one_minus_cos = 2 * np.sin(m * phi[None, :] / 2) ** 2
    first = 2 * c / K ** 2 * (one_minus_cos * w2[None, :]).sum(1)
    second = c ** 2 / K ** 3 * ((np.sin(m * phi[None, :]) * w1[None, :]).sum(1)) ** 2
    return first - second
