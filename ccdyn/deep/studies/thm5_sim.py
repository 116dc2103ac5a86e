"""DDN Thm. 5 simulated (App. C.4, Eq. 128-130): lucky nodes at initialization. One SB-HLTM layer: a parent
latent z_mu (uniform), N_ch children with binary latents z_nu, P(z_nu = z_mu) = (1 + rho)/2 (polarity rho),
and child activations f_k = v_k(z_nu) >= 0 (sigma_l = 0: deterministic given z_nu; selectivity
s_k = (v_k(1) - v_k(0))/2). A layer of |N_mu| ReLU nodes f_j = max(0, sum_k w_jk f_k) with w_jk ~
U[-sigma_w sqrt(3/N_ch), sigma_w sqrt(3/N_ch)] (the theorem's initialization). Node j is *lucky* when its
pre-activation gap 2 w_j^T a_mu > 0 (a_mu = rho s) and |s_j| >= the right side of Eq. 130, with
v_j(z_mu) = E[f_j | z_mu] (so s_j = (v_j(1) - v_j(0))/2, v_bar_j their mean) estimated by Monte Carlo over
z on common draws. Thm. 5: with |N_mu| >= Eq. 128's width, some node is lucky with probability >= 1 - eta.
Each trial draws W afresh; the fraction of trials with a lucky node, with its Wilson interval, is compared
with 1 - eta at the printed width (Eq. 128), at the width with Eq. 114's exponent c / 2(1 - gamma^2)
(``lucky.width_eq128(corrected=True)``) and at a tenth of the printed one. A frozen :class:`Thm5SimConfig`
in, a plain dict out (no I/O).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ccdyn import stats
from ccdyn.deep import lucky

__all__ = ["Thm5SimConfig", "run"]


@dataclasses.dataclass(frozen=True)
class Thm5SimConfig:
    n_children: int = 20
    rho: float = 0.95
    c: float = 2.0
    eta: float = 0.1
    sigma_w: float = 1.0
    n_z: int = 2000  # Monte Carlo draws of z per z_mu (common to every node)
    trials: int = 100  # fresh W per trial
    widths: tuple = ("eq128", "eq128_exponent_c_over_2(1-g^2)", "tenth_of_eq128")  # the widths simulated
    seed: int = 0


def run(c: Thm5SimConfig = Thm5SimConfig()) -> dict:
    rng = np.random.default_rng(c.seed)
    v1, v0 = rng.uniform(0.0, 2.0, c.n_children), rng.uniform(0.0, 2.0, c.n_children)
    s, h = (v1 - v0) / 2, (v1 + v0) / 2
    a = c.rho * s
    gamma = float((h @ h - a @ a) / (np.linalg.norm(h + a) * np.linalg.norm(h - a)))   # Eq. 129 / 146
    bracket = float(np.mean(s ** 2 * ((c.c + 6) / 6 * c.rho ** 2 - 1)))                # Eq. 130, sigma_l = 0
    ln = math.log(1 / c.eta)
    widths = {"eq128": lucky.width_eq128(c.c, gamma, ln), "eq128_exponent_c_over_2(1-g^2)":
              lucky.width_eq128(c.c, gamma, ln, corrected=True)}
    widths["tenth_of_eq128"] = widths["eq128"] / 10
    # child activations on common z draws: z_nu = z_mu with probability (1 + rho)/2
    f = {}
    for zmu in (0, 1):
        agree = rng.uniform(size=(c.n_z, c.n_children)) < (1 + c.rho) / 2
        znu = np.where(agree, zmu, 1 - zmu)
        f[zmu] = np.where(znu == 1, v1, v0)                                              # (n_z, N_ch)
    bound = c.sigma_w * math.sqrt(3.0 / c.n_children)
    rows = []
    for name, width in widths.items():
        if name not in c.widths:
            continue
        n_nodes = max(1, math.ceil(width))
        hits, lucky_fraction = 0, []
        for _ in range(c.trials):
            W = rng.uniform(-bound, bound, size=(n_nodes, c.n_children))
            vj = {z: np.maximum(f[z] @ W.T, 0.0).mean(axis=0) for z in (0, 1)}            # E[f_j | z_mu]
            sj, vbar = (vj[1] - vj[0]) / 2, (vj[1] + vj[0]) / 2
            rhs = 3 * c.sigma_w ** 2 / (4 * np.maximum(vbar, 1e-300)) * bracket
            ok = (W @ a > 0) & (np.abs(sj) >= rhs)
            hits += bool(ok.any())
            lucky_fraction.append(float(ok.mean()))
        lo, hi = (float(v) for v in stats.wilson_interval(hits, c.trials, z=1.96))
        rows.append({"width": name, "n_nodes": n_nodes, "trials": c.trials, "with_lucky_node": hits,
                     "fraction": hits / c.trials, "wilson95": [lo, hi], "mean_lucky_node_fraction":
                     float(np.mean(lucky_fraction))})
    return {"config": dataclasses.asdict(c), "gamma": gamma, "bracket": bracket, "widths": widths,
            "event_probability_eq145": lucky.event_probability(c.c, gamma), "rows": rows}
