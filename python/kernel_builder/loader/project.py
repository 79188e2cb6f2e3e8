"""Projects that depend on kernels: ``lock`` pins them, ``download`` fetches the pins.

``lock_project`` reads ``[tool.kernels.dependencies]`` and writes ``kernels.lock`` with the
commit each dependency resolves to; ``download_project`` puts the locked variants in the
cache so ``load_kernel(repo, lockfile=...)`` works offline afterwards.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from kernel_builder._files import write_atomic
from kernel_builder.errors import KernelBuilderError, LoadError
from kernel_builder.hub.download import HubClient
from kernel_builder.loader.fetch import Target, install, install_all, select_revision
from kernel_builder.loader.lockfile import LOCKFILE, Lock, dumps_lockfile, read_dependencies, read_lockfile
from kernel_builder.variants.system import System

__all__ = ["lock_project", "download_project"]

log = logging.getLogger("kernel_builder.loader")


def lock_project(project_dir: Path, *, client: HubClient | None = None) -> list[Lock]:
    """Resolve every dependency to a commit and write ``project_dir/kernels.lock``."""
    client = client or HubClient()
    locks = []
    for dep in read_dependencies(project_dir):
        target = select_revision(dep.repo_id, revision=dep.revision, version=dep.version, offline=False, client=client)
        locks.append(Lock(dep, target.commit))
    path = Path(project_dir) / LOCKFILE
    try:
        write_atomic(path, dumps_lockfile(locks))  # never a half-written lock
    except OSError as exc:
        raise LoadError(f"cannot write {path}: {exc.strerror or exc}; the previous lock file is unchanged") from None
    return locks


def download_project(
    project_dir: Path,
    system: System | None,
    *,
    all_variants: bool = False,
    client: HubClient | None = None,
) -> list[tuple[Lock, Path | KernelBuilderError]]:
    """Download each locked kernel (best variant, or all); failures are logged and returned, not raised."""
    path = Path(project_dir) / LOCKFILE
    if not os.path.lexists(path):  # anything else there is refused by read_lockfile, naming it
        raise LoadError(f"No kernels.lock file found in: {project_dir}", hint="run `kernel-builder lock PROJECT_DIR` first")
    client = client or HubClient()
    results: list[tuple[Lock, Path | KernelBuilderError]] = []
    for lock in read_lockfile(path):
        repo_id = lock.dependency.repo_id
        log.info(f"Downloading `{repo_id}` at commit {lock.commit}")
        target = Target(repo_id, lock.commit, lock.commit, lock.dependency.version)
        try:
            if all_variants:
                results.append((lock, install_all(target, client=client)))
            else:
                assert system is not None, "a system is needed to pick one variant"
                results.append((lock, install(target, system, offline=False, client=client)[0]))
        except KernelBuilderError as exc:
            log.error("%s", exc)
            results.append((lock, exc))
    return results
