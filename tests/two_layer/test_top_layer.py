"""ccdyn.two_layer.top_layer and the rank-1 S claim: the exact normalized flow against RK4 and against the
tangent-space velocity, stationary points v s_i^T and their unstable rates against lambda_max - lambda_i."""

import copy
from pathlib import Path

import numpy as np

from ccdyn import io
from ccdyn.two_layer import claims
from ccdyn.two_layer import top_layer as tl


def _c(seed=0, n=5):
    A = np.random.default_rng(seed).normal(size=(n, n))
    return A @ A.T / n


def test_exact_flow_solves_the_projected_ode():
    C = _c()
    V0 = np.random.default_rng(1).normal(size=(3, 5))
    V0 /= np.linalg.norm(V0)
    assert np.abs(tl.exact_flow(V0, C, 1.5) - tl.rk4_flow(V0, C, 1.5, 300)).max() < 1e-9
    h = 1e-6  # central difference in t of the exact solution = the velocity
    dV = (tl.exact_flow(V0, C, 0.7 + h) - tl.exact_flow(V0, C, 0.7 - h)) / (2 * h)
    assert np.abs(dV - tl.velocity(tl.exact_flow(V0, C, 0.7), C)).max() < 1e-8
    VT = tl.exact_flow(V0, C, 300.0)
    top = np.linalg.eigh(C)[1][:, -1]
    assert np.abs(VT.T @ VT - np.outer(top, top)).max() < 1e-12


def test_every_eigenvector_gives_a_stationary_point_only_the_top_is_stable():
    C = _c(2)
    lam, Q = np.linalg.eigh(C)
    v = np.array([0.6, 0.8, 0.0])
    for i in range(5):
        V = np.outer(v, Q[:, i])
        assert tl.stationary_residual(V, C) < 1e-13
        assert abs(tl.unstable_rate(V, C) - (lam[-1] - lam[i])) < 1e-4 * (lam[-1] - lam[0])
    mixed = np.outer(v, Q[:, 0] + Q[:, 4]) / np.sqrt(2)  # rank-1 S, but not an eigenvector: not stationary
    assert tl.stationary_residual(mixed, C) > 1e-2


def test_claims_from_the_committed_record():
    rec = io.read_json(Path(__file__).resolve().parents[2] / "results/theory/top_layer/top_layer.json")
    (c,) = claims.top_layer_claims(rec)
    assert c == rec["claims"][0] and c["verdict"] == "partly"
    assert list(c["parts"].values()) == [True, True, True, False]
    bad = copy.deepcopy(rec)
    bad["rows"][0]["S_minus_top_outer"] = 1e-3
    bad["rows"][0]["min_rate_non_top"] = -0.1
    assert list(claims.top_layer_claims(bad)[0]["parts"].values()) == [False, True, False, False]
