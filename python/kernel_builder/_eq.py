"""One ``__eq__`` and ``__hash__`` for the frozen attrs classes that ``kernel-builder`` makes
on every start.

attrs writes and compiles an ``__eq__`` and a ``__hash__`` for each class it makes; the
value classes that every command imports (config model, C++ dependency table, variant names,
build sets, the matrix) share these two instead: ``__eq__ = fields_eq`` and
``__hash__ = fields_hash`` in the class body, which attrs leaves in place. They compare and
hash what attrs' own would: instances of the same class, over the fields with ``eq`` (and
``hash``) on, as tuples.
"""

from __future__ import annotations

import functools
from typing import Any

import attrs

__all__ = ["fields_eq", "fields_hash"]


@functools.cache
def _compared(cls: type) -> tuple[str, ...]:
    fields = attrs.fields(cls)
    if any(field.eq_key for field in fields):
        raise TypeError(f"{cls.__qualname__}: fields_eq does not apply a field's eq key; let attrs write __eq__")
    return tuple(field.name for field in fields if field.eq)


@functools.cache
def _hashed(cls: type) -> tuple[str, ...]:
    return tuple(field.name for field in attrs.fields(cls) if field.hash is True or (field.hash is None and field.eq))


def fields_eq(self: Any, other: Any) -> Any:
    """``NotImplemented`` for another class, else whether the compared fields are equal."""
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = _compared(self.__class__)
    return tuple(getattr(self, name) for name in names) == tuple(getattr(other, name) for name in names)


def fields_hash(self: Any) -> int:
    """The hash of the class and the hashed fields: equal values hash alike."""
    cls = self.__class__
    return hash((cls, *(getattr(self, name) for name in _hashed(cls))))
