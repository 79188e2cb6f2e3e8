"""The loader's one reader of a variant's metadata.json.

``tree.metadata.Metadata.read`` reads a bounded regular file and names the file and the
problem in a ``MetadataError`` (a ``CheckError``: what ``check`` and ``upload`` report).
The loader's callers catch ``LoadError``, so here the same error is an ``InvalidMetadata``.
"""

from __future__ import annotations

from pathlib import Path

from kernel_builder.loader.errors import InvalidMetadata
from kernel_builder.tree.metadata import Metadata, MetadataError

__all__ = ["read_metadata"]


def read_metadata(path: Path) -> Metadata:
    """``Metadata.read(path)``, its errors as ``InvalidMetadata`` (same message and hint)."""
    try:
        return Metadata.read(path)
    except MetadataError as exc:
        raise InvalidMetadata(exc.message, hint=exc.hint) from None
