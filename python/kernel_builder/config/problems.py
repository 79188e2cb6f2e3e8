"""Collecting build.toml problems so that one run reports all of them.

Readers never raise on the first bad key: they add a ``Problem`` (key path, message) to
a ``Problems`` collector and carry on. At the end the collector turns into one
``BuildTomlError`` whose message has a ``file:line:col: key.path: problem`` line per
problem, ready for an editor's "jump to error".
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr
from kernel_builder.errors import ConfigError
from kernel_builder.config.positions import Path, Positions

__all__ = ["Problem", "Problems", "BuildTomlError", "format_path", "describe"]

# Patterns as text: re compiles one on first use (and caches it), not at every start-up.
_BARE = r"^[A-Za-z0-9_-]+$"
DOCS_HINT = "see docs/build-toml.md for every key, its type and an example"


def format_path(path: Iterable[Hashable]) -> str:
    """``("kernel", "relu", "src", 2)`` -> ``kernel.relu.src[2]``; odd keys are quoted."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        text = str(part) if re.match(_BARE, str(part)) else '"' + str(part).replace('"', '\\"') + '"'
        out += f".{text}" if out else text
    return out


def describe(value: object) -> str:
    """A short description of a TOML value for "got ..." messages."""
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}"
    if isinstance(value, float):
        return f"float {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'string "{shown}"'
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "a table"
    return f"{type(value).__name__} {value}"


@attrs.frozen(slots=False)
class Problem:
    """One problem (or warning) at one key path of one file."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    file: str
    path: Path
    message: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}:{self.column}"
        key = format_path(self.path)
        return f"{where}: {key}: {self.message}" if key else f"{where}: {self.message}"


@attrs.define(eq=False)
class Problems:
    """A collector of problems for one file; ``positions`` gives them line:column."""
    __repr__ = fields_repr

    file: str
    positions: Positions | None = None
    items: list[Problem] = attrs.field(factory=list)

    def add(self, path: Path, message: str, *, at: str = "value") -> None:
        """Record a problem at ``path``; ``at`` is "value" (the value) or "key" (its key)."""
        loc = None
        if self.positions is not None:
            loc = self.positions.value(path) if at == "value" else self.positions.key(path)
        line, column = loc if loc else (None, None)
        self.items.append(Problem(self.file, path, message, line, column))

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)


class BuildTomlError(ConfigError):
    """build.toml is invalid; ``problems`` holds every problem found in the file."""

    def __init__(self, file: str, problems: list[Problem], *, hint: str | None = None, note: str | None = None) -> None:
        self.file = file
        # Source order reads best; problems without a position (whole-file ones) come first.
        self.problems = sorted(problems, key=lambda p: (p.line or 0, p.column or 0))
        count = len(self.problems)
        first = f"{file}: {count} problem{'s' if count != 1 else ''} found" + (f" ({note})" if note else "")
        lines = [first, *(f"  {p}" for p in self.problems)]
        super().__init__("\n".join(lines), hint=hint or DOCS_HINT)
