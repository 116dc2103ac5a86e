"""The reliability probe (``tests/scripts/probe.py``, issue #24) under pytest, slow: every case of every
script in scripts/ is good by the failure contract (one ``error:`` line naming the flag or file, or a
clean success where the case allows one; no traceback, no native crash, no run past its CPU limit, no
output folder left by a refusal, no user's file lost). One test per script; a failure lists its bad
cases. The whole probe is slow (hours on 2 busy cores; the refusals take seconds, the runs that may succeed most)."""

import pytest

from tests.scripts import probe

SCRIPTS = sorted(p.stem for p in (probe.ROOT / "scripts").glob("*.py"))  # no import at collection


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("probe-data")
    probe.make_data(d)
    return d


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_every_probe_case_is_good(script, data, tmp_path):
    rows = probe.run_all(probe.cases(probe.ROOT, (script,)), probe.ROOT, data, tmp_path, jobs=2)
    assert rows, f"no cases for {script}"
    bad = [f"{r['case']}: {r['why']} | {r['error']}" for r in rows if r["verdict"] == "bad"]
    assert not bad, f"{len(bad)} bad of {len(rows)}:\n" + "\n".join(bad)
