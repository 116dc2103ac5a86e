"""The scripts' failure contract and start-up checks.

:func:`start` replaces ``app.run``: a flag error, a non-finite float flag, or any exception in ``main``
ends the script with one ``error:`` line and exit status 2, never a traceback, and marks the run
directory it opened failed (or removes it if it never started); a :class:`ccdyn.rundir.RunDirError`
(which names the directory or file and what to do) is that line as it stands. :func:`fail` is that
exit and :func:`or_fail` turns a library ``ValueError`` / ``OSError`` (which names the flag or file)
into it.
:func:`check_memory` and :func:`check_tolerance` are the start-up checks against the device's memory
and the dtype's resolution.
"""

from __future__ import annotations

import math
import os
import sys

import jax
import numpy as np
from absl import app, flags

from ccdyn import parallel, rundir

__all__ = ["start", "fail", "or_fail", "check_memory", "check_tolerance"]

ACTIVE_RUNS: list = []  # the run directories this process opened (marked failed by start() on an error)


def _parse_flags(argv):
    try:
        rest = flags.FLAGS(argv)
    except flags.Error as e:
        fail(e)
    for name in list(flags.FLAGS):
        f = flags.FLAGS[name]
        if isinstance(f.value, float) and not math.isfinite(f.value):
            fail(f"--{name}={f.value} must be a finite number")
    return rest


def start(main, argv=None) -> None:
    """``app.run(main)`` with ccdyn's failure contract: every failure is one ``error:`` line and exit
    status 2 (set ``CCDYN_TRACEBACK=1`` to see the traceback of an unexpected one). ``argv``: default
    ``sys.argv``."""
    def guarded(argv):
        try:
            return main(argv)
        except SystemExit as e:
            _close_active(f"exit {e.code}")
            raise
        except KeyboardInterrupt:
            _close_active("interrupted")
            fail("interrupted")
        except BaseException as e:  # noqa: BLE001 -- the contract: one line, never a traceback
            _close_active(f"{type(e).__name__}: {e}")
            if os.environ.get("CCDYN_TRACEBACK"):
                raise
            fail(_one_line(e))

    app.run(guarded, argv=argv, flags_parser=_parse_flags)


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    first = text[0] if text else ""
    if isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in first or "out of memory" in first.lower():
        return f"out of memory ({first[:200]}); use smaller sizes (set CCDYN_TRACEBACK=1 for details)"
    if isinstance(e, rundir.RunDirError):  # names the directory or file and what to do
        return first
    if isinstance(e, OSError):
        return f"{e.strerror or first} ({e.filename})" if e.filename else first
    return f"{type(e).__name__}: {first[:300]} (set CCDYN_TRACEBACK=1 for the traceback)"


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
    except (ValueError, OSError) as e:
        fail(e)


def fail(message) -> None:
    """Ends the script with one ``error: ...`` line on stderr and exit status 2 (no traceback)."""
    print(f"error: {message}", file=sys.stderr, flush=True)
    sys.exit(2)

