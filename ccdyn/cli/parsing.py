"""List flags and their validators: :func:`floats` / :func:`ints` parse a list flag;
:func:`register_numbers` and :func:`register_subset` register a validator whose one-line message names
the flag and the accepted range (an empty list, or an entry listed twice, is refused unless the flag
asks otherwise); :func:`register_unique` is that refusal alone (for lists of paths or fractions);
:func:`define_seed` is every script's seed flag, bounded to [0, :data:`SEED_MAX`]."""

from __future__ import annotations

import math

from absl import flags

__all__ = ["SEED_MAX", "floats", "ints", "register_numbers", "register_subset", "register_unique", "define_seed",
           "seed_range"]

# The flags that define_seed defines belong to the script calling it (its --helpshort lists them).
flags.disclaim_key_flags()

SEED_MAX = 2**32 - 1  # jax.random.PRNGKey(s) is distinct for s in [0, 2**32) with or without x64


def define_seed(name: str, default: int, help_text: str) -> None:
    """An integer seed flag bounded to [0, :data:`SEED_MAX`] (a seed outside is refused, naming the flag)."""
    flags.DEFINE_integer(name, default, help_text, lower_bound=0, upper_bound=SEED_MAX)



def seed_range(flag: str, text: str) -> range:
    """``START:STOP`` (STOP excluded, 0 <= START < STOP <= :data:`SEED_MAX` + 1: every seed a seed flag
    takes) as a range; ``ValueError`` naming ``--flag``. How many seeds a run can afford is the script's
    check (:func:`ccdyn.cli.check_counts`)."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip().isdigit() for p in parts) or int(parts[0]) >= int(parts[1]):
        raise ValueError(f"--{flag}={text!r} must be START:STOP with integers 0 <= START < STOP")
    if int(parts[1]) > SEED_MAX + 1:
        raise ValueError(f"--{flag}={text!r}: seeds lie in [0, {SEED_MAX}], so STOP must be <= {SEED_MAX + 1}")
    return range(int(parts[0]), int(parts[1]))


def _repeated(values) -> list:
    seen, out = set(), []
    for v in values:
        if v in seen and v not in out:
            out.append(v)
        seen.add(v)
    return out


def _parse(values, kind):
    try:
        return tuple(kind(v) for v in values)
    except (TypeError, ValueError, ArithmeticError):  # ArithmeticError: Fraction("1/0"), an overflow
        return None


def floats(values) -> tuple | None:
    """A list flag as floats, or None when an entry is not a number."""
    return _parse(values, float)


def ints(values) -> tuple | None:
    """A list flag as ints, or None when an entry is not an integer."""
    return _parse(values, int)


def register_numbers(name: str, kind=float, lo=None, hi=None, *, lo_open=False, hi_open=True, min_len=1,
                     allow_none=False, what=None, unique=True) -> None:
    """Validator of a list flag whose entries are ``kind`` in [lo, hi) (ends per ``lo_open``/``hi_open``;
    None: unbounded), at least ``min_len`` of them, each once (as numbers: ``2,2.0`` repeats) unless
    not ``unique`` (e.g. probabilities, a low,high pair). ``what`` overrides the range text of the
    message."""
    if unique:
        _register_unique(name, kind)

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
    """Validator of a non-empty list flag whose entries come from ``allowed``, each once."""
    flags.register_validator(name, lambda v: bool(v) and all(x in allowed for x in v),
                             f"--{name} must be a comma-separated list from {', '.join(allowed)}")
    _register_unique(name, str)


def register_unique(name: str, kind=str, *, allow_empty: bool = False) -> None:
    """Validators of a list flag whose entries other validators (or the script's config) check: each entry
    once (as ``kind``: ``fractions.Fraction`` makes ``1/2,0.5`` a repeat; entries ``kind`` cannot
    parse are left to those checks) and, unless ``allow_empty``, at least one."""
    if not allow_empty:
        flags.register_validator(name, bool, f"--{name} must not be empty (a comma-separated list)")
    _register_unique(name, kind)


def _register_unique(name: str, kind) -> None:
    """A validator refusing a list flag that names an entry twice (``--betas=2,2`` would train twice);
    its message names the repeated entries."""
    def check(values):
        v = _parse(values or (), kind)
        rep = _repeated(v) if v is not None else []
        if rep:
            text = ", ".join(f"{x:g}" if isinstance(x, float) else str(x) for x in rep)  # a Fraction as 1/2
            raise flags.ValidationError(f"--{name} lists {text} more than once; give each value once")
        return True

    flags.register_validator(name, check)

