"""The Sec. 4 record behind ``results/simclr_var/kernel/kernel.json`` (``scripts/kernel_dynamics.py``): a
frozen :class:`KernelConfig` in, a plain dict of numbers out (no I/O) with the verdicts of
:func:`ccdyn.variational.claims.kernel_verdicts`: Prop. 4.3 (explicit kernel = autodiff NTK), Prop. 4.1
(function-space flow = J(-grad_w L)), the Monte Carlo rate of Prop. 4.4, Thm. 4.2, Thm. 4.5 and Cor. 4.6.
Float64 expected; readings in docs/variational.md.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.variational import claims
from ccdyn.variational import kernel as kr
from ccdyn.variational import sphere_configs as sc

__all__ = ["KernelConfig", "kernel_study"]


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
    # Prop. 4.4: RMS error of the width-M kernel against the limit, over vmapped seeds
    X = jax.random.normal(k(3), (8, 3))
    limit = kr.relu_limit_kernel(X)
    keys = jax.random.split(k(4), c.mc_seeds)
    rms = []
    for M in c.mc_Ms:
        errs = jax.vmap(lambda kk, M=M: jnp.mean(
            (kr.kernel(jax.random.normal(kk, (1, M, 3)), X)[0] - limit) ** 2))(keys)
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
        thm45.append(float(jnp.abs(v - kr.thm45_velocity(Bs, Xc, labels, centers, 0.5, "softplus")).max()
                           / jnp.abs(v).max()))
    order = sc.linear_fit(np.log(c.deltas), np.log(thm45))["slope"]
    Xc, labels, centers = _orthogonal_clusters(1e-3, sizes, k(9))
    cor = []
    for M in c.cor_Ms:
        rel = []
        for s in range(8):
            Bw = jax.random.normal(jax.random.fold_in(k(10), s), (4, M, 4))
            v = kr.flow_velocity(Bw, Xc, 0.5)
            rel.append(float(jnp.abs(v - kr.thm45_velocity(Bw, Xc, labels, centers, 0.5, beta=0.5)).max()
                             / jnp.abs(v).max()))
        cor.append(float(np.mean(rel)))
    cor_slope = sc.linear_fit(np.log(c.cor_Ms), np.log(cor))["slope"]
    rec = {"config": dataclasses.asdict(c), "ntk": ntk, "flow": flow,
           "mc": {"Ms": list(c.mc_Ms), "rms": rms, "fit": fit, "seeds": c.mc_seeds}, "thm42": gaps,
           "thm45": {"deltas": list(c.deltas), "rel_err": thm45, "order": order},
           "cor46": {"Ms": list(c.cor_Ms), "rel_err": cor, "slope": cor_slope}}
    return {**rec, "verdicts": claims.kernel_verdicts(rec)}
