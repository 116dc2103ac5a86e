"""ccdyn.one_layer.studies.landscape_fig8: Fig. 8's maxima on the circle, its data and record."""

import numpy as np
import pytest

from ccdyn import data
from ccdyn.one_layer.studies import landscape_fig8 as fig8


def test_maxima_per_activation_on_the_paper_points():
    rec = fig8.run(fig8.Fig8Config(acts=("relu", "linear"), n_grid=4096))
    relu, linear = rec["activations"]["relu"], rec["activations"]["linear"]
    assert linear["n_local_maxima"] == 2 and linear["n_smooth_critical"] == 2  # +-phi_1
    assert relu["n_local_maxima"] >= 8 and len(relu["maxima_theta"]) == relu["n_local_maxima"]
    np.testing.assert_allclose(relu["maxima_theta_over_pi"], np.asarray(relu["maxima_theta"]) / np.pi)
    c = rec["config"]
    np.testing.assert_allclose(c["angles_over_pi"], data.PAPER_ANGLES, atol=1e-12)
    assert c["aug"] == "none" and c["aug_range"] is None and c["data_path"] is None and c["dtype"] == "float64"
    curves = rec["curves"]
    assert curves["theta"].shape == (4096,) and set(curves["energy"]) == {"relu", "linear"}
    lines = fig8.table(rec).splitlines()
    assert lines[0].split()[:2] == ["activation", "maxima"] and lines[3].split()[:4] == ["linear", "2", "2", "0"]
    key = " ".join(" ".join(fig8.table_key(4096)).split())
    assert all(f"{c}:" in key for c in fig8.TABLE_COLUMNS[1:]) and "4096 grid angles" in key


def test_points_user_data_and_rotation_views():
    cfg = fig8.Fig8Config(acts=("relu",), aug="rotation", aug_range=0.25, aug_views=8, n_grid=256)
    ds = fig8.points(cfg, data.circle([0.0, 0.5, 1.0]))
    assert ds.x.shape == (3, 2) and ds.x_aug.shape[:2] == (3, 8)
    rec = fig8.run(cfg, ds)
    assert rec["config"]["aug_range"] == 0.25 and rec["config"]["aug_views"] == 8
    np.testing.assert_allclose(rec["config"]["angles_over_pi"], [0.0, 0.5, 1.0], atol=1e-12)
    with pytest.raises(ValueError, match="must hold 2-D points"):
        fig8.points(cfg, data.make_dataset(x=np.ones((4, 3))))
