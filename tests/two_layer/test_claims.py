"""The Sec. 5 claim checks on synthetic result rows: they hold on paper-like rows, fail when reversed."""

import pytest

from ccdyn.two_layer import claims


def row(act, p, beta, plus, minus=0.2, loss="infonce", bn="none", zeta=1.0):
    return {"act": act, "n_candidates": p, "beta": beta, "loss": loss, "bn": bn, "zeta": zeta,
            "chi_plus": {"mean": plus, "std": 0.0, "n": 3}, "chi_minus": {"mean": minus, "std": 0.0, "n": 3}}


def paper_like(loss="infonce", scale=1.0):
    """Rows shaped like Fig. 4: linear flat (0.9 at P=1, 0.5 above), ReLU rising with beta."""
    rows = []
    for p in (1, 3):
        for b in (1, 2, 5):
            rows.append(row("linear", p, b, scale * (0.9 if p == 1 else 0.5), 0.4, loss))
            rows.append(row("relu", p, b, scale * (0.4 + 0.1 * b), 0.1, loss))
    return rows


def test_checks_hold_on_paper_like_rows_and_fail_when_reversed():
    rows = paper_like()
    assert claims.check_p1(rows)["holds"] and claims.check_relu_beats_linear(rows)["holds"]
    assert claims.check_relu_lowest_chi_minus(rows)["holds"]
    assert claims.check_infonce_beats_quadratic(rows + paper_like("quadratic", 0.8))["holds"]
    assert not claims.check_infonce_beats_quadratic(rows + paper_like("quadratic", 1.2))["holds"]
    swapped = [{**r, "act": {"linear": "relu", "relu": "linear"}[r["act"]]} for r in rows]
    assert not claims.check_p1(swapped)["holds"] and not claims.check_relu_beats_linear(swapped)["holds"]
    assert claims.verdict_word(claims.check_relu_beats_linear(swapped)) == "fails"
    assert not claims.check_relu_lowest_chi_minus(swapped)["holds"]
    flat_relu = [{**r, "chi_plus": {"mean": 0.9, "std": 0, "n": 3}} if r["act"] == "relu" and r["n_candidates"] > 1
                 else r for r in rows]  # ReLU beats linear but no longer improves with beta
    v = claims.check_relu_beats_linear(flat_relu)
    assert claims.verdict_word(v) == "partly" and not v["parts"]["ReLU improves with beta at every P>1"]
    assert claims.check_bn_helps(rows)["holds"] is None  # no BN rows: no verdict, not a pass


def test_bn_and_sigma_checks():
    rows = []
    for p in (3, 5):
        for b in (1, 5):
            rows += [row("relu", p, b, 0.5, bn="none", zeta=10.0), row("relu", p, b, 0.7, bn="mean_only", zeta=10.0),
                     row("relu", p, b, 0.72, bn="none_backprop", zeta=10.0), row("relu", p, b, 0.3, bn="vanilla",
                                                                                    zeta=10.0),
                     row("relu", p, b, 0.1, bn="var_only", zeta=10.0)]
    v = claims.check_bn_helps(rows, zeta=10.0)
    assert v["holds"] and v["numbers"]["bn_minus_none"]["P5-beta5"] == pytest.approx(0.2)
    s = claims.check_sigma_backprop_hurts(rows)
    assert s["holds"] and s["numbers"]["mu backpropagated"]["wins"] == "2/2"
    rows = [{**r, "chi_plus": {"mean": 0.9, "std": 0, "n": 3}} if r["bn"] == "vanilla" else r for r in rows]
    assert not claims.check_sigma_backprop_hurts(rows)["holds"]


def test_ledger_records_of_the_committed_results():
    from pathlib import Path

    import numpy as np

    from ccdyn import io
    root = Path(__file__).resolve().parents[2] / "results" / "two_layer"
    checks = io.read_json(root / "claims.json")["checks"]
    led = claims.grid_claims(checks)
    assert len(led) == len(checks) == len({r["id"] for r in led})
    assert [r["verdict"] for r in led] == [claims.verdict_word(c) for c in checks]
    summary = io.read_json(root / "mnist" / "summary.json")
    record = {"final": {c: {k: np.asarray(v, np.float32) for k, v in summary["final"][c].items()}  # float32 runs
                        for c in ("aug", "no_aug")}}
    assert io.as_json(claims.mnist_claims(record)) == summary["claims"]  # the App. E.3 verdicts again
    assert [r["id"] for r in claims.mnist_ledger(summary)] == ["core-appE3-smoother", "core-appE3-more-diverse",
                                                               "core-appE3-more-diverse-live"]


def _mnist_record(final_dead, init_dead, k=4, m=10):
    """A hand-made mnist record: 2 seeds per condition (the first 'aug' seed went non-finite)."""
    import numpy as np

    def scores(dead, spread):
        return {"hf": np.array([0.02, 0.02 + spread]), "max_cos": np.array([0.98, 0.98 - spread]),
                "dead": np.asarray(dead, float), "max_cos_live": np.array([-0.99, -0.99 + spread])}
    return {"finite": {"no_aug": np.array([True, True]), "aug": np.array([False, True])},
            "W": {c: np.zeros((2, k, m, 16)) for c in claims.CONDITIONS},
            "final": {c: scores(final_dead, 0.9) for c in claims.CONDITIONS},
            "init": {c: scores(init_dead, 0.0) for c in claims.CONDITIONS}}


def test_mnist_summary_table_keeps_fractions_and_cosines_in_range():
    import numpy as np

    from ccdyn import report, stats

    rec = _mnist_record([0.025, 0.875], [0.1, 0.1])  # 1 and 35 of 40 filters dead
    header, rows = claims.mnist_summary_table(rec)
    assert header[4] == "dead filters" and [r[0] for r in rows] == ["no_aug", "aug", "no_aug at init"]
    cells = {(r[0], h): tuple(float(x) for x in r[i].replace("[", "").replace("]", "").replace(",", "").split())
             for r in rows for i, h in enumerate(header) if i >= 2}
    for (cond, h), (mean, lo, hi) in cells.items():
        lo_range = 0.0 if h in ("high-freq. fraction", "dead filters") else -1.0
        assert lo_range <= lo <= mean <= hi <= 1.0, (cond, h, mean, lo, hi)
    # 2 seeds spread by 0.9: the raw t interval leaves the range; the table cuts it at the range's ends
    assert stats.t_interval([0.02, 0.92])[1] < 0 and cells[("no_aug", "high-freq. fraction")][1] == 0.0
    assert cells[("no_aug", "max cos. (live)")][1] == -1.0
    # dead filters: pooled count 36 of 80 (no_aug), 35 of 40 (aug: its finite seed only), Wilson interval
    assert cells[("no_aug", "dead filters")][0] == 0.45 and cells[("aug", "dead filters")][0] == 0.875
    # the Wilson interval, independently: the p whose score test |p_hat - p| <= z sqrt(p (1 - p) / n) accepts
    p = np.linspace(0, 1, 200_001)
    accepted = p[np.abs(36 / 80 - p) <= 1.959963984540054 * np.sqrt(p * (1 - p) / 80)]
    np.testing.assert_allclose(cells[("no_aug", "dead filters")][1:], [accepted.min(), accepted.max()], atol=1e-3)
    assert cells[("no_aug at init", "dead filters")] == (0.1, *np.round(stats.wilson_interval(8, 80), 3))
    text = report.format_table(header, rows) + "\n" + claims.mnist_summary_key()
    assert max(len(line) for line in text.splitlines()) <= 120 and "Wilson" in text


def test_claims_text_wraps_each_check():
    from ccdyn import verdicts

    checks = [dict(verdicts.verdict("a claim " * 30, {"part one": True, "part two": False}, {"x": 0.12345}),
                   grid="g")]
    text = verdicts.claims_text(checks, width=80)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "partly: part one: yes; part two: no" in " ".join(text.split()) and "x:0.123" in text


def test_modulation_verdicts_from_the_committed_files():
    """The five modulation verdicts come out of the committed JSON / CSV (the study no longer computes them)."""
    import csv
    from pathlib import Path

    from ccdyn import io
    root = Path(__file__).resolve().parents[2] / "results" / "theory" / "modulation"
    files = {n: io.read_json(root / f"{n}.json") for n in ("eq15", "fig7", "thm6", "cor3")}
    with open(root / "eq155.csv", newline="") as f:
        files["eq155"] = list(csv.DictReader(f))
    v = claims.modulation_verdicts(files)
    assert {k: claims.verdict_word(x) for k, x in v.items()} == dict.fromkeys(("eq15", "fig7", "eq155", "thm6",
                                                                               "cor3"), "holds")
    assert v["eq155"]["numbers"]["inside"] == "23/24" and v["eq15"]["numbers"]["cases"] == 22
    assert [r["id"] for r in claims.modulation_claims(v)] == ["core-thm5", "core-fig7", "core-eq155", "core-thm6",
                                                              "core-cor3"]
    files["eq155"] = [{"inside": "False"}] * 5 + [{"inside": "True"}] * 5
    assert not claims.eq155_verdict(files["eq155"])["holds"]
    files["fig7"] = {"per_y0": {"-0.5": {"t_star": 1.0, "max_rel_err": 0.0}}}  # finite t* at y(0) < 0
    assert not claims.fig7_verdict(files["fig7"]["per_y0"])["holds"]


def test_bn_no_difference_is_one_sided():
    """Fig. 11 at zeta = 2: BN must not gain >= margin anywhere; a cell where BN is lower does not fail it."""
    rows = []
    for p in (1, 5):
        for b in (1, 5):
            rows += [row("relu", p, b, 0.5, bn="none", zeta=2.0), row("relu", p, b, 0.4 if p == 1 else 0.52,
                                                                     bn="mean_only", zeta=2.0)]
    v = claims.check_bn_no_difference(rows)
    assert v["holds"] and v["numbers"]["largest_drop"] == {"P1-beta1": pytest.approx(-0.1)}
    rows.append(row("relu", 5, 5, 0.6, bn="mean_only", zeta=2.0))  # replaces the cell: BN gains 0.1 there
    assert not claims.check_bn_no_difference(rows)["holds"]
