"""One style for the outcome codes of the 1-layer routines: an IntEnum whose members carry a machine key
and a text for tables (as :class:`ccdyn.one_layer.engine.Status`).

A member is declared ``NAME = code, "text"``; ``member.key`` is the lower-case name (a key of counts and
summaries), ``member.text`` the text (default: the key with spaces). The members are ints, so they go
into jitted code and compare with stored codes as before (``jnp.where(..., RefineStatus.CONVERGED, ...)``).
"""

from __future__ import annotations

import enum

__all__ = ["Outcome"]


class Outcome(enum.IntEnum):
    """Base of an outcome vocabulary (module docstring)."""

    _text: str | None  # the member's table text (None: the key with spaces); set in __new__, not a member

    def __new__(cls, value: int, text: str | None = None):
        member = int.__new__(cls, value)
        member._value_ = value
        member._text = text
        return member

    @property
    def key(self) -> str:
        """Machine name: the lower-case member name."""
        return self.name.lower()

    @property
    def text(self) -> str:
        """Human name for tables and notes."""
        return self._text or self.key.replace("_", " ")
