"""ccdyn.deep.lucky and the Thm. 5 remark study: the Mills ratio against its integral (Eq. 116), the
Eq. 124 bounds, the event probability against scipy's bivariate normal, and the remark's verdict."""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import multivariate_normal

from ccdyn.deep import claims, lucky
from ccdyn.deep.studies import thm5_remark


@pytest.mark.parametrize("y", [0.1, 1.0, 3.1, 12.0])
def test_mills_ratio_against_its_integral_and_bounds(y):
    ref = quad(lambda t: math.exp(-y * t - t * t / 2), 0, math.inf, epsabs=0, epsrel=1e-13)[0]
    assert float(lucky.mills_ratio(y)) == pytest.approx(ref, rel=1e-12)
    lo, hi = lucky.mills_bounds(y)
    assert lo < ref < hi


@pytest.mark.parametrize("c,g", [(9.0, 0.2), (4.0, 0.5), (1.0, 0.0)])
def test_event_probability_against_the_bivariate_normal_cdf(c, g):
    # P(y+ >= sqrt c, y- >= 0) = P(-y+ <= -sqrt c, -y- <= 0), correlation -g either way
    ref = multivariate_normal(mean=[0, 0], cov=[[1, -g], [-g, 1]]).cdf([-math.sqrt(c), 0])
    assert lucky.event_probability(c, g) == pytest.approx(ref, rel=1e-6)
    # the corrected Eq. 123 bound (exponent c / 2(1 - g^2)) is a lower bound of it
    assert 1 / lucky.width_eq128(c, g, corrected=True) <= lucky.event_probability(c, g) * (1 + 1e-9)


def test_threshold_and_the_remark_verdict():
    assert lucky.polarity_threshold(9.0) == pytest.approx(math.sqrt(0.4))
    rec = thm5_remark.run(thm5_remark.Thm5RemarkConfig())
    v = rec["values"]
    assert v["eq128_range_per_ln_inv_eta"] == pytest.approx([2352.23, 2697.34], abs=0.01)
    assert v["width_exact_per_ln_inv_eta"] == pytest.approx(1 / -np.log1p(-v["p_event_exact"]))
    (c,) = claims.thm5_remark_claims(rec)
    assert c["verdict"] == "partly" and c["id"] == "ddn-thm5-remark"
    assert [c["parts"][k] for k in c["parts"]] == [True, False, False]
    assert "| polarity_threshold |" in thm5_remark.markdown(rec)
    with pytest.raises(ValueError, match="gamma"):
        lucky.r_hat(9.0, 1.0)
