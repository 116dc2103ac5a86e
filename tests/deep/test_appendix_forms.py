"""ccdyn.deep.studies.appendix_forms: DDN's remark after Eq. 2, Eq. 59 and Eq. 125 against direct
evaluation, autodiff and 40-digit quadrature."""

import jax
import pytest

from ccdyn.deep import claims
from ccdyn.deep.studies import appendix_forms as af

SMALL = af.DDNFormsConfig(taus=(0.5,), H=(1, 4), n_samples=2000, margins=(0.0,), ys=(1e-2, 1.0, 100.0))


def test_remark_eq2_and_eq125():
    r = af.remark_eq2(SMALL, jax.random.PRNGKey(0))
    assert r["max_abs_identity_err"] < 1e-14 and r["max_rel_loss_diff"] < 1e-13
    rows = af.eq125(SMALL)["rows"]
    assert all(x["holds"] for x in rows)
    assert rows[1]["r"] == pytest.approx(0.6556795424187985, rel=1e-14)  # r(1) = sqrt(pi/2) e^{1/2} erfc(1/sqrt 2)


def test_eq59_derivatives_stay_in_their_range_and_the_bound():
    rows = af.eq59(SMALL, jax.random.PRNGKey(1))["rows"]
    for r in rows:
        assert r["max_abs_eps"] <= r["bound"] + 1e-12
        assert -r["sup_abs_eps"] - 1e-12 <= r["derivative_range"][0] and r["derivative_range"][1] <= 0
    nce = next(r for r in rows if r["loss"] == "nce" and r["H"] == 1)
    assert nce["max_abs_eps"] > 0.9 * nce["sup_abs_eps"]  # the configurations reach the extremes


def test_claims_words():
    record = dict(af.run(SMALL), command="python scripts/appendix_forms.py --overwrite")
    assert {c["id"]: c["verdict"] for c in claims.appendix_forms_claims(record)} == {
        "ddn-remark-eq2": "holds", "ddn-eq59": "holds", "ddn-eq125": "holds"}
