"""Digest verification before import: the variant on disk must be the one that was built.

The reference loader imports whatever it finds; we compare every file with the digest in
``metadata.json`` first. A changed, missing or unknown file refuses the load and every
such file is listed. ``KERNEL_BUILDER_SKIP_DIGEST=1`` (or ``verify_digest=False``) skips
the check with a warning; a variant without a digest loads with a warning.

Hashing a large ``.so`` on every load would make warm loads slow, so a successful check
leaves a stamp (each file's size, mtime, ctime and inode, plus the digest it matched) under
``<cache>/.kernel-builder/verified/``; while every file still has the stamped stat and no
file came or went, the hashes are not recomputed. Any write to a file changes its mtime,
which sends it back to a full check.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import warnings
from pathlib import Path

from kernel_builder._files import write_atomic
from kernel_builder.tree.digest import Digest, is_excluded, validate_digest
from kernel_builder.loader.cache import cache_root
from kernel_builder.loader.errors import IntegrityError
from kernel_builder.tree.metadata import Metadata

__all__ = ["SKIP_ENV", "skip_requested", "verify_variant"]

SKIP_ENV = "KERNEL_BUILDER_SKIP_DIGEST"


def skip_requested(verify_digest: bool | None) -> bool:
    """``verify_digest=False`` or the environment variable asks to skip."""
    if verify_digest is False:
        return True
    return os.environ.get(SKIP_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _file_stats(variant_dir: Path) -> dict[str, list[int]] | None:
    """``{relpath: [size, mtime_ns, ctime_ns, inode]}`` of the digested files (links followed)."""
    stats: dict[str, list[int]] = {}
    for dirpath, dirnames, filenames in os.walk(variant_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel_dir = os.path.relpath(dirpath, variant_dir)
        for name in filenames:
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if is_excluded(rel):
                continue
            try:
                st = os.stat(os.path.join(dirpath, name))
            except OSError:
                return None
            stats[rel] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    return stats


def _stamp_path(variant_dir: Path) -> Path:
    key = hashlib.sha256(os.path.abspath(variant_dir).encode()).hexdigest()[:32]
    return cache_root() / ".kernel-builder" / "verified" / f"{key}.json"


def _fingerprint(digest: Digest) -> str:
    return hashlib.sha256(json.dumps(digest.to_json(), sort_keys=True).encode()).hexdigest()


def _stamp_matches(variant_dir: Path, digest: Digest) -> bool:
    try:
        stamp = json.loads(_stamp_path(variant_dir).read_text())
    except (OSError, ValueError):
        return False
    return bool(stamp.get("digest") == _fingerprint(digest) and stamp.get("files") == _file_stats(variant_dir))


def _write_stamp(variant_dir: Path, digest: Digest, stats: dict[str, list[int]] | None) -> None:
    if stats is None:
        return
    path = _stamp_path(variant_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"variant": os.path.abspath(variant_dir), "digest": _fingerprint(digest), "files": stats}))
    except OSError:
        pass  # a read-only cache only costs a re-hash next time


def _redo_hint(variant_dir: Path) -> str:
    """How to get good files again. A Hub download (``<repo>/snapshots/<commit>/build/<variant>``)
    is links to shared blobs: deleting the variant directory would only link the same
    tampered blobs again, so the whole repository folder has to go."""
    parents = variant_dir.absolute().parents
    if len(parents) > 3 and parents[1].name != "snapshots" and parents[2].name == "snapshots" \
            and parents[3].name.startswith(("kernels--", "models--")):
        return f"remove the downloaded repository (`rm -rf {shlex.quote(str(parents[3]))}`) and load it again"
    return f"rebuild {variant_dir.name} (or copy it again)"


def verify_variant(variant_dir: Path, metadata: Metadata, *, verify_digest: bool | None = None) -> None:
    """Raise ``IntegrityError`` listing every file that does not match the digest."""
    if skip_requested(verify_digest):
        warnings.warn(
            f"digest verification skipped for {variant_dir} ({SKIP_ENV} or verify_digest=False)",
            UserWarning,
            stacklevel=3,
        )
        return
    digest = metadata.digest
    if digest is None:
        warnings.warn(
            f"{variant_dir / 'metadata.json'} has no digest; the files cannot be verified "
            "(run `kernel-builder hash` on the build tree)",
            UserWarning,
            stacklevel=3,
        )
        return
    if _stamp_matches(variant_dir, digest):
        return
    before = _file_stats(variant_dir)
    violations = validate_digest(variant_dir, digest)
    if violations:
        listing = "\n".join(f"  {v}" for v in violations)
        raise IntegrityError(
            f"refusing to load {variant_dir}: its files do not match the digest in metadata.json:\n{listing}",
            hint=_redo_hint(variant_dir) + f", or set {SKIP_ENV}=1 to load it anyway",
        )
    if _file_stats(variant_dir) == before:  # nothing changed while hashing
        _write_stamp(variant_dir, digest, before)
