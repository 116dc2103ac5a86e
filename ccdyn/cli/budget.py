"""Counts checked before any work: "this count is too large for memory or for time".

A script's sizes (arrays) are checked against the device's memory by
:func:`ccdyn.cli.contract.check_memory_of`. Its *counts* (steps, epochs, draws, sets, random points) are
checked here, once, before anything is compiled or written, by :func:`check_counts`:

- a count that a compiled loop runs (``lax.fori_loop`` / ``scan`` / ``while_loop``: an int32 counter
  without x64) must be at most :data:`LOOP_MAX`; past it XLA aborts the process
  (``Check failed: buffer_.IsConcrete()``) or the counter wraps;
- the time the counts need, estimated from below (``ops``: elementary float operations at an optimistic
  :func:`ops_per_second` of the backend, ``steps``: sequential steps of at least :data:`STEP_S` seconds
  each, ``seconds``: any other lower bound, e.g. one compiled run per set), must be at most
  :func:`time_limit_s` (7 days; the environment variable ``CCDYN_MAX_HOURS`` raises or lowers it);
- the memory the counts need (``memory``: bytes, e.g. a record kept per draw) must fit the device.

A refusal is one line naming the flag that drives the estimate (:func:`ccdyn.cli.contract.driving_flag`:
the one whose default lowers it most), the estimate, its formula and what to do. Estimates are lower
bounds: a refused run could not have finished within the limit; an accepted one may still be long.
"""

from __future__ import annotations

import math
import os

import jax

from ccdyn.cli.contract import check_memory_of, driving_flag, fail, sizes_of

__all__ = ["LOOP_MAX", "STEP_S", "ops_per_second", "time_limit_s", "check_counts", "check_loop_counts", "check_time_of"]

LOOP_MAX = 2**31 - 1  # a compiled loop's int32 counter
STEP_S = 1e-6  # the least time one sequential step of a compiled loop (or a Python loop over arrays) takes
_OPS_PER_S = {"cpu": 1e11, "gpu": 1e14, "tpu": 1e14}  # optimistic float rates: the estimates are lower bounds
_DEFAULT_HOURS = 7 * 24.0


def ops_per_second(backend: str | None = None) -> float:
    """An optimistic rate of elementary float operations of ``backend`` (default: JAX's default backend)."""
    return _OPS_PER_S.get(backend or jax.default_backend(), _OPS_PER_S["gpu"])


def time_limit_s() -> float:
    """The longest run a count may ask for, in seconds: ``CCDYN_MAX_HOURS`` hours (default 7 days)."""
    text = os.environ.get("CCDYN_MAX_HOURS", "")
    try:
        hours = float(text) if text else _DEFAULT_HOURS
    except ValueError:
        fail(f"CCDYN_MAX_HOURS={text!r} must be a number of hours")
    if not (hours > 0 and math.isfinite(hours)):
        fail(f"CCDYN_MAX_HOURS={text!r} must be a positive number of hours")
    return hours * 3600.0


def _float(x) -> float:
    """``x`` (an int of any size) as a float; inf beyond float's range."""
    try:
        return float(x)
    except OverflowError:
        return math.inf


def _duration(seconds: float) -> str:
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600)):
        if seconds >= size:
            return f"{seconds / size:,.3g} {unit}"
    return f"{seconds:,.3g} s"


def check_loop_counts(values: dict) -> None:
    """Ends the script when a count of ``values`` (``{"--flag": count}``) exceeds :data:`LOOP_MAX`, what a
    compiled loop can count."""
    for flag, n in values.items():
        if n > LOOP_MAX:
            fail(f"{flag}={n} is more than a compiled loop counts (at most {LOOP_MAX:,}, an int32); "
                 f"use a smaller {flag}")


def check_time_of(seconds, values: dict, defaults: dict, formula: str, counted=()) -> None:
    """Ends the script when ``seconds(**values)`` (a lower bound of the run's time) exceeds
    :func:`time_limit_s`, naming the flag that drives it and ``formula``; ``counted``: the keys of
    ``values`` that are counts derived from a flag (named as ``--flag (N)``), not the flag's value."""
    need, limit = seconds(**values), time_limit_s()
    if need > limit:
        flag = driving_flag(lambda **v: min(seconds(**v), 1e300) * 1e6, values, defaults)
        shown = f"{flag} ({values[flag]:,})" if flag in counted else f"{flag}={values[flag]}"
        fail(f"{shown} needs at least {_duration(need)} ({formula}), more than the "
             f"{_duration(limit)} a run may take (CCDYN_MAX_HOURS); use a smaller {flag}")


def check_counts(values, names, *, formula: str, ops=None, steps=None, seconds=None, memory=None,
                 loops=(), extra=None) -> None:
    """The start-up check of a script's counts (the module's docstring). ``values``: the scripts' ``FLAGS``;
    ``names``: the integer (or integer list) flags the estimates take, as keyword arguments ``--name``
    (a list flag by its largest entry, :func:`ccdyn.cli.sizes_of`); ``ops``, ``steps``, ``seconds``,
    ``memory``: functions of them giving float operations, sequential steps, other seconds, and bytes
    (each optional); ``loops``: the flags (of ``names``) that a compiled loop counts. Exact integer
    arithmetic where the functions use it: a count may be absurd (10^12 or more). ``extra``: counts that
    are not integer flags, ``{"--flag": (count, default count)}`` (e.g. the seeds of a ``START:STOP`` flag)."""
    vals, defaults = sizes_of(values, names)
    for k, (v, d) in (extra or {}).items():
        vals[k], defaults[k] = v, d
    check_loop_counts({f"--{n}": vals[f"--{n}"] for n in loops})
    rate = ops_per_second()

    def total(**f):
        t = 0.0
        if ops is not None:
            t += _float(ops(**f)) / rate
        if steps is not None:
            t += _float(steps(**f)) * STEP_S
        if seconds is not None:
            t += _float(seconds(**f))
        return t

    if ops is not None or steps is not None or seconds is not None:
        check_time_of(total, vals, defaults, formula, counted=tuple(extra or ()))
    if memory is not None:
        check_memory_of(memory, vals, defaults, formula)
