"""scripts/flow_accuracy.py in-process: bad flags end with one ``error:`` line (exit 2) before any output;
one tiny exact 2-D run writes every output. The checks themselves are tested in tests/one_layer/test_flow.py."""

import json

import pytest

from tests.scripts import inprocess


def test_bad_flags_are_one_error_line(tmp_path):
    out = f"--output_dir={tmp_path / 'o'}"
    with inprocess.script("flow_accuracy") as script:
        assert "--rtols must be" in inprocess.flag_error(script, "--check=rtol", "--rtols=1e-3", out)
        assert "--min_points must be <= --max_points" in inprocess.flag_error(
            script, "--check=exact_2d", "--min_points=9", "--max_points=6", out)
        code, errors = inprocess.start_exit(script, "--check=exact_2d", "--set_seeds=5:3", out)
        assert code == 2 and errors == ["error: --set_seeds='5:3' must be START:STOP with integers 0 <= START < STOP"]
        code, errors = inprocess.start_exit(script, "--check=rtol", "--method=euler_halving", out)
        assert code == 2 and "--check=rtol varies --flow_rtol" in errors[0]
        for extra in ((), ("--alpha=gaussian",)):  # 10^12 points: refused with the memory estimate
            code, errors = inprocess.start_exit(script, "--check=exact_2d", "--max_points=1000000000000", *extra, out)
            assert code == 2 and len(errors) == 1 and errors[0].startswith("error: --max_points needs about ")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_tiny_exact_2d_run_writes_every_output(tmp_path):
    """One 6-point set, 400 inits (about 5 s)."""
    with inprocess.script("flow_accuracy") as script:
        code, errors = inprocess.start_exit(script, "--check=exact_2d", "--set_seeds=0:1", "--min_points=6",
                                            "--max_points=6", "--n_init=400", "--x64", "--tile=128",
                                            f"--output_dir={tmp_path / 'o'}")
    assert code in (0, None) and errors == []
    rec = json.loads((tmp_path / "o" / "flow_accuracy.json").read_text())
    assert list(rec["sets"]) == ["0"] and len(rec["sets"]["0"]["angles"]) == 6 and "versions" in rec
    assert (tmp_path / "o" / "sets.csv").is_file() and (tmp_path / "o" / "claims.md").is_file()


def test_the_point_cloud_check_refuses_bad_flags(tmp_path):
    """The random point-cloud check of the kink flow and certificates (scripts/kink_check.py, which also
    runs the method comparison of the former flow_kinks.py) refuses a bad --set_seeds with the shared
    line of cli.seed_range, an activation its numpy probe does not compute, and --max_points / --probe_dirs of
    10^12 (one line with the memory estimate), before any output."""
    with inprocess.script("kink_check") as script:
        code, errors = inprocess.start_exit(script, "--set_seeds=5:3", f"--output_dir={tmp_path / 'o'}")
        assert code == 2 and errors == ["error: --set_seeds='5:3' must be START:STOP with integers 0 <= START < STOP"]
        code, errors = inprocess.start_exit(script, "--act=linear", f"--output_dir={tmp_path / 'o'}")
        assert code == 2 and len(errors) == 1 and "--act must be relu" in errors[0]
        assert "--min_points must be <= --max_points" in inprocess.flag_error(
            script, "--min_points=9", "--max_points=6", f"--output_dir={tmp_path / 'o'}")
        for flag, extra in (("max_points", ()), ("probe_dirs", ()), ("max_points", ("--alpha=gaussian",))):
            code, errors = inprocess.start_exit(script, f"--{flag}=1000000000000", *extra, f"--output_dir={tmp_path / 'o'}")
            assert code == 2 and len(errors) == 1 and errors[0].startswith(f"error: --{flag} needs about ")
            assert " GiB (float64 probe_dirs x max_points" in errors[0]
    assert not (tmp_path / "o").exists()
