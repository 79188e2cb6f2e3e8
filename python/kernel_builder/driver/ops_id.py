"""The ops identifier: ``_<python_name>_<backend>_<uid>``.

It names the extension module (``PyInit_<id>``), the ``torch.ops`` namespace and
``metadata.json``'s ``id``, so two builds of one kernel can be loaded in one process.
The unique part is an explicit ``--unique-id`` (what a Nix build passes), else the
kernel's identity (``kernel_builder.identity``: the git short revision, ``_dirty``
appended when tracked files differ from HEAD; outside git a hash of build.toml), the
same id a Nix build of the same tree gets.
"""

from __future__ import annotations

import os
import re

from kernel_builder.identity import kernel_identity

__all__ = ["ops_identifier", "unique_id"]

_UID = re.compile(r"^[A-Za-z0-9_]+$")


def ops_identifier(python_name: str, backend: str, uid: str) -> str:
    if not _UID.match(uid):
        raise ValueError(f"unique id {uid!r} may hold only letters, digits and underscores")
    return f"_{python_name}_{backend}_{uid}"


def unique_id(source: str | os.PathLike[str], *, override: str | None = None) -> str:
    """``override`` (``-`` becomes ``_``), else the unique id of the kernel in ``source``
    (``identity.kernel_identity``: the one rule, shared with the flake front end and Nix)."""
    if override:
        return override.replace("-", "_")
    return kernel_identity(source).unique_id
