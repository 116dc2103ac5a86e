"""ccdyn.cli.platforms: a script on a machine without a TPU does not log JAX's TPU probe failure, and a
JAX_PLATFORMS set by the user is kept as it is."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "Unable to initialize backend 'tpu'"
# Imports the scripts' layer, starts a device as a script would, prints the platform list JAX used.
_USE = ("import logging; logging.basicConfig(level=logging.INFO); import jax; from ccdyn import cli; "
        "jax.numpy.zeros(1).block_until_ready(); print(repr(jax.config.jax_platforms), jax.default_backend())")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    return dict(env, PYTHONPATH=str(ROOT), **extra)


def _python(code, **extra):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(**extra),
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def no_tpu():
    from jax._src import hardware_utils
    from jax._src.cloud_tpu_init import get_tpu_library_path
    return get_tpu_library_path() is None and hardware_utils.num_available_tpu_chips_and_device_id()[0] == 0


@pytest.mark.slow  # 3 s: starts a script; the platform rule itself is tested fast above
def test_a_script_does_not_log_the_tpu_probe(tmp_path, no_tpu):
    if not no_tpu:
        pytest.skip("a TPU library or chip is present: JAX is left to probe it")
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "power_iteration.py"), "--d=3", "--m=3",
                        "--ortho_eps=0", "--n_steps=5", "--output_dir=run"],
                       capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert PROBE not in r.stderr and "min cos(w*, u_m)" in r.stdout
    assert "jax_platforms" not in r.stderr  # and no other complaint about the list set


@pytest.mark.slow  # two more script starts; the probe line itself is checked fast above
def test_jax_platforms_of_the_user_is_kept(no_tpu):
    assert _python(_USE, JAX_PLATFORMS="cpu").stdout.split() == ["'cpu'", "cpu"]
    empty = _python(_USE, JAX_PLATFORMS="")
    assert empty.stdout.split()[0] in ("''", "None")  # JAX's own probing, the TPU included
    if no_tpu:
        assert PROBE in empty.stderr  # the line this module removes is JAX's, not a log filter's
