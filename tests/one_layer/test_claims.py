"""ccdyn.one_layer.claims on the committed results: the verdicts the studies wrote come out again from
the numbers beside them (moving the verdict code changed no verdict), and the ledger records."""

import csv
from pathlib import Path

from ccdyn import io
from ccdyn.one_layer import claims
from ccdyn.one_layer.studies.augmentation import AugmentationConfig

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_theorem3_verdict_and_record():
    rec = io.read_json(RESULTS / "theory/thm3/thm3.json")
    with open(RESULTS / "theory/thm3/summary.csv") as f:
        rows = [[float(r[0]), float(r[1])] + [int(v) for v in r[2:7]] + [float(r[7])] for r in list(csv.reader(f))[1:]]
    assert claims.theorem3_verdict(rows) == rec["verdict"]
    (led,) = claims.theorem3_claims(rec)
    # README: every certified start keeps every claim; most uncertified starts converge anyway (80 starts)
    n = led["numbers"]
    assert led["verdict"] == "holds" and n["certified"] == n["certified_and_all_claims_hold"] > 0
    assert n["certified"] + n["uncertified"] == 80 and n["uncertified"] / 2 < n["uncertified_converged"] < n["uncertified"]
    assert claims.theorem3_verdict([[0, 5, 3, 0, 0, 3, 3, 0.99]]).startswith("Thm. 3 untested")
    none = {"starts": [dict(rec["starts"][0], gamma_certified=None)]}
    assert claims.theorem3_claims(none)[0]["verdict"] == "not established"
    broken = {"starts": [dict(s, converged=False) if s["gamma_certified"] is not None else s for s in rec["starts"]]}
    assert claims.theorem3_claims(broken)[0]["verdict"] == "fails"


def test_augmentation_verdicts_and_records():
    rec = io.read_json(RESULTS / "theory/augmentation/augmentation.json")
    cfg = AugmentationConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in rec["config"].items()})
    assert claims.rotation_verdict(cfg, rec["rotation"]["per_act"], rec["rotation"]["ripple"]) == rec["verdicts"]["rotation"]
    assert claims.shift_verdict(rec["shift"]["settings"], cfg.shift_d) == rec["verdicts"]["shift"]
    words = {r["id"]: r["verdict"] for r in claims.augmentation_claims(rec)}
    assert words == {"core-appB5-rotation": "holds", "core-appB5-shift": "holds"}


def test_flow_checks_and_records():
    for name, kind in (("flow_exact_2d", "exact_2d"), ("flow_rtol", "rtol")):
        rec = io.read_json(RESULTS / "basins" / name / "flow_accuracy.json")
        c = rec["check"]
        if kind == "exact_2d":
            n = c["numbers"]
            again = claims.exact_2d_check(rec["table"], 0.005, n["n_init"], n["method"], float(n["flow_rtol"]))
        else:
            again = claims.rtol_check(rec["table"], c["numbers"]["rtols"], 0.01, c["numbers"]["n_init"])
        assert io.as_json(again) == c
        (led,) = claims.flow_claims(rec, result=f"results/basins/{name}", command="python scripts/flow_accuracy.py")
        assert led["verdict"] == "holds" and led["paper"] == "ccdyn"


def test_fig1_and_thm1_records():
    (fig1,) = claims.fig1_claims(io.read_json(RESULTS / "theory/fig1/power_iteration.json"))
    # README: every start converges to a stable optimum up to 0.1; at 0.2 some do not, and those that do are stable
    n = fig1["numbers"]
    assert fig1["verdict"] == "holds" and [n[e]["stable"] for e in ("0.0", "0.05", "0.1")] == [10, 10, 10]
    assert n["0.2"]["stable"] == n["0.2"]["converged"] < 10
    assert claims.fig1_claims(io.read_json(RESULTS / "theory/fig1/power_iteration.json"), small_eps=0.2)[0][
        "verdict"] == "partly"
    (thm1,) = claims.thm1_claims(io.read_json(RESULTS / "theory/roughness/table/roughness.json"))
    assert thm1["verdict"] == "holds" and thm1["numbers"]["with_gap_above_rho"] == 12  # README: all 12 stable
    assert thm1["command"].startswith("python scripts/roughness.py --runs=results/theory/roughness/latent_exact,")
    assert fig1["command"] == "python scripts/power_iteration.py --overwrite"


def test_fig8_patterns_and_cor2_records():
    (fig8,) = claims.fig8_claims(io.read_json(RESULTS / "landscape/landscape.json"))
    assert fig8["verdict"] == "holds" and fig8["numbers"]["n_local_maxima"]["relu"] == 9  # README: we count 9
    assert claims.fig8_claims({"activations": {"relu": {"n_local_maxima": 3}}})[0]["verdict"] == "fails"
    runs = {a: io.read_json(RESULTS / "basins" / a / "summary.json") for a in ("relu", "leaky_relu", "linear")}
    (pat,) = claims.patterns_claims(runs)
    assert pat["verdict"] == "holds" and pat["numbers"]["linear"]["patterns_found"] == 0
    (cor2,) = claims.cor2_claims(io.read_json(RESULTS / "theory/cor2/roughness/roughness.json"))
    assert cor2["verdict"] == "holds" and round(cor2["numbers"]["median_rho_ratio_to_uniform"]["0.2"], 2) == 0.09
    assert claims.cor2_claims({"compare": []})[0]["verdict"] == "not established"


def test_thm2_record_holds_and_says_vacuous():
    record = io.read_json(RESULTS / "theory/roughness/table/roughness.json")
    (thm2,) = claims.thm2_claims(record)
    ratios = [m["thm2_bound"] / m["rho"] for r in record["runs"].values() for m in r["optima"]
              if m.get("thm2_bound") is not None]
    assert thm2["verdict"] == "holds" and thm2["numbers"]["optima_with_bound"] == len(ratios) == 8
    assert min(ratios) > 100  # far above the measured rho: vacuous (README: 850-19 000x)
    assert thm2["note"] == f"vacuous: the bound is {min(ratios):.0f}-{max(ratios):.0f}x the measured rho"
    run = {"runs": {"r": {"optima": [{"rho": 2.0, "thm2_bound": 1.0}, {"rho": 0.5, "thm2_bound": 1.0}]}}}
    assert claims.thm2_claims(run)[0]["verdict"] == "fails"
    assert claims.thm2_claims({"runs": {"r": {"optima": [{"rho": 0.1, "thm2_bound": None}]}}})[0][
        "verdict"] == "not established"
