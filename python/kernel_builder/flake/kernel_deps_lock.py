"""``kernels.lock`` beside build.toml: each ``kernel-depends`` entry locked to a commit and
the Nix hash (SRI, NAR of the fetched tree) of its ``build/`` directory.

The JSON is upstream's ``NixKernelLocks``: a list of ``{"dependency": {"repo-id": ...,
"version": N | "revision": ...}, "lock": {"commit": ..., "hash": ...}}``, so a lock written
by either tool is read by both. Pure functions: reading, writing and checking a lock
against build.toml's dependencies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from kernel_builder.config.model import Build, KernelDependency
from kernel_builder.errors import ConfigError

__all__ = ["LOCK_FILE", "LockedDependency", "all_kernel_depends", "dumps", "loads", "locked_for", "read_lock"]

LOCK_FILE = "kernels.lock"
FIX = "run `kernel-builder lock-kernel-deps` in the kernel directory"
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SRI = re.compile(r"sha256-[A-Za-z0-9+/]{43}=")


@attrs.frozen
class LockedDependency:
    """One ``kernel-depends`` entry and what it was locked to."""

    dependency: KernelDependency
    commit: str
    hash: str


def all_kernel_depends(build: Build) -> tuple[KernelDependency, ...]:
    """Every ``kernel-depends`` entry of build.toml ([general] and each backend's), once each."""
    general = build.general
    seen: dict[KernelDependency, None] = dict.fromkeys(general.kernel_depends)
    for backend in general.backends:
        seen.update(dict.fromkeys(general.backend_kernel_depends(backend)))
    return tuple(seen)


def _dep_json(dep: KernelDependency) -> dict[str, Any]:
    out: dict[str, Any] = {"repo-id": dep.repo_id}
    if dep.version is not None:
        out["version"] = dep.version
    else:
        out["revision"] = dep.revision
    return out


def dumps(locks: Iterable[LockedDependency]) -> str:
    """The lock file's text (entries sorted by repo id, then version/revision)."""
    entries = sorted(locks, key=lambda l: (l.dependency.repo_id, str(l.dependency.version), str(l.dependency.revision)))
    data = [{"dependency": _dep_json(l.dependency), "lock": {"commit": l.commit, "hash": l.hash}} for l in entries]
    return json.dumps(data, indent=2) + "\n"


def _error(path: Path, where: str, what: str) -> ConfigError:
    return ConfigError(f"{path}: {where}: {what}", hint=f"the file is written by kernel-builder: {FIX} to rewrite it")


def _entry(path: Path, index: int, raw: Any) -> LockedDependency:
    where = f"[{index}]"
    if not isinstance(raw, dict) or set(raw) != {"dependency", "lock"}:
        raise _error(path, where, 'expected an object with exactly the keys "dependency" and "lock"')
    dep, lock = raw["dependency"], raw["lock"]
    if not isinstance(dep, dict) or not isinstance(dep.get("repo-id"), str) or set(dep) - {"repo-id", "version", "revision"}:
        raise _error(path, f"{where}.dependency", 'expected {"repo-id": "org/name", "version": N} or {..., "revision": "..."}')
    version, revision = dep.get("version"), dep.get("revision")
    if (version is not None and (not isinstance(version, int) or isinstance(version, bool))) or (
        revision is not None and not isinstance(revision, str)
    ):
        raise _error(path, f"{where}.dependency", "version must be an integer and revision a string")
    try:
        dependency = KernelDependency(dep["repo-id"], version=version, revision=revision)
    except ValueError as exc:
        raise _error(path, f"{where}.dependency", str(exc)) from exc
    if not isinstance(lock, dict) or set(lock) != {"commit", "hash"}:
        raise _error(path, f"{where}.lock", 'expected an object with exactly the keys "commit" and "hash"')
    if not isinstance(lock["commit"], str) or not _COMMIT.fullmatch(lock["commit"]):
        raise _error(path, f"{where}.lock.commit", f"expected a 40-digit lowercase hex commit id, got {lock['commit']!r}")
    if not isinstance(lock["hash"], str) or not _SRI.fullmatch(lock["hash"]):
        raise _error(path, f"{where}.lock.hash", f"expected an SRI sha256 hash (sha256-<base64>=), got {lock['hash']!r}")
    return LockedDependency(dependency, lock["commit"], lock["hash"])


def loads(text: str, path: Path) -> tuple[LockedDependency, ...]:
    """The entries of a lock file; a ``ConfigError`` naming ``path`` and the entry when malformed."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _error(path, f"line {exc.lineno}:{exc.colno}", f"not valid JSON ({exc.msg})") from exc
    if not isinstance(data, list):
        raise _error(path, "top level", "expected a JSON list of locked dependencies")
    entries = tuple(_entry(path, i, raw) for i, raw in enumerate(data))
    seen: set[KernelDependency] = set()
    for i, entry in enumerate(entries):
        if entry.dependency in seen:
            raise _error(path, f"[{i}].dependency", f"{entry.dependency.repo_id} is locked twice")
        seen.add(entry.dependency)
    return entries


def locked_for(
    depends: Sequence[KernelDependency], locks: Sequence[LockedDependency] | None, path: Path, build_toml: Path
) -> tuple[LockedDependency, ...]:
    """The lock entry of each of build.toml's ``depends``; ``ConfigError`` with the fix when the
    lock is missing, lacks one of them, or locks one that build.toml no longer declares."""
    if not depends:
        return ()
    if locks is None:
        raise ConfigError(
            f"{build_toml}: kernel-depends: {len(depends)} dependenc{'y is' if len(depends) == 1 else 'ies are'} "
            f"not locked ({path} does not exist)",
            hint=FIX,
        )
    by_dep = {l.dependency: l for l in locks}
    missing = [d for d in depends if d not in by_dep]
    if missing:
        names = ", ".join(f"{d.repo_id} ({'version ' + str(d.version) if d.version is not None else 'revision ' + str(d.revision)})" for d in missing)
        raise ConfigError(f"{build_toml}: kernel-depends: not locked in {path}: {names}", hint=FIX)
    stale = [l.dependency.repo_id for l in locks if l.dependency not in set(depends)]
    if stale:
        raise ConfigError(
            f"{path}: locks {', '.join(stale)}, which build.toml's kernel-depends no longer declares "
            "(or declares with another version)",
            hint=FIX,
        )
    return tuple(by_dep[d] for d in depends)


def read_lock(kernel_dir: Path) -> tuple[LockedDependency, ...] | None:
    """The entries of ``kernel_dir/kernels.lock``; None when there is none."""
    path = kernel_dir / LOCK_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return loads(text, path)
