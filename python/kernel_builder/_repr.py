"""One ``__repr__`` for the attrs classes that ``kernel-builder`` makes on every start.

attrs writes and compiles a ``__repr__`` for each class it makes, about a third of what
making a class costs; the model classes that every command imports (config, C++ dependency
table, versions, variant names and the matrix) share this one instead:
``__repr__ = fields_repr`` in the class body, which attrs leaves in place. It prints what
attrs' own would, ``Name(field=value, ...)`` over the fields shown in repr.
"""

from __future__ import annotations

import attrs

__all__ = ["fields_repr"]


def fields_repr(self: object) -> str:
    """``Name(field=value, ...)``, as attrs writes it (a field's ``repr=False`` hides it, a
    callable ``repr`` formats it)."""
    shown = []
    for field in attrs.fields(type(self)):
        if field.repr is False:
            continue
        show = repr if field.repr is True else field.repr
        shown.append(f"{field.name}={show(getattr(self, field.name, attrs.NOTHING))}")
    return f"{type(self).__qualname__.rsplit('>.', 1)[-1]}({', '.join(shown)})"
