"""ccdyn.one_layer.studies.fig1: power iteration from u_m converges to a certified optimum next to u_m."""

import numpy as np

from ccdyn.one_layer.studies import fig1


def test_power_iteration_from_the_patterns():
    rec = fig1.run(fig1.Fig1Config(d=6, m=6, ortho_eps=(0.0, 0.1), n_steps=40))
    assert rec["config"]["ortho_eps"] == (0.0, 0.1) and rec["config"]["dtype"] == "float64"
    exact, near = rec["ortho_eps"]["0.0"], rec["ortho_eps"]["0.1"]
    assert exact["steps_to_1e-12"] == [1] * 6  # u_m is exactly a fixed point of an orthogonal basis (Eq. 9)
    np.testing.assert_allclose(exact["overlap_with_start"], 1.0, atol=1e-12)
    assert all(near["stable"]) and all(near["is_lme"]) and min(near["overlap_with_start"]) > 0.99
    moves = np.asarray(near["moves"])
    assert moves.shape == (6, 40) and np.all(moves[:, -1] < 1e-12)
    assert all(1 < s <= 40 for s in near["steps_to_1e-12"])
    lines = fig1.table(rec).splitlines()
    assert lines[0].split()[0] == "ortho_eps" and len(lines) == 4 and lines[3].split()[:4] == ["0.1", "0.9994", "6", "6"]
