"""Irregularity omega (Def. 4, Eq. 10) and power iteration near an approximate eigenvector (Sec. 3.3, Thm. 3).

omega = mu + nu bounds how far power iteration (Eq. PI) can drift from the start w(0): when
sup omega <= gamma on the cap B_gamma around w(0) (Eq. 103-104), w(t) stays in B_gamma and converges
(Lemma 11). L and kappa (Lemma 9) are estimated on samples of the cap; :func:`theorem3_check` runs
the whole check for one start.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import sphere

__all__ = ["irregularity", "spectra", "lipschitz_and_kappa", "cap_threshold", "sample_cap", "start_near",
           "power_trajectory", "theorem3_check"]


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
    dirs = sphere.random_tangents(w0, n - 1, rng)
    theta = theta_max * rng.uniform(size=n - 1) ** (1.0 / max(d - 1, 1))
    theta[: (n - 1) // 4] = theta_max
    return np.concatenate([w0[None], sphere.at_angle(w0, dirs, theta)])


def start_near(u, angle_deg: float, rng) -> np.ndarray:
    """A unit start at ``angle_deg`` degrees from u/||u|| toward a random tangent direction."""
    w = u / np.linalg.norm(u)
    t = rng.standard_normal(w.size)
    t -= (t @ w) * w
    a = np.radians(angle_deg)
    return np.cos(a) * w + np.sin(a) * t / np.linalg.norm(t)


def power_trajectory(a_fn, w0, n_steps: int, batched=None) -> np.ndarray:
    """w(0..n_steps) of Eq. PI, w <- A(w) w / ||A(w) w||, for a matrix field a_fn; (n_steps + 1, d).

    ``batched`` (k, d) -> (k, d, d), if given, replaces ``jax.vmap(a_fn)``; pass the same object
    for every start (e.g. ``functools.partial(dynamics.a_matrices, ds, act)``) and the trajectory
    compiles once. For many starts on a dataset, :func:`ccdyn.one_layer.dynamics.power_iteration` is
    the GEMM route.
    """
    w0 = jnp.asarray(w0) / jnp.linalg.norm(w0)
    ws = _trajectory(jax.vmap(a_fn) if batched is None else batched, w0, int(n_steps))
    return np.concatenate([np.asarray(w0)[None], np.asarray(ws)])


@functools.partial(jax.jit, static_argnames=("batched", "n_steps"))
def _trajectory(batched, w0, n_steps: int):
    def body(w, _):
        v = sphere.normalize(batched(w[None])[0] @ w)
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
