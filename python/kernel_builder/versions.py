"""Versions: the dotted ``Version`` of build.toml and build-sets.json, and the one reader of
a ``major.minor`` pair from whatever carries one.

A major.minor pair (``(2, 13)``) is what variant names, machine facts and compatibility
compare; ``major_minor`` is the only function that makes one, from ``"2.13.0+cpu"``,
``"13.0"``, a ``Version`` or a pair, so every caller reads versions the same way.
"""

from __future__ import annotations

import functools
import re

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr

__all__ = ["Version", "MajorMinor", "major_minor", "optional_major_minor", "format_major_minor"]

MajorMinor = tuple[int, int]

_VERSION_PART = re.compile(r"\+?[0-9]+")
# Patterns as text: re compiles one on first use (and caches it), not at every start-up.
# MAJOR[.MINOR[.more]] with an optional local or build suffix: "2.13.0+cpu", "6.3.42131-fa1d09c".
_MAJOR_MINOR = r"\s*v?(\d+)(?:\.(\d+))?(?:\.\d+)*(?:[+-]\S*)?\s*"


@attrs.frozen(order=False, slots=False)
class Version:
    """A dotted version of non-negative integers, normalised without trailing zeros.

    ``Version.parse("2.10.0") == Version((2, 10))``; ``str()`` joins the parts with dots;
    ordering compares the integer tuples.
    """
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    parts: tuple[int, ...]

    @classmethod
    def parse(cls, text: str) -> Version:
        if not isinstance(text, str):
            raise ValueError(f"version must be a string such as \"2.12\", got {text!r}")
        return _parse(cls, text)

    def major_minor(self) -> MajorMinor:
        padded = (*self.parts, 0)
        return padded[0], padded[1]

    def __str__(self) -> str:
        return ".".join(str(p) for p in self.parts)

    def __lt__(self, other: Version) -> bool:
        return self.parts < other.parts

    def __le__(self, other: Version) -> bool:
        return self.parts <= other.parts

    def __gt__(self, other: Version) -> bool:
        return self.parts > other.parts

    def __ge__(self, other: Version) -> bool:
        return self.parts >= other.parts


@functools.lru_cache(maxsize=1024)
def _parse(cls: type[Version], text: str) -> Version:
    """``Version.parse`` of a string. A value is immutable and the same text always gives the
    same one, so a text read again (a command reads each build set's versions many times)
    gets the value made the first time."""
    stripped = text.strip()
    if not stripped:
        raise ValueError("version must not be empty")
    pieces = stripped.split(".")
    if not all(_VERSION_PART.fullmatch(p) for p in pieces):
        raise ValueError(f"version must consist of dot-separated numbers, got {text!r}")
    parts = [int(p) for p in pieces]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return cls(tuple(parts))


def major_minor(value: object) -> MajorMinor:
    """``(major, minor)`` from a pair, a ``Version`` or text (``"2.13.0+cpu"``, ``"13"``,
    ``"v12.8"``, ``"6.3.42131-fa1d09c"``); a missing minor is 0. ``ValueError`` for anything
else (``"13.x"``)."""
    if isinstance(value, Version):
        return value.major_minor()
    if isinstance(value, (tuple, list)):
        if not value or not all(isinstance(p, int) and not isinstance(p, bool) for p in value):
            raise ValueError(f"not a version: {value!r}")
        return (value[0], value[1] if len(value) > 1 else 0)
    if isinstance(value, str):
        match = re.fullmatch(_MAJOR_MINOR, value)
        if match:
            return int(match.group(1)), int(match.group(2) or 0)
    raise ValueError(f"cannot read a version from {value!r}; expected MAJOR.MINOR")


def optional_major_minor(value: object) -> MajorMinor | None:
    return None if value is None else major_minor(value)


def format_major_minor(value: MajorMinor | None) -> str:
    """``(2, 13)`` -> ``"2.13"``; ``None`` -> ``"none"`` (for messages)."""
    return "none" if value is None else f"{value[0]}.{value[1]}"
