"""scripts/ntxent_sphere.py and scripts/kernel_dynamics.py refuse bad flags with one line naming the
flag, and an existing output directory with one ``error:`` line, before computing anything (in process;
the scripts' outputs are checked by running them, see results/simclr_var/README.md)."""

from tests.scripts import inprocess


def test_ntxent_sphere_flags(tmp_path):
    with inprocess.script("ntxent_sphere") as m:
        assert "--taus must be a comma-separated list of at least 2 numbers > 0" in inprocess.flag_error(m, "--taus=0.1,0")
        assert "--Ks must be" in inprocess.flag_error(m, "--Ks=1,x,3")
        assert "--rel_tol must lie in (0, 1)" in inprocess.flag_error(m, "--rel_tol=2")
        (tmp_path / "busy").mkdir()
        (tmp_path / "busy" / "f").write_text("x")
        msg = inprocess.main_exit(m, f"--output_dir={tmp_path / 'busy'}")
        assert msg.startswith("error: output_dir") and "is not a ccdyn run (f); not touching it" in msg


def test_kernel_dynamics_flags(tmp_path):
    with inprocess.script("kernel_dynamics") as m:
        assert "--dims must be" in inprocess.flag_error(m, "--dims=4")
        assert "multiples of --record_every" in inprocess.flag_error(m, "--steps=7", "--record_every=2")
        assert "--small_sizes must be" in inprocess.flag_error(m, "--small_sizes=1")
        (tmp_path / "busy").mkdir()
        (tmp_path / "busy" / "f").write_text("x")
        assert inprocess.main_exit(m, f"--output_dir={tmp_path / 'busy'}").startswith("error: output_dir")


def test_claims_script_needs_its_inputs(tmp_path):
    with inprocess.script("simclr_var_claims") as m:
        msg = inprocess.main_exit(m, f"--sphere={tmp_path / 'no.json'}")
        assert msg.startswith("error: --sphere: ") and "no.json is not a file" in msg
