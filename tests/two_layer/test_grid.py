"""The grid of scripts/two_layer.py (settings, rows, tables; the shared runner: tests/test_grid.py) and the
claims / Table 1 tables built from finished grids, in process; the committed results/two_layer outputs
are rebuilt exactly."""

import json
from pathlib import Path

import numpy as np
import pytest

from ccdyn import io, two_layer
from ccdyn.data import tokens
from ccdyn.two_layer import claims
from ccdyn.two_layer.studies import token_grid

ROOT = Path(__file__).resolve().parents[2] / "results" / "two_layer"
TINY = token_grid.GridConfig(acts=("relu", "linear"), betas=(2,), ps=(2,), bns=("mean_only",), n_seeds=2, d_out=8,
                             block=10, train=two_layer.TrainConfig(batch_size=16, steps=20, lr=0.05),
                             spec=tokens.TokenSpec(n_generators=6, n_positions=3, n_tokens=6, n_fixed=2))


def test_grid_settings_order_and_validation():
    g = token_grid.GridConfig(acts=("relu", "linear"), betas=(1, 2), ps=(1, 3), losses=("infonce", "quadratic"),
                              bns=("none", "vanilla"), zetas=(1.0, 10.0))
    s = g.settings()
    assert len(s) == 64 and s[0].tag == "infonce-relu-bn_none-zeta1-P1-beta1"
    assert [x.beta for x in s[:2]] == [1, 2] and s[2].n_candidates == 3 and s[-1].tag.startswith("quadratic")
    cfg = g.results_config("scripts/two_layer.py --x")
    assert list(cfg) == ["train", "tokens", "d_out", "n_seeds", "seed", "command", "readings"]
    assert cfg["tokens"]["n_tokens"] == 20 and len(cfg["readings"]) == 4
    for kwargs, message in [(dict(ps=(21,)), "ps=.* must be integers in"), (dict(zetas=(0.0,)), "zetas"),
                            (dict(betas=(0,)), "beta=0"), (dict(bns=("batch",)), "bn='batch'"),
                            (dict(acts=()), "acts must not be empty"), (dict(n_seeds=0), "n_seeds=0")]:
        with pytest.raises(ValueError, match=message):
            token_grid.GridConfig(**kwargs)


def _fake_result(rng, finite=(True, True)):
    """A run_setting result of 2 seeds, K = 3, M = 4, d = 6 (training is covered end to end by
    tests/scripts/test_two_layer_script.py)."""
    finite = np.asarray(finite)
    chi = np.where(finite, rng.uniform(0, 1, 2), np.nan)
    return {"chi_plus": chi, "chi_minus": chi / 2, "chi_plus_rf": rng.uniform(0, 1, (2, 3)),
            "chi_minus_rf": rng.uniform(0, 1, (2, 3)), "turn_deg": rng.uniform(0, 90, 2), "finite": finite,
            "stopped_at": np.where(finite, 20, 7), "loss": rng.uniform(1, 2, (2, 2)),
            "W": rng.normal(size=(2, 3, 4, 6)), "used": rng.uniform(size=(2, 3, 6)) < 0.5,
            "embeddings": rng.normal(size=(2, 6, 6))}


def test_rows_tables_and_curves_of_a_tiny_grid(monkeypatch):
    init = {"chi_plus": np.array([0.3, 0.5]), "chi_minus": np.array([0.2, 0.4])}
    monkeypatch.setattr(token_grid, "init_scores", lambda s, **kw: init if kw["n_seeds"] == 2 else None)
    rng = np.random.default_rng(0)
    rows = []
    for s, finite in zip(TINY.settings(), [(True, True), (True, False)]):
        r = _fake_result(rng, finite)
        res = io.as_json({**token_grid.setting_result(s, r), "wall_s": 1.5})  # as read back from runs/<tag>.json
        assert res["setting"]["act"] == s.act and "W" not in res and res["wall_s"] == 1.5
        rows.append(token_grid.result_row(s, res, TINY))
        coords = token_grid.token_coords(r)
        assert coords["coords"].shape == (3, 4, 6) and np.allclose(np.abs(coords["coords"]).max(-1), 1)
    assert token_grid.nonfinite_seeds(r) == [(1, 7)]
    assert [r["act"] for r in rows] == ["relu", "linear"]
    assert rows[0]["M"] == 4 and rows[0]["n_seeds"] == 2 and rows[0]["chi_plus"]["n"] == 2
    assert rows[1]["chi_plus"]["n"] == 1 and rows[1]["n_nonfinite"] == 1
    assert rows[0]["chi_plus_init"] == {"mean": 0.4, "std": pytest.approx(0.1), "n": 2}
    assert rows[0]["turn_deg"]["n"] == 2
    old = token_grid.result_row(TINY.settings()[0], {k: v for k, v in res.items() if k != "turn_deg"}, TINY)
    assert old["turn_deg"] is None  # runs written before turn_deg existed
    headers, body = token_grid.results_csv(rows)
    assert len(headers) == len(body[0]) == 17 and body[0][:7] == ["infonce", "relu", "mean_only", 1.0, 2, 2, 4]
    assert token_grid.results_csv([old])[1][0][13] == ""
    headers, body = token_grid.results_table(rows)
    assert "χ̄₊" in headers and [b[-1] for b in body] == ["2/2", "1/2"]
    key = " ".join(" ".join(token_grid.results_table_key()).split())
    assert all(f"{h}:" in key or f"{h} (" in key for h in headers), headers  # every column has its entry
    curves = token_grid.matching_curves(rows)
    assert list(curves) == [("infonce", 1.0)] and set(curves["infonce", 1.0]) == {"relu", "linear"}
    assert set(token_grid.matching_curves(rows + [{**rows[0], "bn": "none"}])["infonce", 1.0]) == {
        "relu bn=mean_only", "linear bn=mean_only", "relu bn=none"}
    assert token_grid.weights_label(TINY.settings()[0]) == "relu β=2 P=2 bn=mean_only"


def _committed_grids():
    found = sorted(ROOT.glob("*/results.json")) + sorted(ROOT.glob("*/*/results.json"))
    return {p.parent.relative_to(ROOT).as_posix(): io.read_json(p) for p in found}


def test_claims_and_summary_rebuild_the_committed_files():
    grids = _committed_grids()
    committed = io.read_json(ROOT / "claims.json")
    checks = claims.check_grids(grids, margin=committed["margin"])
    assert io.as_json(checks) == committed["checks"]
    assert claims.claims_markdown(checks) == (ROOT / "claims.md").read_text()
    assert claims.summary_markdown(grids) == (ROOT / "summary.md").read_text()
    headers, body = claims.claims_table(checks)
    assert headers[:3] == ["grid", "claim", "verdict"] and len(body) == len(checks)


def test_check_grids_skips_missing_grids_and_margin_matters():
    grids = _committed_grids()
    only = claims.check_grids({"fig4_infonce": grids["fig4_infonce"]})
    assert {c["grid"] for c in only} == {"fig4_infonce (lr=0.002 tau=0.1)"} and len(only) == 3
    assert claims.check_grids({}) == []
    loose = claims.check_grids({"fig4_infonce": grids["fig4_infonce"]}, margin=0.5)
    assert json.dumps(io.as_json(loose)) != json.dumps(io.as_json(only))


def test_table1_rebuilds_the_committed_table():
    for run in ("table1", "table1_lr0.02"):
        cells = claims.table1_cells(io.read_json(ROOT / run / "results.json")["rows"], "relu")
        assert claims.table1_markdown(cells) + "\n" == (ROOT / run / "table1.md").read_text()
        headers, body = claims.table1_csv(cells)
        assert len(headers) == 18 and len(body) == len(cells) == 16
    assert claims.table1_cells(io.read_json(ROOT / "table1" / "results.json")["rows"], "gelu") == []
    row = {"act": "relu", "beta": 2, "n_candidates": 2, "bn": "vanilla", "chi_plus": {"mean": 0.5, "std": 0.1}}
    (cell,) = claims.table1_cells([row])
    assert cell[:2] == (2, 2) and cell[2][3] == ((0.5, 0.1), None) and cell[2][0] == (None, None)
    assert claims.table1_markdown([cell]).count("±") == 1
