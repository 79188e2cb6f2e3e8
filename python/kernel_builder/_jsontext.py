"""Edit one top-level key of a JSON object in its text, leaving every other byte alone.

``metadata.json`` is a published format that newer tools extend (``kernels-minver``,
``x-...`` keys). Rewriting the file from a model would drop what the model does not know
and reformat what it does, so ``kernel-builder hash`` changes only the ``digest`` value
in the text itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["set_top_level_key"]

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    match = _WS.match(text, i)
    assert match is not None
    return match.end()


def _expect(text: str, i: int, char: str) -> None:
    if i >= len(text) or text[i] != char:
        raise ValueError(f"expected {char!r} at offset {i} of the JSON object")


def _members(text: str) -> tuple[list[tuple[str, int, int, int]], int, str]:
    """((key, key start, value start, value end) per member, offset of the closing brace, indent)."""
    i = _skip(text, 0)
    _expect(text, i, "{")
    opening = i
    i = _skip(text, i + 1)
    gap = text[opening + 1 : i]
    indent = gap[gap.rfind("\n") + 1 :] if "\n" in gap else ""
    members: list[tuple[str, int, int, int]] = []
    if text.startswith("}", i):
        return members, i, indent
    while True:
        key_start = i
        key, i = _DECODER.raw_decode(text, i)
        if not isinstance(key, str):
            raise ValueError(f"object key at offset {key_start} is not a string")
        i = _skip(text, i)
        _expect(text, i, ":")
        value_start = _skip(text, i + 1)
        _, i = _DECODER.raw_decode(text, value_start)
        members.append((key, key_start, value_start, i))
        i = _skip(text, i)
        if text.startswith(",", i):
            i = _skip(text, i + 1)
            continue
        _expect(text, i, "}")
        return members, i, indent


def set_top_level_key(text: str, key: str, value: Any, *, before: tuple[str, ...] = ()) -> str:
    """``text`` with ``key``'s value replaced, or the key added (ahead of the first of
    ``before`` present, else last), formatted like the surrounding object.

    Every other byte of ``text`` is kept. ``ValueError`` when ``text`` is not a JSON object.
    """
    members, closing, indent = _members(text)
    rendered = json.dumps(value, ensure_ascii=False, indent=len(indent) or None)
    if indent:
        rendered = rendered.replace("\n", "\n" + indent)
    existing = [m for m in members if m[0] == key]
    if existing:
        _, _, start, end = existing[-1]  # JSON readers keep the last of duplicate keys
        return text[:start] + rendered + text[end:]
    member = json.dumps(key) + ": " + rendered
    separator = ",\n" + indent if indent else ", "
    anchor = next((m for m in members if m[0] in before), None)
    if anchor is not None:
        return text[: anchor[1]] + member + separator + text[anchor[1] :]
    if not members:
        return text[:closing] + member + text[closing:]
    end = members[-1][3]
    return text[:end] + separator + member + text[end:]
