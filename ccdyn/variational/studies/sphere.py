"""The Sec. 2-3 record behind ``results/simclr_var/sphere`` (``scripts/ntxent_sphere.py``): a frozen
:class:`SphereConfig` in, a plain dict of numbers out (no I/O), each section with its verdict from
:mod:`ccdyn.variational.claims`: Prop. 2.1, Fig. 3, Thm. 3.2 (+ Riemannian Hessians), Prop. A.1,
Lemma A.2.

Claims refer to *Understanding Contrastive Learning through Variational Analysis and Neural Network
Optimization Perspectives*. Thresholds (tolerances, the plateau tolerance) are the config's fields and
are explained in docs/variational.md.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.variational import claims, ntxent
from ccdyn.variational import sphere_configs as sc

__all__ = ["SphereConfig", "sphere_study"]


@dataclasses.dataclass(frozen=True)
class SphereConfig:
    taus: tuple = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5)
    Ks: tuple = tuple(range(1, 65))
    rel_tol: float = 1e-3          # plateau: (L(K) - L_inf) / L_inf below this
    flat_tol: float = 1e-12        # indicator reading "none": K within this relative excess of its minimum
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
    rec = {"eq1_input_a": out["a"], "eq1_input_b": out["b"], "latent_form": latent,
           "latent_form_as_printed_without_exp(1/tau)": printed, "max_abs_diff": diff}
    return {**rec, "verdict": claims.prop21_verdict(rec)}


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
    rec = {"taus": taus.tolist(), "Ks": list(c.Ks), "loss": L.tolist(), "plateau": plateau.tolist(),
            "min_sq_distance": [None] + sc.min_sq_distance(np.asarray(c.Ks[1:])).tolist() if c.Ks[0] == 1
            else sc.min_sq_distance(np.asarray(c.Ks)).tolist(),
            "threshold": thr.tolist(), "fit": fit, "rel_tol": c.rel_tol,
            "indicator_readings": {"tau": tau_mid, "none": none, "atom": atom,
                                   "atom_argmin_K": int(c.Ks[int(np.argmin(atom))]),
                                   **_flat_Ks(c.Ks, none, c.flat_tol, "none")}}
    return {**rec, "verdict": claims.fig3_verdict(rec)}


def _flat_Ks(Ks, values, rel_tol: float, name: str) -> dict:
    """The K whose value lies within ``rel_tol`` (relative) of the minimum: a plateau flat to rounding has no
    reproducible argmin, the set is reproducible while no value sits near the cut."""
    v = np.asarray(values, float)
    flat = [int(K) for K, x in zip(Ks, v) if x - v.min() <= rel_tol * abs(v.min())]
    return {f"{name}_min": float(v.min()), f"{name}_min_rel_tol": rel_tol, f"{name}_min_Ks": flat}


def _configs():
    out: dict[str, tuple] = {f"S1 K={K} evenly spaced": (sc.evenly_spaced(K), None) for K in (1, 2, 3, 4, 5, 6, 8)}
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
    saddles = [r["config"] for r in rows if not r["config"].startswith("control")
               and any(v is not None and v < -1e-9 for v in r["min_hessian_eig"].values())]
    rec = {"rows": rows, "saddles": saddles}
    return {**rec, "verdict": claims.thm32_verdict(rec)}


def _propA1() -> dict:
    p = jnp.full((5,), 0.2)
    z0 = jnp.tile(jnp.array([[0.3, -1.2, 0.5]]), (5, 1))
    g0 = float(jnp.abs(sc.euclidean_grad(z0, p, 0.3)).max())
    loss = lambda f: ntxent.eq4_loss(f.reshape(5, 3), p, 0.3, dists="diff")  # noqa: E731
    ev = jnp.linalg.eigvalsh(jax.hessian(loss)(z0.reshape(-1)))
    z = jax.random.normal(jax.random.PRNGKey(0), (5, 3))
    ks = [1.0, 2.0, 4.0, 8.0, 16.0]
    norms = [float(jnp.linalg.norm(sc.euclidean_grad(k * z, p, 0.3))) for k in ks]
    rec = {"constant_grad": g0, "constant_hessian_eig_range": [float(ev[0]), float(ev[-1])],
           "scaled_k": ks, "scaled_grad_norm": norms}
    return {**rec, "verdict": claims.propA1_verdict(rec)}


def _lemma(c: SphereConfig) -> dict:
    key = jax.random.PRNGKey(c.seed)
    rows = [sc.lemma_check(K, t, jax.random.fold_in(key, 1000 * K + i), c.n_dirs)
            for K in c.lemma_Ks for i, t in enumerate(c.lemma_taus)]
    rec = {"rows": rows, "tau_max": {str(K): float(sc.lemma_tau_max(K)) for K in c.lemma_Ks}}
    return {**rec, "verdict": claims.lemmaA2_verdict(rec)}


def sphere_study(c: SphereConfig = SphereConfig()) -> dict:
    """Sec. 2-3 as numbers (float64 expected): Prop. 2.1, Fig. 3, Thm. 3.2 (+ Hessians), Prop. A.1, Lemma A.2."""
    return {"config": dataclasses.asdict(c), "prop21": _prop21(), "fig3": _fig3(c), "thm32": _stationarity(c),
            "propA1": _propA1(), "lemmaA2": _lemma(c)}
