"""The records behind ``results/simclr_var``: a frozen config in, a plain dict of numbers and verdicts out
(no I/O). :func:`sphere_study` covers Sec. 2-3 (Prop. 2.1, Fig. 3, Thm. 3.2, Prop. A.1, Lemma A.2),
:func:`kernel_study` the exact checks of Sec. 4 (Props. 4.1, 4.3, 4.4, Thm. 4.2, 4.5, Cor. 4.6) and
:func:`cluster_study` Figs. 5-6 with their grids over width, temperature and cluster size ratio.

Claims refer to *Understanding Contrastive Learning through Variational Analysis and Neural Network
Optimization Perspectives*; every verdict comes from :func:`ccdyn.verdicts.verdict` applied to
the measured numbers. Thresholds (tolerances, the plateau tolerance, the keep rule) are the config's
fields and are explained in docs/variational.md.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import stats
from ccdyn.verdicts import verdict
from ccdyn.variational import clusters as cl
from ccdyn.variational import kernel as kr
from ccdyn.variational import ntxent
from ccdyn.variational import sphere_configs as sc

__all__ = ["SphereConfig", "sphere_study", "KernelConfig", "kernel_study", "ClusterStudyConfig", "cluster_study"]


@dataclasses.dataclass(frozen=True)
class SphereConfig:
    taus: tuple = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
    Ks: tuple = tuple(range(1, 65))
    rel_tol: float = 1e-3          # plateau: (L(K) - L_inf) / L_inf below this
    lemma_Ks: tuple = (2, 3, 4, 6, 8)
    lemma_taus: tuple = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
    hessian_taus: tuple = (0.05, 0.2, 0.5, 1.0)
    n_dirs: int = 4096
    seed: int = 0


def _prop21() -> dict:
    """Two inputs (R^4 with 2 views, R^6 with 3 views and other multiplicities) with the same latent
    measure under an invariant map; Eq. 1 (indicator read "none") on each and the latent form."""
    u = jnp.array([[1.0, 0.0], [0.0, 1.0], [-0.6, -0.8]])
    r = jnp.array([0.5, 0.3, 0.2])
    out = {}
    for name, (D, per, V, seed) in {"a": (4, (2, 1, 3), 2, 0), "b": (6, (1, 4, 1), 3, 1)}.items():
        rng = np.random.default_rng(seed)
        xs, ps = [], []
        for k, m in enumerate(per):
            for _ in range(m):
                base = np.concatenate([rng.uniform(0.5, 3.0) * np.asarray(u[k]), np.zeros(D - 2)])
                xs.append([base + np.concatenate([np.zeros(2), rng.normal(size=D - 2)]) for _ in range(V)])
                ps.append(float(r[k]) / m)
        x, p, q = jnp.asarray(np.array(xs)), jnp.asarray(ps), jnp.asarray(rng.dirichlet(np.ones(V)))
        out[name] = float(ntxent.eq1_loss_views(x[..., :2], p, q, 0.5, "none"))
    latent = float(ntxent.latent_loss(u, r, 0.5, "none", positive=True))
    printed = float(ntxent.latent_loss(u, r, 0.5, "none", positive=False))
    diff = max(abs(out["a"] - latent), abs(out["b"] - latent))
    return {"eq1_input_a": out["a"], "eq1_input_b": out["b"], "latent_form": latent,
            "latent_form_as_printed_without_exp(1/tau)": printed, "max_abs_diff": diff,
            "verdict": verdict("Prop. 2.1: an invariant map makes NT-Xent a function of f#mu only",
                               {"two inputs, one latent measure: equal losses (1e-12)": abs(out["a"] - out["b"]) < 1e-12,
                                "equal to the latent form with Eq. 1's positive-pair term e^{1/tau} (1e-12)": diff < 1e-12,
                                "equal to the latent form as printed (no e^{1/tau})": abs(printed - latent) < 1e-12},
                               {"max_abs_diff": diff, "printed_minus_latent": printed - latent})}


def _fig3(c: SphereConfig) -> dict:
    taus = np.asarray(c.taus, float)
    L = np.stack([np.asarray(sc.fig3_loss(K, jnp.asarray(taus))) for K in c.Ks], 1)  # (tau, K)
    plateau = np.asarray(sc.uniform_loss(jnp.asarray(taus)))
    thr = np.array([sc.plateau_threshold(c.Ks, L[i], plateau[i], c.rel_tol) for i in range(len(taus))])
    ok = np.isfinite(thr)
    fit = sc.linear_fit(taus[ok], thr[ok]) if ok.sum() >= 2 else None
    # the indicator reading: Prop. 2.1's latent form with 1_{x != y} removing the whole atom ("atom")
    tau_mid = float(np.median(taus))
    atom = [float(ntxent.latent_loss(sc.evenly_spaced(K), jnp.full((K,), 1.0 / K), tau_mid, "atom")) for K in c.Ks]
    none = [float(ntxent.latent_loss(sc.evenly_spaced(K), jnp.full((K,), 1.0 / K), tau_mid, "none")) for K in c.Ks]
    nonincreasing = bool(np.all(np.diff(L, axis=1) <= 1e-12))
    plateau_reached = bool(np.all((L[:, -1] - plateau) / plateau < c.rel_tol))
    tau_order = bool(np.all(np.diff(L[:, 1:], axis=0) > 0))
    parts = {"loss nonincreasing in K at every tau": nonincreasing,
             f"plateau (uniform measure) reached within {c.rel_tol:g} at the largest K": plateau_reached,
             "smaller tau, smaller loss at every K >= 2": tau_order,
             "threshold bracketed for every tau": bool(ok.all()),
             "threshold linear in tau (R^2 >= 0.99)": bool(fit is not None and fit["r2"] >= 0.99)}
    return {"taus": taus.tolist(), "Ks": list(c.Ks), "loss": L.tolist(), "plateau": plateau.tolist(),
            "min_sq_distance": [None] + sc.min_sq_distance(np.asarray(c.Ks[1:])).tolist() if c.Ks[0] == 1
            else sc.min_sq_distance(np.asarray(c.Ks)).tolist(),
            "threshold": thr.tolist(), "fit": fit, "rel_tol": c.rel_tol,
            "indicator_readings": {"tau": tau_mid, "none": none, "atom": atom,
                                   "atom_argmin_K": int(c.Ks[int(np.argmin(atom))]),
                                   "none_argmin_K": int(c.Ks[int(np.argmin(none))])},
            "verdict": verdict("Fig. 3: loss falls with K to the uniform plateau; threshold linear in tau", parts,
                               {"fit": fit, "threshold": dict(zip(map(str, taus), thr.tolist()))})}


def _configs():
    out = {f"S1 K={K} evenly spaced": (sc.evenly_spaced(K), None) for K in (1, 2, 3, 4, 5, 6, 8)}
    out.update({f"S2 {n}": (sc.polytope(n), None) for n in sc.POLYTOPES})
    out.update({f"S1 K={K} clusters of 3 equal points": (jnp.repeat(sc.evenly_spaced(K), 3, 0), None) for K in (2, 4)})
    rand = jax.random.normal(jax.random.PRNGKey(1), (5, 3))
    out["control: S2 5 random points"] = (rand / jnp.linalg.norm(rand, axis=1, keepdims=True), None)
    out["control: S1 K=4, weights 0.1..0.4"] = (sc.evenly_spaced(4), jnp.array([0.1, 0.2, 0.3, 0.4]))
    return out


def _stationarity(c: SphereConfig) -> dict:
    rows = []
    for name, (z, p) in _configs().items():
        p = jnp.full((z.shape[0],), 1.0 / z.shape[0]) if p is None else p
        grad = max(float(jnp.abs(sc.riemannian_grad(z, p, t)).max()) for t in c.hessian_taus)
        eig = {str(t): sc.min_hessian_eig(z, p, t) if len(np.unique(np.round(np.asarray(z), 9), axis=0)) > 1 else None
               for t in c.hessian_taus}
        rows.append({"config": name, "max_riemannian_grad": grad, "min_hessian_eig": eig})
    sym = [r["max_riemannian_grad"] for r in rows if not r["config"].startswith("control")]
    ctl = [r["max_riemannian_grad"] for r in rows if r["config"].startswith("control")]
    saddles = [r["config"] for r in rows if not r["config"].startswith("control")
               and any(v is not None and v < -1e-9 for v in r["min_hessian_eig"].values())]
    return {"rows": rows, "saddles": saddles,
            "verdict": verdict("Thm. 3.2: symmetric discrete measures are stationary on the product of spheres",
                               {"every symmetric configuration: |grad| < 1e-12": max(sym) < 1e-12,
                                "non-symmetric controls are not stationary (|grad| > 1e-3)": min(ctl) > 1e-3},
                               {"max_grad_symmetric": max(sym), "min_grad_controls": min(ctl),
                                "stationary_but_saddle": saddles})}


def _propA1() -> dict:
    p = jnp.full((5,), 0.2)
    z0 = jnp.tile(jnp.array([[0.3, -1.2, 0.5]]), (5, 1))
    g0 = float(jnp.abs(sc.euclidean_grad(z0, p, 0.3)).max())
    ev = jnp.linalg.eigvalsh(jax.hessian(lambda f: ntxent.eq4_loss(f.reshape(5, 3), p, 0.3))(z0.reshape(-1)))
    z = jax.random.normal(jax.random.PRNGKey(0), (5, 3))
    ks = [1.0, 2.0, 4.0, 8.0, 16.0]
    norms = [float(jnp.linalg.norm(sc.euclidean_grad(k * z, p, 0.3))) for k in ks]
    return {"constant_grad": g0, "constant_hessian_eig_range": [float(ev[0]), float(ev[-1])],
            "scaled_k": ks, "scaled_grad_norm": norms,
            "verdict": verdict("Prop. A.1: constant maps and k f (k -> inf) satisfy the Euler-Lagrange equation",
                               {"constant map stationary (|grad| < 1e-12)": g0 < 1e-12,
                                "|grad L(k f)| decreases (until rounding, 1e-12) to < 1e-8":
                                all(b < a for a, b in zip(norms, norms[1:]) if a > 1e-12) and norms[-1] < 1e-8,
                                "constant map a local minimizer in R^d (Hessian >= 0)": float(ev[0]) > -1e-12},
                               {"constant_grad": g0, "constant_hessian_min_eig": float(ev[0]),
                                "grad_norm_at_k": dict(zip(map(str, ks), norms))})}


def _lemma(c: SphereConfig) -> dict:
    key = jax.random.PRNGKey(c.seed)
    rows = [sc.lemma_check(K, t, jax.random.fold_in(key, 1000 * K + i), c.n_dirs)
            for K in c.lemma_Ks for i, t in enumerate(c.lemma_taus)]
    tested = [r for r in rows if r["lemma_region"] and r["n_admitted"] > 0]
    worst = min((r["min_second_variation_admitted"] for r in tested), default=None)
    stable = [r for r in rows if r["min_riemannian_eig"] > 1e-12]
    covered = [r for r in stable if r["lemma_region"]]
    vacuous = [r for r in rows if r["lemma_region"] and r["n_admitted"] == 0]
    return {"rows": rows, "tau_max": {str(K): float(sc.lemma_tau_max(K)) for K in c.lemma_Ks},
            "verdict": verdict("Lemma A.2: second variation > 0 when sigma > 3 K^2 tau",
                               {"no negative second variation among admitted directions (> -1e-12)":
                                worst is not None and worst > -1e-12},
                               {"cells_tested": len(tested), "cells": len(rows), "worst_admitted": worst,
                                "stable_cells": len(stable), "stable_cells_inside_lemma_region": len(covered),
                                "cells_in_region_without_admitted_direction": len(vacuous)})}


def sphere_study(c: SphereConfig = SphereConfig()) -> dict:
    """Sec. 2-3 as numbers (float64 expected): Prop. 2.1, Fig. 3, Thm. 3.2 (+ Hessians), Prop. A.1, Lemma A.2."""
    return {"config": dataclasses.asdict(c), "prop21": _prop21(), "fig3": _fig3(c), "thm32": _stationarity(c),
            "propA1": _propA1(), "lemmaA2": _lemma(c)}


@dataclasses.dataclass(frozen=True)
class KernelConfig:
    mc_Ms: tuple = (16, 64, 256, 1024, 4096, 16384)
    mc_seeds: int = 64
    deltas: tuple = (1e-1, 1e-2, 1e-3)
    cor_Ms: tuple = (64, 512, 4096)
    seed: int = 0


def _orthogonal_clusters(delta, sizes, key):
    xi = jnp.array([[2.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.5, 0], [0, 0, 0, 0.8]])
    labels = jnp.repeat(jnp.arange(4), jnp.array(sizes), total_repeat_length=sum(sizes))
    eps = jax.random.normal(key, (sum(sizes), 4))
    return xi[labels] + delta * eps / jnp.linalg.norm(eps, axis=1, keepdims=True), labels, xi


def kernel_study(c: KernelConfig = KernelConfig()) -> dict:
    """Sec. 4's exact checks (float64 expected) and the Monte Carlo rate of Prop. 4.4."""
    key = jax.random.PRNGKey(c.seed)
    k = lambda i: jax.random.fold_in(key, i)
    # Prop. 4.3 vs autodiff NTK, Prop. 4.1 vs J(-grad_w)
    ntk, flow = {}, {}
    for act in ("relu", "tanh", "softplus"):
        B, X = jax.random.normal(k(1), (3, 7, 5)), jax.random.normal(k(2), (9, 5))
        K = kr.kernel_dense(B, X, act)
        ntk[act] = {"jacobian": float(jnp.abs(K - kr.ntk_jacobian(B, X, act)).max()),
                    "vjp_jvp": float(jnp.abs(kr.ntk_matvec(B, X, jnp.ones((9, 3)), act) - K.sum((2, 3))).max()),
                    "scale": float(jnp.abs(K).max())}
        flow[act] = float(jnp.abs(kr.flow_velocity(B, X, 0.3, act) - kr.weight_flow_velocity(B, X, 0.3, act)).max())
    worst_ntk = max(max(v["jacobian"], v["vjp_jvp"]) for v in ntk.values())
    # Prop. 4.4: RMS error of the width-M kernel against the limit, over vmapped seeds
    X = jax.random.normal(k(3), (8, 3))
    limit = kr.relu_limit_kernel(X)
    keys = jax.random.split(k(4), c.mc_seeds)
    rms = []
    for M in c.mc_Ms:
        errs = jax.vmap(lambda kk: jnp.mean((kr.kernel(jax.random.normal(kk, (1, M, 3)), X)[0] - limit) ** 2))(keys)
        rms.append(float(jnp.sqrt(jnp.mean(errs))))
    fit = sc.linear_fit(np.log(c.mc_Ms), np.log(rms))
    # Thm. 4.2
    xi = jax.random.normal(k(5), (8, 2))
    Xi = jnp.concatenate([xi, jnp.zeros((8, 2))], 1)
    Xv = Xi + jnp.concatenate([jnp.zeros((8, 2)), jax.random.normal(k(6), (8, 2))], 1)
    B = jax.random.normal(k(7), (2, 16, 4)).at[..., 2:].set(0.0)
    Z = jnp.concatenate([kr.net(B, Xi), kr.net(B, Xv)])
    for _ in range(20):
        Z = kr.gd_point_step(Z, 0.5, 0.05)
    gaps = {"start": float(kr.invariance_gap(kr.net(B, Xi), kr.net(B, Xv))),
            "plain GD, 20 steps": float(kr.invariance_gap(Z[:8], Z[8:]))}
    XX = jnp.concatenate([Xi, Xv])
    B1 = kr.gd_net_step(B, XX, 0.5, 0.05)
    gaps["network, 1 step"] = float(kr.invariance_gap(kr.net(B1, Xi), kr.net(B1, Xv)))
    P = jnp.diag(jnp.array([1.0, 1.0, 0.0, 0.0]))
    B2 = kr.gd_net_step(B, XX @ P, 0.5, 0.05)
    gaps["network with invariant grad_w f, 1 step"] = float(kr.invariance_gap(kr.net(B2, Xi @ P), kr.net(B2, Xv @ P)))
    # Thm. 4.5 (softplus, M = 64) over delta; Cor. 4.6 (ReLU, beta = 1/2) over M
    sizes = (6, 3, 9, 2)
    Bs = jax.random.normal(k(8), (4, 64, 4))
    thm45 = []
    for delta in c.deltas:
        Xc, labels, centers = _orthogonal_clusters(delta, sizes, k(9))
        v = kr.flow_velocity(Bs, Xc, 0.5, "softplus")
        thm45.append(float(jnp.abs(v - kr.thm45_velocity(Bs, Xc, labels, centers, 0.5, "softplus")).max() / jnp.abs(v).max()))
    order = sc.linear_fit(np.log(c.deltas), np.log(thm45))["slope"]
    Xc, labels, centers = _orthogonal_clusters(1e-3, sizes, k(9))
    cor = []
    for M in c.cor_Ms:
        errs = []
        for s in range(8):
            Bw = jax.random.normal(jax.random.fold_in(k(10), s), (4, M, 4))
            v = kr.flow_velocity(Bw, Xc, 0.5)
            errs.append(float(jnp.abs(v - kr.thm45_velocity(Bw, Xc, labels, centers, 0.5, beta=0.5)).max() / jnp.abs(v).max()))
        cor.append(float(np.mean(errs)))
    cor_slope = sc.linear_fit(np.log(c.cor_Ms), np.log(cor))["slope"]
    return {"config": dataclasses.asdict(c), "ntk": ntk, "flow": flow,
            "mc": {"Ms": list(c.mc_Ms), "rms": rms, "fit": fit, "seeds": c.mc_seeds}, "thm42": gaps,
            "thm45": {"deltas": list(c.deltas), "rel_err": thm45, "order": order},
            "cor46": {"Ms": list(c.cor_Ms), "rel_err": cor, "slope": cor_slope},
            "verdicts": [
                verdict("Prop. 4.3: the explicit kernel is the network's NTK", {"max |K - autodiff| < 1e-12": worst_ntk < 1e-12},
                        {"max_abs_diff": worst_ntk}),
                verdict("Prop. 4.1: the function-space flow is J(-grad_w L)", {"max diff < 1e-12": max(flow.values()) < 1e-12},
                        {"max_abs_diff": max(flow.values())}),
                verdict("Prop. 4.4: the width-M kernel tends to the arccos limit at rate M^{-1/2}",
                        {"exponent within 0.05 of -1/2": abs(fit["slope"] + 0.5) < 0.05, "R^2 >= 0.99": fit["r2"] >= 0.99},
                        {"exponent": fit["slope"], "r2": fit["r2"], "rms_at_largest_M": rms[-1]}),
                verdict("Thm. 4.2: plain GD keeps invariance; the network keeps it only if grad_w f is invariant",
                        {"plain GD gap 0": gaps["plain GD, 20 steps"] < 1e-14,
                         "network gap > 0 after one step": gaps["network, 1 step"] > 1e-6,
                         "network with invariant grad_w f: gap 0": gaps["network with invariant grad_w f, 1 step"] < 1e-14},
                        gaps),
                verdict("Thm. 4.5: per-cluster velocity -(n_q/n)||xi_q||^2 beta_q grad L(xi_q) + O(delta)",
                        {"error shrinks like delta (order within 0.2 of 1)": abs(order - 1) < 0.2,
                         "relative error < 1e-2 at the smallest delta": thm45[-1] < 1e-2},
                        {"order": order, "rel_err": dict(zip(map(str, c.deltas), thm45))}),
                verdict("Cor. 4.6: beta -> 1/2 for ReLU as M -> inf",
                        {"relative error decreases with M": all(b < a for a, b in zip(cor, cor[1:])),
                         "relative error < 0.05 at the largest M": cor[-1] < 0.05},
                        {"rel_err": dict(zip(map(str, c.cor_Ms), cor)), "slope_in_M": cor_slope})]}


@dataclasses.dataclass(frozen=True)
class ClusterStudyConfig:
    """Figs. 5-6. ``models``: (model, start, lr, width, activation, signed A); every run uses ``steps``, ``tau``,
    ``n_seeds``, ``per_cluster``; the grids (2-D, ``grid_steps``) vary one of width, tau and the size of
    the cluster at x = 1 for net1 and for plain GD from net1's start."""
    dims: tuple = (2, 3)
    models: tuple = (("net1", "net1", 5.0, 128, "relu", False), ("net1", "net1", 5.0, 128, "relu", True),
                     ("net1", "net1", 0.5, 128, "tanh", False), ("mlp4", "mlp4", 0.2, 128, "relu", False),
                     ("points", "net1", 0.1, 128, "relu", False), ("points", "net1", 0.1, 128, "relu", True),
                     ("points", "net1", 0.1, 128, "tanh", False), ("points", "mlp4", 0.1, 128, "relu", False),
                     ("points", "random", 0.1, 128, "relu", False))
    steps: int = 2000
    record_every: int = 5
    tau: float = 0.2
    n_seeds: int = 32
    per_cluster: int = 32
    noise: float = 0.3
    grid_steps: int = 1000
    widths: tuple = (8, 32, 128, 512)
    taus: tuple = (0.1, 0.2, 0.5)
    small_sizes: tuple = (32, 8, 4)
    at: tuple = (0, 15, 200, 1000, 2000)
    share: float = 0.9            # a claim about "the clusters" holds for at least this share of seeds
    seed: int = 0


def _name(model, start, act, signed=False):
    tag = ("" if act == "relu" else f" {act}") + (" signed" if signed else "")
    if model == "points":
        return f"points (start: {start}{tag if start == 'net1' else ''})"
    return model + tag


def _curves(res):
    out = {}
    for k in ("ratio", "silhouette", "uniformity"):
        x = res[k]
        m = np.nanmean(x, 0)
        h = 1.96 * np.nanstd(x, 0, ddof=1) / np.sqrt(np.sum(np.isfinite(x), 0))
        out[k] = {"mean": m, "lo": m - h, "hi": m + h}
    return out


def _share_at(summary, t):
    j = min(summary["at"], key=lambda s: abs(int(s) - t))
    r = summary["at"][j]
    return r["kept"] / r["n"]


def cluster_study(c: ClusterStudyConfig = ClusterStudyConfig(), log=None) -> dict:
    """Runs the Figs. 5-6 settings and the grids; returns summaries, curves (mean and 95% interval per
    recorded iteration), seed 0's snapshots, the grids' rows and the verdicts."""
    log = log or (lambda m: None)
    base = dict(steps=c.steps, record_every=c.record_every, tau=c.tau, n_seeds=c.n_seeds, noise=c.noise, seed=c.seed)
    runs, summaries, curves, snaps = {}, {}, {}, {}
    refs = {}
    for dim in c.dims:
        sizes = (c.per_cluster,) * 4
        refs[dim] = cl.data_ratio(cl.ClusterConfig(dim=dim, sizes=sizes, noise=c.noise))
        for model, start, lr, width, act, signed in c.models:
            cfg = cl.ClusterConfig(dim=dim, sizes=sizes, model=model, start=start, lr=lr, width=width, act=act,
                                   signed=signed, **base)
            name = f"{dim}-D {_name(model, start, act, signed)}"
            log(f"  {name}: {c.n_seeds} seeds x {c.steps} steps")
            res = cl.run(cfg)
            summaries[name] = {"config": dataclasses.asdict(cfg), **cl.kept_summary(res, refs[dim], c.at),
                               "loss_mean": {t: float(np.nanmean(res["loss"][:, int(np.argmin(np.abs(res["iters"] - t)))]))
                                             for t in c.at},
                               "positive_orthant_share_end_seed0": float(np.mean(np.all(res["snapshots"][-1] >= 0, 1)))}
            curves[name] = {"iters": res["iters"], **_curves(res)}
            idx = [int(np.argmin(np.abs(res["iters"] - t))) for t in c.at]
            snaps[name] = {"iters": [int(res["iters"][i]) for i in idx], "points": res["snapshots"][idx],
                           "labels": res["labels"]}
            runs[name] = res
    grid = []
    ref2 = refs[c.dims[0]]
    variants = ([("width", w, dict(width=w)) for w in c.widths] + [("tau", t, dict(tau=t)) for t in c.taus]
                + [("small cluster size", s, dict(sizes=(c.per_cluster, c.per_cluster, s, c.per_cluster)))
                   for s in c.small_sizes])
    by = {(m[0], m[1]): m for m in c.models if m[4] == "relu" and not m[5]}
    lr_net, w_net = by[("net1", "net1")][2:4]
    lr_pts = by[("points", "net1")][2]
    for what, value, kw in variants:
        for model, lr in (("net1", lr_net), ("points", lr_pts)):
            args = dict(dim=c.dims[0], sizes=(c.per_cluster,) * 4, model=model, start="net1", lr=lr, width=w_net,
                        **{**base, "steps": c.grid_steps})
            args.update(kw)
            cfg = cl.ClusterConfig(**args)
            log(f"  grid {what} = {value}: {model}")
            res = cl.run(cfg)
            ref = cl.data_ratio(cfg) if what == "small cluster size" else ref2
            s = cl.kept_summary(res, ref, (15, 200, c.grid_steps))
            small_sil = res["per_cluster"][:, -1, 2]
            others = res["per_cluster"][:, -1, [0, 1, 3]].mean(1)
            grid.append({"vary": what, "value": value, "model": model, "keep_ratio": ref,
                         "kept_at_200": _share_at(s, 200), "kept_at_end": _share_at(s, c.grid_steps),
                         "median_t_off": s["median_t_off"], "kept_to_end": s["kept_to_end"], "n": s["n"],
                         "non_finite_seeds": s["non_finite_seeds"],
                         "ratio_end": cl.mean_ci(res["ratio"][:, -1]),
                         "cluster_x1_silhouette_end": cl.mean_ci(small_sil),
                         "other_clusters_silhouette_end": cl.mean_ci(others)})
    return {"config": dataclasses.asdict(c), "keep_ratio": refs, "summaries": summaries, "curves": curves,
            "snapshots": snaps, "grid": grid, "verdicts": _cluster_verdicts(c, summaries, grid)}


def _at(summary, t):
    return summary["at"][min(summary["at"], key=lambda j: abs(int(j) - t))]


def _cluster_verdicts(c, summaries, grid):
    out = []
    for dim in c.dims:
        S = lambda name: summaries[f"{dim}-D {name}"]  # noqa: E731
        rnd = S("points (start: random)")
        for net_name, gd_name, fig in (("net1", "points (start: net1)", "Fig. 5"),
                                       ("net1 signed", "points (start: net1 signed)", "Fig. 5 (signed A)"),
                                       ("net1 tanh", "points (start: net1 tanh)", "Fig. 5 (tanh)"),
                                       ("mlp4", "points (start: mlp4)", "Fig. 6")):
            if f"{dim}-D {net_name}" not in summaries:
                continue
            net, gd = S(net_name), S(gd_name)
            n1000, g1000 = _at(net, 1000)["ratio"], _at(gd, 1000)["ratio"]
            out.append(verdict(f"{dim}-D {fig}: {net_name} keeps the clusters from iteration ~15 to ~200",
                               {f"kept at 15 in >= {c.share:.0%} of seeds": _share_at(net, 15) >= c.share,
                                f"kept at 200 in >= {c.share:.0%} of seeds": _share_at(net, 200) >= c.share},
                               {"kept_share": {t: _share_at(net, t) for t in c.at},
                                "ratio_mean": {t: _at(net, t)["ratio"]["mean"] for t in c.at},
                                "median_t_off": net["median_t_off"], "kept_to_end": f"{net['kept_to_end']}/{net['n']}"}))
            out.append(verdict(f"{dim}-D {fig}: plain GD from {net_name}'s start spreads the clusters by ~1000",
                               {f"not kept at 1000 in >= {c.share:.0%} of seeds": 1 - _share_at(gd, 1000) >= c.share,
                                "ratio at 1000 below its start's": g1000["mean"] < _at(gd, 0)["ratio"]["mean"],
                                f"ratio at 1000 below {net_name}'s (95% intervals apart)": g1000["ci"][1] < n1000["ci"][0]},
                               {"kept_share": {t: _share_at(gd, t) for t in c.at},
                                "ratio_mean": {t: _at(gd, t)["ratio"]["mean"] for t in c.at},
                                "network_ratio_at_1000": n1000["mean"]}))
        out.append(verdict(f"{dim}-D Fig. 5: plain GD from a random start ignores the clusters",
                           {"never kept (iterations 0 .. end)": max(_share_at(rnd, t) for t in c.at) == 0},
                           {"ratio_mean": {t: _at(rnd, t)["ratio"]["mean"] for t in c.at}}))
    small = [g for g in grid if g["vary"] == "small cluster size" and g["model"] == "net1"]
    if small:
        big, tiny = small[0], small[-1]
        n = big["n"]
        kb, kt = round(big["kept_at_end"] * n), round(tiny["kept_at_end"] * n)
        out.append(verdict("Remark 4.4: with a small cluster the network keeps the clusters less (end of the grid run)",
                           {"fewer seeds keep all clusters (95% Wilson intervals apart)":
                                stats.wilson_interval(kt, n)[1] < stats.wilson_interval(kb, n)[0],
                            "the small cluster's silhouette is below the same cluster's at equal sizes (95% intervals apart)":
                                tiny["cluster_x1_silhouette_end"]["ci"][1] < big["cluster_x1_silhouette_end"]["ci"][0]},
                           {"sizes": [g["value"] for g in small], "kept_at_end": [g["kept_at_end"] for g in small],
                            "cluster_x1_silhouette_end": [g["cluster_x1_silhouette_end"]["mean"] for g in small],
                            "others_silhouette_end": [g["other_clusters_silhouette_end"]["mean"] for g in small]}))
    return out
