"""Every table a script prints is at most ``report.WIDTH`` (120) characters wide and has a key under it.

The slow test runs each script's tiny run (the ``smoke`` case of the reliability probe,
tests/scripts/probe.py: the README test's small sizes plus the probe's per-script inputs) in its own
process and reads its stdout with :func:`tables`; the fast tests check that reader and
``report.format_table``'s splitting of wide tables.

    pytest -m slow tests/scripts/test_script_tables.py            # every script: over an hour at load 25 on 2 cores
    pytest -m slow tests/scripts/test_script_tables.py -k hltm    # one
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ccdyn import report

ROOT = Path(__file__).resolve().parents[2]
_RULE = re.compile(r"-+(?:  +-+)*")
_MD_RULE = re.compile(r"\|(?:\s*:?-+:?\s*\|)+")


def tables(text: str) -> list:
    """The tables in ``text``: ``(first line index, lines, key lines)``. A plain table is a header line, a
    rule of dashes (``report.format_table``) and its rows up to a blank line; the blocks of a split table
    (the next block under one blank line, with the same first header) count as one table. A markdown
    table is its run of ``|`` lines. The key is the ``key:`` line right under the table (one blank line
    between allowed) and the indented lines after it; empty when there is none."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines) - 1:
        md = lines[i].startswith("|") and _MD_RULE.fullmatch(lines[i + 1].strip())
        plain = lines[i].strip() and _RULE.fullmatch(lines[i + 1].rstrip()) and not lines[i].startswith("|")
        if not (md or plain):
            i += 1
            continue
        start, j = i, i + 2
        while True:
            while j < len(lines) and lines[j].strip() and (lines[j].startswith("|") if md else
                                                             not lines[j].startswith("key:")):
                j += 1
            nxt = j + 1  # a split table's next block: blank, the same first header, a rule
            if (not md and nxt + 1 < len(lines) and lines[j:j + 1] == [""]
                    and lines[nxt].split("  ")[0] == lines[start].split("  ")[0]
                    and _RULE.fullmatch(lines[nxt + 1].rstrip())):
                j = nxt + 2
                continue
            break
        body = lines[start:j]
        k = j + 1 if j < len(lines) and not lines[j].strip() else j
        key = []
        if k < len(lines) and lines[k].startswith("key:"):
            key = [lines[k]] + [ln for ln in _takewhile(lines[k + 1:], lambda ln: ln.startswith("     "))]
        out.append((start, body, key))
        i = j
    return out


def _takewhile(seq, pred):
    for x in seq:
        if not pred(x):
            return
        yield x


def problems(text: str) -> list:
    """One line per table wider than ``report.WIDTH`` or without a key (:func:`tables`)."""
    out = []
    for start, body, key in tables(text):
        wide = max(len(line) for line in body + key)
        if wide > report.WIDTH:
            out.append(f"table at line {start + 1} ({body[0][:40]}...) is {wide} characters wide")
        if not key:
            out.append(f"table at line {start + 1} ({body[0][:40]}...) has no key under it")
    return out


# ------------------------------------------------------------------------------------------------ fast


def test_the_reader_finds_tables_split_blocks_and_keys():
    wide = report.format_table(["run"] + [f"column {i:02d} of many" for i in range(12)],
                               [["a"] + list(range(12)), ["b"] + list(range(12, 24))])
    blocks = wide.split("\n\n")
    assert len(blocks) > 1 and all(b.startswith("run  column") for b in blocks)
    assert max(len(line) for line in wide.splitlines()) <= report.WIDTH
    # every column once, the row label in every block, the rows in order
    heads = [h for b in blocks for h in re.split(r"  +", b.splitlines()[0])[1:]]
    assert heads == [f"column {i:02d} of many" for i in range(12)]
    assert [b.splitlines()[3].split()[0] for b in blocks] == ["b"] * len(blocks)
    key = report.key_lines("a: the first column; " * 12)
    assert len(key) > 1 and key[0].startswith("key: a:") and all(k.startswith("     ") for k in key[1:])
    text = "\n".join(["intro", wide, *key, "", "x  y", "-  -", "1  2", "", "| a | b |", "|---|---|", "| 1 | 2 |",
                      "", *report.key_lines("a, b: numbers")])
    found = tables(text)
    assert [len(t[1]) for t in found] == [len(wide.splitlines()), 3, 3]
    assert [bool(t[2]) for t in found] == [True, False, True] and found[0][2] == key
    assert problems(text) == [f"table at line {found[1][0] + 1} (x  y...) has no key under it"]
    assert text.splitlines()[found[1][0]] == "x  y"
    assert report.format_table(["a", "b"], [[1, 2]], width=None) == "a  b\n-  -\n1  2"
    assert report.keyed_table(["a", "b"], [[1, 2]], "a, b: numbers") == "a  b\n-  -\n1  2\nkey: a, b: numbers"
    assert "wide" in problems("h\n-\n" + "x" * 121 + "\n" + key[0])[0]


# ------------------------------------------------------------------------------------------------ slow


def _scripts() -> list:
    return sorted(p.stem for p in (ROOT / "scripts").glob("*.py") if p.stem != "claims")  # (claims: its own tests)


@pytest.fixture(scope="module")
def probe_data():
    from tests.scripts import probe

    d = Path(tempfile.mkdtemp(prefix="ccdyn-tables-"))
    probe.make_data(d)
    yield d
    shutil.rmtree(d, ignore_errors=True)


NO_KEY_YET = ()  # scripts whose tables have no key yet (issue #25): none


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(s, marks=pytest.mark.xfail(reason="no key yet (issue #25)"))
                                  if s in NO_KEY_YET else s for s in _scripts()])
def test_every_printed_table_is_narrow_and_has_a_key(name, tmp_path, probe_data):
    from tests.scripts import probe

    (case,) = [c for c in probe.cases(ROOT, (name,)) if c.name == "smoke"]
    t, o = tmp_path / "t", tmp_path / "t" / "out"
    t.mkdir()
    probe._prepare(case, t, o, ROOT)
    cmd = probe._command(case, t, o, ROOT, probe_data)
    r = subprocess.run(cmd, cwd=t, capture_output=True, text=True, timeout=3600,
                       env=dict(os.environ, PYTHONPATH=str(ROOT), JAX_PLATFORMS="cpu"))
    assert r.returncode == 0, r.stderr[-3000:]
    found = problems(r.stdout)
    assert not found, "\n".join(found) + "\n\n" + r.stdout[-4000:]
