"""File digests of a variant directory, as stored in ``metadata.json``.

A digest maps every file of a variant (path relative to the variant, ``/``-separated,
sorted) to the base64 of its SHA-256 (or SHA-512) hash. ``metadata.json`` and
``metadata.json.sigstore`` at the top, anything under ``__pycache__`` and ``*.pyc`` files
are left out: they are either the digest's own container or byproducts of importing.
Symlinks to files are hashed through; symlinks to directories are not followed.
The loader verifies the digest before importing; ``kernel-builder hash`` writes it.

``scan_variant`` serves ``upload``: it reads every file an upload sends once and keeps,
beside the digest hash, the ids the Hub compares (git blob sha1 and hex sha256), so the
checks and the upload plan share one read. Every hash here is fed by ``_read_into``.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from kernel_builder._files import is_temporary
from kernel_builder.errors import CheckError

__all__ = [
    "ALGORITHMS",
    "Digest",
    "ScannedFile",
    "VariantScan",
    "compute_digest",
    "validate_digest",
    "is_excluded",
    "scan_file",
    "scan_variant",
    "uncovered_files",
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


def _read_into(path: Path, hashers: Sequence[Any]) -> int:
    """Feed every byte of ``path`` to each of ``hashers`` in one pass; returns the size read.

    The one place a file is read for hashing, so a test can count the reads.
    """
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            size += len(chunk)
            for hasher in hashers:
                hasher.update(chunk)
    return size


def _hash_file(path: Path, algorithm: str) -> str:
    hasher = hashlib.new(algorithm)
    _read_into(path, [hasher])
    return base64.b64encode(hasher.digest()).decode("ascii")


def _walk(
    root: Path, rel: str = "", *, follow: bool = False, linked: bool = False, above: frozenset[str] = frozenset()
) -> Iterator[tuple[str, Path, bool]]:
    """Yield ``(relpath, path, linked)`` of the regular files (or links to them) under ``root``.

    ``follow`` descends into symlinked directories, marking what is found there ``linked``
    (the digest leaves it out; an upload sends it); a link back to a directory above is refused.
    """
    above = above | {os.path.realpath(root)}
    with os.scandir(root) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            relpath = f"{rel}{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    yield from _walk(Path(entry.path), relpath + "/", follow=follow, linked=linked, above=above)
                continue
            if entry.is_symlink():
                if not os.path.exists(entry.path):
                    raise CheckError(
                        f"cannot hash {root / entry.name}: the symlink points to a missing file",
                        hint="remove the dangling link or copy the real file into the variant",
                    )
                if os.path.isdir(entry.path):
                    if follow and entry.name != "__pycache__":
                        if os.path.realpath(entry.path) in above:
                            raise CheckError(
                                f"{root / entry.name} links to a directory above it (a symlink loop)",
                                hint="remove the link; a variant holds its files, not links to directories",
                            )
                        yield from _walk(Path(entry.path), relpath + "/", follow=True, linked=True, above=above)
                    continue
            if entry.is_file() and not is_temporary(entry.name):  # a half-written file is never content
                yield relpath, Path(entry.path), linked


@attrs.frozen
class ScannedFile:
    """One file read once: its size, its digest hash (``None`` when the digest leaves it out)
    and the ids the Hub lists for it (git blob sha1, and sha256 for LFS/xet files), in hex."""

    relpath: str
    path: Path
    size: int
    digest: str | None
    sha256: str
    blob_id: str


def scan_file(path: Path, relpath: str = "", algorithm: str = "sha256", *, covered: bool = True) -> ScannedFile:
    """Hash ``path`` for the digest (when ``covered``) and for the Hub, in one read."""
    _check_algorithm(None, None, algorithm)
    size = path.stat().st_size
    blob, sha256 = hashlib.sha1(b"blob %d\0" % size), hashlib.sha256()
    hashers = [blob, sha256]
    own = hashlib.new(algorithm) if covered and algorithm != "sha256" else None
    if own is not None:
        hashers.append(own)
    read = _read_into(path, hashers)
    if read != size:
        raise CheckError(f"{path} changed while it was hashed ({size} bytes, then {read})", hint="rerun when the build is done")
    digest = None
    if covered:
        digest = base64.b64encode((own or sha256).digest()).decode("ascii")
    return ScannedFile(relpath, path, size, digest, sha256.hexdigest(), blob.hexdigest())


@attrs.frozen
class VariantScan:
    """Every file an upload sends from one variant (bytecode never), sorted, each read once."""

    algorithm: str
    files: tuple[ScannedFile, ...]

    def digest(self) -> Digest:
        """The digest of the variant, as ``compute_digest`` would make it."""
        return Digest(self.algorithm, {f.relpath: f.digest for f in self.files if f.digest is not None})

    def uncovered(self) -> list[str]:
        """What ``uncovered_files`` lists, from the scan."""
        return [f.relpath for f in self.files if f.digest is None and not is_excluded(f.relpath)]


def scan_variant(variant_dir: str | os.PathLike[str], algorithm: str = "sha256") -> VariantScan:
    """Read every file of ``variant_dir`` an upload sends once (see the module docstring)."""
    root = Path(variant_dir)
    if not root.is_dir():
        raise CheckError(f"cannot hash {root}: not a directory", hint="pass a variant directory such as build/torch-cpu")
    files = [
        scan_file(path, rel, algorithm, covered=not linked and not is_excluded(rel))
        for rel, path, linked in _walk(root, follow=True)
        if not rel.endswith(".pyc")
    ]
    return VariantScan(algorithm, tuple(files))


def uncovered_files(variant_dir: str | os.PathLike[str]) -> list[str]:
    """Files an upload would send that no digest covers: those under a symlinked directory."""
    return [rel for rel, _, linked in _walk(Path(variant_dir), follow=True) if linked and not is_excluded(rel)]


def compute_digest(variant_dir: str | os.PathLike[str], algorithm: str = "sha256") -> Digest:
    """Hash every file of ``variant_dir`` (see the module docstring for what is left out)."""
    root = Path(variant_dir)
    if not root.is_dir():
        raise CheckError(f"cannot hash {root}: not a directory", hint="pass a variant directory such as build/torch-cpu")
    _check_algorithm(None, None, algorithm)
    files = {rel: _hash_file(path, algorithm) for rel, path, _ in _walk(root) if not is_excluded(rel)}
    return Digest(algorithm, files)


def validate_digest(variant_dir: str | os.PathLike[str], digest: Digest, *, actual: Digest | None = None) -> list[str]:
    """Compare ``variant_dir`` with ``digest``; one line per violation, none when they match.

    Expected paths are checked in order ("Missing file: p", "File hash mismatch for p:
    expected: e, got: g"), then files the digest does not know ("Unknown file: p").
    ``actual`` is the directory's digest when the caller already has it (``upload``'s scan).
    """
    if actual is None or actual.algorithm != digest.algorithm:
        actual = compute_digest(variant_dir, digest.algorithm)
    actual_files = actual.files
    violations: list[str] = []
    for path, expected in digest.files.items():
        got = actual_files.get(path)
        if got is None:
            violations.append(f"Missing file: {path}")
        elif got != expected:
            violations.append(f"File hash mismatch for {path}: expected: {expected}, got: {got}")
    violations.extend(f"Unknown file: {path}" for path in actual_files if path not in digest.files)
    return violations
