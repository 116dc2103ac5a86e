"""ccdyn.two_layer.modulation_exact and the Eq. 151 / 156-157 claims: the exact P[E_l] against Eq. 155's closed
form (one modulated component), Monte Carlo and a midpoint grid (every component modulated); Eq. 151 against a
40-digit derivative of Eq. 150; the printed bounds' failures on hand-made cases."""

import copy
from pathlib import Path

import mpmath
import numpy as np
import pytest

from ccdyn import io
from ccdyn.two_layer import claims
from ccdyn.two_layer import modulation as mod
from ccdyn.two_layer import modulation_exact as me


@pytest.mark.parametrize("d", [2, 3, 6])
def test_one_modulated_component_is_eq155(d):
    for eps in (-1.7, -1.0, -0.4, 0.0, 0.25, 0.9, 1.0, 1.3):
        v = np.zeros(d)
        v[0] = eps
        assert abs(me.p_win(v, 0) - mod.p_converge(eps, d)) < 1e-14


def test_general_modulation_against_monte_carlo_and_a_grid():
    rng = np.random.default_rng(1)
    eps = rng.uniform(-1.2, 1.2, 5)
    exact = np.array([me.p_win(eps, l) for l in range(5)])
    Y = rng.uniform(-1, 1, (400_000, 5))
    win = np.argmax(Y + eps, axis=1)
    mc = np.array([np.mean((win == l) & (Y[np.arange(len(Y)), win] >= 0)) for l in range(5)])
    assert np.all(np.abs(mc - exact) < 5 * np.sqrt(exact * (1 - exact) / len(Y)) + 1e-6)
    y = (np.arange(200_000) + 0.5) / 200_000  # midpoint rule of Eq. 154 with every component shifted
    for l in range(5):
        F = np.clip((y[:, None] + eps[l] - np.delete(eps, l)[None, :] + 1) / 2, 0, 1)
        assert abs(0.5 * np.mean(np.prod(F, axis=1)) - exact[l]) < 1e-8


def test_eq151_is_the_derivative_of_eq150():
    with mpmath.workdps(40):
        for y0 in (0.05, 2.0):
            for x in (1e-5, 0.3, 7.0, 1e4):
                b = mpmath.mpf(x) * y0
                ref = mpmath.diff(lambda bb: mpmath.log1p(bb / y0) / bb, b)
                printed = (b / y0 / (1 + b / y0) - mpmath.log1p(b / y0)) / b ** 2  # Eq. 151 at 40 digits
                assert abs(printed / ref - 1) < 1e-25 and printed < 0
                assert abs(me.dt_db_eq151(float(b), y0) / float(ref) - 1) < 1e-9
                assert abs(me.t_star(float(b), y0) - float(mpmath.log1p(b / y0) / b)) < 1e-14 * float(1 / y0)


def test_printed_bounds_fail_where_the_record_says():
    assert me.eq156_bound([1.5, 0.0]) == 0.75 and me.p_win([1.5, 0.0], 0) == pytest.approx(0.5, abs=1e-15)
    eps = [3.0, 3.0, 0.0]
    assert me.eq157_bound(eps, 3) < 0 and me.p_win(eps, 2) == 0.0
    assert me.eq157_bound([0.4, 0.1, -0.2], 3) >= me.p_win([0.4, 0.1, -0.2], 2)


def test_claims_from_the_committed_record():
    path = Path(__file__).resolve().parents[2] / "results/theory/modulation_bounds/modulation_bounds.json"
    rec = io.read_json(path)
    got = claims.modulation_bounds_claims(rec)
    assert got == rec["claims"] and [c["verdict"] for c in got] == ["holds", "partly"]
    assert list(got[1]["parts"].values()) == [True, True, False, True]
    bad = copy.deepcopy(rec)
    bad["eq151"]["max_value"] = 1e-3
    bad["rows"][0]["eq156_violations"]["small"] = 1
    bad["rows"][0]["corrected_violations"]["eq157"] = 1
    b1, b2 = claims.modulation_bounds_claims(bad)
    assert b1["verdict"] == "partly" and list(b2["parts"].values()) == [False, True, False, False]
