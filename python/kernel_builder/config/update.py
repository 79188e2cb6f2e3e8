"""``update-build``: rewrite a v3/v4/edition-5 build.toml as edition 6, keeping the author's text.

The migration is a few insertions into the tomlkit document (``edition = 6``, v3's
default ``version = 1`` and its implicit ``[torch-noarch]``) and in-place text edits
(an edition-5 file's ``edition = 5`` becomes 6; each component's ``backend = "cuda"``
becomes ``language = "cpp-cuda"``), so comments, key order and formatting survive. ``[torch-noarch]`` keys spelled ``cuda-capabilities`` /
``rocm-archs`` (which we read but the reference parser rejects) are renamed to the
snake spelling both tools read, in any edition. The result is read back and must give
the same model.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import tomlkit
from tomlkit.items import InlineTable, Table

from kernel_builder._files import write_atomic
from kernel_builder.backends import Backend
from kernel_builder.config.loading import build_toml_path, parse, read_text
from kernel_builder.config.model import CURRENT_EDITION, FRAMEWORK_KEYS, KEYED_EDITIONS, Language
from kernel_builder.config.positions import scan
from kernel_builder.config.problems import BuildTomlError, Problem

__all__ = ["Update", "migrate_text", "plan_update", "snake_noarch_keys", "languages_for_backends", "write_atomic"]


@attrs.frozen
class Update:
    """The planned rewrite of one build.toml."""

    path: Path
    old_text: str
    new_text: str
    from_edition: int
    #: ``[torch-noarch]`` keys renamed to the spelling the reference reads (``old -> new``).
    renamed: tuple[str, ...] = ()
    #: components whose ``backend`` became a ``language``: (name, language).
    languages: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        """What the update does, for one log line."""
        changes = [f"edition {self.from_edition} -> {CURRENT_EDITION}"] if self.from_edition != CURRENT_EDITION else []
        changes += [f'[kernel.{name}] backend -> language = "{language}"' for name, language in self.languages]
        changes += [f"[torch-noarch] {r}" for r in self.renamed]
        return "; ".join(changes)

    @property
    def needed(self) -> bool:
        return self.old_text != self.new_text

    def diff(self) -> str:
        """A unified diff from the current file to the edition-6 file."""
        lines = difflib.unified_diff(
            self.old_text.splitlines(keepends=True),
            self.new_text.splitlines(keepends=True),
            fromfile=f"a/{self.path.name}",
            tofile=f"b/{self.path.name}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _insert_after(table: Table | InlineTable, after: str, key: str, value: Any) -> None:
    """Insert ``key = value`` right after ``after`` in a tomlkit table, same indent.

    tomlkit has no public insert: this uses ``Container._insert_at`` (tomlkit 0.15.3 removed
    the ``_insert_after`` this once used, and the key was silently not added). Whatever
    tomlkit's internals do, the key is added: at the end of the table if inserting fails.
    """
    container = table.value
    item = tomlkit.item(value)
    if after in table:
        item.trivia.indent = container.item(after).trivia.indent
        at = [i for i, (name, _) in enumerate(container.body) if name is not None and name.key == after]
        try:
            container._insert_at(at[-1] + 1, key, item)
            return
        except Exception:  # the last key, or tomlkit internals changed: append
            pass
    table.add(key, item)


def _insert_line_after(text: str, location: tuple[int, int], key: str, value: int) -> str:
    """Text-level fallback: copy the line at ``location`` with ``key = value``.

    ``general.version = 1`` gives ``general.edition = 6``; indentation is kept.
    """
    lines = text.splitlines(keepends=True)
    line_no, column = location
    line = lines[line_no - 1]
    ending = line[len(line.rstrip("\r\n")) :] or "\n"
    if not line.endswith(("\n", "\r")):
        lines[line_no - 1] = line + ending
    lines.insert(line_no, f"{line[: column - 1]}{key} = {value}{ending}")
    return "".join(lines)


def _text_fallback(text: str, needs_version: bool) -> str:
    path = "general"
    if needs_version:
        where = scan(text).keys.get((path, "name"))
        if where is None:
            raise _CannotEdit
        text = _insert_line_after(text, where, "version", 1)
    where = scan(text).keys.get((path, "version"))
    if where is None:
        raise _CannotEdit
    return _insert_line_after(text, where, "edition", CURRENT_EDITION)


class _CannotEdit(Exception):
    """The document's shape is beyond what the migration can edit in place."""


def _edit(text: str) -> str:
    doc = tomlkit.parse(text)
    general = doc["general"]
    needs_version = "version" not in general  # v3 made it optional; 1 is what it meant
    if isinstance(general, (Table, InlineTable)):
        if needs_version:
            _insert_after(general, "name", "version", 1)
        _insert_after(general, "version", "edition", CURRENT_EDITION)
        new_text = tomlkit.dumps(doc)
    else:  # [general] spelled with dotted keys
        new_text = _text_fallback(text, needs_version)
        doc = tomlkit.parse(new_text)
    if not any(key in doc for key in FRAMEWORK_KEYS):  # v3: no framework table meant noarch
        doc.append("torch-noarch", tomlkit.table())
        new_text = tomlkit.dumps(doc)
    if "\r\n" in text:  # keep Windows line endings on the inserted lines
        new_text = re.sub(r"(?<!\r)\n", "\r\n", new_text)
    if not new_text.endswith("\n"):
        new_text += "\r\n" if "\r\n" in text else "\n"
    return new_text


# The reference parser reads these [torch-noarch] keys only in their snake spelling.
_NOARCH_SNAKE = {"cuda-capabilities": "cuda_capabilities", "rocm-archs": "rocm_archs"}


def snake_noarch_keys(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with kebab ``[torch-noarch]`` keys renamed in place, and what was renamed."""
    table = "torch-noarch"
    keys = scan(text).keys
    lines = text.splitlines(keepends=True)
    renamed = []
    for kebab, snake in _NOARCH_SNAKE.items():
        where = keys.get((table, kebab))
        if where is None:
            continue
        line_no, column = where
        line = lines[line_no - 1]
        at = line.find(kebab, column - 1)
        if at < 0:  # pragma: no cover - the scanner located the key on this line
            continue
        lines[line_no - 1] = line[:at] + snake + line[at + len(kebab) :]
        renamed.append(f"{kebab} -> {snake}")
    return "".join(lines), tuple(renamed)


_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'')


def _replace_at(lines: list[str], location: tuple[int, int], pattern: re.Pattern[str] | str, new: str | Callable[[str], str]) -> None:
    """Replace what ``pattern`` matches at ``location`` (1-based line:column) with ``new``
    (or with ``new(matched text)``)."""
    line_no, column = location
    line = lines[line_no - 1]
    match = re.compile(pattern).match(line, column - 1)
    if match is None:
        raise _CannotEdit
    replacement = new(match.group(0)) if callable(new) else new
    lines[line_no - 1] = line[: match.start()] + replacement + line[match.end() :]


def _as_language_key(key: str) -> str:
    """``backend`` as ``language``, quoted as it was."""
    return key.replace("backend", "language")


def languages_for_backends(text: str) -> str:
    """``text`` with each ``[kernel.NAME] backend = "<b>"`` written as ``language = "cpp-<b>"``.

    Edits are made from the end of the file backwards, so earlier positions stay valid;
    a key or value the scanner cannot place exactly makes the caller give up (``_CannotEdit``).
    """
    doc = tomllib.loads(text)
    positions = scan(text)
    lines = text.splitlines(keepends=True)
    edits = []
    for name, table in (doc.get("kernel") or {}).items():
        if not isinstance(table, dict) or "backend" not in table:
            continue
        path = ("kernel", name, "backend")
        key, value = positions.keys.get(path), positions.values.get(path)
        if key is None or value is None:
            raise _CannotEdit
        language = Language.cpp_for(Backend(table["backend"])).value
        edits += [(value, _STRING, f'"{language}"'), (key, r'"backend"|\'backend\'|backend', _as_language_key)]
    for location, pattern, new in sorted(edits, key=lambda e: e[0], reverse=True):
        _replace_at(lines, location, pattern, new)
    return "".join(lines)


def _set_edition(text: str) -> str:
    """An edition-5 file's ``edition = 5`` as ``edition = 6``, in place."""
    where = scan(text).values.get(("general", "edition"))
    if where is None:
        raise _CannotEdit
    lines = text.splitlines(keepends=True)
    _replace_at(lines, where, r"\+?[0-9A-Za-z_]+", str(CURRENT_EDITION))  # 5, +5, 0x5, 0o5, 0b101
    return "".join(lines)


def migrate_text(text: str, *, path: str = "build.toml") -> tuple[str, int]:
    """Edition-6 text for ``text`` and the edition it was written in.

    Edition-6 input comes back unchanged apart from ``snake_noarch_keys``; invalid input
    raises ``BuildTomlError``.
    """
    parsed = parse(text, path=path, allow_legacy=True, check_registry=False)
    try:
        if parsed.edition == CURRENT_EDITION:
            new_text = text
        elif parsed.edition in KEYED_EDITIONS:
            new_text = languages_for_backends(_set_edition(text))
        else:
            new_text = languages_for_backends(_edit(text))
        new_text = snake_noarch_keys(new_text)[0]
        if new_text == text:
            return text, parsed.edition
        check = parse(new_text, path=path, check_registry=False)
        same = check.edition == CURRENT_EDITION and check.build == parsed.build
    except (_CannotEdit, BuildTomlError) as exc:
        if isinstance(exc, BuildTomlError) and any(p.path for p in exc.problems):
            raise  # a real problem of the file that edition 6 reports (e.g. a v3 file without a license)
        same = False
    if not same:
        problem = Problem(path, (), "cannot migrate this file in place: the rewritten file does not read back the same")
        raise BuildTomlError(
            path,
            [problem],
            hint=f"write edition = {CURRENT_EDITION} in [general] and language = \"cpp-<backend>\" for each [kernel.NAME] backend "
            "by hand (see docs/build-toml.md), or report this",
        )
    return new_text, parsed.edition


def plan_update(kernel_dir: str | os.PathLike[str]) -> Update:
    """Read ``kernel_dir/build.toml`` (or the given file) and plan its migration."""
    file = build_toml_path(kernel_dir)
    old = read_text(file, hint="pass a kernel directory that has a build.toml")
    new, edition = migrate_text(old, path=str(file))
    languages = ()
    if edition != CURRENT_EDITION:
        kernels = tomllib.loads(old).get("kernel") or {}
        languages = tuple(
            (name, Language.cpp_for(Backend(table["backend"])).value)
            for name, table in kernels.items()
            if isinstance(table, dict) and "backend" in table
        )
    return Update(file, old, new, edition, snake_noarch_keys(old)[1], languages)
