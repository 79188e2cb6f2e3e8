"""The on-disk kernel cache: where snapshots live, refs, completion marks and locks.

The layout is huggingface_hub's (``<root>/kernels--<org>--<name>/{refs,snapshots,blobs}``),
so PyPI ``kernels`` and kernel-builder share one cache. Everything here works without the
network and without importing huggingface_hub: offline loads read the cache directly.
Our own bookkeeping (completion marks, download locks) lives under ``<root>/.kernel-builder``
so it never appears inside a variant directory (where the digest would call it unknown).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

from kernel_builder._files import write_atomic

__all__ = [
    "cache_root",
    "repo_folder",
    "read_ref",
    "write_ref",
    "cached_versions",
    "local_commit",
    "snapshot_dir",
    "is_complete",
    "mark_complete",
    "download_lock",
]

_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# Branch names may have `/` parts (`feature/x`): stored nested, as huggingface_hub does.
_SAFE_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*")


def cache_root() -> Path:
    """``KERNELS_CACHE`` if set and non-empty, else huggingface_hub's cache (read per call)."""
    for var in ("KERNELS_CACHE", "HF_HUB_CACHE"):
        value = os.environ.get(var)
        if value:
            return Path(value).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(home).expanduser() / "hub"


def repo_folder(root: Path, repo_id: str, *, legacy: bool = False) -> Path:
    """``<root>/kernels--org--name`` (``models--`` for caches written by older clients)."""
    prefix = "models" if legacy else "kernels"
    return root / f"{prefix}--{repo_id.replace('/', '--')}"


def _ref_ok(ref: str) -> bool:
    return bool(_SAFE_REF.fullmatch(ref)) and ".." not in ref


def read_ref(root: Path, repo_id: str, ref: str) -> str | None:
    """The commit a cached branch/tag name points at, or ``None``."""
    if not _ref_ok(ref):
        return None
    for legacy in (False, True):
        path = repo_folder(root, repo_id, legacy=legacy) / "refs" / ref
        try:
            commit = path.read_text().strip()
        except OSError:
            continue
        if _COMMIT.fullmatch(commit):
            return commit
    return None


def write_ref(root: Path, repo_id: str, ref: str, commit: str) -> None:
    """Record ``ref -> commit`` atomically (so offline ``version=N`` works later)."""
    if not _ref_ok(ref) or not _COMMIT.fullmatch(commit):
        return
    path = repo_folder(root, repo_id) / "refs" / ref
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, commit)


def cached_versions(root: Path, repo_id: str) -> dict[int, str]:
    """``{N: commit}`` from cached ``refs/vN`` files (both cache prefixes)."""
    out: dict[int, str] = {}
    for legacy in (True, False):  # kernels-- wins over models--
        refs = repo_folder(root, repo_id, legacy=legacy) / "refs"
        if not refs.is_dir():
            continue
        for path in refs.iterdir():
            m = re.fullmatch(r"v(\d+)", path.name)
            if m and path.is_file() and (commit := read_ref(root, repo_id, path.name)):
                out[int(m.group(1))] = commit
    return out


def snapshot_dir(root: Path, repo_id: str, commit: str) -> Path:
    for legacy in (False, True):
        path = repo_folder(root, repo_id, legacy=legacy) / "snapshots" / commit
        if path.is_dir():
            return path
    return repo_folder(root, repo_id) / "snapshots" / commit


def local_commit(root: Path, repo_id: str, revision: str) -> str | None:
    """Map a revision to a cached commit without the network: a ref name or a commit id."""
    if _COMMIT.fullmatch(revision):
        return revision if snapshot_dir(root, repo_id, revision).is_dir() else None
    return read_ref(root, repo_id, revision.removeprefix("refs/heads/"))


def _marks(root: Path, repo_id: str, commit: str) -> Path:
    return root / ".kernel-builder" / "complete" / repo_folder(root, repo_id).name / commit


def is_complete(root: Path, repo_id: str, commit: str, variant: str) -> bool:
    """Whether a download of ``build/<variant>`` at ``commit`` finished (and was verified)."""
    return (_marks(root, repo_id, commit) / variant).is_file()


def mark_complete(root: Path, repo_id: str, commit: str, variant: str) -> None:
    marks = _marks(root, repo_id, commit)
    marks.mkdir(parents=True, exist_ok=True)
    write_atomic(marks / variant, "ok\n")


@contextlib.contextmanager
def download_lock(root: Path, repo_id: str, commit: str, variant: str) -> Iterator[None]:
    """An exclusive, cross-process lock for one (repo, commit, variant) download."""
    locks = root / ".kernel-builder" / "locks" / repo_folder(root, repo_id).name
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / f"{commit}.{variant}.lock"
    with open(path, "a+b") as handle:
        _lock(handle)
        try:
            yield
        finally:
            _unlock(handle)


def _lock(handle: object) -> None:
    if os.name == "nt":  # pragma: no cover - Windows
        import msvcrt  # lazy: platform module (Windows)

        msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)  # type: ignore[attr-defined]
    else:
        import fcntl  # lazy: platform module (POSIX)

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)  # type: ignore[attr-defined]


def _unlock(handle: object) -> None:
    if os.name == "nt":  # pragma: no cover - Windows
        import msvcrt  # lazy: platform module (Windows)

        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]
    else:
        import fcntl  # lazy: platform module (POSIX)

        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)  # type: ignore[attr-defined]
