"""App. A.1 of the SimCLR variational paper: with an invariant map f, the VICReg and BYOL losses depend on
the data only through the embedded distribution f#mu (their invariance terms vanish), as Prop. 2.1 says
for NT-Xent. Checked like Prop. 2.1: two different inputs (R^4 with 2 views, R^6 with 3 views, other
multiplicities and view probabilities) whose latent measure under an invariant map is the same
rho = sum_k r_k delta_{u_k}; each loss is evaluated exactly on each input (every n-tuple of support points
and every pair of views enumerated, with their probabilities) and on rho directly. A map that is not
invariant is the control: there the two inputs' losses differ.

VICReg (Bardes et al. 2021, as App. A.1 writes it): for a batch of n points and two views T, T',
lambda_1 / n sum_i ||f(T x_i) - f(T' x_i)||^2 + lambda_2 (v(Z) + v(Z')) + lambda_3 (c(Z) + c(Z')), with
v(Z) = (1/d) sum_j max(0, gamma - sqrt(Var_j(Z) + eps)) and c(Z) = (1/d) sum_{i != j} Cov(Z)_ij^2 (the batch
variance and covariance, 1/(n - 1)). BYOL: E ||q(f(T x)) - f(T' x)||^2 for a fixed predictor q.
A frozen :class:`A1Config` in, a plain dict out (no I/O).
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np

__all__ = ["A1Config", "run", "vicreg_batch", "inputs"]


@dataclasses.dataclass(frozen=True)
class A1Config:
    n: int = 3  # batch size of VICReg (the expectation enumerates every n-tuple)
    lambdas: tuple = (25.0, 25.0, 1.0)  # lambda_1..3 (VICReg's defaults)
    gamma: float = 1.0
    eps: float = 1e-4
    seed: int = 0


U = np.array([[1.0, 0.0], [0.0, 1.0], [-0.6, -0.8]])  # the latent atoms u_k
R = np.array([0.5, 0.3, 0.2])  # their masses r_k


def inputs(seed: int = 0) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Two inputs with the same latent measure: name -> (x (m, V, D) support points by view, p (m,), q (V,))."""
    out: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for name, (D, per, V, s) in {"a": (4, (2, 1, 3), 2, seed), "b": (6, (1, 4, 1), 3, seed + 1)}.items():
        rng = np.random.default_rng(s)
        xs, ps = [], []
        for k, m in enumerate(per):
            for _ in range(m):
                base = np.concatenate([rng.uniform(0.5, 3.0) * U[k], np.zeros(D - 2)])
                xs.append([base + np.concatenate([np.zeros(2), rng.normal(size=D - 2)]) for _ in range(V)])
                ps.append(R[k] / m)
        out[name] = (np.array(xs), np.array(ps), rng.dirichlet(np.ones(V)))
    return out


def invariant(x):
    """f(x) = x[:2] / |x[:2]|: the views differ only in coordinates >= 2 and the scale, so f(T x) = u_k."""
    return x[..., :2] / np.linalg.norm(x[..., :2], axis=-1, keepdims=True)


def not_invariant(x):
    """The control: the third coordinate (where the views differ) leaks into the embedding."""
    return invariant(x) + 0.3 * x[..., 2:3]


def vicreg_batch(z1, z2, c: A1Config) -> float:
    l1, l2, l3 = c.lambdas
    n, d = z1.shape

    def v(z):
        return float(np.mean(np.maximum(0.0, c.gamma - np.sqrt(z.var(axis=0, ddof=1) + c.eps))))

    def cov(z):
        m = np.cov(z, rowvar=False, ddof=1)
        return float((np.sum(m ** 2) - np.sum(np.diag(m) ** 2)) / d)

    return l1 / n * float(np.sum((z1 - z2) ** 2)) + l2 * (v(z1) + v(z2)) + l3 * (cov(z1) + cov(z2))


def _predictor(y):
    """A fixed BYOL predictor q: R^2 -> R^2 (any q will do; the claim is for every q)."""
    return np.tanh(y @ np.array([[0.9, -0.4], [0.3, 1.1]]) + np.array([0.1, -0.2]))


def _losses(x, p, q, f, c: A1Config) -> tuple:
    z = f(x)                                                            # (m, V, d)
    m, V = p.shape[0], q.shape[0]
    vic = 0.0
    for idx in itertools.product(range(m), repeat=c.n):
        w = np.prod(p[list(idx)])
        for a in range(V):
            for b in range(V):
                vic += w * q[a] * q[b] * vicreg_batch(z[list(idx), a], z[list(idx), b], c)
    byol = sum(p[i] * q[a] * q[b] * float(np.sum((_predictor(z[i, a]) - z[i, b]) ** 2))
               for i in range(m) for a in range(V) for b in range(V))
    return vic, byol


def run(c: A1Config = A1Config()) -> dict:
    ins = inputs(c.seed)
    out = {name: {"invariant": _losses(*xpq, invariant, c), "not_invariant": _losses(*xpq, not_invariant, c)}
           for name, xpq in ins.items()}
    # the latent forms: min over rho of E_{y ~ rho} lambda_2 (2 v) + lambda_3 (2 c); E_{y ~ rho} ||q(y) - y||^2
    vic_latent = 0.0
    for idx in itertools.product(range(len(R)), repeat=c.n):
        y = U[list(idx)]
        vic_latent += np.prod(R[list(idx)]) * vicreg_batch(y, y, c)
    byol_latent = float(sum(R[k] * np.sum((_predictor(U[k]) - U[k]) ** 2) for k in range(len(R))))
    return {"config": dataclasses.asdict(c),
            "vicreg": {"input_a": out["a"]["invariant"][0], "input_b": out["b"]["invariant"][0], "latent": vic_latent,
                       "not_invariant_a": out["a"]["not_invariant"][0],
                       "not_invariant_b": out["b"]["not_invariant"][0]},
            "byol": {"input_a": out["a"]["invariant"][1], "input_b": out["b"]["invariant"][1], "latent": byol_latent,
                     "not_invariant_a": out["a"]["not_invariant"][1], "not_invariant_b": out["b"]["not_invariant"][1]}}
