"""ccdyn.cli.compile_cache: the scripts keep compiled programs in CCDYN_COMPILE_CACHE and a second run reuses
them with the same bits; an empty value or a directory that cannot be written means no cache."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccdyn.cli import compile_cache

ROOT = Path(__file__).resolve().parents[2]
# enable() as cli.start calls it, with its own settings: a program that compiles in milliseconds is kept too
# (compile_cache.MIN_COMPILE_S: a run's ~150 small programs cost seconds together), one program compiled and run
_USE = ("import jax, jax.numpy as jnp; from ccdyn.cli import compile_cache as c; "
        "print(c.enable()); f = jax.jit(lambda x: jnp.sin(x) @ x.T); "
        "print(float(f(jnp.linspace(0, 1, 64).reshape(8, 8)).sum()).hex())")


def _python(cache):
    env = dict(os.environ, PYTHONPATH=str(ROOT), CCDYN_COMPILE_CACHE=cache)
    r = subprocess.run([sys.executable, "-c", _USE], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.slow  # 4 s: two processes start JAX
def test_a_second_run_reuses_the_cache_with_the_same_bits(tmp_path):
    cache = tmp_path / "xla"
    path, first = _python(str(cache))
    assert path == str(cache) and any(cache.iterdir())  # the program was kept
    kept = sorted(p.name for p in cache.iterdir())
    path, second = _python(str(cache))
    assert second == first and sorted(p.name for p in cache.iterdir()) == kept  # reused, not compiled again


def test_no_cache_when_empty_or_not_writable(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.ENV, "")
    assert compile_cache.enable() is None
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv(compile_cache.ENV, str(blocked / "xla"))  # a path under a file cannot be created
    assert compile_cache.enable() is None
    monkeypatch.delenv(compile_cache.ENV)
    assert compile_cache.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "ccdyn", "xla")
