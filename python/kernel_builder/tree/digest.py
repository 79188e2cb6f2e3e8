"""File digests of a variant directory, as stored in ``metadata.json``.

A digest maps every file of a variant (path relative to the variant, ``/``-separated,
sorted) to the base64 of its SHA-256 (or SHA-512) hash. ``metadata.json`` and
``metadata.json.sigstore`` at the top, anything under ``__pycache__`` and ``*.pyc`` files
are left out: they are either the digest's own container or byproducts of importing.
Symlinks to files are hashed through; symlinks to directories are not followed; a FIFO,
a device or a link loop is refused, and so is a symlink out of the variant where the tree is
a kernel's build tree (``hash``, ``check``, ``upload``: ``_walk``).
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

from kernel_builder._files import UnsafeFile, is_temporary, walk_inside
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


def _walk(root: Path, *, follow: bool = False, contained: bool = False) -> Iterator[tuple[str, Path, bool]]:
    """Yield ``(relpath, path, linked)`` of the regular files (or links to them) under ``root``.

    The file-set rule (``_files.walk_inside``): a dangling link, a link loop and a FIFO,
    socket or device are a ``CheckError`` naming the path, found before any file is read;
    with ``contained`` so is a symlink out of the variant (``notes.txt -> /etc/passwd``), which
    ``hash``, ``check`` and ``upload`` refuse in a build tree (the loader's Hub cache, by
    contrast, links every file of a snapshot to a blob outside it). ``follow`` descends into
    symlinked directories, marking what is found there ``linked`` (the digest leaves it out;
    an upload would send it).
    """
    boundary = root if contained else Path(os.sep)
    try:
        for relpath, path, linked in walk_inside(
            root, boundary, what="the variant directory", skip_dir=lambda name: name == "__pycache__", follow_dir_links=follow
        ):
            if not is_temporary(path.name):  # a half-written file is never content
                yield relpath, path, linked
    except UnsafeFile as exc:
        raise CheckError(
            str(exc),
            hint="a variant holds its own files: a symlink may point only inside the variant directory "
            "(copy the file in instead), and FIFOs, sockets and devices do not belong there",
        ) from None


@attrs.frozen
class ScannedFile:
    """One file read once: its size, its digest hash (``None`` when the digest leaves it out)
    and the ids the Hub lists for it (git blob sha1, and sha256 for LFS/xet files), in hex.
    ``sha256``/``blob_id`` are ``None`` for a file the scan did not read: one no digest
    covers (``scan_variant``'s ``read_uncovered``), which the checks refuse unread."""

    relpath: str
    path: Path
    size: int
    digest: str | None
    sha256: str | None
    blob_id: str | None


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


def scan_variant(variant_dir: str | os.PathLike[str], algorithm: str = "sha256", *, read_uncovered: bool = False) -> VariantScan:
    """Read every file of ``variant_dir`` an upload sends once (see the module docstring).

    Every entry is judged (``_walk``) before any file is read. A file no digest covers (under
    a symlinked directory) is read only with ``read_uncovered``: the checks refuse it
    unread, so a huge one costs nothing (``upload --force`` reads it when it sends it).
    """
    root = Path(variant_dir)
    if not root.is_dir():
        raise CheckError(f"cannot hash {root}: not a directory", hint="pass a variant directory such as build/torch-cpu")
    _check_algorithm(None, None, algorithm)
    entries = [(rel, path, linked) for rel, path, linked in _walk(root, follow=True, contained=True) if not rel.endswith(".pyc")]
    files = []
    for rel, path, linked in entries:
        if linked and not is_excluded(rel) and not read_uncovered:
            files.append(ScannedFile(rel, path, path.stat().st_size, None, None, None))
        else:
            files.append(scan_file(path, rel, algorithm, covered=not linked and not is_excluded(rel)))
    return VariantScan(algorithm, tuple(files))


def uncovered_files(variant_dir: str | os.PathLike[str]) -> list[str]:
    """Files an upload would send that no digest covers: those under a symlinked directory
    (``CheckError`` for a link out of the variant: the build-tree rule of ``_walk``)."""
    return [rel for rel, _, linked in _walk(Path(variant_dir), follow=True, contained=True) if linked and not is_excluded(rel)]


def compute_digest(variant_dir: str | os.PathLike[str], algorithm: str = "sha256", *, contained: bool = False) -> Digest:
    """Hash every file of ``variant_dir`` (see the module docstring for what is left out);
    ``contained``: refuse a symlink out of it (``hash`` on a build tree)."""
    root = Path(variant_dir)
    if not root.is_dir():
        raise CheckError(f"cannot hash {root}: not a directory", hint="pass a variant directory such as build/torch-cpu")
    _check_algorithm(None, None, algorithm)
    files = {rel: _hash_file(path, algorithm) for rel, path, _ in _walk(root, contained=contained) if not is_excluded(rel)}
    return Digest(algorithm, files)


def validate_digest(variant_dir: str | os.PathLike[str], digest: Digest, *, actual: Digest | None = None) -> list[str]:
    """Compare ``variant_dir`` with ``digest``; one line per violation, none when they match.

    Expected paths are checked in order ("Missing file: p", "File hash mismatch for p:
    expected: e, got: g"), then files the digest does not know ("Unknown file: p").
    ``actual`` is the directory's digest when the caller already has it (``upload``'s scan).
    A directory whose files may not be read (a FIFO, a dangling link, a link loop: ``_walk``)
    is one violation naming the path, so a caller (the loader) reports it as a mismatch.
    """
    if actual is None or actual.algorithm != digest.algorithm:
        try:
            actual = compute_digest(variant_dir, digest.algorithm)
        except CheckError as exc:  # a FIFO, a dangling link, a link loop: a violation, not a crash of the caller
            return [exc.message]
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
