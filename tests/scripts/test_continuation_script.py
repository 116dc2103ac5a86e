"""scripts/continuation.py in-process: bad --param / --values end with one ``error:`` line (exit 2)
before any run; one tiny run writes every output. The matching is tested in
tests/one_layer/studies/test_continuation.py."""

import contextlib
import csv
import io
import json

import pytest

from tests.scripts import inprocess

TINY = ["--d=3", "--m=3", "--n_init=200", "--tile=128"]


def test_bad_param_and_values_are_one_error_line(tmp_path):
    with inprocess.script("continuation") as script:
        assert "--values must be a comma-separated list of numbers" in inprocess.flag_error(
            script, "--param=tau", "--values=0.5,x")
        assert "param" in inprocess.flag_error(script, "--values=1")
        out = f"--output_dir={tmp_path / 'o'}"
        code, errors = inprocess.start_exit(script, "--param=nonsense", "--values=1", out)
        assert code == 2 and len(errors) == 1 and "--param='nonsense' is unknown" in errors[0]
        code, errors = inprocess.start_exit(script, "--param=tau", "--values=1,-2", out)
        assert code == 2 and errors == ["error: --values: tau=-2 must be > 0"]
        code, errors = inprocess.start_exit(script, "--param=seed", "--values=1,2", out)
        assert code == 2 and "cannot be continued" in errors[0]
        assert not (tmp_path / "o").exists()


@pytest.mark.slow  # 7 s; fast: the study's real run in tests/one_layer/studies/test_continuation.py
def test_tiny_run_writes_every_output(tmp_path, capsys):
    with inprocess.script("continuation") as script:
        code, errors = inprocess.start_exit(script, "--param=ortho_eps", "--values=0,0.2", *TINY,
                                            f"--output_dir={tmp_path / 'o'}")
    assert code in (0, None) and errors == []
    out = capsys.readouterr()
    assert "track" in out.out and "lost: the share" in out.out and "warning" not in out.err
    rec = json.loads((tmp_path / "o" / "continuation.json").read_text())
    assert rec["param"] == "ortho_eps" and rec["values"] == [0.0, 0.2] and "versions" in rec
    assert rec["config"]["base"]["n_init"] == 200 and len(rec["runs"]) == 2 and rec["tracks"]
    with open(tmp_path / "o" / "tipping.csv") as f:
        rows = list(csv.DictReader(f))
    shares = {}
    for r in rows:
        shares[r["from_optimum"]] = shares.get(r["from_optimum"], 0.0) + float(r["share"])
    assert shares and all(abs(s - 1) < 1e-9 for s in shares.values())
    assert (tmp_path / "o" / "tracks.csv").stat().st_size > 100
    assert (tmp_path / "o" / "continuation.png").stat().st_size > 10_000


@pytest.mark.slow  # 5 s; the rule itself is tested fast in tests/one_layer/studies/test_continuation.py
def test_a_param_without_effect_is_one_warning_line_naming_the_flag(tmp_path, capsys):
    err = io.StringIO()
    with inprocess.script("continuation") as script:
        inprocess.FLAGS([script.__file__, "--param=tau", "--values=2", *TINY, "--n_init=20",
                         f"--output_dir={tmp_path / 'o'}"])
        with contextlib.redirect_stderr(err):
            script.main([])
    out = capsys.readouterr()
    warnings = [line for line in err.getvalue().splitlines() if line.startswith("warning: ")]
    assert warnings == ["warning: --param=tau has no effect under --alpha=uniform (only the Gaussian alpha has a "
                        "temperature): every value gives the same run"]
    assert "key: a track" in out.out
