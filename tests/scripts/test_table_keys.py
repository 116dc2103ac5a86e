"""Printed tables explain themselves: scripts/ddn_operator.py and scripts/hltm.py print a key under their
table and hltm.py each verdict's reason on one line, every line at most ``report.WIDTH`` characters.

Each script's ``main`` runs in this process with its study replaced by the committed records (the
operator's rows, the per-setting records of results/ddn/table6_nce_random_sign), so no program is
compiled: what is checked is what the script prints (the studies have their own tests)."""

import contextlib
import re
import io as std_io
import json
from pathlib import Path

import jax
import pytest

from ccdyn import report
from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[2]
FLAGS = inprocess.FLAGS


def _stdout_of_main(module, *argv) -> str:
    out, x64 = std_io.StringIO(), jax.config.jax_enable_x64
    FLAGS([module.__file__, *argv])
    try:
        with contextlib.redirect_stdout(out):
            module.main([])
    finally:
        FLAGS.unparse_flags()
        jax.config.update("jax_enable_x64", x64)  # ddn_operator's main turns it on
    return out.getvalue()


def _widest(text: str, path) -> int:
    """The widest line of ``text`` but those naming the run directory ``path`` (its length is the user's)."""
    return max(len(line) for line in text.splitlines() if str(path) not in line)


def _key_after_table(text: str, first_column: str) -> list:
    """The ``key:`` block (its first line and the indented lines after it) after the table whose header
    starts with ``first_column``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_column) and set(lines[i + 1]) <= {"-", " "})
    k = next(i for i in range(start, len(lines)) if lines[i].startswith("key: "))
    assert all(lines[i].strip() and not lines[i].startswith("key") for i in range(start + 2, k)), "rows, then the key"
    end = next((i for i in range(k + 1, len(lines)) if not lines[i].startswith("     ")), len(lines))
    return lines[k:end]


def test_ddn_operator_prints_a_key_for_every_column(tmp_path, monkeypatch):
    from ccdyn.deep import operator

    rows = json.loads((ROOT / "results/ddn/operator/operator.json").read_text())["rows"]
    monkeypatch.setattr(operator, "residue_study", lambda *a, **k: rows)
    with inprocess.script("ddn_operator") as m:
        text = _stdout_of_main(m, f"--output_dir={tmp_path / 'op'}")
    assert _widest(text, tmp_path) <= report.WIDTH
    key = " ".join(" ".join(_key_after_table(text, "loss")).split())
    for column in ("loss:", "beta:", "sigma:", "max rel |descent/c - OP vec W|:", "E tr V_aug f_L:"):
        assert column in key, column
    assert "nce_exact = L^{tau,exact} (Eq. 7)" in key and "Thm. 4" in key
    assert "1.20e-01" in text  # the committed residue of nce at sigma = 0.4, through the table


@pytest.fixture
def committed_hltm(monkeypatch):
    """scripts/hltm.py's training replaced by the committed records of the nce_random_sign grid (width 2)."""
    from ccdyn.deep.studies import hltm_grid
    from ccdyn.deep import figures

    runs = ROOT / "results/ddn/table6_nce_random_sign/runs"
    records = {p.stem: json.loads(p.read_text()) for p in runs.glob("*.json")}
    kept = ("setting", "latents", "seed_steps", "epochs", "nc", "op", "op_authors", "loss", "rho", "finite")
    monkeypatch.setattr(hltm_grid, "run_setting", lambda s, cfg, on_epoch=None: {k: records[s.tag][k] for k in kept})
    monkeypatch.setattr(figures, "ddn_op_figure", lambda *a, **k: None)  # (the figures have their own tests)
    with inprocess.script("hltm") as m:
        monkeypatch.setattr(m.io, "save_figure", lambda *a, **k: None)
        yield m


def test_hltm_prints_a_key_and_each_verdict_with_its_reason(tmp_path, committed_hltm):
    text = _stdout_of_main(committed_hltm, "--readings=nce_random_sign", "--widths=2", f"--output_dir={tmp_path / 'h'}")
    lines = text.splitlines()
    assert _widest(text, tmp_path) <= report.WIDTH
    key = " ".join(" ".join(_key_after_table(text, "reading")).split())
    for column in ("reading:", "L:", "|N_mu|:", "delta_lower:", "latent:", "init, epoch1, converged:"):
        assert column in key, column
    assert "45/45 cells within 2 standard errors" in text  # the README's "45 of 45 width-2 cells within 2 s.e."
    verdict_lines = [i for i, line in enumerate(lines) if line.startswith("  (") and line.rsplit(": ", 1)[-1] in
                     ("holds", "partly", "fails", "not established")]
    assert len(verdict_lines) == 6  # 3 trends on our means, 3 on the paper's own table
    assert all(lines[i + 1].startswith("      why: ") for i in verdict_lines)
    assert lines[verdict_lines[2]].endswith("not established")  # one width: trend (3) has nothing to judge
    assert lines[verdict_lines[2] + 1] == "      why: nothing to judge: the grid needs both |N_mu| = 2 and 10: --widths=2,10"
    assert lines[verdict_lines[0] + 1] == "      why: all parts hold"


def test_trend_reason_names_the_parts_that_fail():
    from ccdyn.deep import claims
    from ccdyn.verdicts import verdict

    v = verdict("(1) x", {"root below z_s0111 in every cell": False, "mean NC rises": True}, {})
    assert claims.trend_reason(v) == "not: root below z_s0111 in every cell"
    assert claims.trend_reason(verdict("(1) x", None, {})).endswith("--depths=5")


def _uncovered(headers, key_lines) -> list:
    """The headers that the key names neither by themselves nor inside a span ``first ... last`` of it."""
    text = " ".join(" ".join(key_lines).split())
    headers = list(headers)
    covered = {h for h in headers if f"{h}:" in text or f"{h}," in text or f" {h} " in text}
    for a, b in re.findall(r"([^;:,]+?) \.\.\. ([^;:,]+?)[,:]", text):
        a, b = a.strip().split(": ")[-1], b.strip()
        if a in headers and b in headers:
            covered |= set(headers[headers.index(a):headers.index(b) + 1])
    return [h for h in headers if h not in covered]


def test_every_key_names_every_column_of_its_table():
    from ccdyn.deep import claims
    from ccdyn.deep.studies import hltm_grid, thm5_remark
    from ccdyn.one_layer import basins
    from ccdyn.one_layer.studies import (augmentation, cor2_exact, fig1, flow_accuracy, landscape_fig8, roughness_runs,
                                         theorem3, theorem3_exact)

    with inprocess.script("basins_table") as m:
        basins_table_key = report.key_lines(m.KEY)
    pairs = {"hltm": (hltm_grid.results_table([])[0], hltm_grid.results_table_key()),
             "ddn_operator": (claims.operator_table([])[0], claims.operator_table_key()),
             "ddn_digits": (["variant", "step t"], claims.digits_table_key()),
             "ddn_thm5": (thm5_remark.COLUMNS, thm5_remark.table_key()),
             "cor2_exact": (cor2_exact.COLUMNS, cor2_exact.table_key()),
             "augmentation rotation": (augmentation.rotation_rows({})[0],
                                       augmentation.rotation_key(augmentation.AugmentationConfig())),
             "augmentation shift": (augmentation.shift_rows([])[0], augmentation.shift_key()),
             "basins_table": (basins.COMPARISON_COLUMNS, basins_table_key),
             "flow_accuracy exact_2d": (flow_accuracy.SET_COLUMNS, flow_accuracy.table_key("exact_2d")),
             "flow_accuracy rtol": (flow_accuracy.PAIR_COLUMNS, flow_accuracy.table_key("rtol")),
             "irregularity": (theorem3.SUMMARY_COLUMNS, report.key_lines(theorem3.SUMMARY_KEY)),
             "thm3_exact": (theorem3_exact.SUMMARY_COLUMNS, report.key_lines(theorem3_exact.SUMMARY_KEY)),
             "roughness runs": (roughness_runs.RUN_COLUMNS, report.key_lines(roughness_runs.RUN_KEY)),
             "roughness compare": (roughness_runs.COMPARE_COLUMNS, report.key_lines(roughness_runs.COMPARE_KEY)),
             "power_iteration": (fig1.TABLE_COLUMNS, fig1.table_key(10 ** 6)),
             "landscape": (landscape_fig8.TABLE_COLUMNS[1:], landscape_fig8.table_key(1 << 20))}
    for name, (headers, key) in pairs.items():
        assert max(len(line) for line in key) <= report.WIDTH, name
        assert not _uncovered(headers, key), (name, _uncovered(headers, key))
    assert _uncovered(["a", "b", "c", "d"], ["key: a: x; b ... c: y"]) == ["d"]


def test_each_verdict_line_carries_its_reason():
    from ccdyn import verdicts

    checks = [verdicts.verdict("a claim", {"part one": True, "part two": False}, {}),
              verdicts.verdict("beyond the run", None, {}), dict(verdicts.verdict("x " * 80, {"p": True}, {}), grid="g")]
    lines = verdicts.verdict_lines(checks, width=60)
    assert lines[:4] == ["a claim: partly", "    why: not: part two", "beyond the run: not established",
                         "    why: nothing to judge"]
    assert max(map(len, lines)) <= 60 and lines[-1] == "    why: all parts hold"
    assert verdicts.reason({"verdict": "holds", "parts": {}, "note": "direction only"}) == "direction only"
    assert verdicts.verdict_lines(checks[:1], label=lambda v: "L")[0] == "[L] a claim: partly"
