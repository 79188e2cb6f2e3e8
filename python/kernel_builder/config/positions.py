"""Where each key and value of a TOML document sits, as 1-based line:column.

``tomllib`` gives values but no positions, and tomlkit keeps formatting but no line
numbers, so error messages use this small scanner instead. It runs only on text that
``tomllib`` already accepted, so it can be lenient: it tracks table headers, dotted
keys, arrays and inline tables, and skips strings and scalars without decoding them. A
document is scanned the first time its positions are asked for: a build.toml read without
a problem or warning never is.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Hashable

import attrs

from kernel_builder._repr import fields_repr

__all__ = ["Positions", "Path", "scan"]

Path = tuple[Hashable, ...]  # str keys and int array indexes
Location = tuple[int, int]

# Patterns as text: re compiles one on first use (and caches it), not at every start-up.
_BARE_KEY = r"[A-Za-z0-9_-]+"
_WS = " \t"


@attrs.frozen(eq=False, slots=False)
class Positions:
    """Positions of one document ``text``: ``keys`` (key or table header) and ``values``, and
    its ``comments``, found by scanning the text the first time one of them is read."""
    __repr__ = fields_repr

    text: str = attrs.field(repr=False)

    @functools.cached_property
    def _scanned(self) -> tuple[dict[Path, Location], dict[Path, Location], tuple[str, ...]]:
        scanner = _Scanner(self.text)
        try:
            scanner.run()
        except (_Stop, tomllib.TOMLDecodeError, IndexError, RecursionError):  # keep what was found
            pass
        return scanner.keys, scanner.values, tuple(scanner.comments)

    @property
    def keys(self) -> dict[Path, Location]:
        return self._scanned[0]

    @property
    def values(self) -> dict[Path, Location]:
        return self._scanned[1]

    @property
    def comments(self) -> tuple[str, ...]:
        return self._scanned[2]

    def value(self, path: Path) -> Location | None:
        """Where the value at ``path`` starts, else its key, else the nearest ancestor's."""
        if path in self.values:
            return self.values[path]
        return self.key(path)

    def key(self, path: Path) -> Location | None:
        """Where the key (or header) of ``path`` is, falling back to ancestors."""
        while path:
            if path in self.keys:
                return self.keys[path]
            if path in self.values:
                return self.values[path]
            path = path[:-1]
        return None


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.keys: dict[Path, Location] = {}
        self.values: dict[Path, Location] = {}
        self.comments: list[str] = []
        self.aot_counts: dict[Path, int] = {}

    def loc(self, offset: int) -> Location:
        from bisect import bisect_right  # lazy: only a scan needs it (a C extension to load)

        line = bisect_right(self.line_starts, offset) - 1
        return line + 1, offset - self.line_starts[line] + 1

    def peek(self, n: int = 1) -> str:
        return self.text[self.i : self.i + n]

    def skip_ws(self, newlines: bool) -> None:
        """Skip blanks (and newlines and comments when ``newlines``)."""
        text = self.text
        while self.i < len(text):
            ch = text[self.i]
            if ch in _WS or (newlines and ch in "\r\n"):
                self.i += 1
            elif ch == "#":
                end = text.find("\n", self.i)
                end = len(text) if end < 0 else end
                self.comments.append(text[self.i : end].rstrip("\r"))
                self.i = end
            else:
                return

    def key_part(self) -> str:
        start = self.i
        ch = self.peek()
        if ch in "\"'":
            self.skip_string()
            return tomllib.loads("k = " + self.text[start : self.i])["k"]
        match = re.compile(_BARE_KEY).match(self.text, self.i)
        if not match:  # cannot happen on valid TOML; stop scanning gracefully
            raise _Stop
        self.i = match.end()
        return match.group()

    def dotted_key(self, base: Path) -> tuple[Path, Location]:
        """Read ``a."b".c``; record every prefix so implicit tables have a position."""
        first = self.loc(self.i)
        parts: list[str] = []
        while True:
            self.skip_ws(False)
            here = self.loc(self.i)
            parts.append(self.key_part())
            self.keys.setdefault(base + tuple(parts), here)
            self.skip_ws(False)
            if self.peek() != ".":
                return base + tuple(parts), first
            self.i += 1

    def skip_string(self) -> None:
        text = self.text
        quote = text[self.i]
        if text.startswith(quote * 3, self.i):
            self.i += 3
            while True:
                end = text.find(quote * 3, self.i)
                if end < 0:
                    raise _Stop
                if quote == '"' and _escaped(text, end):
                    self.i = end + 1
                    continue
                self.i = end + 3
                while self.peek() == quote:  # up to two quotes may close the string
                    self.i += 1
                return
        self.i += 1
        while self.i < len(text):
            ch = text[self.i]
            if quote == '"' and ch == "\\":
                self.i += 2
                continue
            self.i += 1
            if ch == quote:
                return
        raise _Stop

    def value(self, path: Path) -> None:
        self.values[path] = self.loc(self.i)
        ch = self.peek()
        if ch in "\"'":
            self.skip_string()
        elif ch == "[":
            self.i += 1
            index = 0
            while True:
                self.skip_ws(True)
                if self.peek() == "]":
                    self.i += 1
                    return
                self.value(path + (index,))
                index += 1
                self.skip_ws(True)
                if self.peek() == ",":
                    self.i += 1
        elif ch == "{":
            self.i += 1
            while True:
                self.skip_ws(False)
                if self.peek() == "}":
                    self.i += 1
                    return
                self.key_value(path)
                self.skip_ws(False)
                if self.peek() == ",":
                    self.i += 1
        else:
            match = re.compile(r"[^,\]}\r\n#]*").match(self.text, self.i)
            assert match is not None
            self.i = match.end()

    def key_value(self, table: Path) -> None:
        """``key = value`` (the key may be dotted) inside ``table``."""
        full, _ = self.dotted_key(table)
        self.skip_ws(False)
        self.i += 1  # '='
        self.skip_ws(False)
        self.value(full)

    def header(self) -> Path:
        start = self.loc(self.i)
        is_array = self.peek(2) == "[["
        self.i += 2 if is_array else 1
        full, _ = self.dotted_key(())
        self.skip_ws(False)
        self.i += 2 if is_array else 1
        if is_array:
            index = self.aot_counts.get(full, 0)
            self.aot_counts[full] = index + 1
            full = full + (index,)
        self.keys[full] = start
        return full

    def run(self) -> None:
        table: Path = ()
        while True:
            self.skip_ws(True)
            if self.i >= len(self.text):
                return
            if self.peek() == "[":
                table = self.header()
                continue
            self.key_value(table)


class _Stop(Exception):
    """The scanner met something it does not understand; keep what it found."""


def _escaped(text: str, index: int) -> bool:
    """Whether the character at ``index`` is preceded by an odd number of backslashes."""
    count = 0
    while index > 0 and text[index - 1] == "\\":
        count += 1
        index -= 1
    return count % 2 == 1


def scan(text: str) -> Positions:
    """Positions of every key and value in ``text`` (valid TOML), scanned on first use."""
    return Positions(text)
