"""The shared ``__eq__`` and ``__hash__`` of the start-up value classes compare and hash as
attrs' own would."""

from __future__ import annotations

import attrs
import pytest

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder.config.cpp_deps import CppDep, Declared, Provider
from kernel_builder.config.model import Build, Kernel
from kernel_builder.variants.buildsets import BuildSet
from kernel_builder.variants.matrix import MatrixVariant
from kernel_builder.versions import Version


@attrs.frozen
class Own:
    number: int
    ignored: str = attrs.field(default="i", eq=False)
    unhashed: dict = attrs.field(factory=dict, hash=False)


@attrs.frozen
class Shared:
    __eq__ = fields_eq
    __hash__ = fields_hash

    number: int
    ignored: str = attrs.field(default="i", eq=False)
    unhashed: dict = attrs.field(factory=dict, hash=False)


@attrs.frozen
class Other:
    __eq__ = fields_eq
    __hash__ = fields_hash

    number: int


@pytest.mark.parametrize("cls", [Own, Shared])
def test_the_shared_methods_decide_as_attrs_does(cls: type) -> None:
    a, b = cls(1, "x", {"k": 1}), cls(1, "y", {"k": 1})
    assert a == b and not a != b and hash(a) == hash(b)  # an eq=False field is neither compared nor hashed
    assert cls(1, unhashed={"k": 1}) != cls(1, unhashed={"k": 2})  # hash=False still compares
    assert hash(cls(1, unhashed={"k": 1})) == hash(cls(1, unhashed={"k": 2}))
    assert cls(1) != cls(2)
    assert cls(1).__eq__(Other(1)) is NotImplemented and cls(1) != Other(1) and cls(1) != 1
    assert len({cls(1), cls(1, "z"), cls(2)}) == 2


def test_attrs_keeps_the_class_body_methods() -> None:
    for cls in (Build, Kernel, BuildSet, MatrixVariant, Version, Provider, CppDep, Declared, Shared):
        assert cls.__eq__ is fields_eq and cls.__hash__ is fields_hash, cls
    assert Version.parse("2.10.0") == Version((2, 10)) and hash(Version.parse("2.10")) == hash(Version((2, 10)))
    assert Version((2, 10)) != Version((2, 11))


def test_a_field_with_an_eq_key_is_refused() -> None:
    @attrs.frozen
    class Keyed:
        __eq__ = fields_eq
        __hash__ = fields_hash

        name: str = attrs.field(eq=str.lower)

    with pytest.raises(TypeError, match="eq key"):
        Keyed("a") == Keyed("A")  # noqa: B015


def test_the_start_up_value_classes_are_frozen_dict_classes() -> None:
    """attrs makes a slotted class twice (docs/architecture.md, Imports); these are made at
    every start, frozen, without ``__slots__``."""
    for cls in (Build, Kernel, BuildSet, MatrixVariant, Version, Provider, CppDep, Declared):
        assert attrs.has(cls) and "__slots__" not in vars(cls), cls
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        Version((1,)).parts = (2,)  # type: ignore[misc]


def test_a_version_text_is_parsed_once() -> None:
    """Version.parse keeps what it made (values are immutable); errors are raised every time."""
    assert Version.parse("2.10.0") is Version.parse("2.10.0") == Version((2, 10)) == Version.parse(" 2.10 ")
    for bad in ("2.x", "", 2.1):
        for _ in range(2):
            with pytest.raises(ValueError):
                Version.parse(bad)  # type: ignore[arg-type]
