"""ccdyn.verdicts: the verdict of a claim from its parts, and the one ledger record format."""

import pytest

from ccdyn import verdicts


def test_verdict_words():
    assert verdicts.verdict_word(verdicts.verdict("c", {"a": True, "b": 1}, {})) == "holds"
    assert verdicts.verdict_word(verdicts.verdict("c", {"a": True, "b": False}, {})) == "partly"
    assert verdicts.verdict_word(verdicts.verdict("c", {"a": False}, {})) == "fails"
    assert verdicts.verdict("c", None, {})["holds"] is None


def test_claim_record_words_and_fields():
    partly = verdicts.verdict("c", {"a": True, "b": False}, {"x": 1.23456})
    r = verdicts.claim_record("core-thm3", "core", "Thm. 3", "one line", partly, {"x": 1.23456}, "closed form",
                              reading="docs/flow.md", result="results/theory/thm3", command="python x.py")
    assert list(r) == ["id", "paper", "location", "statement", "verdict", "note", "parts", "numbers", "check",
                       "reading", "result", "command"]
    assert r["verdict"] == "partly" and r["parts"] == {"a": True, "b": False}
    nothing = verdicts.verdict("c", None, {})
    assert verdicts.claim_record("i", "DDN", "Table 6", "s", nothing, {}, "visual")["verdict"] == "not established"
    assert verdicts.claim_record("i", "ccdyn", "x", "s", "not checked", {}, "visual")["parts"] == {}
    md = verdicts.ledger_markdown([r])
    assert "| core-thm3 | core Thm. 3 | one line | partly | closed form | {x:1.23} | results/theory/thm3 |" in md
    assert verdicts.claim_record("i", "core", "x", "s", "not checked", {}, None)["check"] is None
    with pytest.raises(ValueError, match="check="):
        verdicts.claim_record("i", "core", "x", "s", "holds", {}, None)
    noted = verdicts.claim_record("i", "core", "Thm. 2", "s", "holds", {}, "closed form", note="vacuous")
    assert "| holds (vacuous) |" in verdicts.ledger_markdown([noted])


def test_small_numbers_keep_significant_digits():
    """A gap of 3.6e-4 is printed as 0.00036, not rounded to 0.0; large numbers keep 3 significant digits."""
    check = dict(verdicts.verdict("c", {"a": True}, {"gap": 3.6123e-4, "tiny": 1.84e-83, "big": 12345.6, "n": 7}),
                 grid="g")
    numbers = verdicts.claims_table([check])[1][0][-1]
    assert numbers == "{gap:0.000361,tiny:1.84e-83,big:12300.0,n:7}"


@pytest.mark.parametrize("kw, match", [({"paper": "nature"}, "paper="), ({"check": "intuition"}, "check="),
                                       ({"judged": "maybe"}, "verdict="), ({"claim_id": ""}, "id")])
def test_claim_record_rejects_bad_fields(kw, match):
    args = dict(claim_id="i", paper="core", location="Thm. 1", statement="s", judged="holds", numbers={},
                check="closed form")
    with pytest.raises(ValueError, match=match):
        verdicts.claim_record(**{**args, **kw})
