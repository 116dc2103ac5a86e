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
    steps = near["steps_to_1e-12"]  # the converged count and the steps column, against the moves themselves
    span = f"{min(steps)}-{max(steps)}" if min(steps) < max(steps) else str(min(steps))
    assert lines[0].split()[:3] == ["ortho_eps", "converged", "steps"] and len(lines) == 4
    assert lines[2].split()[:6] == ["0", "6", "1", "1.0000", "6", "6"]
    assert lines[3].split()[:6] == ["0.1", str(int(np.sum(np.any(moves < 1e-12, axis=1)))), span, "0.9994", "6", "6"]
    key = " ".join(" ".join(fig1.table_key(40)).split())  # (wrapped lines: their indent is not part of the text)
    assert all(c + ":" in key for c in fig1.TABLE_COLUMNS) and "within 40 steps" in key


def test_the_table_counts_a_start_that_does_not_converge():
    """A start whose moves never fall below 1e-12 is not counted and leaves the steps column (hand-made record)."""
    moves = np.array([[1e-3, 1e-13], [1e-3, 1e-4], [1e-13, 1e-14]])
    r = {"moves": moves, "overlap_with_start": np.ones(3), "stable": [True, False, True],
         "steps_to_1e-12": fig1._moves_to(moves)}
    assert r["steps_to_1e-12"] == [2, None, 1]
    none = {**r, "steps_to_1e-12": [None] * 3}
    lines = fig1.table({"ortho_eps": {"0.2": r, "0.3": none}}).splitlines()
    assert lines[2].split()[:3] == ["0.2", "2", "1-2"] and lines[3].split()[:3] == ["0.3", "0", "-"]
