"""Hub repository ids: one value type and one rule for build.toml (``general.hub.repo-id``,
``kernel-depends``), ``init --name``, ``upload --repo-id`` and the loader.

``ORG/NAME``: two parts of letters, digits, ``-``, ``_`` and ``.`` (not at the end, at most
96 characters each), and never ``..``, so an id can never be read as a path.
"""

from __future__ import annotations

import re

import attrs

from kernel_builder._eq import fields_eq, fields_hash
from kernel_builder._repr import fields_repr

__all__ = ["RepoId", "REPO_ID_RULE"]

_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_-])?")
REPO_ID_RULE = "ORG/NAME (letters, digits, '-', '_', '.'; no '..')"


@attrs.frozen(slots=False)
class RepoId:
    """A Hub repository id; ``str()`` is the wire form ``org/name``."""
    __repr__ = fields_repr
    __eq__ = fields_eq
    __hash__ = fields_hash

    org: str
    name: str

    @classmethod
    def parse(cls, text: object) -> RepoId:
        """``"org/name"`` -> ``RepoId``; ``ValueError`` naming the text and the rule otherwise."""
        parts = text.split("/") if isinstance(text, str) else []
        if len(parts) != 2 or not all(_PART.fullmatch(p) for p in parts) or ".." in str(text):
            raise ValueError(f"invalid Hub repository id {text!r}; expected {REPO_ID_RULE}")
        return cls(parts[0], parts[1])

    def __str__(self) -> str:
        return f"{self.org}/{self.name}"
