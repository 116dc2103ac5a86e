"""ccdyn.deep.studies.appendix_forms: DDN's remark after Eq. 2, Eq. 59 and Eq. 125 against direct
evaluation, autodiff and 40-digit quadrature."""

import dataclasses

import jax
import pytest

from ccdyn.deep import claims
from ccdyn.deep.studies import appendix_forms as af

SMALL = af.DDNFormsConfig(taus=(0.5,), H=(1, 4), n_samples=2000, margins=(0.0,), ys=(1e-2, 1.0, 100.0))


@pytest.mark.slow  # 2.7 s
def test_remark_eq2_and_eq125():
    r = af.remark_eq2(SMALL, jax.random.PRNGKey(0))
    assert r["max_abs_identity_err"] < 1e-14 and r["max_rel_loss_diff"] < 1e-13
    rows = af.eq125(SMALL)["rows"]
    assert all(x["holds"] for x in rows)
    assert rows[1]["r"] == pytest.approx(0.6556795424187985, rel=1e-14)  # r(1) = sqrt(pi/2) e^{1/2} erfc(1/sqrt 2)


@pytest.mark.slow  # 2 s
def test_eq59_derivatives_stay_in_their_range_and_the_bound():
    rows = af.eq59(SMALL, jax.random.PRNGKey(1))["rows"]
    for r in rows:
        assert r["max_abs_eps"] <= r["bound"] + 1e-12
        assert -r["sup_abs_eps"] - 1e-12 <= r["derivative_range"][0] and r["derivative_range"][1] <= 0
    nce = next(r for r in rows if r["loss"] == "nce" and r["H"] == 1)
    assert nce["max_abs_eps"] > 0.9 * nce["sup_abs_eps"]  # the configurations reach the extremes


@pytest.mark.slow
def test_eq79_residue_is_within_its_bound_and_zero_without_augmentation():
    cfg = af.DDNFormsConfig(eq79_sizes=(3, 4, 2), eq79_sigmas=(0.0, 0.2))
    rows = af.eq79(cfg, jax.random.PRNGKey(2))["rows"]
    assert len(rows) == 2 * 2 * 2
    for r in rows:
        if r["sigma"] == 0:
            assert r["theta_w"] < 1e-12
        else:
            assert 0 < r["theta_w"] <= r["bound_times_w"]
    nce, tri = ([r["theta_w"] for r in rows if r["loss"] == loss and r["sigma"] > 0] for loss in ("nce", "tri"))
    assert nce == pytest.approx([2 * t for t in tri], rel=1e-9)  # r0 = 0: L_tri = tau L_nce (tau = 0.5)


def test_claims_words():
    key = jax.random.PRNGKey(0)
    rows79 = [{"sigma": 0.0, "layer": 1, "loss": "nce", "theta_w": 0.0, "bound_times_w": 0.0},
              {"sigma": 0.1, "layer": 1, "loss": "nce", "theta_w": 0.001, "bound_times_w": 1.0}]
    record = {"remark_eq2": af.remark_eq2(SMALL, key), "eq59": af.eq59(SMALL, key), "eq125": af.eq125(SMALL),
              "eq79": {"rows": rows79}, "command": "python scripts/appendix_forms.py --overwrite"}
    words = {c["id"]: c["verdict"] for c in claims.appendix_forms_claims(record)}
    assert words == {"ddn-eq79": "holds", "ddn-remark-eq2": "holds", "ddn-eq59": "holds", "ddn-eq125": "holds"}
    broken = dict(record, eq79={"rows": [rows79[0], dict(rows79[1], theta_w=2.0)]})
    assert {c["id"]: c["verdict"] for c in claims.appendix_forms_claims(broken)}["ddn-eq79"] == "partly"


def test_thm5_simulation_counts_lucky_nodes():
    """A tiny run: the layer's statistics match their definitions and the claim's word follows the counts;
    with a polarity below Eq. 130's threshold (bracket < 0) every node with a positive gap is lucky."""
    from ccdyn.deep import lucky
    from ccdyn.deep.studies import thm5_sim

    cfg = thm5_sim.Thm5SimConfig(n_children=8, n_z=400, trials=10, widths=("eq128", "tenth_of_eq128"))
    r = thm5_sim.run(cfg)
    assert 0 <= r["gamma"] < 1 and r["bracket"] > 0
    assert r["widths"]["eq128"] == pytest.approx(lucky.width_eq128(cfg.c, r["gamma"], 2.302585092994046))
    for row in r["rows"]:
        assert 0 <= row["with_lucky_node"] <= row["trials"] and 0 <= row["mean_lucky_node_fraction"] <= 1
    low = thm5_sim.run(dataclasses.replace(cfg, rho=0.5))
    assert low["bracket"] < 0 and all(row["fraction"] == 1.0 for row in low["rows"])
    words = claims.thm5_sim_claims(dict(r, command="python scripts/appendix_forms.py --overwrite"))
    assert words[0]["evidence"]["scope"] == "special case"
    fake = dict(r, rows=[dict(row, fraction=0.5, wilson95=[0.4, 0.6]) for row in r["rows"]], command="c")
    assert claims.thm5_sim_claims(fake)[0]["verdict"] == "fails"
