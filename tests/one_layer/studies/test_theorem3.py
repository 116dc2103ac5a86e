"""ccdyn.one_layer.studies.theorem3: the Thm. 3 check over starts near the patterns, its tables and verdict."""

from ccdyn.one_layer import claims
from ccdyn.one_layer.studies import theorem3

CFG = theorem3.Theorem3Config(d=4, m=4, ortho_eps=(0.05,), angles_deg=(0.0, 10.0), n_patterns=2,
                              gammas=(0.1, 0.2, 0.4), n_samples=16, n_steps=40)


def test_starts_at_the_patterns_are_certified_and_every_claim_holds():
    lines = []
    rec = theorem3.run(CFG, log=lines.append)
    assert len(lines) == 2 and lines[0].startswith("  eps=0.05 angle=0.0: 2/2 certified")
    assert rec["config"]["gammas"] == (0.1, 0.2, 0.4)
    starts = rec["starts"]
    assert [(s["angle_deg"], s["pattern"]) for s in starts] == [(0.0, 0), (0.0, 1), (10.0, 0), (10.0, 1)]
    at_u = [s for s in starts if s["angle_deg"] == 0.0]
    assert all(s["gamma_certified"] is not None and s["stays_in_ball"] and s["c_monotone"] and s["rate_holds"]
               and s["converged"] for s in at_u)
    assert all(s["cos_end_u_m"] > 0.99 for s in starts)
    assert min(s["c0"] for s in at_u) > 0.999 and max(s["c0"] for s in starts if s["angle_deg"] == 10.0) < 0.99
    t = rec["tables"]
    assert len(t["starts"]) == 4 and all(len(r) == len(theorem3.START_COLUMNS) for r in t["starts"])
    assert [r[:4] for r in t["summary"]][0] == [0.05, 0.0, 2, 2]
    assert rec["verdict"] == claims.theorem3_verdict(t["summary"]) and rec["verdict"].startswith("Thm. 3 holds: ")
    assert f"Verdict: {rec['verdict']}" in theorem3.markdown(rec)
    assert claims.theorem3_claims(rec)[0]["numbers"] == {"certified": 2, "certified_and_all_claims_hold": 2,
                                                         "uncertified": 2, "uncertified_converged": 2}
    assert theorem3.table(rec).splitlines()[0].startswith("ortho_eps  angle_deg  starts")


def test_verdict_words():
    # ortho_eps, angle, starts, certified, certified_and_all_claims_hold, converged, uncertified_converged, c0
    assert claims.theorem3_verdict([[0, 5, 3, 0, 0, 3, 3, 0.99]]).startswith("Thm. 3 untested (no start certified): 0/0")
    assert claims.theorem3_verdict([[0, 0, 3, 2, 1, 2, 1, 1.0]]).startswith("Thm. 3 FAILS: 1/2 certified")
    assert claims.theorem3_verdict([[0, 0, 3, 2, 2, 3, 1, 1.0]]).endswith(
        "1/1 uncertified starts converged anyway (the condition is sufficient, not necessary)")
