"""The shared ``__repr__`` of the start-up model classes prints what attrs' own would."""

from __future__ import annotations

import attrs

from kernel_builder._repr import fields_repr
from kernel_builder.config.cpp_deps import CppDep
from kernel_builder.config.model import Build
from kernel_builder.variants.matrix import MatrixVariant
from kernel_builder.versions import Version


@attrs.frozen
class Inner:
    number: int
    hidden: str = attrs.field(default="h", repr=False)
    shown: str = attrs.field(default="s", repr=lambda value: f"<{value}>")


@attrs.frozen
class Shared:
    __repr__ = fields_repr

    number: int
    hidden: str = attrs.field(default="h", repr=False)
    shown: str = attrs.field(default="s", repr=lambda value: f"<{value}>")


def test_the_shared_repr_is_attrs_repr() -> None:
    assert repr(Shared(1)) == repr(Inner(1)).replace("Inner", "Shared") == "Shared(number=1, shown=<s>)"
    nested = Shared(2, shown=Shared(3, "x", "y"))  # type: ignore[arg-type]
    assert repr(nested) == "Shared(number=2, shown=<Shared(number=3, shown=<y>)>)"


def test_attrs_keeps_the_class_body_repr() -> None:
    for cls in (Build, MatrixVariant, Version, CppDep, Shared):
        assert cls.__repr__ is fields_repr, cls
    assert repr(Version.parse("2.10")) == "Version(parts=(2, 10))"
