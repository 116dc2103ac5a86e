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
    assert list(r) == ["id", "paper", "location", "statement", "verdict", "parts", "numbers", "check", "reading",
                       "result", "command"]
    assert r["verdict"] == "partly" and r["parts"] == {"a": True, "b": False}
    nothing = verdicts.verdict("c", None, {})
    assert verdicts.claim_record("i", "DDN", "Table 6", "s", nothing, {}, "visual")["verdict"] == "not established"
    assert verdicts.claim_record("i", "ccdyn", "x", "s", "not checked", {}, "visual")["parts"] == {}
    md = verdicts.ledger_markdown([r])
    assert "| core-thm3 | core Thm. 3 | one line | partly | closed form | {x:1.235} | results/theory/thm3 |" in md


@pytest.mark.parametrize("kw, match", [({"paper": "nature"}, "paper="), ({"check": "intuition"}, "check="),
                                       ({"judged": "maybe"}, "verdict="), ({"claim_id": ""}, "id")])
def test_claim_record_rejects_bad_fields(kw, match):
    args = dict(claim_id="i", paper="core", location="Thm. 1", statement="s", judged="holds", numbers={},
                check="closed form")
    with pytest.raises(ValueError, match=match):
        verdicts.claim_record(**{**args, **kw})
