"""Transition-regularized HLTM (TR-HLTM, Def. 3 of *Understanding Self-supervised Learning with Dual Deep
Networks*, App. C.2) on a small categorical tree, enumerated exactly, for Lemma 6 (Eq. 98-99), Lemma 7
and Lemma 9 (Eq. 166-171).

Def. 3: P_{mu nu} = [P(z_nu | z_mu)] (m_mu x m_nu) = 1 1^T / m_nu + C_{mu nu} with C 1 = 0 and 1^T C = 0.
:func:`tr_transition` draws such a matrix (C = both-sided centred random matrix, scaled to keep P > 0).

The tree of :func:`make_tree`: root z_0 (m_0 values, a non-uniform prior) -> z_mu -> two latents nu_1, nu_2
(its children) -> leaves (observed): nu_1 has ``leaves1`` leaves, nu_2 ``leaves2``. The nodes N_mu^ch are
``width`` ReLU nodes per child latent nu, each a function of the leaves under its nu:
f_k = relu(w_k . onehot(leaves) + b_k). :func:`enumerate_joint` lists every configuration with its
probability; :func:`brute_covariance` is V_{z_0}[E[f_{N_mu^ch} | z_0]] from it, :func:`lemma9_covariance`
the same through Eq. 99, 167 and 166 (v_k = E[f_k | z_nu] from nu's own subtree only).
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["tr_transition", "is_tr", "make_tree", "enumerate_joint", "node_activations", "brute_covariance",
           "brute_transition", "eq99_transition", "lemma9_covariance", "binary_c", "lemma7_residuals"]


def tr_transition(rng, m_from: int, m_to: int, strength: float = 0.9):
    """A TR transition matrix 1 1^T / m_to + C (Def. 3) with max |C| = strength / m_to (entries >= (1 -
    strength) / m_to > 0); ``rng`` a numpy Generator."""
    r = rng.uniform(size=(m_from, m_to))
    c = (np.eye(m_from) - 1.0 / m_from) @ r @ (np.eye(m_to) - 1.0 / m_to)
    return 1.0 / m_to + strength * c / (m_to * np.abs(c).max())


def is_tr(p, tol: float = 1e-12) -> bool:
    """Def. 3: rows sum to 1 and 1^T C = 0, i.e. every column sums to m_from / m_to."""
    m_from, m_to = p.shape
    return bool(np.abs(p.sum(1) - 1).max() < tol and np.abs(p.sum(0) - m_from / m_to).max() < tol)


def make_tree(seed: int = 0, m=(3, 3, 2, 4), leaf_m=(2, 3), leaves1: int = 2, leaves2: int = 1, width: int = 3,
              tr: bool = True) -> dict:
    """Root prior, transitions (0 -> mu -> nu_1, nu_2 -> leaves) and node weights; ``tr`` False replaces
    P_{mu nu_1} by a stochastic matrix that is not TR (a control for Eq. 99)."""
    rng = np.random.default_rng(seed)
    m0, mmu, m1, m2 = m
    prior = rng.uniform(size=m0) + 0.5
    t = {"0mu": tr_transition(rng, m0, mmu), "mu1": tr_transition(rng, mmu, m1), "mu2": tr_transition(rng, mmu, m2),
         "1leaf": tr_transition(rng, m1, leaf_m[0]), "2leaf": tr_transition(rng, m2, leaf_m[1])}
    if not tr:
        raw = rng.uniform(size=(mmu, m1)) + 0.2
        t["mu1"] = raw / raw.sum(1, keepdims=True)
    dims = (leaves1 * leaf_m[0], leaves2 * leaf_m[1])
    w = [rng.normal(size=(width, n)) for n in dims]
    b = [0.5 * rng.normal(size=width) for _ in dims]
    return {"prior": prior / prior.sum(), "t": t, "m": m, "leaf_m": leaf_m, "leaves": (leaves1, leaves2),
            "w": w, "b": b}


def _onehot(vals, m):
    return np.concatenate([np.eye(m)[v] for v in vals])


def node_activations(tree: dict, j: int, leaf_vals) -> np.ndarray:
    """f_k of the ``width`` nodes of child latent nu_{j+1} for the values of its leaves."""
    x = _onehot(leaf_vals, tree["leaf_m"][j])
    return np.maximum(tree["w"][j] @ x + tree["b"][j], 0.0)


def _leaf_configs(tree, j):
    return list(itertools.product(range(tree["leaf_m"][j]), repeat=tree["leaves"][j]))


def enumerate_joint(tree: dict):
    """(configs (z_0, z_mu, z_nu1, z_nu2), probabilities, activations f_{N_mu^ch}) over every joint value
    of the latents and the leaves."""
    m0, mmu, m1, m2 = tree["m"]
    t = tree["t"]
    rows, probs, acts = [], [], []
    for z0, zm, z1, z2 in itertools.product(range(m0), range(mmu), range(m1), range(m2)):
        base = tree["prior"][z0] * t["0mu"][z0, zm] * t["mu1"][zm, z1] * t["mu2"][zm, z2]
        for l1 in _leaf_configs(tree, 0):
            p1 = np.prod([t["1leaf"][z1, v] for v in l1])
            for l2 in _leaf_configs(tree, 1):
                p2 = np.prod([t["2leaf"][z2, v] for v in l2])
                rows.append((z0, zm, z1, z2))
                probs.append(base * p1 * p2)
                acts.append(np.concatenate([node_activations(tree, 0, l1), node_activations(tree, 1, l2)]))
    return np.array(rows), np.array(probs), np.array(acts)


def brute_covariance(tree: dict) -> np.ndarray:
    """V_{z_0}[E[f_{N_mu^ch} | z_0]] from the enumerated joint."""
    z, p, f = enumerate_joint(tree)
    m0 = tree["m"][0]
    p0 = np.array([p[z[:, 0] == v].sum() for v in range(m0)])
    cond = np.stack([(p[z[:, 0] == v] @ f[z[:, 0] == v]) / p0[v] for v in range(m0)])
    c = cond - p0 @ cond
    return (c.T * p0) @ c


def brute_transition(tree: dict, j: int) -> np.ndarray:
    """P(z_nu_{j+1} | z_0) from the enumerated joint."""
    z, p, _ = enumerate_joint(tree)
    m0, m_nu = tree["m"][0], tree["m"][2 + j]
    joint = np.array([[p[(z[:, 0] == a) & (z[:, 2 + j] == b)].sum() for b in range(m_nu)] for a in range(m0)])
    return joint / joint.sum(1, keepdims=True)


def eq99_transition(tree: dict, j: int) -> np.ndarray:
    """Eq. 99: P_{0 nu} = 1 1^T / m_nu + C_{0 mu} C_{mu nu} (C = P - 1 1^T / m_to)."""
    t, m_nu = tree["t"], tree["m"][2 + j]
    c0 = t["0mu"] - 1.0 / t["0mu"].shape[1]
    c1 = t["mu1" if j == 0 else "mu2"] - 1.0 / m_nu
    return 1.0 / m_nu + c0 @ c1


def lemma9_covariance(tree: dict) -> np.ndarray:
    """Eq. 166: V^T (P_0 - P_0 1 1^T P_0) V with columns v_{0k} = P_{0 nu} v_k (Eq. 167, P_{0 nu} by Eq. 99)
    and v_k = E[f_k | z_nu] from nu's own leaves."""
    cols = []
    for j in (0, 1):
        leaf_t = tree["t"]["1leaf" if j == 0 else "2leaf"]
        configs = _leaf_configs(tree, j)
        pl = np.array([[np.prod([leaf_t[zn, v] for v in cfg]) for cfg in configs] for zn in range(leaf_t.shape[0])])
        fk = np.stack([node_activations(tree, j, cfg) for cfg in configs])              # (configs, width)
        cols.append(eq99_transition(tree, j) @ (pl @ fk))                                 # (m_0, width)
    v0 = np.concatenate(cols, axis=1)
    p0 = np.diag(tree["prior"])
    one = np.ones((p0.shape[0], 1))
    return v0.T @ (p0 - p0.T @ one @ one.T @ p0) @ v0


def binary_c(rho):
    """C(rho) = rho q q^T / 2, q = [-1, 1] (Eq. 102)."""
    q = np.array([-1.0, 1.0])
    return 0.5 * rho * np.outer(q, q)


def lemma7_residuals(n: int = 41) -> dict:
    """Lemma 7 on the grid of every binary transition [[1 - a, a], [b, 1 - b]], a, b in [0, 1] (n x n):
    Def. 3 holds exactly on the diagonal a = b; there C = C(rho) with rho = 2 P(1 | 1) - 1 in [-1, 1]
    (Eq. 102); and C(rho_1) C(rho_2) = C(rho_1 rho_2) (Eq. 103)."""
    grid = np.linspace(0.0, 1.0, n)
    tr_off_diag, c_res, rhos = 0, 0.0, []
    for a, b in itertools.product(grid, grid):
        p = np.array([[1 - a, a], [b, 1 - b]])
        if is_tr(p) != (a == b):
            tr_off_diag += 1
        if a == b:
            rho = 2 * p[1, 1] - 1
            rhos.append(rho)
            c_res = max(c_res, np.abs(p - 0.5 - binary_c(rho)).max())
    closure = max(np.abs(binary_c(r1) @ binary_c(r2) - binary_c(r1 * r2)).max() for r1 in rhos for r2 in rhos)
    return {"grid": n * n, "tr_iff_symmetric_mismatches": tr_off_diag, "c_residual": float(c_res),
            "rho_range": [float(min(rhos)), float(max(rhos))], "closure_residual": float(closure)}
