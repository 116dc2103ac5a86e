"""A script's flags and ``main`` in this process: bad flags and early errors are checked without
starting a second Python and JAX (each script keeps one subprocess smoke test)."""

import contextlib
import importlib.util
import io
from pathlib import Path

from absl import app, flags  # noqa: F401 -- absl.app's own flags exist before script() records FLAGS

import ccdyn.cli  # noqa: F401 -- so do the flags of the scripts' shared layer

ROOT = Path(__file__).resolve().parents[2]
FLAGS = flags.FLAGS
app.define_help_flags()  # (app.run defines them on first use; a script's exit must not take them away)


@contextlib.contextmanager
def loaded(path: str):
    """``path`` (scripts/x.py, benchmarks/y.py, relative to the repository) imported as a fresh module;
    the flags it defines leave ``FLAGS`` on exit."""
    before = set(FLAGS)
    spec = importlib.util.spec_from_file_location(f"_inprocess_{Path(path).stem}", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        FLAGS.unparse_flags()
        for flag in set(FLAGS) - before:
            delattr(FLAGS, flag)


def script(name: str):
    """``scripts/<name>.py`` imported as a fresh module (:func:`loaded`)."""
    return loaded(f"scripts/{name}.py")


def flag_error(module, *argv) -> str | None:
    """The message of the flag error that parsing ``argv`` raises (as ``app.run`` prints it), or None."""
    try:
        FLAGS([module.__file__, *argv])
    except flags.Error as e:
        return str(e)
    finally:
        FLAGS.unparse_flags()
    return None


def main_exit(module, *argv) -> str:
    """Parses ``argv`` and runs ``main``, which must end the script with exit status 2 and one
    ``error:`` line on stderr; returns that line."""
    FLAGS([module.__file__, *argv])
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            module.main([])
    except SystemExit as e:
        lines = [line for line in err.getvalue().splitlines() if line.startswith("error: ")]
        assert e.code == 2 and len(lines) == 1, (e.code, err.getvalue())
        return lines[0]
    finally:
        FLAGS.unparse_flags()
    raise AssertionError(f"{module.__file__} {' '.join(argv)} did not exit")


def start_exit(module, *argv) -> tuple:
    """Runs the script as its ``__main__`` does (``cli.start``: flag parsing, checks, ``main``) in this
    process; returns (exit status, the ``error:`` lines on stderr)."""
    from ccdyn import cli

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            cli.start(module.main, argv=[module.__file__, *argv])
    except SystemExit as e:
        return e.code, [line for line in err.getvalue().splitlines() if line.startswith("error: ")]
    finally:
        FLAGS.unparse_flags()
    raise AssertionError(f"{module.__file__} {' '.join(argv)} did not exit")
