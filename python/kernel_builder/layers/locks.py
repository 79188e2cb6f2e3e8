"""Locked commits for ``Locked*Repository``: from a lock file, or from the lock file in
the calling project's distribution metadata. Parsing is the loader's (one format)."""

from __future__ import annotations

import sys
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

from kernel_builder.loader.lockfile import find_lock, parse_lockfile, read_lockfile

__all__ = ["locked_revision"]

_LOCK_NAME = "kernels.lock"
_SKIP = {"kernel_builder", "importlib", "runpy", "attr", "attrs"}


def _caller_package() -> str | None:
    frame = sys._getframe(1)
    while frame is not None:
        top = frame.f_globals.get("__name__", "").split(".")[0]
        if top and top not in _SKIP:
            return top
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _caller_locks() -> list:
    package = _caller_package()
    for dist_name in packages_distributions().get(package or "", []):
        text = distribution(dist_name).read_text(_LOCK_NAME)
        if text:
            return parse_lockfile(text, f"{dist_name} metadata")
    return []


def locked_revision(repo_id: str, lockfile: Path | None) -> str:
    """The locked commit of ``repo_id`` (the loader's ``InvalidRequest`` when not locked)."""
    locks = read_lockfile(Path(lockfile)) if lockfile is not None else _caller_locks()
    return find_lock(locks, repo_id).commit
