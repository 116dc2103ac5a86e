"""ccdyn.ledger and scripts/claims.py: every row's result file (or test node) and command exist, every
verdict equals the one its record holds (read here from the record independently of the claims
functions), and results/CLAIMS.md / claims.json are what scripts/claims.py would write now."""

import ast
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from ccdyn import io, ledger, verdicts
from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def rows():
    return ledger.collect(ROOT)


def test_committed_ledger_is_what_the_script_writes_now(rows):
    """Regenerating gives the same bytes; on a difference the message names the rows that changed."""
    committed = json.loads((ROOT / "results" / "claims.json").read_text())
    now = json.loads(ledger.to_json(rows))
    a, b = ({r["id"]: r for r in d["rows"]} for d in (committed, now))
    changed = sorted(i for i in a.keys() | b.keys() if a.get(i) != b.get(i))
    assert not changed, f"results/claims.json is stale in rows {changed}: run python scripts/claims.py"
    assert (ROOT / "results" / "CLAIMS.md").read_text() == ledger.markdown(rows), "run python scripts/claims.py"


def _test_functions(path: Path) -> set:
    return {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}


def test_every_row_has_its_result_and_command(rows):
    scripts = {p.name for p in (ROOT / "scripts").glob("*.py")}
    for r in rows:
        if r["verdict"] == "not checked":
            assert r["note"], f"{r['id']}: a claim not checked says why"
            continue
        assert r["result"] and r["command"], f"{r['id']}: no result or command"
        words = shlex.split(r["command"].split(" (")[0])
        assert words[0] == "python" and words[1].startswith("scripts/") and Path(words[1]).name in scripts, r["id"]
        if r["result"].startswith("tests/"):
            for node in r["result"].split():
                path, name = node.split("::")
                assert name in _test_functions(ROOT / path), f"{r['id']}: {node} does not exist"
        else:
            for path in r["result"].split():  # one result, or several separated by spaces
                assert (ROOT / path).exists(), f"{r['id']}: {path} does not exist"
        assert r["check"] in verdicts.CHECK_KINDS and r["verdict"] in verdicts.WORDS


def test_every_catalogue_entry_has_a_row_and_ids_are_unique(rows):
    assert {r["claim"] for r in rows} == {c.id for c in ledger.CATALOGUE}
    assert len({r["id"] for r in rows}) == len(rows)
    papers = [r["paper"] for r in rows]
    assert papers == sorted(papers, key=verdicts.PAPERS.index)  # one block per paper, in PAPERS order
    numbered = {"core": [f"Lemma {i}" for i in range(1, 12)] + [f"Thm. {i}" for i in range(1, 7)]
                + [f"Cor. {i}" for i in range(1, 4)] + [f"Fig. {i}" for i in range(1, 14)] + ["Table 1"],
                "DDN": [f"Thm. {i}" for i in range(1, 7)] + [f"Lemma {i}" for i in range(1, 10)]
                + [f"Fig. {i}" for i in range(1, 15)] + [f"Table {i}" for i in range(1, 7)] + ["Cor. 1"],
                "SimCLR-var": ["Prop. 2.1", "Prop. 3.1", "Thm. 3.2", "Prop. 4.1", "Thm. 4.2", "Prop. 4.3", "Prop. 4.4",
                               "Thm. 4.5", "Cor. 4.6", "Remark 4.4", "Prop. A.1", "Lemma A.2"]
                + [f"Fig. {i}" for i in range(1, 7)]}
    for paper, names in numbered.items():
        where = " ; ".join(c.location for c in ledger.CATALOGUE if c.paper == paper)
        for name in names:
            kind, num = name.rsplit(" ", 1)
            spans = re.findall(rf"{re.escape(kind)}s? ([\d.A-Z, -]+)", where.replace("Lemmas", "Lemma")
                               .replace("Figs.", "Fig.").replace("Tables", "Table"))
            listed = set()
            for span in spans:
                for part in span.replace(" ", "").split(","):
                    lo, _, hi = part.partition("-")
                    if lo.isdigit() and hi.isdigit():
                        listed |= {str(i) for i in range(int(lo), int(hi) + 1)}
                    listed.add(lo.rstrip("."))
            assert num in listed, f"{paper} {name} has no catalogue entry"


def _word(v):
    return "not established" if v["holds"] is None else verdicts.verdict_word(v)


def test_verdicts_equal_the_ones_their_records_hold(rows):
    """Where a result file stores its verdicts, the ledger's word is the stored one (read here straight from
    the file); tested rows carry the recorded pytest outcome."""
    by_id = {r["id"]: r for r in rows}
    stored = {}
    two = io.read_json(ROOT / "results/two_layer/claims.json")["checks"]
    assert sum(r["id"].startswith("core-") and r["result"] == "results/two_layer/claims.json" for r in rows) == len(two)
    for r in rows:
        if r["result"] == "results/two_layer/claims.json":
            c = next(c for c in two if f"[{c['grid']}]" in r["location"] and c["claim"] == r["statement"])
            stored[r["id"]] = _word(c)
    for r in rows:  # the ledger's word is the record's, except where its evidence lowers it (and says so)
        if r["verdict"] != r["record_verdict"]:
            assert r["reason"] and f"the record says {r['record_verdict']}" in r["note"], r["id"]
        assert verdicts.stronger_than_evidence(r) is None, r["id"]
    sim = [io.read_json(ROOT / "results/simclr_var" / p) for p in ("sphere/sphere.json", "kernel/kernel.json",
                                                                   "kernel/clusters.json")]
    sim_stored = [sim[0][k]["verdict"] for k in ("prop21", "fig3", "thm32", "propA1", "lemmaA2")]
    sim_stored += sim[1]["verdicts"] + sim[2]["verdicts"]
    want = {tuple(v["claim"].split(": ", 1)): _word(v) for v in sim_stored}
    for c in io.read_json(ROOT / "results/simclr_var/thm42_moving/thm42_moving.json")["claims"]:
        want[(c["location"], c["statement"])] = c["verdict"]
    forms = io.read_json(ROOT / "results/theory/appendix_forms/appendix_forms.json")["claims"]
    for c in forms:  # the script stores its records: every one of them is a ledger row with the stored word
        if c["paper"] == "SimCLR-var":
            want[(c["location"], c["statement"])] = c["verdict"]
        assert by_id[c["id"]]["record_verdict"] == c["verdict"], c["id"]
    got = {(r["location"], r["statement"]): r["record_verdict"] for r in rows
           if r["paper"] == "SimCLR-var" and r["result"] and r["result"].startswith("results/")}
    assert got == want
    for name in ("mnist", "mnist_lr0.01", "mnist_real", "mnist_real_lr0.01"):
        claims = io.read_json(ROOT / f"results/two_layer/{name}/summary.json")["claims"]
        got = [r["record_verdict"] for r in rows if r["result"] == f"results/two_layer/{name}"]
        assert got == [_word(c) for c in claims], name
    for name, reading in (("table6", "paper"), ("table6_authors", "authors")):
        trends = io.read_json(ROOT / f"results/ddn/{name}/results.json")["verdicts"][reading]["trends"]
        got = [r["record_verdict"] for r in rows if r["id"].startswith("ddn-appD1") and r["id"].endswith(reading)]
        assert got == [_word(t) for t in trends]
    thm3 = io.read_json(ROOT / "results/theory/thm3/thm3.json")["verdict"]
    stored["core-thm3"] = "holds" if thm3.startswith("Thm. 3 holds") else "fails"
    aug = io.read_json(ROOT / "results/theory/augmentation/augmentation.json")["verdicts"]
    stored["core-appB5-rotation"] = "holds" if " HOLDS " in aug["rotation"] else "fails"
    stored["core-appB5-shift"] = "holds" if " HOLDS " in aug["shift"] else "fails"
    for name, cid in (("flow_exact_2d", "ccdyn-flow-exact-2d"), ("flow_rtol", "ccdyn-flow-rtol")):
        stored[cid] = _word(io.read_json(ROOT / f"results/basins/{name}/flow_accuracy.json")["check"])
    stored["ccdyn-kink-certificates"] = io.read_json(ROOT / "results/basins/kink_check/kink_check.json")["verdict"]
    assert {i: by_id[i]["record_verdict"] for i in stored} == stored
    assert by_id["core-thm3"]["verdict"] == by_id["simclr-thm-4.2"]["verdict"] == "not established"  # lowered
    outcomes = io.read_json(ROOT / ledger.TESTS_FILE)["outcomes"]
    for r in rows:
        if r["result"] and r["result"].startswith("tests/"):
            got = [outcomes.get(n) for n in r["result"].split()]
            want = ("holds" if all(g == "passed" for g in got) else "not established" if None in got else "fails")
            assert r["record_verdict"] == want and "tested" in r["note"], r["id"]


def test_collect_names_a_missing_file_and_an_unmatched_record(tmp_path, monkeypatch):
    (tmp_path / "results").mkdir()
    with pytest.raises(ledger.LedgerError, match="missing result file results/landscape/landscape.json"):
        ledger.collect(tmp_path)
    source = ledger.Source(("results/x.json",), lambda f: [verdicts.claim_record(
        "core-nowhere", "core", "Thm. 9", "s", "holds", {}, "closed form", result="results/x.json", command="c")])
    io.write_json(tmp_path / "results/x.json", {})
    monkeypatch.setattr(ledger, "SOURCES", (source,))
    with pytest.raises(ledger.LedgerError, match="core-nowhere matches 0 catalogue entries"):
        ledger.collect(tmp_path)


def test_script_checks_the_committed_ledger_and_names_a_missing_file(tmp_path, capsys):
    """One subprocess smoke run (--check on the committed ledger); the early errors in this process."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "claims.py"), "--check"], capture_output=True,
                       text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0 and "up to date" in r.stdout, r.stderr
    (tmp_path / "results").mkdir()
    with inprocess.script("claims") as script:
        assert inprocess.main_exit(script, f"--root={tmp_path}") == (
            f"error: --root={tmp_path}: missing result file results/landscape/landscape.json")
        assert inprocess.main_exit(script, f"--root={tmp_path / 'none'}").startswith("error: --root=")
        assert inprocess.main_exit(script, "--run_tests", "--check").startswith("error: --run_tests and --check")
        assert script.changed({"rows": [{"id": "core-x"}]}, {"rows": [{"id": "core-x", "verdict": "holds"}]}) == [
            "core-x"]


# The rows issue #38 names, with the word their evidence earns (the reason is in each row's ``reason``).
REJUDGED = {"core-thm1": "not established", "core-thm4": "partly", "ddn-thm6": "partly",
            "core-appB5-rotation": "not established", "core-cor2": "partly", "core-cor2-exact": "partly",
            "core-thm3-exact": "partly", "core-relu-lowest-chi-minus-fig10-quadratic": "not established",
            "ddn-table3-digits-beta+0.2": "not established", "ddn-table2-digits": "not established",
            "ddn-table4-nce_random_sign": "partly", "ddn-table6-nce_random_sign": "partly", "ddn-thm4": "partly",
            **{f"core-relu-lowest-chi-minus-sensitivity-{g}": "partly" for g in (
                "lr0.002-bn-mean-only-tau0.1", "lr0.002-bn-none-tau0.5", "lr0.02-bn-mean-only-tau0.1",
                "lr0.02-bn-mean-only-tau0.5", "quadratic-authors-lr0.002-bn-none-authors")},
            **{f"core-appE3-more-diverse{live}-{run}": "not established" for live in ("", "-live")
               for run in ("digits", "lr0.01", "real", "real_lr0.01")}}


def test_no_committed_row_says_more_than_its_evidence_and_the_named_rows_are_rejudged():
    """Every row of the committed results/claims.json has the word the one rule (verdicts.earned) gives
    from its measured word, check kind and evidence; the rows issue #38 names carry the evidence that
    lowers them (a row losing its evidence would say "holds" / "fails" again and fail here)."""
    committed = {r["id"]: r for r in json.loads((ROOT / "results" / "claims.json").read_text())["rows"]}
    problems = [p for p in map(verdicts.stronger_than_evidence, committed.values()) if p]
    assert not problems, problems
    assert {i: committed[i]["verdict"] for i in REJUDGED} == REJUDGED
    for i in REJUDGED:
        assert committed[i]["reason"] and committed[i]["record_verdict"] != committed[i]["verdict"], i
