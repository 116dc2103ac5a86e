"""ccdyn.two_layer.studies.appendix_forms: core Eq. 143 (and its printed alternative), Lemma 5's C = 2 form,
App. D's d_k^bn and Eq. 155's bounds against routes that do not use them (enumeration with eigh, quadrature,
Monte Carlo)."""

import dataclasses

import numpy as np
import pytest

from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import appendix_forms as af

SMALL = af.AppendixFormsConfig(K=3, d=2, n=3, draws=2, eps=(-0.5, 0.5, 1.5), dims=(2, 5), n_mc=20_000)


def test_eq143_is_the_dynamics_and_the_printed_alternative_is_not():
    rng = np.random.default_rng(3)
    r = af.delta_forms(*af.population(rng, SMALL))
    np.testing.assert_allclose(r["delta_eq143"], r["delta_true"], rtol=1e-9)
    np.testing.assert_allclose(r["delta_corrected_alternative"], r["delta_true"], rtol=1e-9)
    assert min(r["delta_true"]) >= 0 and r["rest_off_delta_direction"] < 1e-9
    assert np.max(np.abs(np.subtract(r["delta_printed_alternative"], r["delta_true"]))) > 1e-3
    assert r["lemma5_c2_rel_diff"] < 1e-12 and r["eq138_rel_diff"] < 1e-12
    np.testing.assert_allclose(r["d_bn_closed_form"], r["d_bn_enumerated"], rtol=1e-12)
    assert r["lambda"] >= r["max_d"]


@pytest.mark.parametrize("eps, d", [(-0.5, 5), (0.3, 2), (0.5, 20), (1.5, 5)])
def test_eq155_quadrature_matches_the_closed_form_and_monte_carlo(eps, d):
    r = af.eq155_probability(eps, d, 40_000, np.random.default_rng(0))
    assert abs(r["quadrature"] - r["eq155"]) < 1e-12
    assert abs(r["monte_carlo"] - r["quadrature"]) <= 4 * max(r["mc_se"], 1 / 40_000)
    if eps > 1:
        assert r["quadrature"] == pytest.approx(0.5) and r["quadrature"] < eps / 2


def test_claims_words_on_a_small_run():
    record = dict(af.run(SMALL), command="python scripts/appendix_forms.py --overwrite")
    words = {c["id"]: c["verdict"] for c in claims.appendix_forms_claims(record)}
    assert words == {"core-eq143": "holds", "core-eq143-alternative": "fails", "core-lemma5-c2": "holds",
                     "core-appD-dbn": "holds", "core-eq155-bounds": "partly"}
    same_scale = dict(af.run(dataclasses.replace(SMALL, scales=(1.0, 1.0, 1.0))), command="c")
    dbn = next(c for c in claims.appendix_forms_claims(same_scale) if c["id"] == "core-appD-dbn")
    assert dbn["parts"][next(k for k in dbn["parts"] if k.startswith("d_k^bn ="))]
