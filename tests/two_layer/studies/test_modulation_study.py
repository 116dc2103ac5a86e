"""The modulation study (Thm. 5-6, Fig. 7, Eq. 155, Cor. 3) in process on a tiny configuration."""

import re

import pytest

from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import modulation

TINY = modulation.ModulationConfig(n_mc=4000, d=4, c=(0.0, 0.8), eps=(-0.5, 0.0, 1.0), eps_dims=(3,),
                                   scales=(0.1, 10.0), eq15_shapes=((2, 2, 3),), eq15_acts=("relu",), thm6_steps=1500,
                                   cor3_steps=2000)


@pytest.mark.slow  # 10 s; the maths: tests/two_layer/test_modulation.py; the verdicts: two_layer/test_claims.py
def test_tiny_study_record_verdicts_and_tables():
    messages = []
    rec = modulation.run(TINY, log=messages.append)
    assert len(messages) == 5 and messages[0].startswith("Thm. 5")
    assert rec["config"]["n_mc"] == 4000
    # Thm. 5 and Fig. 7 are identities: they hold to rounding on any population.
    assert len(rec["eq15"]["rows"]) == 2 and rec["eq15"]["verdict"]["holds"]
    assert rec["eq15"]["verdict"]["numbers"]["worst_relative"] < 1e-10
    assert rec["fig7"]["verdict"]["holds"] and set(rec["fig7"]["per_y0"]) == {str(y) for y in modulation.FIG7_Y0}
    assert len(rec["eq155"]["rows"]) == 3 and rec["eq155"]["rows"][2]["theory"] == 0.5
    thm6 = rec["thm6"]
    assert [r["c"] for r in thm6["rows"]] == [0.0, 0.8] and thm6["rows"][1]["to_u0"] > thm6["rows"][0]["to_u0"]
    assert thm6["rows"][0]["predictor_agrees"] == 1.0
    cor3 = rec["cor3"]
    assert set(cor3["none"]["angle_moved_deg"]) == {20, 200, 2000} and cor3["none"]["d_k"].shape == (2,)
    assert cor3["verdict"]["numbers"]["speed_spread"]["none"] > cor3["verdict"]["numbers"]["speed_spread"]["bn"]
    tables = modulation.markdown(rec)
    assert set(tables) == {"eq15.md", "eq155.md", "thm6.md", "cor3.md"}
    assert "angle moved by step 2000 (BN)" in tables["cor3.md"] and tables["thm6.md"].count("\n") == 4
    headers, body = modulation.eq155_csv(rec["eq155"]["rows"])
    assert headers[0] == "d" and len(body) == 3
    headers, body = modulation.verdict_rows(rec)
    assert [b[0] for b in body] == ["eq15", "fig7", "eq155", "thm6", "cor3"]
    assert body[0][2] == "holds"
    led = claims.modulation_claims(rec)
    assert [r["id"] for r in led] == ["core-thm5", "core-fig7", "core-eq155", "core-thm6", "core-cor3"]
    assert [r["verdict"] for r in led][:2] == ["holds", "holds"] and led[0]["check"] == "enumeration"


def test_config_validation():
    for kwargs, name in [(dict(n_mc=0), "n_mc"), (dict(b=0.0), "b="), (dict(c=(-0.1,)), "c="),
                         (dict(eps_dims=(1,)), "eps_dims"), (dict(eq15_acts=("gelu",)), "eq15_acts"),
                         (dict(scales=(1.0,)), "scales"), (dict(cor3_steps=3000), "cor3_steps")]:
        with pytest.raises(ValueError, match=name):
            modulation.ModulationConfig(**kwargs)


def test_the_printed_tables_have_a_key_entry_per_column():
    heads = {"thm6.md": modulation.thm6_table([])[0], "cor3.md": modulation.cor3_table({"scales": []}, (20, 200))[0]}
    for name, headers in heads.items():
        key = " ".join(modulation.TABLE_KEYS[name])
        entries = [re.sub(r"step \d+", "step t", h.split(" (")[0]) for h in headers]  # one per checkpoint
        missing = [e for e in entries if f"{e}:" not in key and f"{e}," not in key]
        assert not missing, (name, missing)
