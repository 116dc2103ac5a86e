"""``dataclass``: chex's JAX-registered dataclass (a pytree), as the type checker should see it.

At run time ``ccdyn.pytree.dataclass`` is ``chex.dataclass`` itself. chex ships no type information, so
a type checker sees a class it decorates as a plain class whose constructor takes no fields. For the
checker this module declares the decorator with ``typing.dataclass_transform`` (PEP 681), keyword-only
like chex's mappable dataclasses (their ``__init__`` refuses positional arguments), so constructor calls
and ``dataclasses.replace`` are checked against the fields. Write ``dataclasses.replace(x, f=v)`` rather
than chex's ``x.replace(f=v)`` (the same call) so that the checker sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["dataclass"]

if TYPE_CHECKING:
    import dataclasses
    from collections.abc import Callable
    from typing import TypeVar, overload

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")

    @overload
    def dataclass(cls: type[_T], /) -> type[_T]: ...

    @overload
    def dataclass(*, frozen: bool = False) -> Callable[[type[_T]], type[_T]]: ...

    @dataclass_transform(kw_only_default=True, field_specifiers=(dataclasses.field,))
    def dataclass(cls: type[_T] | None = None, /, *, frozen: bool = False) -> object: ...

else:
    from chex import dataclass
