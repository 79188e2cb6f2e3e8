"""The record of what ``create-pyproject`` wrote: each file's SHA-256 and the directories it made.

``clean-pyproject`` deletes exactly the recorded files, and only while their bytes are still
the recorded ones, so an edit the user made is never lost. The record is a small JSON file
in the kernel directory (``MANIFEST``); reading it checks every path, since clean deletes
what it names.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

import attrs

from kernel_builder._files import read_text, write_atomic
from kernel_builder.errors import ConfigError

__all__ = ["MANIFEST", "Manifest", "file_state", "changed", "read_manifest", "write_manifest"]

MANIFEST = ".kernel-builder-pyproject.json"
_FORMAT = 1


@attrs.frozen
class Manifest:
    """``files``: relative POSIX path → SHA-256 hex of the bytes written; ``dirs``: the
    directories create made (removed by clean when empty); ``variant``: what they build."""

    variant: str
    files: Mapping[str, str]
    dirs: tuple[str, ...] = ()

    def to_json(self) -> str:
        data = {"format": _FORMAT, "variant": self.variant, "files": dict(sorted(self.files.items())), "dirs": sorted(self.dirs)}
        return json.dumps(data, indent=2) + "\n"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_state(path: Path) -> str | None:
    """SHA-256 of the regular file at ``path``; ``None`` when nothing is there; ``"link"``
    or ``"not a file"`` for what clean must not treat as its own file."""
    if os.path.islink(path):
        return "link"
    if not path.exists():
        return None
    if not path.is_file():
        return "not a file"
    return sha256(path.read_bytes())


def changed(manifest: Manifest, states: Mapping[str, str | None]) -> list[str]:
    """The recorded files whose current state (``states``: path → ``file_state``) is neither
    the recorded hash nor gone: the files the user changed since create wrote them."""
    return sorted(rel for rel, digest in manifest.files.items() if states.get(rel) not in (digest, None))


def _relative(value: object, where: str, path: Path) -> str:
    """A manifest path: relative, normalised, inside the kernel directory."""
    text = value if isinstance(value, str) else ""
    pure = PurePosixPath(text)
    if not text or pure.is_absolute() or ".." in pure.parts or str(pure) != text or "\\" in text:
        raise ConfigError(
            f"{path}: {where}: {value!r} is not a relative path inside the kernel directory",
            hint=f"the file is written by `kernel-builder create-pyproject`; restore it or delete {MANIFEST} "
            "and the files it lists yourself",
        )
    return text


def read_manifest(path: Path) -> Manifest:
    """The manifest at ``path``; a ``ConfigError`` naming the key for a broken one."""
    text = read_text(path)
    hint = f"{MANIFEST} is written by `kernel-builder create-pyproject`; restore it, or delete it and the files it lists yourself"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}", hint=hint) from None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        raise ConfigError(f"{path}: format: expected {_FORMAT} in a JSON object", hint=hint)
    files = data.get("files")
    if not isinstance(files, dict):
        raise ConfigError(f"{path}: files: expected an object of path -> sha256", hint=hint)
    checked: dict[str, str] = {}
    for rel, digest in files.items():
        rel = _relative(rel, "files", path)
        if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
            raise ConfigError(f"{path}: files.{rel}: expected a SHA-256 hex digest, got {digest!r}", hint=hint)
        checked[rel] = digest
    dirs = data.get("dirs", [])
    if not isinstance(dirs, list):
        raise ConfigError(f"{path}: dirs: expected a list of directories", hint=hint)
    variant = data.get("variant")
    if not isinstance(variant, str):
        raise ConfigError(f"{path}: variant: expected a variant name", hint=hint)
    return Manifest(variant, checked, tuple(_relative(d, "dirs", path) for d in dirs))


def write_manifest(kernel_dir: Path, manifest: Manifest) -> None:
    write_atomic(kernel_dir / MANIFEST, manifest.to_json())
