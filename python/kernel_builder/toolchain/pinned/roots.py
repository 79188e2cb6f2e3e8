"""GC roots for the fetched toolchain artifacts.

The pinned ``.deb`` files and wheels are inputs of the toolchain derivations, not part of
any output's closure, so ``nix-store --gc`` deletes them, and an offline ``nix build`` of a
variant whose toolchain is not built yet cannot fetch them again. ``toolchain fetch``
therefore roots every artifact it made valid under ``<state>/gcroots/toolchain/<key>.<hex>/``
(indirect roots: removing a link releases its artifact).

The rule is keyed on artifacts, not on the lock file's bytes: ``<key>`` hashes the store
paths the lock references (so a comment or formatting edit keeps it), and ``toolchain gc``
releases exactly the roots whose store path the current lock does not reference, in every
roots directory, removing a directory once it roots nothing. A root of an artifact the
current lock still uses is never released, whichever lock version rooted it, and a lock
that is missing or does not parse is a located error before anything is removed.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
from collections.abc import Sequence
from pathlib import Path

import attrs

from kernel_builder.nix import run_nix
from kernel_builder.toolchain.pinned.lockfile import ToolchainLock, load_lock
from kernel_builder.state import state_dir

__all__ = ["StaleRoots", "lock_digest", "referenced_paths", "register_roots", "release", "roots_base", "stale_roots"]


def referenced_paths(lock: ToolchainLock) -> frozenset[str]:
    """Every store path the lock references: its artifacts and its seeds (its own, its hosts')."""
    paths = {artifact.store_path for artifact in lock.artifacts.values()}
    if lock.seed is not None:
        paths.add(lock.seed.store_path)
    paths.update(seed.store_path for seed in lock.host_seeds.values())
    return frozenset(paths)


def lock_digest(lock_file: Path) -> str:
    """The key of a lock's roots directories: a hash of the store paths it references
    (``ConfigError`` naming the file when it is missing or does not parse)."""
    return hashlib.sha256("\n".join(sorted(referenced_paths(load_lock(lock_file)))).encode()).hexdigest()[:16]


def roots_base(state: Path | None = None) -> Path:
    return (state or state_dir()) / "gcroots" / "toolchain"


def _links(directory: Path) -> dict[Path, str]:
    """Each root link of ``directory`` -> the store path it roots."""
    return {link: os.readlink(link) for link in sorted(directory.iterdir()) if link.is_symlink()}


def register_roots(lock_file: Path, paths: Sequence[str], *, state: Path | None = None) -> Path:
    """Root ``paths`` (valid store paths) for this lock's artifact set, together with those
    already rooted for it; returns the roots directory. Older directories of the same key go."""
    base = roots_base(state)
    digest = lock_digest(lock_file)
    previous = sorted(base.glob(f"{digest}.*")) if base.is_dir() else []
    have: set[str] = set()
    for directory in previous:
        have |= set(_links(directory).values())
    want = sorted(have | set(paths))
    if previous and set(want) == set(_links(previous[-1]).values()):
        return previous[-1]
    target = base / f"{digest}.{secrets.token_hex(4)}"
    target.mkdir(parents=True)
    if want:
        run_nix(["--realise", "--add-root", str(target / "root"), "--indirect", *want], program="nix-store")
    for directory in previous:
        shutil.rmtree(directory, ignore_errors=True)
    return target


@attrs.frozen
class StaleRoots:
    """What ``toolchain gc`` releases: root links whose store path the current lock does not
    reference, and the roots directories that then root nothing (removed whole)."""

    links: tuple[Path, ...]
    directories: tuple[Path, ...]
    kept: int  # roots of artifacts the current lock references


def stale_roots(current_lock: Path, *, state: Path | None = None) -> StaleRoots:
    """The roots the current lock no longer needs (see the module docstring); reads the lock
    first, so a missing or broken lock is a ``ConfigError`` before anything is judged."""
    needed = referenced_paths(load_lock(current_lock))
    base = roots_base(state)
    links: list[Path] = []
    directories: list[Path] = []
    kept = 0
    for directory in sorted(base.iterdir()) if base.is_dir() else []:
        if not directory.is_dir() or directory.is_symlink():
            continue
        rooted = _links(directory)
        stale = [link for link, path in rooted.items() if path not in needed]
        kept += len(rooted) - len(stale)
        if len(stale) == len(rooted):
            directories.append(directory)
        else:
            links.extend(stale)
    return StaleRoots(tuple(links), tuple(directories), kept)


def release(stale: StaleRoots) -> None:
    """Remove the stale root links and directories (``nix-store --gc`` then frees their artifacts)."""
    for link in stale.links:
        link.unlink(missing_ok=True)
    for directory in stale.directories:
        shutil.rmtree(directory)
