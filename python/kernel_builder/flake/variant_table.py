"""The kernel flake's variant table, parsed once into typed rows.

``nix eval .#variantTable`` gives one JSON record per variant of the matrix (in matrix
order) with what the front end selects on: whether a toolchain can build it here, the build
set, and for buildable variants the toolchain provider and its Python. ``parse_table`` turns
it into ``VariantEntry`` values at the edge, so selection, fetching and recording never walk
dictionaries; a record that lacks a field is a ``NixError`` naming it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

import attrs

from kernel_builder.errors import NixError
from kernel_builder.variants.names import try_parse

__all__ = ["Provider", "VariantEntry", "parse_table"]


class Provider(str, enum.Enum):
    """Where a variant's toolchain comes from (``--toolchain``)."""

    PINNED = "pinned"  # store paths built from nix/toolchain-lock.json; sandboxed builds
    HOST = "host"  # this machine's recorded toolchains (not hermetic)

    def __str__(self) -> str:
        return self.value


@attrs.frozen
class VariantEntry:
    """One variant of the kernel flake and whether (and with what) it builds here."""

    name: str
    backend: str
    bundle: bool
    build_set: str
    buildable: bool
    reason: str | None = None  # why not buildable
    torch: str | None = None
    backend_version: str | None = None
    provider: Provider | None = None  # buildable variants only
    python: str | None = None  # the toolchain Python (a store path for pinned)

    @property
    def system(self) -> str | None:
        """The Nix system an arch variant is for (read from its name); ``None`` for noarch."""
        parsed = try_parse(self.name)
        return parsed.system if parsed is not None else None


_FIELDS = {
    "name": "name", "backend": "backend", "bundle": "bundle", "buildSet": "build_set", "buildable": "buildable",
    "reason": "reason", "torch": "torch", "backendVersion": "backend_version",
    "toolchainProvider": "provider", "toolchainPython": "python",
}
_REQUIRED = ("name", "backend", "bundle", "buildSet", "buildable")


def parse_table(records: Iterable[Any]) -> tuple[VariantEntry, ...]:
    """Typed rows from ``variantTable``'s JSON records."""
    entries = []
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            raise NixError(f"variantTable[{index}] is not a record: {record!r}")
        missing = [key for key in _REQUIRED if key not in record]
        if missing:
            raise NixError(f"variantTable[{index}] lacks {', '.join(missing)}", hint="the builder's gen-flake-outputs.nix and this CLI disagree; update both")
        values = {attr: record.get(key) for key, attr in _FIELDS.items()}
        if values["provider"] is not None:
            values["provider"] = Provider(values["provider"])
        entries.append(VariantEntry(**values))
    return tuple(entries)
