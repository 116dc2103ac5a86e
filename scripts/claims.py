"""The claims ledger: every claim of the three papers, each verdict from its committed record.

    python scripts/claims.py                 # results/CLAIMS.md and results/claims.json from the results
    python scripts/claims.py --run_tests     # first run the test nodes the ledger cites (pytest, ~1-2 min),
                                             # record their outcomes in results/claims_tests.json

Reads the committed result files that ccdyn.ledger.SOURCES names (under --root), builds one row per
claim of ccdyn.ledger.CATALOGUE and rewrites the two ledger files (always: they are derived, and the same
results give the same bytes). A missing result file stops it with one line naming the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from absl import flags

from ccdyn import cli, io, ledger

FLAGS = flags.FLAGS
flags.DEFINE_string("root", ".", "The repository root (the ledger reads <root>/results and writes there).")
flags.DEFINE_bool("run_tests", False, f"Run the test nodes the ledger cites and record their outcomes in "
                  f"{ledger.TESTS_FILE} before writing the ledger.")
flags.DEFINE_bool("check", False, "Write nothing: exit 1 with the differing row ids when the committed ledger is "
                  "not what this command would write now.")


def run_tests(root: Path) -> dict:
    """Runs the cited test nodes in one pytest process; {node id: "passed" / "failed" / "skipped"}."""
    nodes = ledger.cited_tests()
    missing = [n for n in nodes if not (root / n.split("::")[0]).is_file()]
    if missing:
        cli.fail(f"the ledger cites test files that do not exist: {', '.join(missing)}")
    with tempfile.TemporaryDirectory() as tmp:
        xml = Path(tmp) / "junit.xml"
        print(f"running {len(nodes)} test nodes (pytest -n 0) ...", flush=True)
        subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-m", "slow or not slow", "-p",
                        "no:cacheprovider", f"--junitxml={xml}", *nodes], cwd=root, check=False,
                       stdout=subprocess.DEVNULL)
        if not xml.is_file():
            cli.fail("pytest wrote no report: run the nodes by hand to see why")
        outcomes = {}
        for case in ET.parse(xml).getroot().iter("testcase"):
            node = case.get("classname").replace(".", "/") + ".py::" + case.get("name").split("[")[0]
            tags = {child.tag for child in case}
            word = "failed" if tags & {"failure", "error"} else "skipped" if "skipped" in tags else "passed"
            if outcomes.get(node) != "failed":
                outcomes[node] = word if outcomes.get(node) in (None, "passed") else outcomes[node]
    absent = [n for n in nodes if n not in outcomes]
    if absent:
        cli.fail(f"pytest did not run {', '.join(absent)}: a cited test was renamed or removed")
    return {n: outcomes[n] for n in nodes}


def changed(old: dict, new: dict) -> list:
    """Row ids whose row differs between two claims.json contents (added, removed or changed)."""
    a, b = ({r["id"]: r for r in d.get("rows", [])} for d in (old, new))
    return sorted(i for i in a.keys() | b.keys() if a.get(i) != b.get(i))


def main(argv):
    del argv
    root = Path(FLAGS.root)
    if not (root / "results").is_dir():
        cli.fail(f"--root={FLAGS.root} has no results/ directory")
    if FLAGS.run_tests and FLAGS.check:
        cli.fail("--run_tests and --check exclude each other")
    if FLAGS.run_tests:
        outcomes = run_tests(root)
        io.atomic_write_bytes(root / ledger.TESTS_FILE, (json.dumps(
            {"command": ledger.TESTS_COMMAND, "outcomes": outcomes}, indent=2) + "\n").encode())
        print(f"{sum(v == 'passed' for v in outcomes.values())}/{len(outcomes)} passed; wrote {ledger.TESTS_FILE}")
    try:
        rows = ledger.collect(root, log=print)
    except ledger.LedgerError as e:
        cli.fail(f"--root={FLAGS.root}: {e}")
    md, js = ledger.markdown(rows), ledger.to_json(rows)
    md_path, js_path = root / "results" / "CLAIMS.md", root / "results" / "claims.json"
    if FLAGS.check:
        old = json.loads(js_path.read_text()) if js_path.is_file() else {}
        ids = changed(old, json.loads(js))
        same_md = md_path.is_file() and md_path.read_text() == md
        if ids or not same_md:
            cli.fail(f"the ledger is stale ({len(ids)} rows differ: {', '.join(ids[:20]) or 'layout only'}); "
                     "run python scripts/claims.py")
        print("the committed ledger is up to date")
        return
    io.atomic_write_bytes(md_path, md.encode())
    io.atomic_write_bytes(js_path, js.encode())
    c = ledger.counts(rows)
    print(f"{len(rows)} rows ({', '.join(f'{k} {v}' for k, v in c['verdict'].items())}); wrote {md_path} and "
          f"{js_path.name}")


if __name__ == "__main__":
    cli.start(main)
