"""List flags and their validators: :func:`floats` / :func:`ints` parse a list flag;
:func:`register_numbers` and :func:`register_subset` register a validator whose one-line message names
the flag and the accepted range; :data:`SEED_MAX` bounds a seed flag."""

from __future__ import annotations

import math

from absl import flags

__all__ = ["SEED_MAX", "floats", "ints", "register_numbers", "register_subset"]

SEED_MAX = 2**32 - 1  # jax.random.PRNGKey(s) is distinct for s in [0, 2**32) with or without x64


def _parse(values, kind):
    try:
        return tuple(kind(v) for v in values)
    except (TypeError, ValueError):
        return None


def floats(values) -> tuple | None:
    """A list flag as floats, or None when an entry is not a number."""
    return _parse(values, float)


def ints(values) -> tuple | None:
    """A list flag as ints, or None when an entry is not an integer."""
    return _parse(values, int)


def register_numbers(name: str, kind=float, lo=None, hi=None, *, lo_open=False, hi_open=True, min_len=1,
                     allow_none=False, what=None) -> None:
    """Validator of a list flag whose entries are ``kind`` in [lo, hi) (ends per ``lo_open``/``hi_open``;
    None: unbounded), at least ``min_len`` of them. ``what`` overrides the range text of the message."""
    def ok(values):
        if values is None:
            return allow_none
        v = _parse(values, kind)
        return (v is not None and len(v) >= min_len and all(math.isfinite(x) for x in v)
                and all((lo is None or (x > lo if lo_open else x >= lo)) and
                        (hi is None or (x < hi if hi_open else x <= hi)) for x in v))

    noun = "integers" if kind is int else "numbers"
    if what is None:
        parts = ([f"{'>' if lo_open else '>='} {lo:g}"] if lo is not None and hi is None else
                 [f"{'<' if hi_open else '<='} {hi:g}"] if hi is not None and lo is None else
                 [f"in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"] if lo is not None else [])
        what = " ".join([noun] + parts)
    count = f"at least {min_len} " if min_len > 1 else ""
    flags.register_validator(name, ok, f"--{name} must be a comma-separated list of {count}{what}")


def register_subset(name: str, allowed) -> None:
    """Validator of a non-empty list flag whose entries come from ``allowed``."""
    flags.register_validator(name, lambda v: bool(v) and all(x in allowed for x in v),
                             f"--{name} must be a comma-separated list from {', '.join(allowed)}")

