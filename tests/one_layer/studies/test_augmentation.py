"""App. B.5 study (``ccdyn.one_layer.studies.augmentation``) in process: the record, its verdicts, tables, text
and figures on a tiny configuration, and the config's validation (the script's bad-flag messages).
The script's end-to-end run, with the rotation engine, is in tests/scripts/test_augmentation_script.py."""

import dataclasses

import matplotlib.pyplot as plt
import pytest

from ccdyn import io
from ccdyn.one_layer import claims
from ccdyn.one_layer.studies import augmentation
from ccdyn.one_layer.studies.augmentation import AugmentationConfig

# Rotation landscapes without the engine and one shift engine run (the whole group Z_4): ~10 s.
TINY = AugmentationConfig(ranges=("0", "1"), acts=("relu",), basin_acts=(), views_per_circle=16, min_views=4,
                          ripple_views=(4, 8), n_grid=256, max_steps=50, tile=64, shift_d=4, shift_m=2,
                          shift_n_init=200, shift_ranges=(2,))


@pytest.fixture(scope="module")
def tiny():
    lines = []
    return augmentation.run(TINY, lines.append), lines


@pytest.mark.slow  # the tiny study takes 6.5 s; fast: the App. B.5 verdicts in tests/one_layer/test_claims.py, the orbits in test_symmetry.py
def test_record_verdicts_tables_text_and_figures(tiny):
    record, lines = tiny
    assert "rotation verdict: App. B.5 HOLDS" in record["verdicts"]["rotation"]
    assert "shift verdict: App. B.5 HOLDS for Z_4" in record["verdicts"]["shift"]
    rows = record["rotation"]["per_act"]["relu"]["rows"]
    assert rows[0]["grid"]["n_prominent"] >= 8 and rows[1]["grid"]["n_prominent"] == 0
    z4 = next(r for r in record["shift"]["settings"] if r["max_shift"] == 2)
    assert z4["n_complete"] == z4["n_orbits"] >= 1 and z4["max_relative_spread"] < 1e-12
    assert record["config"] == dataclasses.asdict(TINY) and record["dynamics"]["method"] == "euler_halving"
    assert set(record["timings_s"]) == {"rotation", "shift"}
    assert lines[0] == "rotation study (Fig. 8 data) ..." and "shift study ..." in lines
    assert io.as_json(record)  # JSON-ready (numpy arrays become lists)
    head, body = augmentation.rotation_rows(record["rotation"]["per_act"])
    assert len(body) == 2 and all(len(r) == len(head) for r in body) and body[0][8:] == ["-"] * 5
    head, body = augmentation.shift_rows(record["shift"]["settings"])
    assert len(body) == record["shift"]["settings"][0]["n_orbits"] and all(len(r) == len(head) for r in body)
    md = augmentation.markdown(TINY, record, "python scripts/augmentation.py --tiny")
    assert "`python scripts/augmentation.py --tiny`" in md
    assert record["verdicts"]["rotation"] in md and record["verdicts"]["shift"] in md
    figs = augmentation.figures(TINY, record)
    assert sorted(figs) == ["rotation.png", "shift.png"]
    for fig in figs.values():
        plt.close(fig)


@pytest.mark.slow  # the tiny study takes 6.5 s; fast: the App. B.5 verdicts in tests/one_layer/test_claims.py, the orbits in test_symmetry.py
def test_verdicts_without_the_whole_group(tiny):
    record = tiny[0]
    assert claims.shift_verdict(record["shift"]["settings"], 9).startswith("shift: no verdict")
    per_act = {"relu": {**record["rotation"]["per_act"]["relu"],
                        "rows": record["rotation"]["per_act"]["relu"]["rows"][:1]}}
    assert claims.rotation_verdict(TINY, per_act, record["rotation"]["ripple"]).startswith("rotation: no verdict")


@pytest.mark.parametrize("fields,message", [
    (dict(ranges=("0", "1.5")), "--ranges must be numbers or fractions in [0, 1]"),
    (dict(ranges=("1/0",)), "--ranges must be numbers or fractions in [0, 1]"),
    (dict(basin_acts=("gelu",)), "--basin_acts must be a subset of --acts"),
    (dict(acts=("relu", "sigmoid")), "--acts must be a non-empty list from:"),
    (dict(ripple_views=(8,)), "--ripple_views must be at least two integers >= 2"),
    (dict(ripple_views=None), "--ripple_views must be at least two integers >= 2"),
    (dict(shift_ranges=(-1,)), "--shift_ranges must be integers >= 0"),
    (dict(min_prominence=1.0), "--min_prominence must lie in (0, 1)"),
    (dict(shift_d=4, shift_m=4), "--shift_m must lie in [1, min(--shift_d - 1, 16)]"),
    (dict(n_init=0), "--n_init must be an integer >= 1"),
])
def test_bad_config_names_the_flag(fields, message):
    with pytest.raises(ValueError) as e:
        AugmentationConfig(**fields)
    assert message in str(e.value)
