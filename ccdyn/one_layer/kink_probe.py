"""An independent float64 check of optima on ReLU kinks, in numpy only (it imports nothing of ccdyn's maths).

Used by ``scripts/kink_check.py`` (docs/flow.md, "Checks"). Data: n points x (n, d) with weights p, no
augmentation, h = relu(x w) on the unit sphere. The function checked is

- uniform alpha: E(w) = 1/2 Var_p h (Eq. 6; the flow's field is its tangent gradient), or
- Gaussian alpha (Cor. 2, tau): the potential Phi(w) = tau sum_ij p_i p_j (1 - exp(-(h_i - h_j)^2 / 2 tau)),
  whose tangent gradient is twice the flow's field (docs/flow.md).

Both are F(h) = sum_ij p_i p_j psi(h_i - h_j) with psi(u) = u^2 / 4 (uniform) or tau (1 - exp(-u^2 / 2 tau)).

:func:`probe_rises`: the largest rise of F over random tangent directions at given geodesic radii.

:func:`extent`: a lower bound r_geo on the radius of the ball around w inside which F < F(w), from the
geometry alone (w and the data). Let S be the views on their hyperplane at w (|x_i^T w| <= plane_tol |x_i|)
and rho the geodesic distance to the nearest other hyperplane. Along the geodesic w(r) = cos r w + sin r d
(d a unit tangent) with r < rho no other view changes side and every view of S keeps the side of x_i^T d,
so h(r) = cos r a + sin r b(d) exactly, a = relu(x w), b_i(d) = x_i^T d (x_i^T w > 0), relu(x_i^T d)
(i in S), 0 (x_i^T w < 0). Then with G = grad F(a), H = hess F(a):

- first order: F'(0+) = L(d) = G^T b(d) = g^T d - sum_{i in S} |G_i| relu(x_i^T d), g = sum_{x_i^T w > 0} G_i x_i.
  On V cap T_w (V = span{x_i : i in S}^perp) it is g^T d = 0 at a stationary point (``stationarity`` =
  |P g| there). On W = span{x_i : i in S}, -L is the support function of the box C = {-P_W g + sum t_i |G_i| x_i :
  t in [0, 1]^S}; with independent x_S its smallest value on unit vectors is the distance from 0 to the
  boundary of C: beta = min_j min(lam_j, 1 - lam_j) |v_j^perp| (sum lam_i v_i = P_W g, v_i = |G_i| x_i,
  v_j^perp its part orthogonal to the other v_i). beta > 0 (every lam in (0, 1), G_i < 0 on S) is the
  strict one-sided test; then L(d) <= -beta |P_W d|.
- second order: F''(0+) = Q(d) = b^T H b - G^T a; for d = s e_V + t e_W (unit parts), Q <= -gamma s^2 +
  2 k s t + kappa t^2 with gamma = G^T a - the top eigenvalue of B^T H B on V cap T_w (B: the rows with
  x_i^T w > 0), k = |H B P_V| xi, kappa = max(eig H, 0) xi^2 - G^T a, xi = |X P_W| (|b_i(e_W)| <= |x_i^T e_W|).
- uniform alpha (quadratic F): exactly F(w(r)) - F(w) = 1/2 sin r cos r (tan r Q(d) + 2 L(d)); with
  2 k s t <= gamma s^2 / 2 + 2 k^2 t^2 / gamma this is < 0 for 0 < tan r <= 2 beta / K, K = kappa + 2 k^2 / gamma.
- Gaussian alpha: Taylor to third order, F(w(r)) - F(w) <= r (L + r Q / 2 + r^2 M3 / 6) with
  |d^3 F / dr^3| <= M3 = sum_ij p_i p_j (c3 D_ij^3 / sqrt(tau) + 4 D_ij^2), D_ij = max(|x_i - x_j|, |x_i|, |x_j|)
  (|Delta h_ij| and its r-derivative are <= D_ij; |psi'''| <= c3 / sqrt(tau), c3 = max |v^3 - 3v| exp(-v^2 / 2)
  = 1.3801; |psi''| <= 1, |psi'(u)| <= |u|): < 0 for r <= 3 gamma / (2 M3) and r K + r^2 M3 / 3 <= 2 beta.

r_geo is the smallest of rho and these radii, 0 when a test fails (``reason`` says which); r_geo > 0 proves
w a strict local maximum of F (up to the rounding of ``stationarity``). A maximum narrower than a probe
radius can be exceeded at that radius; a rise at a radius <= r_geo contradicts the label (:func:`judge`).
"""

from __future__ import annotations

import numpy as np

__all__ = ["C3", "potential", "probe_rises", "extent", "judge", "count_judgements", "JUDGEMENTS", "SET_COLUMNS",
           "METHOD_COLUMNS", "METHODS_KEY", "SETS_KEY"]

_V0 = np.sqrt(3.0 - np.sqrt(6.0))
C3 = float(abs(_V0 ** 3 - 3 * _V0) * np.exp(-_V0 ** 2 / 2))  # max_v |v^3 - 3 v| exp(-v^2 / 2)
JUDGEMENTS = ("strict max", "narrow max", "max by the probe only", "not a max")
# scripts/kink_check.py's two tables (sets.csv, methods.md) and their keys
SET_COLUMNS = ("set_seed", "n", "d", "converged", "endpoint_clusters", "optima", "stable", "smooth", "kink_kkt",
               "stable_mass", "max_kink_rank", "worst_stable_rise", "min_r_geo", "stable: strict / narrow / probe only "
               "/ not a max", "unstable_that_probe_as_max", "analyze_s", "run_s")
METHOD_COLUMNS = ("set", "n", "d", "method", "converged", "circling a kink", "too many kinks", "not converged",
                  "optima (seen once)", "top 5 hold", "max residual", "min (E(end) - E(start)) / max E",
                  "steps per init", "run s")
METHODS_KEY = ("per set and method, the inits by status (too many kinks: kink_limit); optima (seen once): raw "
               "endpoint clusters and those holding one init; top 5 hold: the share of the 5 largest; max residual: "
               "the largest sliding residual of a converged init; min (E(end) - E(start)) / max E: < 0 only if some "
               "init ends lower than it started; steps per init: attempted steps, mean; run s: seconds")
SETS_KEY = ("per set: n points in d dimensions; endpoint_clusters before refinement; optima after it, stable (by a "
            "certificate: smooth or kink_kkt), stable_mass: their share of the inits; max_kink_rank: most hyperplanes "
            "an optimum sits on; worst_stable_rise: the probe's largest rise of E over the stable optima (< 0: none "
            "rises); min_r_geo: the smallest radius (rad) within which the kinks' geometry proves a stable optimum a "
            "strict maximum; the judgements of the stable optima (JUDGEMENTS); unstable_that_probe_as_max: optima "
            "not certified whose probe finds no rise; analyze_s, run_s: seconds")


def potential(x, p, W, tau=None):
    """F at every row of W (k, d): 1/2 Var_p relu(x w) (``tau`` None) or the Gaussian-alpha potential Phi."""
    f = np.maximum(np.atleast_2d(W) @ x.T, 0.0)
    if tau is None:
        return 0.5 * np.sum(p * (f - (f @ p)[:, None]) ** 2, axis=1)
    return tau * np.einsum("i,j,kij->k", p, p, -np.expm1(-(f[:, :, None] - f[:, None, :]) ** 2 / (2 * tau)))


def probe_rises(pot, w, dirs, radii):
    """max over the unit tangents made from ``dirs`` (m, d) of pot(cos r w + sin r t) - pot(w), per radius r."""
    t = dirs - np.outer(dirs @ w, w)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    e0 = pot(w[None])[0]
    return [float(np.max(pot(np.cos(r) * w + np.sin(r) * t)) - e0) for r in radii]


def _psi_derivs(u, tau):
    if tau is None:
        return u / 2, np.full_like(u, 0.5)
    e = np.exp(-u ** 2 / (2 * tau))
    return u * e, (1 - u ** 2 / tau) * e


def _orth(m, tol, relative=True):
    """Orthonormal basis (columns) of the column space of m: singular values above tol (times the largest)."""
    if m.shape[1] == 0:
        return m
    u, s, _ = np.linalg.svd(m, full_matrices=False)
    return u[:, s > tol * (max(s[0], 1e-300) if relative else 1.0)]


def extent(x, p, w, tau=None, *, plane_tol=1e-9, rank_tol=1e-9, stat_tol=1e-9) -> dict:
    """r_geo and its parts (module docstring) at w (d,): a lower bound on the radius within which
    F < F(w); 0 with a ``reason`` when the geometry does not establish a strict local maximum."""
    x, p = np.asarray(x, np.float64), np.asarray(p, np.float64)
    w = np.asarray(w, np.float64) / np.linalg.norm(w)
    n, d = x.shape
    xn = np.linalg.norm(x, axis=1)
    zr = (x @ w) / np.where(xn > 0, xn, 1.0)
    act, pos = (xn > 0) & (np.abs(zr) <= plane_tol), zr > plane_tol
    rho = float(np.min(np.arcsin(np.minimum(np.abs(zr[(xn > 0) & ~act]), 1.0)), initial=np.pi / 2))
    a = np.where(pos, x @ w, 0.0)
    dpsi, d2psi = _psi_derivs(a[:, None] - a[None, :], tau)
    pp = np.outer(p, p)
    G = 2 * np.sum(pp * dpsi, axis=1)
    H = -2 * pp * d2psi
    np.fill_diagonal(H, 0.0)
    H -= np.diag(np.sum(H, axis=1))
    out = {"kink_views": int(act.sum()), "rho": rho, "stationarity": None, "beta": None, "gamma": None,
           "K": None, "M3": None, "multipliers": None, "r_geo": 0.0, "reason": None}
    xs = x[act] - np.outer(x[act] @ w, w)
    Pw = _orth(xs.T, rank_tol)  # W = span x_S (d, k)
    if Pw.shape[1] < act.sum():
        return out | {"reason": "dependent views on the kinks"}
    Pv = _orth(np.eye(d) - np.outer(w, w) - Pw @ Pw.T, 0.5, relative=False)  # V cap T_w (d, d - 1 - k)
    B = x * pos[:, None]
    g = B.T @ G
    scale = max(float(np.max(np.abs(np.linalg.eigvalsh(B.T @ H @ B)))), abs(float(G @ a)), 1e-300)
    out["stationarity"] = float(np.linalg.norm(Pv.T @ g) / scale)
    if out["stationarity"] > stat_tol:
        return out | {"reason": "not stationary on the kinks' intersection"}
    if act.any():
        if np.any(G[act] >= 0):
            return out | {"reason": "a view on a kink without a falling side"}
        Vm = Pw.T @ (np.abs(G[act]) * x[act].T)  # v_i in W coordinates (k, k)
        lam = np.linalg.solve(Vm, Pw.T @ g)
        perp = 1.0 / np.linalg.norm(np.linalg.inv(Vm), axis=1)  # |v_j^perp|
        out["multipliers"] = lam.tolist()
        beta = float(np.min(np.minimum(lam, 1 - lam) * perp)) / scale
    else:
        beta = np.inf
    out["beta"] = beta
    if beta <= 0:
        return out | {"reason": "a multiplier outside (0, 1)"}
    gam = float(G @ a - (np.max(np.linalg.eigvalsh(Pv.T @ B.T @ H @ B @ Pv)) if Pv.shape[1] else -np.inf)) / scale
    out["gamma"] = gam
    if gam <= 0:
        return out | {"reason": "not a maximum on the kinks' intersection"}
    xi = np.linalg.norm(x[pos | act] @ Pw, 2) if Pw.shape[1] else 0.0
    k = np.linalg.norm(H @ B @ Pv, 2) * xi / scale if Pv.shape[1] else 0.0
    kappa = (max(float(np.max(np.linalg.eigvalsh(H))), 0.0) * xi ** 2 - float(G @ a)) / scale
    K = max(kappa + (2 * k ** 2 / gam if np.isfinite(gam) else 0.0), 0.0)
    out["K"] = K
    if tau is None:
        r = np.arctan(2 * beta / K) if K > 0 else np.pi / 2
    else:
        D = np.maximum(np.linalg.norm(x[:, None] - x[None], axis=-1), np.maximum(xn[:, None], xn[None]))
        m3 = float(np.sum(pp * (C3 * D ** 3 / np.sqrt(tau) + 4 * D ** 2))) / scale
        out["M3"] = m3
        r_t = np.inf if not np.isfinite(beta) else (-K + np.sqrt(K ** 2 + 8 * beta * m3 / 3)) / (2 * m3 / 3)
        r = min(3 * gam / (2 * m3), r_t)
    out["r_geo"] = float(min(rho, r))
    return out


def judge(radii, rises, r_geo) -> str:
    """One of JUDGEMENTS for an optimum, from its largest rise per probe radius and its r_geo:
    no rise at any radius: "strict max" (r_geo > 0) or "max by the probe only" (r_geo = 0); rises only at
    radii > r_geo > 0: "narrow max" (a strict maximum narrower than those radii); a rise at a radius
    <= r_geo, or any rise with r_geo = 0: "not a max"."""
    up = [r for r, e in zip(radii, rises) if e >= 0]
    if not up:
        return JUDGEMENTS[0] if r_geo > 0 else JUDGEMENTS[2]
    return JUDGEMENTS[1] if r_geo > 0 and min(up) > r_geo else JUDGEMENTS[3]


def count_judgements(optima) -> dict:
    """{judgement: how many of ``optima`` (dicts with a "judgement") have it}, in the order of JUDGEMENTS."""
    got = [o["judgement"] for o in optima]
    return {j: got.count(j) for j in JUDGEMENTS}
