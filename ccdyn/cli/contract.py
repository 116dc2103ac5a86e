"""The scripts' failure contract and start-up checks.

:func:`start` replaces ``app.run``: a flag error, a non-finite float flag, or any exception in ``main``
ends the script with one ``error:`` line and exit status 2, never a traceback, and marks the run
directory it opened failed (or removes it if it never started); a :class:`ccdyn.rundir.RunDirError`
(which names the directory or file and what to do) is that line as it stands, an unexpected exception
is its type and message, where it was raised and how far the run had got (``CCDYN_TRACEBACK=1``: the
traceback instead). :func:`fail` is that
exit and :func:`or_fail` turns a library ``ValueError`` / ``OSError`` (which names the flag or file)
into it.

SIGINT and SIGTERM end a script with one ``error: interrupted (SIGINT)`` line and exit status 130 / 143
(128 + the signal), the run marked ``failed`` (resumable; one that wrote nothing is removed). The
handler does this itself, in the main thread where Python runs it, and ends the process with
``os._exit`` after flushing: no exception is raised into whatever the main thread was doing (a JAX
trace or compile calling back into Python, XLA's threads still at work), and the interpreter does not
tear the runtime down under those threads -- raising KeyboardInterrupt there and exiting normally is
what crashed (``Fatal Python error: Segmentation fault``). A signal that arrives inside a
:func:`ccdyn.rundir.uninterrupted` section (a manifest or a staged swap being written) is handled when
it closes.
:func:`start` also turns on the persistent compilation cache once the flags are parsed
(:mod:`ccdyn.cli.compile_cache`, ``CCDYN_COMPILE_CACHE``). Parsing (in :func:`start`) refuses a positional
argument and a flag given twice (absl would keep the last silently; ``DEFINE_multi_*`` flags may repeat);
``--help`` / ``--helpshort`` exit 0.
:func:`check_memory` and :func:`check_tolerance` are the start-up checks against the device's memory
and the dtype's resolution.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import traceback
from pathlib import Path

import jax
import numpy as np
from absl import app, flags

from ccdyn import compiling, io, parallel, rundir
from ccdyn.cli import compile_cache

__all__ = ["start", "fail", "or_fail", "check_memory", "check_memory_of", "sizes_of", "driving_flag", "check_tolerance",
           "interrupted", "install_signal_handlers"]

ACTIVE_RUNS: list = []  # the run directories this process opened (marked failed by start() on an error)
INPUTS: list = []  # (flag, path) of the other runs' files this process read (cli.read_run_json), for the error line


HELP_FLAGS = ("help", "helpshort", "helpfull", "helpxml", "h", "?")  # absl's own: print help, then exit


def _parse_flags(argv):
    _refuse_repeats(argv[1:])
    try:
        rest = flags.FLAGS(argv)
    except flags.Error as e:
        fail(e)
    except SystemExit as e:  # a help flag printed what was asked: success (absl exits 1)
        sys.exit(0 if e.code == 1 else e.code)
    if len(rest) > 1:
        fail(f"unexpected argument {rest[1]!r}: the script takes only --flags (e.g. --name=value); "
             "quote a value that holds spaces")
    for name in list(flags.FLAGS):
        f = flags.FLAGS[name]
        if isinstance(f.value, float) and not math.isfinite(f.value):
            fail(f"--{name}={f.value} must be a finite number")
    return rest


def _flag_name(arg: str):
    """The name of the flag that the command-line word ``arg`` sets (``--x=1``, ``-x``, ``--nox`` for a
    boolean ``x``), or None (a value, or no flag of this script: parsing names that one)."""
    if not arg.startswith("-") or arg in ("-", "--"):
        return None
    name = arg.lstrip("-").split("=", 1)[0]
    if name in flags.FLAGS:
        return name
    if name.startswith("no") and name[2:] in flags.FLAGS and flags.FLAGS[name[2:]].boolean:
        return name[2:]
    return None


def _refuse_repeats(args) -> None:
    """Ends the script when one flag is given twice (absl keeps the last silently): the user meant one of
    them. Flags that take several values (``DEFINE_multi_*``) may repeat; ``--`` ends the flags."""
    seen: dict[str, str] = {}
    for arg in args:
        if arg == "--":
            break
        name = _flag_name(arg)
        if name is None or isinstance(flags.FLAGS[name], flags.MultiFlag) or name in HELP_FLAGS:
            continue
        if name in seen:
            fail(f"--{name} is given twice ({seen[name]} and {arg}); give each flag once")
        seen[name] = arg


SIGNALS = (signal.SIGINT, signal.SIGTERM)


def interrupted(signum: int) -> None:
    """Ends the process for the signal ``signum``: the open runs marked failed, one ``error: interrupted
    (SIGINT)`` line, exit status 128 + signum via ``os._exit`` (see the module's docstring)."""
    name = signal.Signals(signum).name
    try:
        _close_active(f"interrupted ({name})")
        print(f"error: interrupted ({name})", file=sys.stderr, flush=True)
        sys.stdout.flush()
    finally:
        os._exit(128 + signum)


def _on_signal(signum, frame):
    del frame
    if not rundir.defer_if_uninterrupted(lambda: interrupted(signum)):
        interrupted(signum)


def install_signal_handlers() -> None:
    """SIGINT and SIGTERM end the script by :func:`interrupted` (main thread only)."""
    for s in SIGNALS:
        signal.signal(s, _on_signal)


def start(main, argv=None) -> None:
    """``app.run(main)`` with ccdyn's failure contract: every failure is one ``error:`` line and exit
    status 2 (set ``CCDYN_TRACEBACK=1`` to see the traceback of an unexpected one); SIGINT and SIGTERM
    one ``error: interrupted (SIG...)`` line and exit status 130 / 143 (the handlers are the caller's
    again when ``main`` returns). ``argv``: default ``sys.argv``."""
    before = {s: signal.getsignal(s) for s in SIGNALS}
    install_signal_handlers()
    INPUTS.clear()
    io.recently_read(clear=True)

    def guarded(argv):
        try:
            or_fail(compiling.kernel)  # CCDYN_KERNEL checked before any work: a bad value is one error line
            compile_cache.enable()  # after the flags parsed: a refused command leaves nothing behind
            return main(argv)
        except SystemExit as e:
            _close_active(f"exit {e.code}")
            raise
        except KeyboardInterrupt:  # raised by something else than our handler (e.g. a test)
            interrupted(signal.SIGINT)
        except BaseException as e:  # noqa: BLE001 -- the contract: one line, never a traceback
            phase = _phase()
            _close_active(f"{type(e).__name__}: {e}")
            if os.environ.get("CCDYN_TRACEBACK"):
                raise
            fail(_one_line(e, phase))

    try:
        app.run(guarded, argv=argv, flags_parser=_parse_flags)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _one_line(e: BaseException, phase: str = "") -> str:
    """The ``error:`` line of an exception that ended ``main``: a RunDirError or an OSError as it names its
    directory or file; anything unexpected as its type, its message, where it was raised (the innermost
    frame of ccdyn or of the script) and ``phase`` (:func:`_phase`)."""
    text = str(e).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in first or "out of memory" in first.lower():
        return f"out of memory ({first[:200]}); use smaller sizes (set CCDYN_TRACEBACK=1 for details)"
    if isinstance(e, rundir.RunDirError):  # names the directory or file and what to do
        return first
    if isinstance(e, OSError):
        return f"{e.strerror or first} ({e.filename})" if e.filename else first
    what = f"{type(e).__name__}: {first[:300]}" if first else f"{type(e).__name__} (no message)"
    where = _where(e)
    read = ", ".join(_reads())  # what a reader's failure most likely concerns
    context = "; ".join(x for x in (f"raised at {where}" if where else "", f"after reading {read}" if read else "",
                                    phase) if x)
    return f"{what} ({context}; set CCDYN_TRACEBACK=1 for the traceback)"


def _where(e: BaseException) -> str:
    """``path:line in function`` of the innermost frame of ``e``'s traceback that lies in the checkout (ccdyn
    or a script: the place to look first), else of the innermost frame; "" without a traceback."""
    frames = traceback.extract_tb(e.__traceback__)
    if not frames:
        return ""
    ours = [f for f in frames if _ours(f.filename)]
    f = (ours or frames)[-1]
    return f"{_short(f.filename)}:{f.lineno} in {f.name}"


_CHECKOUT = Path(__file__).resolve().parents[2]  # where ccdyn/ and scripts/ live


def _ours(filename: str) -> bool:
    """Whether ``filename`` lies in the checkout of ccdyn (the package, its scripts, tests, benchmarks)."""
    return _CHECKOUT in Path(filename).resolve().parents


def _short(filename: str) -> str:
    """``filename`` relative to the checkout, or to its site-packages folder (a library's own frame)."""
    p = Path(filename).resolve()
    if _CHECKOUT in p.parents:
        return p.relative_to(_CHECKOUT).as_posix()
    parts = p.parts
    return "/".join(parts[parts.index("site-packages") + 1:]) if "site-packages" in parts else p.name


def _phase() -> str:
    """Where the run stood when an unexpected error ended it: before its run directory was opened, opened
    with nothing written yet (it is removed), or after it wrote outputs (they stay, marked failed)."""
    if not ACTIVE_RUNS:
        return "before any output was written"
    run = ACTIVE_RUNS[-1]
    try:
        wrote = run.is_started or bool(rundir.written_files(run.path))
    except OSError:
        wrote = run.is_started
    if wrote:
        return f"after the run in {run.path} wrote outputs (kept there, marked failed)"
    return f"before the run in {run.path} wrote an output (nothing kept)"


def _close_active(error: str) -> None:
    while ACTIVE_RUNS:
        run = ACTIVE_RUNS.pop()
        if run.manifest.get("state") == "running" and run.holds_lock:
            run.fail(error)


def check_memory(estimate_bytes: float, flag: str, formula: str) -> None:
    """Ends the script if ``estimate_bytes`` exceeds the memory of the device the run uses
    (:func:`ccdyn.parallel.device_memory`), naming ``flag`` and the estimate's ``formula``."""
    have = parallel.device_memory()
    if estimate_bytes > have:
        fail(f"{flag} needs about {estimate_bytes / 2**30:,.1f} GiB ({formula}), more than the "
             f"{have / 2**30:,.1f} GiB of the {jax.default_backend()} device; use a smaller {flag}")


def driving_flag(estimate, values: dict, defaults: dict) -> str:
    """The flag (a key of ``values``) that drives ``estimate(**values)`` most: the one whose default value
    (``defaults``) lowers the estimate by the largest factor. Exact integer arithmetic: the sizes may be
    absurd (2 ** 40 leaves)."""
    need = estimate(**values)
    return max(values, key=lambda k: need / max(estimate(**{**values, k: defaults[k]}), 1))


def check_memory_of(estimate, values: dict, defaults: dict, formula: str) -> None:
    """:func:`check_memory` of ``estimate(**values)`` bytes, naming the flag that drives it
    (:func:`driving_flag`; ``values`` and ``defaults`` map flag names, e.g. ``"--depths"``, to values)."""
    need = estimate(**values)
    if need > parallel.device_memory():
        check_memory(need, driving_flag(estimate, values, defaults), formula)


def sizes_of(values, names) -> tuple:
    """(``{"--name": value}``, ``{"--name": default}``) of the integer flags ``names`` in ``values`` (the
    scripts' ``FLAGS``); a list flag counts by its largest entry: the two dicts :func:`check_memory_of` takes."""
    def size(v):
        return max(int(x) for x in v) if isinstance(v, (list, tuple)) else v

    return tuple({f"--{k}": size(getattr(values[k], which)) for k in names} for which in ("value", "default"))


def check_tolerance(value: float, flag: str, dtype) -> None:
    """Ends the script if a relative tolerance is below what ``dtype`` resolves (4 eps)."""
    eps = float(np.finfo(np.dtype(dtype)).eps)
    if value < 4 * eps:
        fail(f"{flag}={value:g} is below what {np.dtype(dtype).name} resolves (4 eps = {4 * eps:.2g}); "
             f"use a larger {flag}" + (" or --x64" if np.dtype(dtype) == np.float32 else ""))


def or_fail(fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or the end of the script with its ``ValueError`` / ``OSError`` as the
    one ``error:`` line (the library's errors name the flag or file)."""
    try:
        return fn(*args, **kwargs)
    except OSError as e:
        fail(e)
    except ValueError as e:  # a message naming no file while the script works on files it read: name them
        text, read = str(e), _reads()
        named = not read or any(r.split("=", 1)[-1] in text for r in read)
        fail(text if named else f"{text} (after reading {', '.join(read)})")


def _reads() -> list:
    """What the script read last: the other runs' files (``--flag=path``) or else the files :mod:`ccdyn.io`
    read; the error line of a failure while working on them names them."""
    return [f"{flag}={path}" for flag, path in INPUTS[-3:]] or io.recently_read()


def fail(message) -> None:
    """Ends the script with one ``error: ...`` line on stderr and exit status 2 (no traceback)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)

