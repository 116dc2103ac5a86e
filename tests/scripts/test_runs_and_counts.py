"""Issue 38's bad inputs beyond the tables of test_bad_inputs.py: the shared count check (cli.check_counts),
--helpshort, a run that cannot be replaced or written to the end, corrupt result files named, and valid
settings that crashed (cor2_exact with a small sample, kink_check under power iteration)."""

import errno
import os
import shutil
import subprocess

import numpy as np
import pytest
from absl import flags

from ccdyn import cli, io, rundir
from ccdyn.cli import budget
from tests.scripts import inprocess


def _fail_line(capsys, fn, *args, **kwargs) -> str:
    with pytest.raises(SystemExit) as e:
        fn(*args, **kwargs)
    assert e.value.code == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error: ")]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture
def counts():
    fv = flags.FlagValues()
    flags.DEFINE_integer("steps", 100, "", flag_values=fv)
    flags.DEFINE_integer("width", 10, "", flag_values=fv)
    fv(["x"])
    return fv


def test_check_counts_bounds_a_loop_the_time_and_the_memory(counts, capsys, monkeypatch):
    """The int32 loop limit at its edge; the time against CCDYN_MAX_HOURS at its edge, naming the flag that
    drives it (the one whose default lowers the estimate most); memory against the device's."""
    run = lambda **kw: cli.check_counts(counts, ("steps", "width"), formula="F", **kw)  # noqa: E731
    counts["steps"].value = budget.LOOP_MAX
    run(loops=("steps",))
    counts["steps"].value = budget.LOOP_MAX + 1
    assert _fail_line(capsys, run, loops=("steps",)) == (
        f"error: --steps={budget.LOOP_MAX + 1} is more than a compiled loop counts (at most 2,147,483,647, an int32); "
        "use a smaller --steps")
    monkeypatch.setenv("CCDYN_MAX_HOURS", "1")
    counts["steps"].value = round(3600 / budget.STEP_S)  # exactly an hour of steps: allowed
    run(steps=lambda **f: f["--steps"])
    counts["steps"].value += 1
    line = _fail_line(capsys, run, steps=lambda **f: f["--steps"])
    assert line.startswith(f"error: --steps={counts['steps'].value} needs at least 1 hours (F), more than the 1 hours")
    counts["steps"].value, counts["width"].value = 100, 10**30  # width drives: its default lowers it by 10^29
    line = _fail_line(capsys, run, steps=lambda **f: f["--steps"] * f["--width"])
    assert line.startswith("error: --width=" + str(10**30)) and line.endswith("use a smaller --width")
    line = _fail_line(capsys, run, memory=lambda **f: 8 * f["--width"])
    assert line.startswith("error: --width needs about") and "(F)" in line
    monkeypatch.setenv("CCDYN_MAX_HOURS", "soon")
    assert "CCDYN_MAX_HOURS='soon' must be a number of hours" in _fail_line(capsys, run, steps=lambda **f: 1)


def test_helpshort_and_help_exit_0(capsys):
    with inprocess.script("ddn_thm5") as script:
        for flag in ("--helpshort", "--help"):
            code, errors = inprocess.start_exit(script, flag)
            assert code == 0 and errors == []
    assert capsys.readouterr().out.count("USAGE") == 2  # (the flags listed are the main module's: pytest here)


def test_a_flag_given_twice_is_refused_but_a_multi_flag_repeats(capsys):
    fv = flags.FLAGS
    flags.DEFINE_multi_string("tag_for_test", [], "")
    try:
        from ccdyn.cli import contract

        contract._refuse_repeats(["--tag_for_test=a", "--tag_for_test=b", "--", "--tag_for_test=c"])
        assert contract._flag_name("--nooverwrite_for_test") is None and contract._flag_name("-1") is None
        flags.DEFINE_bool("overwrite_for_test", False, "")
        line = _fail_line(capsys, contract._refuse_repeats, ["--overwrite_for_test", "--nooverwrite_for_test"])
        assert line == "error: --overwrite_for_test is given twice (--overwrite_for_test and --nooverwrite_for_test); " \
                       "give each flag once"
    finally:
        for name in ("tag_for_test", "overwrite_for_test"):
            if name in fv:
                delattr(fv, name)


def _thm5(tmp_path, *extra):
    with inprocess.script("ddn_thm5") as script:
        return inprocess.start_exit(script, f"--output_dir={tmp_path / 'out'}", *extra)


def _chattr(flag, path) -> bool:
    return shutil.which("chattr") is not None and subprocess.run(["chattr", flag, str(path)],
                                                                  capture_output=True).returncode == 0


def test_overwrite_of_a_run_that_cannot_be_replaced_is_refused_before_any_work(tmp_path):
    """Was: the whole run computed, then 'Operation not permitted (out)' and a hidden .out.ccdyn-new-* left."""
    assert _thm5(tmp_path)[0] in (0, None)
    before = (tmp_path / "out" / "thm5_remark.json").read_bytes()
    if not _chattr("+i", tmp_path / "out"):
        if os.geteuid() == 0:
            pytest.skip("no chattr +i here (a root process writes to a 0555 folder)")
        (tmp_path / "out").chmod(0o555)
    try:
        code, errors = _thm5(tmp_path, "--overwrite")
    finally:
        _chattr("-i", tmp_path / "out")
        (tmp_path / "out").chmod(0o755)
    assert code == 2 and len(errors) == 1, errors
    assert errors[0].startswith(f"error: --overwrite cannot replace '{tmp_path / 'out'}': ") and "is not writable" in \
        errors[0] and errors[0].endswith("(--output_dir)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staged folder
    assert (tmp_path / "out" / "thm5_remark.json").read_bytes() == before


def test_a_swap_that_fails_late_removes_the_staged_run_and_keeps_the_old(tmp_path, monkeypatch):
    old = rundir.RunDir.open(tmp_path / "out", {"a": 1}, script="scripts/x.py", version="0", outputs=("r.json",))
    io.write_json(old.path / "r.json", {"old": 1})
    old.finish()
    new = rundir.RunDir.open(tmp_path / "out", {"a": 2}, script="scripts/x.py", version="0", outputs=("r.json",),
                             overwrite=True)
    io.write_json(new.path / "r.json", {"new": 1})
    real = os.rename

    def rename(src, dst):
        if str(src) == str(tmp_path / "out"):
            raise OSError(errno.EPERM, "Operation not permitted", str(src))
        return real(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(rundir.RunDirError, match="could not be replaced .Operation not permitted.; it is kept as it was"):
        new.started()
    new.fail("late")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert io.read_json(tmp_path / "out" / "r.json") == {"old": 1} and not new.holds_lock


def test_a_full_disk_after_the_first_output_leaves_the_run_failed_not_running(tmp_path, monkeypatch):
    real, full = io.atomic_write_bytes, []

    def write(path, data):
        if full:
            raise OSError(errno.ENOSPC, "No space left on device (writing)", str(path))
        real(path, data)
        if str(path).endswith(".md"):
            full.append(path)  # the disk is full from now on

    monkeypatch.setattr(io, "atomic_write_bytes", write)
    code, errors = _thm5(tmp_path)
    assert code == 2 and len(errors) == 1 and errors[0].startswith("error: No space left on device (writing)")
    assert "thm5_remark.json" in errors[0]
    manifest = io.read_json(tmp_path / "out" / rundir.MANIFEST)
    assert manifest["state"] == "failed" and "No space left" in manifest["error"]


def test_a_corrupt_ledger_result_file_is_named(tmp_path):
    """A ledger result file that parses but is not what its claims function reads: the error line names
    the file (it did not)."""
    (tmp_path / "results" / "landscape").mkdir(parents=True)
    (tmp_path / "results" / "landscape" / "landscape.json").write_text('{"other": 1}')
    with inprocess.script("claims") as script:
        code, errors = inprocess.start_exit(script, f"--root={tmp_path}")
    assert code == 2 and len(errors) == 1 and "after reading " in errors[0], errors
    assert str(tmp_path / "results" / "landscape" / "landscape.json") in errors[0]


def test_a_corrupt_basins_summary_is_named_by_saddles(tmp_path):
    """A summary whose optima are not vectors: the error line names --run and the file (it did not)."""
    summary = io.read_json(inprocess.ROOT / "results" / "basins" / "relu" / "summary.json")
    summary["optima"] = [{"fraction": 0.5, "w": "abc"}, {"fraction": 0.5, "w": [1, 2]}]
    (tmp_path / "run").mkdir()
    io.write_json(tmp_path / "run" / "summary.json", summary)
    with inprocess.script("saddles") as script:
        code, errors = inprocess.start_exit(script, f"--run={tmp_path / 'run'}", f"--output_dir={tmp_path / 'o'}")
    assert code == 2 and len(errors) == 1 and "--run" in errors[0], errors
    assert str(tmp_path / "run" / "summary.json") in errors[0], errors
    assert not (tmp_path / "o").exists()


def test_or_fail_names_the_files_read_when_the_message_does_not(tmp_path, capsys):
    io.write_json(tmp_path / "a.json", {})

    def main(argv):
        io.read_json(tmp_path / "a.json")
        cli.or_fail(lambda: (_ for _ in ()).throw(ValueError("bad shape")))

    line = _fail_line(capsys, cli.start, main, argv=["x"])
    assert line == f"error: bad shape (after reading {tmp_path / 'a.json'})"


def test_cor2_exact_with_a_sample_that_misses_a_plane():
    """--n_samples=1000 (the flag's lower bound) ended in a ZeroDivisionError: at a w whose ReLU plane no
    sample point crosses, uniform alpha's sampled difference is 0. Now that w's sampled ratio is NaN ("-"),
    the point is not resolved, and the claim is judged on the others."""
    from ccdyn.one_layer import claims
    from ccdyn.one_layer.studies import cor2_exact

    rec = cor2_exact.run(cor2_exact.Cor2ExactConfig(n_samples=1000, taus=(8.0, 2.0)))
    missed = [r for r in rec["rows"] if r["alpha"] == "uniform" and r["rho_sampled"] == 0]
    assert missed, "the case no longer misses a plane: pick another"
    for r in rec["rows"]:
        assert (r["w"] in {m["w"] for m in missed}) == (not np.isfinite(r["ratio_sampled"]))
    assert all(row[cor2_exact.COLUMNS.index("ratio_sampled")] == "-" for row in rec["tables"]["rows"]
               if row[0] in {m["w"] for m in missed})
    c = claims.cor2_exact_claims(rec)[0]
    assert not set(c["numbers"]["resolved"]) & {m["w"] for m in missed}


@pytest.mark.slow  # a basins run and its kink analysis (~30 s on 2 busy cores)
def test_kink_check_under_power_iteration_writes_its_record(tmp_path):
    """Was: KeyError 'multipliers' after writing outputs (power iteration's rows have no kink certificate)."""
    with inprocess.script("kink_check") as script:
        code, errors = inprocess.start_exit(script, "--method=power", "--set_seeds=1000:1001", "--max_points=12",
                                            "--probe_dirs=20", "--compare_methods=false", "--n_init=32", "--tile=32",
                                            f"--output_dir={tmp_path / 'k'}")
    assert code in (0, None) and errors == []
    rec = io.read_json(tmp_path / "k" / "kink_check.json")
    assert rec["sets"][0]["optima"] and io.read_json(tmp_path / "k" / rundir.MANIFEST)["state"] == "complete"


@pytest.mark.slow  # three of the cases start a script in a process of its own (~25 s on 2 busy cores)
def test_the_probe_judges_the_new_generic_cases_good(tmp_path):
    """The probe's cases added for issue 38 that need no run (a positional argument, a flag given twice,
    --helpshort, seed ranges, a read-only finished run under --overwrite, an npz header of 10^12 rows),
    judged as the probe judges them, on two quick scripts."""
    from tests.scripts import probe

    (tmp_path / "d").mkdir()
    probe.make_data(tmp_path / "d")
    names = ("positional argument", "a flag given twice", "--helpshort", "--set_seeds beyond 2^32",
             "finished run read-only --overwrite", "--data_path header1e12", "#38 --c=1e300")
    chosen = [c for c in probe.cases(probe.ROOT, ("ddn_thm5", "kink_check")) if c.name in names]
    assert len(chosen) == 10, [c.id for c in chosen]
    rows = probe.run_all(chosen, probe.ROOT, tmp_path / "d", tmp_path)
    assert all(r["verdict"] == "good" for r in rows), [r for r in rows if r["verdict"] != "good"]


def test_a_bad_kernel_choice_is_one_error_line_before_any_output(tmp_path, monkeypatch):
    """CCDYN_KERNEL (ccdyn.compiling.kernel) is checked at start: nothing is created, one line names it."""
    monkeypatch.setenv("CCDYN_KERNEL", "triton")
    out = tmp_path / "run"
    with inprocess.script("basins") as script:
        code, errors = inprocess.start_exit(script, "--n_init=10", f"--output_dir={out}")
    assert code == 2 and errors == ["error: CCDYN_KERNEL='triton' must be one of fused, xla"]
    assert not out.exists()
