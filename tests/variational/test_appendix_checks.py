"""SimCLR-var App. A.1 (VICReg / BYOL with an invariant map depend on f#mu only) and Prop. 3.1's Eq. 6
(the printed first variation against the autodiff gradient of Eq. 4 with views)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.variational import claims
from ccdyn.variational.studies import appendix_a1, eq6


def test_vicreg_and_byol_depend_only_on_the_latent_measure_under_an_invariant_map():
    r = appendix_a1.run(appendix_a1.A1Config(n=2))
    for loss in ("vicreg", "byol"):
        x = r[loss]
        assert x["input_a"] == pytest.approx(x["latent"], rel=1e-12) and x["input_b"] == pytest.approx(x["latent"], rel=1e-12)
        assert abs(x["not_invariant_a"] - x["not_invariant_b"]) > 1e-3 * abs(x["latent"])  # the control separates
    words = claims.appendix_a1_claims(dict(r, command="python scripts/appendix_forms.py --overwrite"))
    assert [w["verdict"] for w in words] == ["holds"]


def test_vicreg_batch_terms_by_hand():
    """Two points, one dimension pair: invariance, variance hinge and covariance terms written out."""
    c = appendix_a1.A1Config(lambdas=(2.0, 3.0, 5.0), gamma=1.0, eps=0.0)
    z1, z2 = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[0.0, 0.0], [1.0, 1.0]])
    # var (ddof 1) of (0, 1) = 1/2 per dim, hinge 1 - sqrt(1/2); cov = 1/2, c = 2 (1/2)^2 / 2 = 1/4
    want = 3.0 * 2 * (1 - np.sqrt(0.5)) + 5.0 * 2 * 0.25
    assert appendix_a1.vicreg_batch(z1, z2, c) == pytest.approx(want, rel=1e-14)


def test_eq6_as_printed_differs_from_autodiff_with_views_and_the_derivation_does_not():
    key = jax.random.PRNGKey(0)
    z = jax.random.normal(key, (4, 2, 2), jnp.float64)
    p, q = jnp.array([0.1, 0.2, 0.3, 0.4]), jnp.array([0.3, 0.7])
    auto = eq6._autodiff(z, p, q, 0.5)
    np.testing.assert_allclose(eq6.integrand(z, p, q, 0.5, printed=False), auto, rtol=1e-10, atol=1e-12)
    assert float(jnp.abs(eq6.integrand(z, p, q, 0.5, printed=True) - auto).max()) > 1e-3
    inv = jnp.repeat(z[:, :1], 2, axis=1)                             # an invariant f: both agree
    auto_inv = eq6._autodiff(inv, p, q, 0.5)
    np.testing.assert_allclose(eq6.integrand(inv, p, q, 0.5, printed=True), auto_inv, rtol=1e-10, atol=1e-12)
    rows = [{"case": c, "tau": 0.5, "printed_rel_err": e, "derived_rel_err": 1e-16}
            for c, e in (("views", 0.3), ("invariant", 1e-16), ("one view", 2e-16))]
    words = claims.eq6_claims({"rows": rows, "command": "python scripts/appendix_forms.py --overwrite"})
    assert [w["verdict"] for w in words] == ["partly"]
