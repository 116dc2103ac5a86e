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


def test_verdicts_and_the_case_selection(tmp_path, capsys):
    """Fast: how a run is judged (a catch-all refusal is borderline), a former run's lines read back (any
    verdict's width), and slices that cover the cases once."""
    case = probe.Case("hltm", "--n_eval=10^12", ("--n_eval=1000000000000",), expect="either", names="--n_eval")
    o = tmp_path / "out"
    named = "error: --n_eval needs about 9.0 GiB (...); use a smaller --n_eval\n"
    luck = "error: OverflowError: --n_eval too big (raised at x.py:1 in f; set CCDYN_TRACEBACK=1 for the traceback)\n"
    assert probe.judge(case, 2, "", named, [], o) == ("good", "refused")
    assert probe.judge(case, 2, "", luck, [], o)[0] == "borderline"
    assert probe.judge(case, 2, "", "error: out of range\n", [], o)[0] == "bad"  # names no flag
    assert probe.judge(case, 2, "", named + "Traceback (most recent call last)\n", [], o) == ("bad", "Traceback")
    assert probe.judge(case, -6, "", "", [], o) == ("bad", "killed by signal 6")
    assert probe.judge(case, 0, "", "", [], o) == ("good", "succeeded")  # a cap may run
    rows = [{"verdict": v, "script": "hltm", "case": f"c{i} | x", "why": "w", "error": "e"}
            for i, v in enumerate(probe.VERDICTS)]
    for r in rows:
        probe._show(r)
    (tmp_path / "log").write_text("noise\n" + capsys.readouterr().out)
    assert probe.judged(tmp_path / "log") == {("hltm", f"c{i}"): v for i, v in enumerate(probe.VERDICTS)}
    assert probe.tally(rows) == {"hltm": dict.fromkeys(probe.VERDICTS, 1)}
    parts = [probe.in_slice(list(range(10)), f"{k}/3") for k in (1, 2, 3)]
    assert sorted(sum(parts, [])) == list(range(10)) and parts[1] == [1, 4, 7]
    with pytest.raises(ValueError, match="--slice=4/3"):
        probe.in_slice([], "4/3")
