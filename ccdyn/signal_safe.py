"""Sections of the main thread that a signal handler must not cut short (:func:`uninterrupted`), and the
handlers' side of it (:func:`defer_if_uninterrupted`): a run directory half swapped, a manifest being written
(:mod:`ccdyn.rundir`, which re-exports both). Pure Python state, no files."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["uninterrupted", "defer_if_uninterrupted"]

_STEADY: dict[str, Any] = {"depth": 0, "deferred": None}  # see uninterrupted()


@contextlib.contextmanager
def uninterrupted():
    """A section that a signal handler must not cut short (a run directory half swapped, a manifest
    being written, an opened run not yet known to the caller): a handler that finds one open
    (:func:`defer_if_uninterrupted`) leaves its work to the end of the outermost section. Single
    threaded: signal handlers run in the main thread, between its bytecodes."""
    _STEADY["depth"] += 1
    try:
        yield
    finally:
        _STEADY["depth"] -= 1
        if _STEADY["depth"] == 0 and _STEADY["deferred"] is not None:
            work, _STEADY["deferred"] = _STEADY["deferred"], None
            work()


def defer_if_uninterrupted(work) -> bool:
    """For a signal handler: when an :func:`uninterrupted` section is open, keeps ``work`` (a callable)
    to run when it closes and returns True; else returns False (the handler goes on at once)."""
    if _STEADY["depth"] > 0:
        _STEADY["deferred"] = work
        return True
    return False
