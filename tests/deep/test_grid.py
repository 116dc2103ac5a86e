"""The HLTM grid (ccdyn.deep.studies.hltm_grid) and the Table 6 claims (ccdyn.deep.claims), in process on
hand-made records: no training."""

import numpy as np
import pytest

from ccdyn.deep import claims
from ccdyn.deep.studies import hltm_grid


def _record(width, delta, nc_by_latent, reading="paper", n_seeds=3):
    names = [f"s{b}" for b in ["", "0", "1"]] + ["s101", "s0111"]
    epochs = [0, 1, 5]
    nc = np.zeros((n_seeds, len(epochs), len(names)))
    for j, name in enumerate(names):
        nc[:, :, j] = np.asarray(nc_by_latent[name])[None, :] + np.linspace(-0.01, 0.01, n_seeds)[:, None]
    return {"setting": {"reading": reading, "depth": 5, "width": width, "delta_lower": delta}, "latents": names,
            "epochs": epochs, "nc": nc.tolist(), "op": np.ones_like(nc).tolist(), "op_authors": nc.tolist()}


def _paper_like(width, delta):
    """NC following the paper's Table 6 means of that cell."""
    return {lat: [claims.PAPER_TABLE6[lat][delta][width][k][0] for k in range(3)]
            for lat in hltm_grid.TABLE6_LATENTS}


def test_grid_settings_and_validation():
    g = hltm_grid.GridConfig(n_seeds=2, epochs=3, eval_every=2)
    assert [s.tag for s in g.settings()][:2] == ["paper-L5-w2-d0.7", "paper-L5-w2-d0.8"]
    assert g.eval_epochs() == [0, 1, 2, 3] and g.run_steps() == 6 * 2 * 3 * 500
    with pytest.raises(ValueError, match="reading"):
        hltm_grid.GridConfig(readings=("nope",))
    assert g.run_config() == {"n_seeds": 2, "seed": 0, "tau": g.tau, "lr": g.lr, "batch_size": g.batch_size,
                              "samples_per_epoch": g.samples_per_epoch, "epochs": 3, "n_eval": g.n_eval, "eval_every": 2}
    assert hltm_grid.GridConfig(deltas_lower=(1,)).settings()[0].delta_lower == 1.0  # as from the flags: a float


def test_table6_rows_comparison_and_trends():
    records = [_record(w, d, _paper_like(w, d)) for w in (2, 10) for d in (0.7, 0.8, 0.9)]
    rows = hltm_grid.table6_rows(records)
    assert len(rows) == 30 and rows[0]["converged_epoch"] == 5
    np.testing.assert_allclose(rows[0]["init"]["std"], np.std([-0.01, 0.0, 0.01]))
    cells = claims.table6_cells(rows)
    assert len(cells) == 90
    c = claims.comparison(cells)
    assert c["n"] == 90 and c["mean_abs_diff"] < 1e-9 and c["corr"] > 0.999999
    assert [claims.verdict_word(v) for v in claims.check_trends({k[:4]: k[4][0] for k in cells})] == ["holds"] * 3
    # a table where width does not matter and the root is the easiest latent: trends (1) and (3) fail
    flat = {(lat, d, w, ph): (0.9 if lat == "s" else 0.5) for lat in hltm_grid.TABLE6_LATENTS
            for d in (0.7, 0.8) for w in (2, 10) for ph in hltm_grid.PHASES}
    words = [claims.verdict_word(v) for v in claims.check_trends(flat)]
    assert words[0] == "fails" and words[2] == "fails" and words[1] == "partly"
    md = claims.table6_markdown(cells)
    assert md.count("\n") == 2 + 5 * 3 * 3 - 1 and "0.35 ± 0.20" in md
    assert claims.table6_markdown(cells, ("init", "converged"), ("s",)).count("z_s ") == 6
    header, body = hltm_grid.results_csv(rows)
    assert len(header) == len(body[0]) == 13


def test_figure_panels_hold_the_other_factors_fixed():
    records = [_record(w, d, _paper_like(w, d)) for w in (2, 10) for d in (0.7, 0.8, 0.9)]
    panels = hltm_grid.figure_panels(records)
    assert set(panels) == {"delta_lower (depth L 5, |N_mu| 10)", "|N_mu| (depth L 5, delta_lower 0.8)"}
    assert set(panels["|N_mu| (depth L 5, delta_lower 0.8)"]) == {"|N_mu| = 2", "|N_mu| = 10"}
    ep, med = panels["delta_lower (depth L 5, |N_mu| 10)"]["delta_lower = 0.9"]["s0"]
    assert list(ep) == [0, 1, 5] and np.allclose(med, 1.0)


def test_a_seed_that_went_non_finite_is_left_out_and_counted():
    """A record whose seed 1 has NaN scores (run_setting's ``finite`` False): the Table 6 means and the
    figure medians are those of the other seeds, the row counts it; an old record (no ``finite``) is as before."""
    rec = _record(10, 0.8, _paper_like(10, 0.8))
    nc = np.asarray(rec["nc"])
    bad = dict(rec, nc=np.where(np.arange(3)[:, None, None] == 1, np.nan, nc).tolist(), finite=[True, False, True])
    row, old = hltm_grid.table6_rows([bad])[0], hltm_grid.table6_rows([rec])[0]
    assert row["n_seeds"] == 2 and row["nonfinite_seeds"] == 1 and "nonfinite_seeds" not in old
    np.testing.assert_allclose(row["init"]["mean"], np.mean(nc[[0, 2], 0, 0]))
    np.testing.assert_allclose(old["init"]["mean"], np.mean(nc[:, 0, 0]))
    curves = hltm_grid.op_curves([dict(bad, op=bad["nc"])], "op")
    assert all(np.all(np.isfinite(v[1])) for v in curves.values())
    assert hltm_grid.finite_seeds(rec).tolist() == [True] * 3
