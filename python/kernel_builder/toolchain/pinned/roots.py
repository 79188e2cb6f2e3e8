"""GC roots for the fetched toolchain artifacts.

The pinned ``.deb`` files and wheels are inputs of the toolchain derivations, not part of
any output's closure, so ``nix-store --gc`` deletes them, and an offline ``nix build`` of a
variant whose toolchain is not built yet cannot fetch them again. ``toolchain fetch``
therefore roots every artifact it made valid under ``<state>/gcroots/toolchain/<lock>.<hex>/``
(indirect roots: removing the directory releases them), one directory per lock version
(the lock file's sha256); ``toolchain gc`` removes the directories of lock versions that
are no longer the current lock.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
from collections.abc import Sequence
from pathlib import Path

from kernel_builder.flake.nix import run_nix
from kernel_builder.toolchain.state import state_dir

__all__ = ["lock_digest", "register_roots", "roots_base", "stale_roots"]


def lock_digest(lock_file: Path) -> str:
    return hashlib.sha256(lock_file.read_bytes()).hexdigest()[:16]


def roots_base(state: Path | None = None) -> Path:
    return (state or state_dir()) / "gcroots" / "toolchain"


def _rooted(directory: Path) -> set[str]:
    return {str(link.readlink()) for link in directory.iterdir() if link.is_symlink()}


def register_roots(lock_file: Path, paths: Sequence[str], *, state: Path | None = None) -> Path:
    """Root ``paths`` (valid store paths) for this lock version, together with those already
    rooted for it; returns the roots directory. Older directories of the same version go."""
    base = roots_base(state)
    digest = lock_digest(lock_file)
    previous = sorted(base.glob(f"{digest}.*")) if base.is_dir() else []
    have: set[str] = set()
    for directory in previous:
        have |= _rooted(directory)
    want = sorted(have | set(paths))
    if previous and set(want) == _rooted(previous[-1]):
        return previous[-1]
    target = base / f"{digest}.{secrets.token_hex(4)}"
    target.mkdir(parents=True)
    if want:
        run_nix(["--realise", "--add-root", str(target / "root"), "--indirect", *want], program="nix-store")
    for directory in previous:
        shutil.rmtree(directory, ignore_errors=True)
    return target


def stale_roots(current_lock: Path, *, state: Path | None = None) -> list[Path]:
    """Roots directories of lock versions other than ``current_lock``'s."""
    base = roots_base(state)
    if not base.is_dir():
        return []
    digest = lock_digest(current_lock)
    return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(f"{digest}."))
