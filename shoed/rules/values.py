"""Immutable values made at the cost of a plain object.

A frozen dataclass's `__init__` sets each field through `object.__setattr__` by name, to get
past its own `__setattr__`; the roads and the coup make such values for every card and every
coup of a replay. `maker(cls, fields)` gives a function that makes the same value with each
field set through its slot's own setter, at about half the cost. It runs no `__post_init__`
and checks nothing: a value is made this way only by code that already holds valid fields
(a coup's next step, the roads' next cell)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def maker(cls: type[T], fields: tuple[str, ...]) -> Callable[..., T]:
    """A function of the `fields` (positional, in this order) that makes a `cls` (a slotted,
    frozen dataclass); fields left out stay unset."""
    if not all(name.isidentifier() for name in fields):
        raise ValueError(f"not field names: {fields!r}")
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    scope.update({f"set_{name}": getattr(cls, name).__set__ for name in fields})
    body = "".join(f"    set_{name}(value, {name})\n" for name in fields)
    exec(f"def make({', '.join(fields)}):\n    value = new(cls)\n{body}    return value\n", scope)  # noqa: S102
    make: Callable[..., T] = scope["make"]
    make.__qualname__ = make.__name__ = f"make_{cls.__name__}"
    return make
