"""File digests of a variant directory, as stored in ``metadata.json``.

A digest maps every file of a variant (path relative to the variant, ``/``-separated,
sorted) to the base64 of its SHA-256 (or SHA-512) hash. ``metadata.json`` and
``metadata.json.sigstore`` at the top, anything under ``__pycache__`` and ``*.pyc`` files
are left out: they are either the digest's own container or byproducts of importing.
Symlinks to files are hashed through; symlinks to directories are not followed.
The loader verifies the digest before importing; ``kernel-builder hash`` writes it.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import attrs

from kernel_builder.errors import CheckError

__all__ = [
    "ALGORITHMS",
    "Digest",
    "compute_digest",
    "validate_digest",
    "is_excluded",
]

ALGORITHMS = ("sha256", "sha512")
_TOP_LEVEL_EXCLUDED = frozenset({"metadata.json", "metadata.json.sigstore"})
_CHUNK = 1 << 20


def _check_algorithm(_inst: object, _attr: object, value: str) -> None:
    if value not in ALGORITHMS:
        raise ValueError(f"unknown digest algorithm {value!r}; expected one of {', '.join(ALGORITHMS)}")


def _sorted_files(files: dict[str, str]) -> dict[str, str]:
    return dict(sorted(files.items()))


@attrs.frozen
class Digest:
    """``{"algorithm": "sha256", "files": {relpath: base64}}``; files kept sorted by path."""

    algorithm: str = attrs.field(validator=_check_algorithm)
    files: dict[str, str] = attrs.field(converter=_sorted_files, hash=False)

    def to_json(self) -> dict[str, object]:
        return {"algorithm": self.algorithm, "files": dict(self.files)}

    @classmethod
    def from_json(cls, data: object) -> Digest:
        """Read the ``digest`` object of metadata.json; ``ValueError`` names the bad part."""
        if not isinstance(data, dict):
            raise ValueError(f"`digest` must be an object, got {type(data).__name__}")
        algorithm = data.get("algorithm")
        files = data.get("files")
        if not isinstance(algorithm, str):
            raise ValueError("`digest.algorithm` must be a string (sha256 or sha512)")
        if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            raise ValueError("`digest.files` must map relative paths to base64 strings")
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown `digest.algorithm` {algorithm!r}; expected sha256 or sha512")
        return cls(algorithm, files)


def is_excluded(relpath: str) -> bool:
    """Whether a variant-relative path (``/``-separated) is left out of the digest."""
    parts = relpath.split("/")
    if len(parts) == 1 and parts[0] in _TOP_LEVEL_EXCLUDED:
        return True
    if "__pycache__" in parts:
        return True
    return parts[-1].endswith(".pyc")


def _hash_file(path: Path, algorithm: str) -> str:
    hasher = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            hasher.update(chunk)
    return base64.b64encode(hasher.digest()).decode("ascii")


def _walk(root: Path, rel: str = ""):
    """Yield (relpath, path) of the regular files (or links to them) under ``root``."""
    with os.scandir(root) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            relpath = f"{rel}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    yield from _walk(Path(entry.path), relpath + "/")
                continue
            if entry.is_symlink():
                if not os.path.exists(entry.path):
                    raise CheckError(
                        f"cannot hash {root / entry.name}: the symlink points to a missing file",
                        hint="remove the dangling link or copy the real file into the variant",
                    )
                if os.path.isdir(entry.path):
                    continue
            if entry.is_file():
                yield relpath, Path(entry.path)


def compute_digest(variant_dir: str | os.PathLike[str], algorithm: str = "sha256") -> Digest:
    """Hash every file of ``variant_dir`` (see the module docstring for what is left out)."""
    root = Path(variant_dir)
    if not root.is_dir():
        raise CheckError(f"cannot hash {root}: not a directory", hint="pass a variant directory such as build/torch-cpu")
    _check_algorithm(None, None, algorithm)
    files = {rel: _hash_file(path, algorithm) for rel, path in _walk(root) if not is_excluded(rel)}
    return Digest(algorithm, files)


def validate_digest(variant_dir: str | os.PathLike[str], digest: Digest) -> list[str]:
    """Compare ``variant_dir`` with ``digest``; one line per violation, none when they match.

    Expected paths are checked in order ("Missing file: p", "File hash mismatch for p:
    expected: e, got: g"), then files the digest does not know ("Unknown file: p").
    """
    actual = compute_digest(variant_dir, digest.algorithm).files
    violations: list[str] = []
    for path, expected in digest.files.items():
        got = actual.get(path)
        if got is None:
            violations.append(f"Missing file: {path}")
        elif got != expected:
            violations.append(f"File hash mismatch for {path}: expected: {expected}, got: {got}")
    violations.extend(f"Unknown file: {path}" for path in actual if path not in digest.files)
    return violations
