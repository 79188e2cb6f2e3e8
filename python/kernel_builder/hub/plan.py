"""What an upload changes on each branch: a pure function of local files and remote files.

The Hub identifies a regular file by its git blob sha1 and an LFS/xet file by the sha256
of its content (the tree listing's ``lfs.oid``, written here as ``sha256:<hex>``), so
comparing local ids with one remote tree listing tells us, without sending any content,
which files are new or changed, which are unchanged, and which remote files are stale. Only the
changes go into the commit; an unchanged tree produces an empty plan and no commit.

Deletion rules (the reference builder's, kept for parity):

* version branch, new: every remote file under ``build/`` and ``benchmarks/`` that is not
  re-uploaded (the branch starts as a copy of ``main``);
* version branch, existing: remote files under ``build/<variant>/`` of an *uploaded*
  variant that are gone locally, and ``benchmarks/benchmark*.py`` not re-uploaded; other
  variants stay;
* ``main``: nothing is ever deleted; only ``README.md`` (the card) is written.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path

import attrs

from kernel_builder.tree.digest import VariantScan, scan_file

__all__ = [
    "LocalFile",
    "BranchPlan",
    "git_blob_oid",
    "local_file",
    "variant_files",
    "plan_version_branch",
    "plan_main_branch",
    "MAX_OPS_PER_COMMIT",
]

MAX_OPS_PER_COMMIT = 1000


@attrs.frozen
class LocalFile:
    """A file to upload: where it goes in the repo, where it is on disk, size, git blob id, sha256."""

    path_in_repo: str
    source: Path | None
    size: int
    oid: str
    sha256: str
    content: bytes | None = attrs.field(default=None, repr=False)


@attrs.frozen
class BranchPlan:
    """The operations for one branch. ``create`` means the branch does not exist yet."""

    branch: str
    create: bool
    adds: tuple[LocalFile, ...] = ()
    deletes: tuple[str, ...] = ()
    unchanged: int = 0
    parent_commit: str | None = None

    @property
    def empty(self) -> bool:
        return not self.adds and not self.deletes

    def batches(self, size: int = MAX_OPS_PER_COMMIT) -> list[tuple[tuple[LocalFile, ...], tuple[str, ...]]]:
        """Split into commits of at most ``size`` operations (one commit unless above ``size``)."""
        ops: list[LocalFile | str] = [*self.deletes, *self.adds]
        out = []
        for start in range(0, len(ops), size):
            chunk = ops[start : start + size]
            out.append(
                (tuple(o for o in chunk if isinstance(o, LocalFile)), tuple(o for o in chunk if isinstance(o, str)))
            )
        return out


def git_blob_oid(data: bytes) -> str:
    """The git blob sha1 of ``data``, which is the ``oid`` the Hub lists for regular files."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def local_file(path_in_repo: str, source: Path | None = None, content: bytes | None = None) -> LocalFile:
    """Describe a file on disk (``source``) or in memory (``content``)."""
    if content is not None:
        sha256 = hashlib.sha256(content).hexdigest()
        return LocalFile(path_in_repo, None, len(content), git_blob_oid(content), sha256, content)
    assert source is not None
    scanned = scan_file(source, covered=False)
    return LocalFile(path_in_repo, source, scanned.size, scanned.blob_id, scanned.sha256)


def variant_files(scan: VariantScan, prefix: str) -> list[LocalFile]:
    """Every scanned file of a variant as ``<prefix>/<relpath>``, sorted (the scan holds no bytecode).

    A file the scan left unread (no digest covers it; the checks refuse it unless the upload
    is forced) is read here, when it is sent anyway.
    """
    out = [
        LocalFile(f"{prefix}/{f.relpath}", f.path, f.size, f.blob_id, f.sha256)
        if f.blob_id is not None and f.sha256 is not None
        else local_file(f"{prefix}/{f.relpath}", f.path)
        for f in scan.files
    ]
    return sorted(out, key=lambda f: f.path_in_repo)


def _diff(local: Iterable[LocalFile], remote: Mapping[str, str]) -> tuple[tuple[LocalFile, ...], int]:
    adds, unchanged = [], 0
    for f in local:
        if remote.get(f.path_in_repo) in (f.oid, f"sha256:{f.sha256}"):
            unchanged += 1
        else:
            adds.append(f)
    return tuple(adds), unchanged


def plan_version_branch(
    branch: str,
    variants: Mapping[str, list[LocalFile]],
    benchmarks: list[LocalFile],
    remote: Mapping[str, str] | None,
    *,
    branch_exists: bool,
    parent_commit: str | None = None,
) -> BranchPlan:
    """Plan the version branch.

    ``variants`` maps a variant name to its files (already prefixed ``build/<name>/``),
    ``remote`` maps the branch's (or, for a new branch, ``main``'s) file paths to blob ids
    (``sha256:<hex>`` for LFS files); ``None`` means the repo does not exist yet.
    """
    remote = dict(remote or {})
    local = [f for files in variants.values() for f in files] + list(benchmarks)
    local_paths = {f.path_in_repo for f in local}
    adds, unchanged = _diff(local, remote)
    if branch_exists:
        scopes = [f"build/{name}/" for name in variants]
        stale = [
            p
            for p in remote
            if p not in local_paths
            and (any(p.startswith(s) for s in scopes) or fnmatch.fnmatch(p, "benchmarks/benchmark*.py"))
        ]
    else:
        stale = [p for p in remote if p not in local_paths and p.startswith(("build/", "benchmarks/"))]
    return BranchPlan(branch, not branch_exists, adds, tuple(sorted(stale)), unchanged, parent_commit)


def plan_main_branch(card: LocalFile | None, remote: Mapping[str, str] | None, parent_commit: str | None) -> BranchPlan:
    """Plan ``main``: the card as ``README.md`` when it differs from the remote one."""
    if card is None:
        return BranchPlan("main", False, parent_commit=parent_commit)
    adds, unchanged = _diff([card], dict(remote or {}))
    return BranchPlan("main", False, adds, (), unchanged, parent_commit)
