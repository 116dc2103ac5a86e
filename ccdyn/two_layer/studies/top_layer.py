"""The record behind ``results/theory/top_layer`` (``scripts/top_layer.py``): core Sec. 4's "a stationary V is
v s^T with s the maximal eigenvector of C_alpha[f_1], so S is rank 1" (:mod:`ccdyn.two_layer.top_layer`).
A frozen :class:`TopLayerConfig` in, a plain dict of numbers out (no I/O).

C = V[f_1] (uniform alpha, no augmentation: Cor. 1) of a random ReLU bottom layer f_1 = relu(W x) on a
discrete population of ``n_points`` inputs. Per draw: the exact flow against RK4, S after ``t_end`` from
random starts against s_max s_max^T, and every V = v s_i^T: its stationarity residual and its unstable rate
against lambda_max - lambda_i.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ccdyn.two_layer import top_layer as tl

__all__ = ["TopLayerConfig", "run"]


@dataclasses.dataclass(frozen=True)
class TopLayerConfig:
    d_in: int = 5
    hidden: int = 6  # K M, the length of f_1
    d_out: int = 3
    n_points: int = 40
    draws: int = 8
    t_end: float = 200.0
    seed: int = 0


def run(c: TopLayerConfig = TopLayerConfig()) -> dict:
    rng = np.random.default_rng(c.seed)
    rows = []
    for _ in range(c.draws):
        X = rng.normal(size=(c.n_points, c.d_in))
        f1 = np.maximum(X @ rng.normal(size=(c.hidden, c.d_in)).T, 0.0)
        C = np.cov(f1.T, bias=True)
        lam, Q = np.linalg.eigh(C)
        V0 = rng.normal(size=(c.d_out, c.hidden))
        V0 /= np.linalg.norm(V0)
        rk4 = float(np.abs(tl.exact_flow(V0, C, 2.0) - tl.rk4_flow(V0, C, 2.0, 400)).max())
        VT = tl.exact_flow(V0, C, c.t_end)
        S = VT.T @ VT
        sv = np.linalg.svd(S, compute_uv=False)
        v = rng.normal(size=c.d_out)
        v /= np.linalg.norm(v)
        resid = [tl.stationary_residual(np.outer(v, Q[:, i]), C) for i in range(c.hidden)]
        rates = [tl.unstable_rate(np.outer(v, Q[:, i]), C) for i in range(c.hidden)]
        rows.append({"eig_gap_top": float(lam[-1] - lam[-2]), "min_eig_spacing": float(np.min(np.diff(lam))),
                     "rk4_vs_exact": rk4, "S_minus_top_outer": float(np.abs(S - np.outer(Q[:, -1], Q[:, -1])).max()),
                     "S_second_singular_value": float(sv[1]),
                     "start_residual": tl.stationary_residual(V0, C),
                     "max_residual_v_si": max(resid),
                     "rate_rel_err": float(np.max(np.abs(np.array(rates) - (lam[-1] - lam))) / (lam[-1] - lam[0])),
                     "min_rate_non_top": float(min(rates[:-1]))})
    return {"config": dataclasses.asdict(c), "rows": rows}
