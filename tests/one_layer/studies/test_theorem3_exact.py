"""ccdyn.one_layer.studies.theorem3_exact and its ledger record: exact and sampled certificates at the
same starts."""

import math

import pytest

from ccdyn.one_layer import claims
from ccdyn.one_layer.studies import theorem3_exact

CFG = theorem3_exact.Theorem3ExactConfig(d=4, m=4, ortho_eps=(0.05,), angles_deg=(0.0, 10.0), n_patterns=2,
                                         gammas=(0.1, 0.2, 0.4), n_samples=16, n_steps=40)


def test_exact_certificates_and_their_verdict():
    lines = []
    rec = theorem3_exact.run(CFG, log=lines.append)
    assert len(lines) == 2 and lines[0].startswith("  eps=0.05 angle=0.0: 2/2 certified exactly")
    starts = rec["starts"]
    at_u = [s for s in starts if s["angle_deg"] == 0.0]
    for s in at_u:
        last = s["exact"]["gammas"][-1]
        assert s["gamma_exact"] is not None and last["L"] == 0.0 and last["crossings"] == 0
        assert last["sup_omega"] <= s["gamma_exact"] and s["stays_in_ball"] and s["rate_holds"] and s["converged"]
    for s in starts:  # an uncertified gamma has a plane in its cap and A jumps there, or mu above gamma
        for r in s["exact"]["gammas"]:
            if not r["holds"]:
                assert (r["crossings"] > 0 and r["jump"] > 0 and r["sup_omega"] == math.inf) or r["sup_omega"] > r["gamma"]
    (c,) = claims.theorem3_exact_claims(rec)
    assert c["id"] == "core-thm3-exact" and c["verdict"] == "holds"
    assert c["numbers"]["certified_exact"] == sum(s["gamma_exact"] is not None for s in starts) >= 2
    t = rec["tables"]
    assert [r[:4] for r in t["summary"]][0] == [0.05, 0.0, 2, 2]
    assert theorem3_exact.table(rec).splitlines()[0].startswith("ortho_eps  angle_deg  starts")


def test_not_established_without_certified_starts_and_smooth_activations_refused():
    (c,) = claims.theorem3_exact_claims({"starts": [{"gamma_exact": None, "gamma_sampled": 0.2, "converged": True,
                                                     "planes_in_sampled_cap": 3}]})
    assert c["verdict"] == "not established" and c["numbers"]["sampled_certified_with_planes_in_cap"] == 1
    with pytest.raises(ValueError, match="piecewise-linear"):
        theorem3_exact.run(theorem3_exact.Theorem3ExactConfig(act="quadratic"))
