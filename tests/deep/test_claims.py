"""ccdyn.deep.claims on the committed Table 6 run: the App. D.1 trend verdicts of the paper's own table
come out again, and every trend verdict becomes one ledger record with its word."""

from pathlib import Path

from ccdyn import io
from ccdyn.deep import claims

RESULTS = Path(__file__).resolve().parents[2] / "results" / "ddn"


def test_trend_claims_on_the_committed_run():
    v = io.read_json(RESULTS / "table6" / "results.json")["verdicts"]
    assert io.as_json(claims.check_trends(claims.paper_means())) == v["paper_own_table"]["trends"]
    led = claims.trend_claims(v["paper"]["trends"])
    assert [r["id"] for r in led] == ["ddn-appD1-top-harder-paper", "ddn-appD1-init-nontrivial-paper",
                                      "ddn-appD1-overparameterization-paper"]
    assert [r["verdict"] for r in led] == [claims.verdict_word(t) for t in v["paper"]["trends"]]
    assert all(r["paper"] == "DDN" and r["check"] == "sampled estimate" for r in led)
