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
    with_evidence = verdicts.claim_record("core-thm3", "core", "Thm. 3", "one line", partly, {}, "closed form",
                                          evidence={"scope": "special case", "why": "one setting"})
    assert with_evidence["evidence"] == {"scope": "special case", "why": "one setting"}
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


@pytest.mark.parametrize("word, check, evidence, want", [
    # a sampled estimate whose margin is within noise earns no word (fig10_quadratic: 0.0023 at s.e. 0.0019)
    ("holds", "sampled estimate", {"margin": 0.0023, "se": 0.0019}, "not established"),
    ("holds", "sampled estimate", {"margin": 0.0023, "se": 0.001}, "holds"),
    ("partly", "sampled estimate", {"margin": -0.001, "se": 0.001}, "not established"),
    # "fails" at p = 0.65 is noise; at 0.047 with three comparisons too; at 0.005 it stands
    ("fails", "sampled estimate", {"p_value": 0.65}, "not established"),
    ("fails", "sampled estimate", {"p_value": 0.047, "family": 3}, "not established"),
    ("fails", "sampled estimate", {"p_value": 0.047}, "fails"),
    ("holds", "sampled estimate", {"p_value": 0.0054, "family": 3}, "holds"),
    # a special case of the claim's scope: holds is partly, a counterexample still fails
    ("holds", "closed form", {"scope": "special case", "why": "A(w) constant on the cap"}, "partly"),
    ("fails", "closed form", {"scope": "special case", "why": "one setting"}, "fails"),
    ("partly", "closed form", {"scope": "special case", "why": "one setting"}, "partly"),
    # true by construction, or an estimate of a certificate: nothing established; a failure stays
    ("holds", "enumeration", {"scope": "by construction", "why": "the average over SO(2) is constant"},
     "not established"),
    ("partly", "sampled estimate", {"scope": "estimate", "why": "64 sampled points"}, "not established"),
    ("fails", "enumeration", {"scope": "by construction", "why": "x"}, "fails"),
    # a claim the paper does not make earns no word at all
    ("fails", "sampled estimate", {"scope": "not claimed", "why": "issue #15's reading"}, "not established"),
    ("holds", "autodiff", {"failed_part": "the main text's form"}, "partly"),
    ("holds", "autodiff", {}, "holds"),
    ("not checked", None, {}, "not checked"),
])
def test_earned_word_is_never_stronger_than_its_evidence(word, check, evidence, want):
    got, why = verdicts.earned(word, check, evidence)
    assert got == want
    assert (why is None) == (got == word)  # a lowered word always says why


def test_a_row_with_a_word_stronger_than_its_evidence_is_named():
    row = verdicts.claim_record("core-x", "core", "Fig. 10", "s", "holds", {}, "sampled estimate",
                                evidence={"margin": 0.0023, "se": 0.0019})
    assert "earns 'not established'" in verdicts.stronger_than_evidence(row)
    row = dict(row, record_verdict="holds", verdict="not established")
    assert verdicts.stronger_than_evidence(row) is None
    fails = verdicts.claim_record("ddn-x", "DDN", "Table 3", "s", "fails", {}, "sampled estimate",
                                  evidence={"p_value": 0.65})
    assert verdicts.stronger_than_evidence(fails) is not None
    special = verdicts.claim_record("core-y", "core", "Thm. 3", "s", "holds", {}, "closed form",
                                    evidence={"scope": "special case", "why": "A(w) constant on the cap"})
    assert "earns 'partly'" in verdicts.stronger_than_evidence(special)


@pytest.mark.parametrize("evidence, match", [({"scope": "most"}, "scope="), ({"scope": "special case"}, "why"),
                                             ({"margin": 0.1}, "margin"), ({"pvalue": 0.1}, "keys"),
                                             ({"p_value": 0.1, "family": 0}, "family")])
def test_bad_evidence_is_refused(evidence, match):
    with pytest.raises(ValueError, match=match):
        verdicts.claim_record("i", "core", "x", "s", "holds", {}, "closed form", evidence=evidence)
