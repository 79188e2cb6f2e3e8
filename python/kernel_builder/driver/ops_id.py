"""The ops identifier: ``_<python_name>_<backend>_<uid>``.

It names the extension module (``PyInit_<id>``), the ``torch.ops`` namespace and
``metadata.json``'s ``id``, so two builds of one kernel can be loaded in one process.
The unique part comes, in order, from: an explicit ``--unique-id``; the git short
revision of the kernel source (``_dirty`` appended when tracked files under the kernel
repository differ from HEAD); a hash of the kernel's source files when it is not in git
(so a copied tree keeps one id); random as a last resort.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from kernel_builder._git import git_status

__all__ = ["ops_identifier", "unique_id", "source_tree_hash", "random_id"]

_UID = re.compile(r"^[A-Za-z0-9_]+$")


def ops_identifier(python_name: str, backend: str, uid: str) -> str:
    if not _UID.match(uid):
        raise ValueError(f"unique id {uid!r} may hold only letters, digits and underscores")
    return f"_{python_name}_{backend}_{uid}"


def source_tree_hash(source: str | os.PathLike[str], files: Iterable[str]) -> str:
    """7 hex digits of a hash over the named files (paths and bytes), independent of location."""
    root = Path(source)
    hasher = hashlib.sha256()
    for rel in sorted(set(files)):
        path = root / rel
        hasher.update(rel.encode() + b"\0")
        hasher.update(path.read_bytes() if path.is_file() else b"<missing>")
        hasher.update(b"\0")
    return hasher.hexdigest()[:7]


def random_id() -> str:
    """13 lowercase base32 characters of randomness (the reference's fallback shape)."""
    return base64.b32encode(os.urandom(8)).decode().rstrip("=").lower()


def unique_id(
    source: str | os.PathLike[str], *, override: str | None = None, files: Iterable[str] | None = None
) -> str:
    """The uid for a kernel source directory (see the module docstring for the order)."""
    if override:
        return override.replace("-", "_")
    state = git_status(source)
    if state is not None:
        return state.commit[:7] + ("_dirty" if state.dirty else "")
    if files is not None:
        try:
            return source_tree_hash(source, files)
        except OSError:
            pass
    return random_id()
